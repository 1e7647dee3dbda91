"""`python -m bench.beam` — the beam-dev retrieval benchmark (see bench/beam/__init__.py)."""

from __future__ import annotations

import sys

from bench.beam.run import main

if __name__ == "__main__":
    sys.exit(main())
