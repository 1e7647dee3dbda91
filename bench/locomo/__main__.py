"""`python -m bench.locomo` — the LoCoMo retrieval benchmark (see bench/locomo/__init__.py)."""

from __future__ import annotations

import sys

from bench.locomo.run import main

if __name__ == "__main__":
    sys.exit(main())
