"""`--pooled` (bench/locomo/pooled.py): both retrieval benchmarks run with every conversation in ONE
initiative, and the in-harness BM25 ranks the same pooled corpus that `recall` searches.

Only completion and the report's shape are checked — never scores or timings. The data is vendored
(bench/data); when it is missing the tests fail (they never skip).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.beam import run as beam_run
from bench.beam.data import load as load_beam
from bench.locomo import pooled
from bench.locomo import run as locomo_run


def test_pooling_keeps_every_turn_in_order_with_unique_ids() -> None:
    data = load_beam(beam_run.DEFAULT_DATA.resolve(), limit_conversations=2)
    first, second = data.conversations
    one, questions = pooled.pool(data.conversations, data.questions, ("evidence", "original"))
    assert one.initiative == "beam-pooled"
    assert [t.text for t in one.turns] == [t.text for t in first.turns + second.turns]
    assert [t.occurred_at for t in one.turns] == [t.occurred_at for t in first.turns + second.turns]
    ids = [t.dia_id for t in one.turns]
    assert len(set(ids)) == len(ids)  # the two conversations' message ids overlap; the pool's do not
    assert {t.dia_id for t in first.turns} & {t.dia_id for t in second.turns}
    assert [q.key for q in questions] == [q.key for q in data.questions]
    for before, after in zip(data.questions, questions, strict=True):
        assert after.conv_index == 0
        assert after.evidence == tuple(f"{before.sample_id}/{e}" for e in before.evidence)
        assert after.original == tuple(f"{before.sample_id}/{e}" for e in before.original)
        assert set(after.evidence) <= set(ids)


def assert_pooled(report: dict[str, object], initiative: str, samples: int) -> None:
    """One initiative holds every note, and BM25 was built once, over all of them."""
    counts, pool, ingest = report["counts"], report["pool"], report["ingest"]
    assert isinstance(counts, dict) and isinstance(pool, dict) and isinstance(ingest, dict)
    assert report["config"]["pooled"] is True  # type: ignore[index]
    assert len(pool["conversations"]) == samples and pool["initiative"] == initiative
    assert ingest["scopes"] == {initiative: counts["turns"]}
    assert report["systems"]["bm25"]["indexed"] == {initiative: counts["turns"]}  # type: ignore[index]
    assert report["systems"]["recall"]["foreign_hits"] == 0  # type: ignore[index]


@pytest.mark.timeout(180)
def test_beam_pooled_runs_over_one_initiative(backend: str, tmp_path: Path) -> None:
    """On either backend: both keep one initiative's statistics for the pool."""
    out = tmp_path / "beam.json"
    argv = ["--pooled", "--backend", backend, "--limit-conversations", "2", "--limit-questions", "3", "--no-ablation"]
    argv.append("--quiet")
    code = beam_run.main([*argv, "--workdir", str(tmp_path), "--out", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    assert_pooled(report, "beam-pooled", 2)
    assert report["counts"]["conversations"] == 2 and report["systems"]["recall"]["overall"]["n"] == 6


@pytest.mark.timeout(180)
def test_locomo_pooled_runs_over_one_initiative(tmp_path: Path) -> None:
    out = tmp_path / "locomo.json"
    argv = ["--pooled", "--limit-conversations", "2", "--limit-questions", "4", "--systems", "recall", "bm25"]
    code = locomo_run.main([*argv, "--no-ablation", "--quiet", "--workdir", str(tmp_path), "--out", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    assert_pooled(report, "locomo-pooled", 2)
    assert report["systems"]["recall"]["overall"]["n"] == report["counts"]["questions_evaluated"] > 4


def test_without_the_flag_each_conversation_keeps_its_initiative(tmp_path: Path) -> None:
    out = tmp_path / "beam.json"
    argv = ["--limit-conversations", "2", "--limit-questions", "1", "--no-ablation", "--quiet"]
    assert beam_run.main([*argv, "--workdir", str(tmp_path), "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["pool"] is None and report["config"]["pooled"] is False
    assert report["systems"]["bm25"]["indexed"] == report["ingest"]["scopes"]
    assert set(report["ingest"]["scopes"]) == {"beam-6", "beam-7"}
