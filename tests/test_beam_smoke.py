"""The beam-dev retrieval benchmark runs end to end on a small slice and writes its JSON report.

Only completion and the report's shape are checked — never scores or timings. The data is vendored
in bench/data/beam-dev; when it is missing the test fails (it never skips).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import vaults
from bench.beam import run as beam_run
from bench.beam.data import BeamQuestion, load
from bench.locomo.data import DataError

from tests.backends import postgres_admin_url


def test_the_benchmark_reads_the_vendored_data() -> None:
    vendored = Path(__file__).resolve().parents[1] / "bench" / "data" / "beam-dev"
    assert vendored == beam_run.DEFAULT_DATA.resolve()
    data = load(vendored, limit_conversations=1)
    assert data.hashes["SHA256SUMS"]["verified"]
    conv = data.conversations[0]
    assert conv.initiative == "beam-6"
    assert conv.turns[0].text.startswith("user: ") and conv.turns[1].text.startswith("assistant: ")
    assert all(q.evidence for q in data.questions)
    assert {q.key.split("#")[1] for q in data.questions} >= {"information_extraction", "knowledge_update"}


def test_an_altered_file_is_refused(tmp_path: Path) -> None:
    source = beam_run.DEFAULT_DATA.resolve()
    copy = tmp_path / "beam-dev"
    copy.mkdir()
    for name in ("SHA256SUMS", "README.md"):
        (copy / name).write_bytes((source / name).read_bytes())
    (copy / "6").mkdir()
    (copy / "6" / "chat.json").write_text("[]")
    with pytest.raises(DataError):
        load(copy)


def test_current_first_is_strict() -> None:
    q = BeamQuestion(0, "6", 6, 0, "how many?", evidence=("9",), original=("4",))
    assert beam_run.current_first(["9", "4"], q)
    assert beam_run.current_first(["9"], q)
    assert not beam_run.current_first(["4", "9"], q)
    assert not beam_run.current_first(["4"], q)
    same = BeamQuestion(0, "6", 6, 1, "how many?", evidence=("9",), original=("9",))
    assert not beam_run.current_first(["9"], same)


@pytest.mark.timeout(180)
def test_small_slice_runs_and_writes_the_report(backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On either backend (PostgreSQL ranks by the same bm25: the issue compares the two engines on this set)."""
    out = tmp_path / "beam.json"
    made: list[vaults.BenchVault | None] = []  # the run's own database (others' runs may be going on beside it)
    real = vaults.run_database
    monkeypatch.setattr(vaults, "run_database", lambda *a, **k: made.append(real(*a, **k)) or made[-1])
    code = beam_run.main(
        [
            "--backend",
            backend,
            "--limit-conversations",
            "1",
            "--limit-questions",
            "6",
            "--no-ablation",
            "--quiet",
            "--workdir",
            str(tmp_path),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert {"schema_version", "config", "dataset", "counts", "evidence", "ingest", "systems"} <= set(report)
    assert report["counts"]["conversations"] == 1
    assert report["counts"]["questions_evaluated"] == 6
    assert report["ingest"]["notes"] == report["counts"]["turns"] > 0
    assert set(report["systems"]) == {"recall", "bm25"}
    for system in report["systems"].values():
        assert system["overall"]["n"] == 6
        assert {"recall@10", "mrr"} <= set(system["overall"])
        assert "share" in system["current_first"]
    assert report["systems"]["recall"]["foreign_hits"] == 0
    assert report["config"]["backend"] == backend
    assert not list(tmp_path.glob("kaeru-beam-*"))
    if backend == "postgres":  # the run's database is dropped with it
        [vault] = made
        assert vault is not None and vault.database_url is not None
        name = vault.database_url.rsplit("/", 1)[-1].split("?")[0]
        assert name.startswith("kaeru_bench_beam_") and name not in bench_databases("kaeru_bench_beam_")


def bench_databases(prefix: str) -> list[str]:
    import psycopg

    with psycopg.connect(postgres_admin_url() or "", autocommit=True) as conn:
        rows = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", (prefix + "%",)).fetchall()
    return [row[0] for row in rows]
