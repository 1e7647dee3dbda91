"""PostgreSQL's backfill (migration 022) gathers the names it finds in a temporary table and writes
them with one UPDATE; when most of the table is named, it drops the table's indexes first and builds
them again after (an UPDATE writes a new entry in each index for every row, at random places: most
of a large upgrade's time). Whichever way it writes, it names every revision as the rule says, and
the table keeps the very indexes and primary key it had: names, definitions, and the key's
uniqueness. The thresholds are lowered so that the small vault of two people takes each path."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.storage import link_actors
from tests.backends import VaultSpec
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


def _indexes(spec: VaultSpec) -> list[tuple[Any, ...]]:
    return execute(spec, INDEXES)


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
    monkeypatch.setattr(link_actors, "REBUILD_ROWS", 1)
    monkeypatch.setattr(link_actors, "COPY_ROWS", copy_rows)
    execute(spec, "UPDATE {schema}edge_revisions SET actor = NULL, request_id = NULL")
    backfill_again(spec)
    assert execute(spec, REVISIONS) == written
    # Built again: other indexes (new identities) of the same names and definitions, the same key.
    again = _indexes(spec)
    assert [r[:4] for r in again] == [r[:4] for r in indexes]
    assert {r[4] for r in again}.isdisjoint(r[4] for r in indexes)
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
