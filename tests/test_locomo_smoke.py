"""The LoCoMo retrieval benchmark runs end to end on a small slice and writes its JSON report.

Only completion and the report's shape are checked — never scores or timings. The data is vendored
in bench/data/locomo; when it is missing the test fails (it never skips).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.locomo import run as locomo_run
from bench.locomo.data import DATASET_FILE, ERRORS_FILE

DATA = locomo_run.DEFAULT_DATA.resolve()


def test_the_benchmark_reads_the_vendored_data() -> None:
    vendored = Path(__file__).resolve().parents[1] / "bench" / "data" / "locomo"
    assert vendored == DATA
    assert (DATA / DATASET_FILE).is_file() and (DATA / ERRORS_FILE).is_file(), f"LoCoMo data missing in {DATA}"


@pytest.mark.timeout(180)
def test_small_slice_runs_and_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "locomo.json"
    code = locomo_run.main(
        [
            "--limit-conversations",
            "1",
            "--limit-questions",
            "30",
            "--systems",
            "search,bm25,grep",
            "--quiet",
            "--workdir",
            str(tmp_path),
            "--out",
            str(out),
        ]
    )
    assert code == 0

    report = json.loads(out.read_text())
    assert {
        "schema_version",
        "started_at",
        "finished_at",
        "machine",
        "config",
        "dataset",
        "counts",
        "corrections",
        "evidence",
        "ingest",
        "skipped",
        "systems",
    } <= set(report)
    assert all(entry["verified"] for entry in report["dataset"].values())
    assert report["counts"]["conversations"] == 1
    assert report["counts"]["questions_selected"] == 30
    assert report["ingest"]["notes"] == report["counts"]["turns"] > 0
    assert {"applied", "matched_by_text", "agree_with_question_id_index"} <= set(report["corrections"])
    assert {"dropped_ids", "repaired_strings"} <= set(report["evidence"])
    assert set(report["systems"]) == {"search", "bm25", "grep"}
    for system in report["systems"].values():
        assert system["error"] is None
        assert system["overall"]["n"] == report["counts"]["questions_evaluated"]
        assert {"recall@1", "recall@5", "recall@10", "hit@10", "mrr"} <= set(system["overall"])
        assert set(system["by_category"]) == {"1", "2", "3", "4"}
        assert {"p50", "p95"} <= set(system["latency_ms"])
    # The temporary vault is removed afterwards.
    assert not list(tmp_path.glob("kaeru-locomo-*"))
