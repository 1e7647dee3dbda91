"""PostgreSQL migration 011: one revision layout on both engines (decision 14.S8). A database the
code of schema 10 wrote (tests/data/upgrade/postgres-v010, every revision in `node_revisions`)
migrates with every revision, the as-of view and the export as the old rows say, and a server
of the old code can no longer write the old shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.storage.postgres.store import PostgresStore
from kaeru.storage.sql.rows import NODE_COLS, prefixed
from tests.backends import VaultSpec, postgres_admin_url

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)

FIXTURE = Path(__file__).parents[1] / "data" / "upgrade" / "postgres-v010" / "postgres.sql"
#: A revision as the old code stored it, in the order its export read them (nodes in seq order).
OLD_ROWS = (
    f"SELECT n.id, {prefixed(NODE_COLS, 'r')}, r.request_id, r.actor FROM nodes n "
    "JOIN node_revisions r ON r.node_seq = n.seq ORDER BY n.seq, r.rev_no"
)


@pytest.fixture
def old_database() -> Iterator[str]:
    """A blank database holding the schema-10 dump, not yet opened by today's code."""
    from tests.pg import blank_database, drop_database

    url = blank_database()
    try:
        with psycopg.connect(url, autocommit=True) as pg:
            pg.execute(FIXTURE.read_bytes())
        yield url
    finally:
        drop_database(url)


def _entry(node_id: str, node: Any, request_id: str | None, actor: str) -> tuple[Any, ...]:
    """A revision as the old rows hold it (`OLD_ROWS`'s columns)."""
    return (
        node_id, node.rev_no, node.revision, node.node_type.value, node.tier.value, node.name, node.body,
        node.description, list(node.tags), node.layer.value, node.visibility.value, node.status, node.properties,
        list(node.initiatives), node.created_at, node.recorded_at, node.retracted, node.pinned, request_id, actor,
    )  # fmt: skip


def test_a_schema_10_database_keeps_every_revision_the_as_of_view_and_the_export(
    old_database: str, tmp_path: Path
) -> None:
    with psycopg.connect(old_database) as pg:
        old = [(*r[:12], json.loads(r[12]), *r[13:]) for r in pg.execute(OLD_ROWS).fetchall()]
    by_node: dict[str, list[tuple[Any, ...]]] = {}
    for row in old:
        by_node.setdefault(row[0], []).append(row)
    assert len(old) > len(by_node), "the fixture has nodes with more than one revision"
    assert any(row[16] for row in old), "and a retracted revision"

    store = PostgresStore(old_database)  # migration 011 runs here
    try:
        with store.read() as session:
            exported = [_entry(e.node.id, e.node, e.request_id, e.actor) for e in session.export_revisions(None)]
            assert exported == old
            for node_id, revisions in by_node.items():
                log = session.revision_log(node_id)
                assert [_entry(node_id, e.node, e.request_id, e.actor) for e in log] == revisions
                for i, revision in enumerate(revisions):
                    # as of each recorded moment: that revision (the last one recorded by then)
                    moment = revision[15]
                    expected = max((r for r in revisions if r[15] <= moment), key=lambda r: r[1])
                    found = session.node_at(node_id, moment)
                    assert found is not None and found.rev_no == expected[1]
                    assert session.has_revision(node_id, revision[1])
                    assert (session._live_at([node_id], moment) == {node_id}) == (not expected[16]), (node_id, i)
                assert session.node_at(node_id, "2000-01-01T00:00:00.000000Z") is None
                assert not session.has_revision(node_id, len(revisions) + 1)
            ids = [i.id for i in session.all_initiatives()]
            for initiative_id in ids:
                scoped = [e.node.id for e in session.export_revisions([initiative_id])]
                wanted = {r[0] for r in old if initiative_id in r[13]}
                assert wanted <= set(scoped)
                assert scoped == [r[0] for r in old if r[0] in set(scoped)]
            tables = {r[0] for r in session._db.rows("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
            assert "past_revisions" in tables and "node_revisions" not in tables
            (past,) = session._db.one("SELECT count(*) FROM past_revisions") or (None,)
            assert past == len(old) - len(by_node), "only the revisions a node moved past stay beside it"

        # The new code writes on: the revision moved past joins the history.
        node_id = next(n for n, revisions in by_node.items() if not revisions[-1][16])
        service = Service(store, VaultSpec("postgres", tmp_path, old_database).settings())
        with store.read() as session:
            initiative = next(iter(session.initiative_names(by_node[node_id][-1][13]).values()))
        service.revise(parse("revise", {"initiative": initiative, "node": node_id, "patch": {"body": "later"}}))
        with store.read() as session:
            log = session.revision_log(node_id)
            assert [e.node.rev_no for e in log] == [*(r[1] for r in by_node[node_id]), by_node[node_id][-1][1] + 1]
            assert [_entry(node_id, e.node, e.request_id, e.actor) for e in log[:-1]] == by_node[node_id]
    finally:
        store.close()

    # A server of the old code (schema 10) writing its revision row now fails, and writes nothing.
    with psycopg.connect(old_database) as pg, pytest.raises(psycopg.errors.UndefinedTable):
        pg.execute("INSERT INTO node_revisions (node_seq, rev_no) VALUES (1, 99)")
