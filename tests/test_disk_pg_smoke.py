"""`python -m bench.disk_pg` runs end to end on a real PostgreSQL server and reports where a
vault's bytes go (shape only: a benchmark is never a timed assertion)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import disk_pg
from bench.vaults import postgres_admin_url


@pytest.mark.timeout(120)
def test_the_postgres_disk_bench_reports_bytes_by_relation_as_written_and_reindexed(tmp_path: Path) -> None:
    if not postgres_admin_url():
        pytest.skip("PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (make test starts one)")
    out = tmp_path / "disk_pg.json"
    assert disk_pg.main(["--notes", "12", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["nodes"] == 12
    assert report["stored_text_bytes_per_node"] > 100  # ~150-character notes and their tags
    for label in ("as_written", "reindexed"):
        sizes = report[label]
        assert {"nodes", "requests", "audit", "memberships"} <= set(sizes["by_relation"])
        assert sizes["bytes_per_node"] >= sum(b["total"] for b in sizes["by_relation"].values()) - len(
            sizes["by_relation"]
        )  # each per-node figure is rounded
        assert "nodes_tsv" in sizes["nodes_indexes"]
