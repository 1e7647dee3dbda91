"""`bench.first_calls` starts new servers on copies of a kept corpus vault and reports each first call.

The report's shape only: benchmarks are never timed assertions."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench import first_calls, million


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_new_servers_answer_the_first_calls_and_leave_the_kept_vault_alone(tmp_path: Path) -> None:
    million.main(["build", "--size", "300", "--workdir", str(tmp_path)])
    (vault,) = tmp_path.glob("kaeru-bench-sqlite-300-*")
    before = sorted((p.name, p.stat().st_mtime_ns) for p in vault.iterdir())
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    argv = ["--vault", str(vault), "--size", "300", "--runs", "1", "--recalls", "2", "--sessions", "2", "--think", "0"]
    figures = first_calls.main([*argv, "--workdir", str(scratch)])
    assert list(figures) == ["this tree"]
    per_session = ["initialize", "context", "recall 1", "recall 2"]
    assert list(figures["this tree"]) == [f"session {n}: {label}" for n in (1, 2) for label in per_session]
    assert all(0 < row["p50"] <= row["p95"] for row in figures["this tree"].values())
    assert sorted((p.name, p.stat().st_mtime_ns) for p in vault.iterdir()) == before
    assert not list(scratch.iterdir())
