"""An import into PostgreSQL reads each record's rows through the indexes once the tables have grown,
however many revisions the archive holds: linear, not quadratic.

A new vault's `nodes` is analyzed empty (migration 020), and psycopg prepares a statement after a few
runs: the plan PostgreSQL made then for the look-ups of a node's revision was kept for the whole
import, a sequential scan of `nodes` for every past revision of that number, for every record. An
archive of 2,280 nodes with their histories took 6 minutes to import (SQLite: 10 s), reading `nodes`
680,000 times; this one, 9.5 million rows of `nodes`. The import now has the tables it fills
analyzed as they grow (`import_report.Statistics`), so the look-ups are planned on their real size.
The archive is written through the service (notes revised twice, links added, reweighted and
removed), exported, and imported into a new PostgreSQL vault.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import drop_vault, new_vault, postgres_admin_url

Run = Callable[[str, dict[str, Any]], dict[str, Any]]

#: Nodes of the archive (each with three revisions) and links (each with three revisions).
NODES, LINKS = 240, 60

#: Rows sequential scans may read of `nodes`, `past_revisions` and `edge_revisions` during the import:
#: a table is read whole only while it is small (a few hundred rows, where a scan is the cheaper
#: plan), so this bounds them whatever the archive's size.
SMALL_TABLE_READS = 100_000

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)


def _history_archive(tmp_path: Path, root: Path) -> None:
    """`root/history.amg`: NODES notes revised twice and LINKS links reweighted and removed, written
    through the service into a SQLite vault and exported."""
    spec = new_vault("sqlite", tmp_path)
    settings = spec.settings(export_root=root)
    store = open_store(settings)
    try:
        run: Run = build_server(Service(store, settings)).registry.run
        ids = []
        for n in range(NODES):
            note = run("note", {"initiative": "alpha", "text": f"heron sighting {n} by the reeds", "name": f"h{n}"})
            ids.append(note["data"]["primary"]["id"])
            for edit in (1, 2):
                patch = {"body": f"heron sighting {n} by the reeds, edit {edit}"}
                assert (
                    run("revise", {"initiative": "alpha", "node": {"id": ids[-1]}, "patch": patch})["state"]
                    == "applied"
                )
        for n in range(1, LINKS + 1):
            ends = {"initiative": "alpha", "from": {"id": ids[n]}, "to": {"id": ids[n - 1]}}
            assert run("link", {**ends, "weight": 0.5})["state"] == "applied"
            assert (
                run("link", {**ends, "action": "reweight", "edge_type": "refers_to", "weight": 0.9})["state"]
                == "applied"
            )
            assert run("link", {**ends, "action": "remove", "edge_type": "refers_to"})["state"] == "applied"
        assert run("archive", {"action": "export", "path": "history.amg"})["state"] == "applied"
    finally:
        store.close()


def _table_reads(url: str, tables: tuple[str, ...]) -> dict[str, tuple[int, int]]:
    """Of each of `tables`: (rows, rows read by sequential scans), once every other session of the
    database has ended (a session's counters reach the statistics views when it ends)."""
    with psycopg.connect(url, autocommit=True) as conn:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
            if row is not None and row[0] == 0:
                break
            time.sleep(0.05)
        reads = {str(r[0]): int(r[1]) for r in conn.execute("SELECT relname, seq_tup_read FROM pg_stat_user_tables")}
        counted = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone() for t in tables}
    return {t: (int(row[0]) if row else 0, reads[t]) for t, row in counted.items()}


def test_an_import_of_revision_histories_reads_nodes_through_their_indexes(tmp_path: Path) -> None:
    root = tmp_path / "exports"
    _history_archive(tmp_path, root)
    spec = new_vault("postgres", tmp_path)
    try:
        settings = spec.settings(export_root=root)
        store = open_store(settings)
        try:
            run: Run = build_server(Service(store, settings)).registry.run
            imported = run("archive", {"action": "import", "path": "history.amg"})
            assert imported["state"] == "applied", imported
            counts = {c["field"]: c["after"] for c in imported["data"]["changes"]}
            assert (counts["imported.node_revisions"], counts["imported.edge_revisions"]) == (3 * NODES, 3 * LINKS)
        finally:
            store.close()
        assert spec.database_url is not None
        nodes, past, edges = _table_reads(spec.database_url, ("nodes", "past_revisions", "edge_revisions")).values()
        assert (nodes[0], past[0], edges[0]) == (NODES, 2 * NODES, 3 * LINKS)
        assert nodes[1] + past[1] + edges[1] <= SMALL_TABLE_READS, (nodes, past, edges)
    finally:
        drop_vault(spec)
