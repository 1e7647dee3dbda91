"""A PostgreSQL vault's tables get planner statistics again once they outgrow theirs
(`storage/postgres/planstats.py`), whether or not the server's autovacuum runs.

Without them, a vault filled in bulk where autovacuum is off (the test cluster runs so) kept the
statistics of its first migration: `nodes` analyzed empty, `memberships` never. The planner then
joined every membership of a scope to its node for each filter-only search and timeline page: at
32k nodes in one initiative, `context` took a second and a timeline page ~0.1 s, against ~50 ms
and ~7 ms once the tables were analyzed. PostgreSQL only; SQLite's planner uses no statistics here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from kaeru.config import Settings
from kaeru.export.importers import apply, notes
from kaeru.service import Service
from kaeru.storage.postgres.store import PostgresStore
from tests.backends import postgres_admin_url

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)

WORDS = ["heron", "marsh", "reed", "tide", "willow", "lantern", "copper", "meadow", "harbour", "signal"]


@pytest.fixture
def url() -> Iterator[str]:
    from tests.pg import drop_database, fresh_database

    url = fresh_database()
    try:
        yield url
    finally:
        drop_database(url)


def _service(url: str, tmp_path: Path) -> Service:
    return Service(PostgresStore(url), Settings(vault_dir=tmp_path / "vault", database_url=url, secret_policy="allow"))


def _import_notes(service: Service, folder: Path, count: int) -> None:
    """`import-from markdown` of `count` notes of a few sentences each, in the importer's chunks."""
    folder.mkdir(parents=True)
    for i in range(count):
        body = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(60))
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nObservation {i}: {body}.\n")
    report = apply(service, "marsh", notes.read_markdown(folder))
    assert report.to_json()["created"] == count


def _described(url: str) -> dict[str, bool]:
    """Whether the planner has statistics of `nodes.node_type` and `memberships.initiative_id`."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT tablename, attname FROM pg_stats WHERE schemaname = current_schema() "
            "AND (tablename, attname) IN (('nodes', 'node_type'), ('memberships', 'initiative_id'))"
        ).fetchall()
    found = {str(r[0]) for r in rows}
    return {"nodes": "nodes" in found, "memberships": "memberships" in found}


def test_a_bulk_import_leaves_the_tables_it_filled_with_statistics(url: str, tmp_path: Path) -> None:
    service = _service(url, tmp_path)
    try:
        _import_notes(service, tmp_path / "notes", 800)
        # No reopening, no ANALYZE from the test: the writing process gathered them itself.
        assert _described(url) == {"nodes": True, "memberships": True}
    finally:
        service.store.close()


def test_opening_a_vault_gathers_the_statistics_its_tables_outgrew(url: str, tmp_path: Path) -> None:
    service = _service(url, tmp_path)
    try:
        _import_notes(service, tmp_path / "notes", 300)  # fewer writes than the writer's own look needs
    finally:
        service.store.close()
    if _described(url)["nodes"]:
        pytest.skip("the server's autovacuum analyzed the vault first: nothing left for the store to do")
    PostgresStore(url).close()  # as `kaeru serve` or a command opens the vault
    assert _described(url)["nodes"]
