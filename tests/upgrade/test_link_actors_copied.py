"""PostgreSQL's backfill (migration 022) gathers the names it finds in a temporary table and writes
them with one UPDATE; when most of the table is named, it drops kaeru's own plain indexes on the edge
revisions first and builds them again after (an UPDATE writes a new entry in each index for every
row, at random places: most of a large upgrade's time). Whichever way it writes, it names every
revision as the rule says, and the table keeps what it had: the primary key and every index of the
vault's owner as they were, kaeru's indexes by the same names and definitions. The thresholds are
lowered so that the small vault of two people takes each path.

Dropping the primary key too made the UPDATE of a published table (logical replication: CDC, a
managed service's migration) fail — with no key, it had no replica identity — so the upgrade failed
at each try; and what an index's definition does not say (a storage option, clustering, the replica
identity, a comment) was lost with it. So the key and any constraint's index are never dropped, and
nothing is when the table is published, has a replica identity of its own, or one of kaeru's indexes
carries something its statement does not make; a foreign key referring to the table keeps it too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kaeru.storage import link_actors
from tests.backends import VaultSpec, postgres_admin_url
from tests.upgrade.old_vaults import backfill_again, execute
from tests.upgrade.test_link_actors_backfill import REVISIONS, _written_by_two

#: The edge revisions' indexes and constraints as the catalog says them, with each index's identity.
INDEXES = (
    "SELECT c.relname, pg_get_indexdef(i.indexrelid), i.indisprimary, i.indisunique, i.indexrelid::bigint "
    "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'edge_revisions'::regclass ORDER BY 1"
)
CONSTRAINTS = (
    "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint "
    "WHERE conrelid = 'edge_revisions'::regclass ORDER BY 1"
)
#: What of each index a definition does not say (clustering, replica identity, storage options,
#: tablespace, comment), and the table's replica identity.
KEPT = (
    "SELECT c.relname, pg_get_indexdef(i.indexrelid), i.indisclustered, i.indisreplident, c.reloptions, "
    "c.reltablespace::bigint, obj_description(c.oid, 'pg_class'), "
    "(SELECT relreplident FROM pg_class WHERE oid = 'edge_revisions'::regclass) "
    "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'edge_revisions'::regclass ORDER BY 1"
)
OWN = {"edge_revisions_dst", "edge_revisions_src"}


@pytest.fixture
def own(tmp_path: Path) -> Iterator[VaultSpec]:
    """A PostgreSQL vault on a database of its own, dropped after: the test changes its schema (a
    publication, indexes, their options), which the suite's recycled databases would keep (they are
    reset by their rows)."""
    if postgres_admin_url() is None:
        pytest.skip("PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (make test starts one)")
    from tests.pg import blank_database, drop_database

    url = blank_database()
    try:
        yield VaultSpec("postgres", tmp_path / "vault", url)
    finally:
        drop_database(url)


def _indexes(spec: VaultSpec) -> list[tuple[Any, ...]]:
    return execute(spec, INDEXES)


def _identities(spec: VaultSpec) -> dict[str, int]:
    return {r[0]: r[4] for r in _indexes(spec)}


def _identity(indexes: list[tuple[Any, ...]], name: str) -> int:
    return next(int(r[4]) for r in indexes if r[0] == name)


def _named_again(spec: VaultSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every revision's name cleared and the backfill run again, taking the path of a large vault."""
    monkeypatch.setattr(link_actors, "REBUILD_ROWS", 1)
    execute(spec, "UPDATE {schema}edge_revisions SET actor = NULL, request_id = NULL")
    backfill_again(spec)


@pytest.mark.parametrize("backend", ["postgres"])
@pytest.mark.parametrize("copy_rows", [1, 20_000])
def test_names_written_with_the_indexes_built_again_are_the_same(
    vault: VaultSpec, monkeypatch: pytest.MonkeyPatch, copy_rows: int
) -> None:
    spec = vault
    _written_by_two(spec)
    written = execute(spec, REVISIONS)
    indexes, constraints = _indexes(spec), execute(spec, CONSTRAINTS)
    assert [r[0] for r in indexes] == ["edge_revisions_dst", "edge_revisions_pkey", "edge_revisions_src"]
    monkeypatch.setattr(link_actors, "COPY_ROWS", copy_rows)
    _named_again(spec, monkeypatch)
    assert execute(spec, REVISIONS) == written
    # kaeru's two indexes built again (new identities, the same names and definitions); the key kept.
    again = _indexes(spec)
    assert [r[:4] for r in again] == [r[:4] for r in indexes]
    assert {r[0] for r in again if r[4] != _identity(indexes, r[0])} == OWN
    assert execute(spec, CONSTRAINTS) == constraints
    # The key is enforced still, and nothing of the gathering is left behind.
    with pytest.raises(Exception, match="edge_revisions_pkey"):
        execute(spec, "INSERT INTO {schema}edge_revisions SELECT * FROM {schema}edge_revisions LIMIT 1")
    assert execute(spec, "SELECT to_regclass('pg_temp.kaeru_link_actors')") == [(None,)]
    # With ben's records deleted, his revisions stay unnamed, not credited to ann.
    execute(spec, "UPDATE {schema}edge_revisions SET actor = NULL, request_id = NULL")
    execute(spec, "DELETE FROM {schema}audit WHERE actor = 'ben'")
    backfill_again(spec)
    assert execute(spec, REVISIONS) == [(*r[:4], None, None) if r[4] == "ben" else r for r in written]


@pytest.mark.parametrize("backend", ["postgres"])
def test_a_few_names_are_written_into_the_indexes_as_they_are(vault: VaultSpec) -> None:
    spec = vault
    _written_by_two(spec)
    written = execute(spec, REVISIONS)
    indexes = _indexes(spec)
    # Two of nine revisions name no one: fewer than `REBUILD_ROWS`, so the indexes stay as they are.
    execute(spec, "UPDATE {schema}edge_revisions SET actor = NULL, request_id = NULL WHERE rev_no = 2")
    backfill_again(spec)
    assert execute(spec, REVISIONS) == written
    assert _indexes(spec) == indexes


@pytest.mark.parametrize(
    "published",
    [
        "CREATE PUBLICATION kaeru_cdc FOR TABLE {schema}edge_revisions",
        "CREATE PUBLICATION kaeru_cdc FOR ALL TABLES",
        "CREATE PUBLICATION kaeru_cdc FOR TABLES IN SCHEMA public",
    ],
    ids=["table", "all_tables", "schema"],
)
def test_a_published_table_is_named_whole_and_keeps_its_indexes(
    own: VaultSpec, monkeypatch: pytest.MonkeyPatch, published: str
) -> None:
    """A vault whose edge revisions are published for logical replication: the UPDATE needs the
    table's replica identity (its primary key) to publish each row it changes; the upgrade failed at
    every try once the key was dropped."""
    spec = own
    _written_by_two(spec)
    written = execute(spec, REVISIONS)
    execute(spec, published)
    indexes, constraints = _indexes(spec), execute(spec, CONSTRAINTS)
    _named_again(spec, monkeypatch)
    assert execute(spec, REVISIONS) == written
    # Nothing dropped or built again: the very same indexes, the same key.
    assert _indexes(spec) == indexes
    assert execute(spec, CONSTRAINTS) == constraints


@pytest.mark.parametrize(
    ("setup", "rebuilt"),
    [
        # A user's own index, a storage option on the key, the key as the replica identity.
        (
            [
                "CREATE INDEX er_by_type ON {schema}edge_revisions (edge_type, rev_no)",
                "ALTER INDEX {schema}edge_revisions_pkey SET (fillfactor = 70)",
                "ALTER TABLE {schema}edge_revisions REPLICA IDENTITY USING INDEX edge_revisions_pkey",
            ],
            set(),
        ),
        # The key's storage option alone: the key is never dropped, kaeru's indexes are built again.
        (["ALTER INDEX {schema}edge_revisions_pkey SET (fillfactor = 70)"], OWN),
        # A replica identity of every column: nothing is dropped.
        (["ALTER TABLE {schema}edge_revisions REPLICA IDENTITY FULL"], set()),
        # A user's own index alone: kaeru's are built again, the user's is left as it is.
        (["CREATE UNIQUE INDEX er_mine ON {schema}edge_revisions (lower(src), dst, edge_type, rev_no)"], OWN),
        # One of kaeru's indexes with what its statement does not make: none is dropped.
        (["COMMENT ON INDEX {schema}edge_revisions_src IS 'read by the nightly report'"], set()),
        (["CLUSTER {schema}edge_revisions USING edge_revisions_dst"], set()),
        # Made otherwise than kaeru makes it: not kaeru's, left as it is (the other one is built again).
        (["ALTER INDEX {schema}edge_revisions_src SET (fillfactor = 60)"], {"edge_revisions_dst"}),
    ],
    ids=[
        "user_index_fillfactor_replica_identity",
        "key_fillfactor",
        "replica_identity_full",
        "user_index",
        "comment",
        "clustered",
        "options",
    ],
)
def test_what_a_drop_would_lose_is_kept(
    own: VaultSpec, monkeypatch: pytest.MonkeyPatch, setup: list[str], rebuilt: set[str]
) -> None:
    spec = own
    _written_by_two(spec)
    written = execute(spec, REVISIONS)
    for statement in setup:
        execute(spec, statement)
    kept, identities, constraints = execute(spec, KEPT), _identities(spec), execute(spec, CONSTRAINTS)
    _named_again(spec, monkeypatch)
    assert execute(spec, REVISIONS) == written
    assert execute(spec, KEPT) == kept
    assert execute(spec, CONSTRAINTS) == constraints
    now = _identities(spec)
    assert {name for name, oid in now.items() if oid != identities[name]} == rebuilt
    assert now.keys() == identities.keys()


def test_a_table_a_foreign_key_refers_to_keeps_its_indexes(own: VaultSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table of the vault's owner refers to edge revisions by their key: nothing is dropped, and
    the reference still holds."""
    spec = own
    _written_by_two(spec)
    written = execute(spec, REVISIONS)
    execute(
        spec,
        'CREATE TABLE {schema}reviewed (src TEXT COLLATE "C", dst TEXT COLLATE "C", edge_type TEXT COLLATE "C", '
        "rev_no INTEGER, FOREIGN KEY (src, dst, edge_type, rev_no) REFERENCES {schema}edge_revisions)",
    )
    execute(spec, "INSERT INTO {schema}reviewed SELECT src, dst, edge_type, rev_no FROM {schema}edge_revisions")
    indexes, constraints = _indexes(spec), execute(spec, CONSTRAINTS)
    _named_again(spec, monkeypatch)
    assert execute(spec, REVISIONS) == written
    assert _indexes(spec) == indexes
    assert execute(spec, CONSTRAINTS) == constraints
    with pytest.raises(Exception, match="reviewed"):
        execute(spec, "INSERT INTO {schema}reviewed VALUES ('nowhere', 'nowhere', 'refers_to', 1)")
