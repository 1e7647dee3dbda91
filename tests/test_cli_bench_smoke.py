"""`bench.cli` runs every command from a shell on a scratch vault and reports each one.

The report's shape only: benchmarks are never timed assertions (what the commands print is tested
in tests/cli/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench import cli


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_every_command_runs_and_is_reported(tmp_path: Path) -> None:
    figures = cli.main(["--runs", "1", "--notes", "5", "--workdir", str(tmp_path)])
    assert set(figures) == set(cli.commands(tmp_path, 0))
    assert figures["python"]["over_python_p50"] == 0
    assert all(0 < f["wall_p50"] <= f["wall_p95"] and f["cpu_p50"] > 0 for f in figures.values())
    assert not list(tmp_path.iterdir())  # the scratch vault is gone
