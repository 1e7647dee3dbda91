"""A node read back is the node written: every field, through every way the store reads nodes."""

from __future__ import annotations

import pytest

from kaeru.domain.model import Layer, Node, NodeType, Tier, Visibility
from kaeru.errors import KaeruError
from kaeru.storage.base import SearchQuery, Store
from kaeru.storage.sqlite.store import SqliteStore
from tests.backends import VaultSpec


def distinct_node(initiatives: tuple[int, ...]) -> Node:
    """A node whose every field holds a value no other field has."""
    return Node(
        id="0190a0a0-0000-7000-8000-000000000001",
        rev_no=1,
        revision="1-abcdefabcdef",
        node_type=NodeType.HYPOTHESIS,
        tier=Tier.ARCHIVAL,
        name="lantern-name",
        body="lantern body text",
        description="lantern description",
        tags=("topic:lantern", "kind:claim"),
        layer=Layer.HOT,
        visibility=Visibility.SHARED,
        status="open",
        properties={"confidence": 0.4, "source": {"url": "u"}},
        initiatives=initiatives,
        created_at="2026-01-02T03:04:05.000006Z",
        recorded_at="2026-01-02T03:04:05.000007Z",
        retracted=False,
        pinned=True,
    )


def test_every_field_of_a_node_survives_the_store(store: Store) -> None:
    """Each field holds a value no other field has, so a column decoded into the wrong field (row
    decoding is positional, for speed) cannot go unnoticed."""
    with store.write() as session:
        first = session.create_initiative("alpha", "2026-01-01T00:00:00.000000Z")
        second = session.create_initiative("beta", "2026-01-01T00:00:00.000001Z")
        written = distinct_node((first.id, second.id))
        session.put_node(written, request_id=None, actor="test")
    with store.read() as session:
        got = session.get_node(written.id)
        assert got is not None and got.seq > 0
        expected = written.evolve(seq=got.seq)
        assert got == expected
        assert session.nodes_by_ids([written.id]) == {written.id: expected}
        assert session.nodes_by_seqs([got.seq]) == {written.id: expected}
        assert session.node_at(written.id, written.recorded_at) == expected
    with store.read() as session:  # the page a small search reads with its ranking (SQLite)
        rows, total, _ = session.search(SearchQuery(initiative_ids=[first.id], tokens=["lantern"]))
        assert total == 1 and rows[0].id == written.id
        assert session.nodes_by_seqs([rows[0].seq]) == {written.id: expected}
        assert session.nodes_by_ids([written.id, "missing"]) == {written.id: expected}


def test_a_new_node_is_written_without_a_look_up_and_never_over_a_stored_one(store: Store) -> None:
    """`put_node(new=True)` (`create_node`'s fresh ids) skips the look-up of a current revision
    (issue 14): the node reads back as written, and an id already stored is refused, not overwritten."""
    with store.write() as session:
        first = session.create_initiative("alpha", "2026-01-01T00:00:00.000000Z")
        written = distinct_node((first.id,))
        session.put_node(written, request_id=None, actor="test", new=True)
    with store.read() as session:
        got = session.get_node(written.id)
        assert got is not None and got == written.evolve(seq=got.seq)
    again = written.evolve(name="another-name", body="another body")
    with pytest.raises(KaeruError), store.write() as session:
        session.put_node(again, request_id=None, actor="test", new=True)
    with store.read() as session:
        assert session.get_node(written.id) == got
        assert [r.node.rev_no for r in session.revision_log(written.id)] == [1]


def test_a_lone_surrogate_in_tags_or_properties_reads_back(sqlite_vault: VaultSpec) -> None:
    """SQLite: `json.dumps` stores a lone surrogate as the escape `\\ud800`; the faster JSON parser
    refuses that escape, so the store must still read such a node (search, page and read alike).
    (PostgreSQL refuses the write itself: psycopg encodes text as strict UTF-8.)"""
    store = SqliteStore(sqlite_vault.settings().sqlite_path)
    try:
        with store.write() as session:
            scope = session.create_initiative("alpha", "2026-01-01T00:00:00.000000Z")
            lone = "\ud800"
            written = distinct_node((scope.id,)).evolve(tags=(f"x{lone}",), properties={"url": f"http://x/{lone}"})
            session.put_node(written, request_id=None, actor="test")
        with store.read() as session:
            got = session.get_node(written.id)
            assert got is not None and got.tags == written.tags and got.properties == written.properties
            rows, total, _ = session.search(SearchQuery(initiative_ids=[scope.id], tokens=["lantern"]))
            assert total == 1
            assert session.nodes_by_seqs([rows[0].seq])[written.id].tags == written.tags
    finally:
        store.close()
