"""A PostgreSQL node write computes its index values in one pass (`postgres.indexing.node_index`,
decision 16.L4): they must be exactly the values the plain definitions give (`pg_reference`) — the
tsvectors (what `@@` matches) and the counts and length (what the BM25 statistics and scores are
made of). No database needed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kaeru.domain.model import Layer, Node, NodeType, Tier, Visibility
from kaeru.domain.text import indexed_name, manual_tags, stem
from kaeru.storage.postgres.indexing import node_index
from tests.storage.pg_reference import node_term_counts, tsvector_literal

#: Words that stem, repeat past a field's kept positions, fold to capitals (𝐀 → "A"), are
#: Cyrillic, unspaced, or need quoting in a tsvector.
_WORDS = st.sampled_from(
    ["harbour", "harbours", "running", "runs", "the", "𝐀lpha", "ÉCOLE", "кошки", "東京タワー", "o'neil", "back\\slash",
     "snake_case", "getUserName", "12", "4.5", "kind", "lantern"]
)  # fmt: skip
_TEXT = st.lists(_WORDS, max_size=30).map(" ".join)
_TAGS = st.lists(
    st.sampled_from(["kind:claim", "status:open", "lang:en", "topic:harbour", "topic:running", "Harbour", "x"]),
    max_size=4,
    unique=True,
)


def _node(name: str, body: str | None, description: str | None, tags: list[str], initiatives: int) -> Node:
    return Node(
        id="0190a0a0-0000-7000-8000-000000000001", rev_no=1, revision="1-abcdefabcdef", node_type=NodeType.SCRATCH,
        tier=Tier.OPERATIONAL, name=name, body=body, description=description, tags=tuple(tags), layer=Layer.HOT,
        visibility=Visibility.SHARED, status=None, properties={}, initiatives=tuple(range(1, initiatives + 1)),
        created_at="2026-01-02T03:04:05.000006Z", recorded_at="2026-01-02T03:04:05.000007Z",
    )  # fmt: skip


def _reference(node: Node) -> tuple[str, str, dict[str, list[int]], dict[str, list[int]], int]:
    name = indexed_name(node)
    literal, stems, dl = node_term_counts(node)
    return (
        tsvector_literal(name, node.description, node.tags, node.body),
        tsvector_literal(name, node.description, [manual_tags(node.tags)], node.body, stem),
        literal,
        stems,
        dl,
    )


@settings(max_examples=300, deadline=None)
@given(
    name=_TEXT,
    body=st.none() | _TEXT,
    description=st.none() | _TEXT,
    tags=_TAGS,
    initiatives=st.integers(1, 3),
)
def test_one_pass_gives_the_definitions_values(
    name: str, body: str | None, description: str | None, tags: list[str], initiatives: int
) -> None:
    node = _node(name, body, description, tags, initiatives)
    assert tuple(node_index(node)) == _reference(node)


def test_positions_past_the_last_are_clamped_alike() -> None:
    """A body past the tsvector's last position (16,383): positions clamped, name and tags first."""
    body = " ".join(f"w{i % 9000} harbour" for i in range(9000))
    node = _node("harbour lantern", body, "the running harbours", ["topic:harbour", "kind:claim"], 2)
    assert tuple(node_index(node)) == _reference(node)
