"""`bench.scopes` builds many small projects once and asks across 1 … N of them.

The report's shape only: benchmarks are never timed assertions (what a search across many projects
finds is tested in tests/service/test_search.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import scopes


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_many_projects_are_built_once_and_asked_together(tmp_path: Path) -> None:
    out = tmp_path / "scopes.json"
    argv = ["--initiatives", "12", "--per", "5", "--rounds", "1", "--workdir", str(tmp_path), "--out", str(out)]
    scopes.main(argv)
    asked = json.loads(out.read_text())["questions"]
    assert set(asked) == {
        f"{q} × {k}" for q in ("search rare", "search common", "recall", "timeline") for k in (1, 10, 12)
    }
    assert all(f["p50"] <= f["max"] and f["bytes"] > 0 for f in asked.values())
    built = (tmp_path / "scopes-12x5" / "built").stat().st_mtime
    scopes.main(argv)  # measured again, not built again
    assert (tmp_path / "scopes-12x5" / "built").stat().st_mtime == built
