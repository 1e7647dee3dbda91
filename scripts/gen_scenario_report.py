"""Write docs/scenarios.md: every tool × enum value and the scenario steps that send it.

Runs every scenario of tests/scenarios in process on throwaway SQLite vaults, records the calls and
renders the coverage report. `--check` exits non-zero when the committed file differs.
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "docs" / "scenarios.md"


def render() -> str:
    sys.path.insert(0, str(ROOT))
    from tests.scenarios.coverage import report
    from tests.scenarios.runner import record_all
    from tests.scenarios.scenarios import SCENARIOS

    logging.disable(logging.CRITICAL)  # the known defects log their tracebacks
    with tempfile.TemporaryDirectory() as tmp:
        inputs, recorder = anyio.run(record_all, Path(tmp))
    listed = [(item.name, item.reason if item.defect else "") for item in SCENARIOS]
    return report(inputs, recorder.calls, listed) + "\n"


def main() -> None:
    text = render()
    if "--check" in sys.argv:
        if REPORT.read_text() != text:
            sys.exit(f"{REPORT} is stale: run python scripts/gen_scenario_report.py")
        return
    REPORT.write_text(text)
    print(f"wrote {REPORT}")


if __name__ == "__main__":
    main()
