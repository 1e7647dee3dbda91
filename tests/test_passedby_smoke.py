"""`bench.passedby` builds its vault once and times a returning agent's calls on the passed-by project.

Completion and the report's shape only: benchmarks are never timed assertions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import passedby


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_passed_by_project_is_built_once_and_measured(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "passedby.json"
    argv = ["--project", "30", "--since", "300", "--questions", "4", "--workdir", str(tmp_path), "--out", str(out)]
    passedby.main(argv)
    built = sorted(p.name for p in tmp_path.iterdir() if p.is_dir())
    assert built == ["passedby-30-300"]
    report = json.loads(out.read_text())
    calls = {"recall_cold", "recall_warm", "timeline_at_newest", "reflect", "search_type_no_text", "context"}
    assert set(report["cpu_ms"]) == calls
    assert all(row["n"] == 4 and row["p50"] <= row["max"] for row in report["cpu_ms"].values())
    assert "built" in capsys.readouterr().out
    passedby.main(argv)  # the kept vault is measured again, not built again
    assert "built" not in capsys.readouterr().out
