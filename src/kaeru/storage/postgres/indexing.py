"""What a node write stores for full-text matching and BM25 on PostgreSQL, computed in one pass.

A live node's row carries four index values: the literal and the stemmed tsvector (its
`domain.text` tokens, or their stems, as lexemes weighted by field: what `@@` matches, the same
terms SQLite's FTS5 indexes) and the literal and the stemmed term counts with the row's length
(what `bm25` ranks by). `node_index` tokenises each field once, stems each token once and builds
a variant's tsvector and counts in the same loop (decision 16.L4). The tests check it against
plain definitions of each value, one field and one variant at a time
(`tests/storage/pg_reference.py`).
"""

from __future__ import annotations

from typing import NamedTuple

from kaeru.domain.indexroom import MAX_POSITION, POSITIONS_PER_FIELD, index_held
from kaeru.domain.languages import from_tags as language_of
from kaeru.domain.model import Node
from kaeru.domain.text import indexed_name
from kaeru.storage.postgres.bm25 import Terms
from kaeru.storage.postgres.search import ASCII_LOWER, lexeme

__all__ = ["MAX_POSITION", "POSITIONS_PER_FIELD", "NodeIndex", "node_index"]

#: The tsvector's field order (name, tags, description, body: short fields first, so that they never
#: reach the clamped last position, where a lexeme seen in two fields would keep one weight) as indexes
#: into the counts' order (name, description, body, tags: `bm25.FIELDS`), with each field's weight
#: and how many positions a lexeme keeps in it.
_VECTOR_ORDER = tuple(
    (index, weight, POSITIONS_PER_FIELD[weight]) for index, weight in ((0, "A"), (3, "C"), (1, "B"), (2, "D"))
)


class NodeIndex(NamedTuple):
    """A live node's index values: `tsv`, `stv`, the counts `ltf` and `stf` are dumped from, `dl`."""

    tsv: str
    stv: str
    literal: Terms
    stems: Terms
    dl: int


def _lowered(words: list[str]) -> list[str]:
    """The index terms of folded tokens (`search.term`): ASCII capitals lowered, as FTS5 stores them."""
    return [w if w.islower() else w.translate(ASCII_LOWER) for w in words]


def _vector_and_counts(fields: tuple[list[str], list[str], list[str], list[str]]) -> tuple[str, Terms, int]:
    """One variant's tsvector text, term counts and token count, from its fields' terms in the
    counts' order (name, description, body, tags)."""
    counts: Terms = {}
    positions: dict[str, list[str]] = {}
    position = 0
    for index, weight, cap in _VECTOR_ORDER:
        for word in fields[index]:
            position += 1
            found = counts.get(word)
            if found is None:
                found = counts[word] = [0, 0, 0, 0]
            found[index] += 1
            if found[index] <= cap:  # the count so far in this field: positions kept up to the cap
                place = f"{position if position < MAX_POSITION else MAX_POSITION}{weight}"
                kept = positions.get(word)
                if kept is None:
                    positions[word] = [place]
                else:
                    kept.append(place)
    vector = " ".join(f"{lexeme(t)}:{','.join(p)}" for t, p in positions.items())
    return vector, counts, position


def node_index(node: Node) -> NodeIndex:
    """A live node's tsvectors, term counts and length (see the module's docstring), in one pass;
    of a description and a body whose words overflow a tsvector, the words `indexroom.index_held` holds."""
    # The tokens SQLite's row holds too, cut where a tsvector would overflow (`domain.indexroom`):
    # both engines index the same words of such a text, and the words past the room are not stemmed.
    words, word_stems, _ = index_held(
        indexed_name(node), node.description, node.body, node.tags, language_of(node.tags)
    )
    name_t, tags_t, description_t, body_t = map(list, words)
    name_s, tags_s, description_s, body_s = map(list, word_stems)
    tsv, literal, literal_size = _vector_and_counts(
        (_lowered(name_t), _lowered(description_t), _lowered(body_t), _lowered(tags_t))
    )
    stv, stems, stem_size = _vector_and_counts(
        (_lowered(name_s), _lowered(description_s), _lowered(body_s), _lowered(tags_s))
    )
    return NodeIndex(tsv, stv, literal, stems, literal_size + len(node.initiatives) + stem_size)
