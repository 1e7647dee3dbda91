"""The benchmark harness runs end to end at its smoke size and writes its JSON report.

Only completion and the report's shape are checked: benchmarks are never timed assertions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import run as bench_run

from tests.pg import NEEDS_POSTGRES

OPS = {"note", "read", "search_selective", "search_broad"}


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_smoke_run_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "smoke.json"
    bench_run.main(["--smoke", "--quiet", "--workdir", str(tmp_path), "--out", str(out)])

    report = json.loads(out.read_text())
    expected = {"schema_version", "started_at", "finished_at", "machine", "git", "config", "targets", "runs", "summary"}
    assert expected <= set(report)
    assert {"cpu_count", "python", "sqlite_version"} <= set(report["machine"])
    assert {"commit", "src_dirty"} <= set(report["git"])
    assert report["config"]["smoke"] is True
    assert [run["size"] for run in report["runs"]] == [300]

    run = report["runs"][0]
    assert run["backend"] == "sqlite"
    assert {"build", "corpus", "ops", "ratios", "targets", "search_hits"} <= set(run)
    assert run["build"]["seconds"] >= 0
    assert set(run["ops"]) == {*OPS, "ping"}
    assert set(run["ops"]["ping"]) == {"stdio_raw"}
    for op in OPS:
        layers = run["ops"][op]
        assert {"service", "in_process", "in_process_paired", "stdio", "stdio_raw"} <= set(layers), op
        assert {"n", "p50", "p95"} <= set(layers["in_process"]["cpu"])
    for layers in run["ops"].values():
        for summary in layers.values():
            assert {"n", "mean", "p50", "p95", "p99", "samples_ms"} <= set(summary)
            assert summary["n"] == len(summary["samples_ms"]) > 0
    assert "raw_fts" in run["ops"]["search_selective"]
    assert {"search_selective_vs_raw_fts", "note_stdio_vs_in_process"} <= set(run["ratios"])
    assert {t["key"] for t in run["targets"]} == {t["key"] for t in report["targets"]}
    assert all({"value", "pass", "applies", "limit"} <= set(t) for t in run["targets"])
    assert not any(t["applies"] for t in run["targets"])  # targets apply at 100k nodes only
    assert 5 <= run["search_hits"]["search_selective"]["min"] <= run["search_hits"]["search_selective"]["max"] <= 20
    # The harness cleans up its vaults unless --keep is given.
    assert not list(tmp_path.glob("kaeru-bench-*"))


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_startup_bench_runs_every_server_and_prints_its_table(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import startup

    startup.main(["--runs", "1", "--warmup", "0", "--notes", "60"])
    table = capsys.readouterr().out
    for label in ("bare", "kaeru-empty", "kaeru-built"):
        for milestone in startup.MILESTONES:
            assert f"{label} → {milestone}" in table
    assert "kaeru-built − bare, initialize" in table


@pytest.mark.timeout(120)
def test_hub_bench_reports_every_read_with_its_size(tmp_path: Path) -> None:
    from bench import hub

    out = tmp_path / "hub.json"
    report = hub.main(["--links", "120", "--rounds", "1", "--quiet", "--out", str(out)])
    assert json.loads(out.read_text()) == report
    reads = report["reads"]
    assert len(reads) == len(hub.READS) and all(r["state"] == "ok" and r["bytes"] > 0 for r in reads.values())
    assert reads["trail"]["paged"] and reads["trail kind=neighbours"]["paged"], "121 entries: two pages"


@pytest.mark.timeout(120)
def test_viewer_bench_signs_in_and_times_every_view(tmp_path: Path) -> None:
    from bench import viewer

    from kaeru.api.requests import parse
    from kaeru.config import Settings
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    settings = Settings.from_env({}, vault_dir=tmp_path / "vault")
    store = open_store(settings)
    service = Service(store, settings)
    for i in range(5):
        service.note(parse("note", {"initiative": "viewed", "text": f"cache eviction note {i}"}))
    store.close()
    report = viewer.main(["--vault", str(tmp_path / "vault"), "--initiative", "viewed", "--rounds", "2"])
    assert set(report) == {label for label, _ in viewer.views("viewed", "cache")}
    assert all(row["bytes"] > 0 and row["p50"] > 0 for row in report.values()), report


@pytest.mark.timeout(120)
def test_initiatives_bench_walks_every_page(tmp_path: Path) -> None:
    from bench import initiatives

    out = tmp_path / "initiatives.json"
    report = initiatives.main(["--initiatives", "130", "--rounds", "1", "--quiet", "--out", str(out)])
    assert json.loads(out.read_text()) == report
    assert report["first_page"]["listed"] == 100 and report["first_page"]["total"] == 130
    assert (report["walk"]["pages"], report["walk"]["listed"]) == (2, 130)
    assert report["prefix"]["total"] == 130  # project-00000 … project-00129 all start with project-00


@pytest.mark.timeout(120)
def test_soak_bench_records_every_window_and_a_restarted_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench import soak

    out = tmp_path / "soak.json"
    report = soak.main(["--calls", "120", "--window", "40", "--out", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(report))
    windows = report["windows"]
    assert [w["calls"] for w in windows] == [40, 80, 120, 160]
    assert [w["restarted"] for w in windows] == [False, False, False, True]
    for window in windows:
        assert window["memory"]["VmRSS"] > 0 and window["memory"]["VmHWM"] >= window["memory"]["VmRSS"]
        assert window["vault_bytes"]["db"] > 0 and window["fds"] > 0
        assert sum(t["n"] for t in window["latency_ms"].values()) == 40
    assert windows[-1]["vault_bytes"]["db"] >= windows[0]["vault_bytes"]["db"]
    assert "note" in windows[0]["latency_ms"] and "mib_per_10k_calls" in report["slope"]
    table = capsys.readouterr().out
    assert "RSS over the last half" in table and "new 160" in table


@NEEDS_POSTGRES
@pytest.mark.timeout(180)
def test_a_soak_on_postgresql_drops_the_database_it_made(tmp_path: Path) -> None:
    """`bench.soak --database-url` makes a database for its run; it left one of ~30-40 MiB on the
    server after every run (the work folder alone was removed)."""
    import os

    import psycopg
    from bench import soak

    admin = os.environ["KAERU_TEST_DATABASE_URL"]

    def made() -> set[str]:
        with psycopg.connect(admin, autocommit=True) as conn:
            rows = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'kaeru_scale_%'").fetchall()
        return {name for (name,) in rows}

    before = made()
    report = soak.main(["--calls", "40", "--window", "20", "--quiet", "--database-url", admin])
    assert report["meta"]["backend"] == "postgres" and sum(w["calls"] for w in report["windows"]) > 0
    assert made() == before
