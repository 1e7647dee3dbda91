"""`bench.aged` builds a project that repeats itself and measures the reads an agent makes there.

The report's shape, and what must hold whatever the timings: the answers that cap what they show
stay small however long the project's history. Never a timed assertion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import aged

from kaeru.service import history


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_an_aged_project_is_built_once_and_its_capped_answers_stay_small(tmp_path: Path) -> None:
    age = history.MAX_PREDECESSORS * 2
    out = tmp_path / "aged.json"
    argv = ["--age", str(age), "--rounds", "2", "--workdir", str(tmp_path), "--out", str(out)]
    aged.main(argv)
    report = json.loads(out.read_text())["reads"]
    assert set(report) == set(aged.reads({"runbook": "", "oldest_state": "", "state": ""}))
    # The slot and the chain hold twice the cap: each answer shows the cap and counts the rest.
    for label in ("current_state slot", "current_state newest", "current_state oldest"):
        assert report[label]["complete"] is False
    # Asked from the oldest, the answer shows what the newest's shows (and the subject): not every
    # link the walk crossed (without decision 151's filter, 25 % more at this age).
    assert report["current_state oldest"]["bytes"] <= 1.1 * report["current_state newest"]["bytes"]
    assert report["read revised node"]["complete"] is True
    built = (tmp_path / f"aged-{age}" / "nodes.json").stat().st_mtime
    aged.main(argv)  # measured again, not built again
    assert (tmp_path / f"aged-{age}" / "nodes.json").stat().st_mtime == built
