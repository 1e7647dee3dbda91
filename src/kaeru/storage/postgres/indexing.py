"""What a node write stores for full-text matching and BM25 on PostgreSQL, computed in one pass.

A live node's row carries four index values: the literal and the stemmed tsvector
(`search.tsvector_literal`) and the literal and the stemmed term counts with the row's length
(`bm25.node_term_counts`). Those two definitions each tokenise every field again, once per
variant, and stem every token twice: 235 µs of client CPU for a 900-character note. `node_index`
tokenises each field once, stems each token once and builds a variant's tsvector and counts in
the same loop: 97 µs (decision 16.L4), the same strings and counts, which the tests check against
the two definitions.
"""

from __future__ import annotations

from typing import NamedTuple

from kaeru.domain.model import Node
from kaeru.domain.text import indexed_name, manual_tags, stem_words, tokens
from kaeru.storage.postgres.bm25 import Terms
from kaeru.storage.postgres.search import _MAX_POSITION, _POSITIONS_PER_FIELD, _lexeme

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
#: The tsvector's field order (name, tags, description, body: `tsvector_literal`'s) as indexes
#: into the counts' order (name, description, body, tags: `bm25.FIELDS`), with each field's weight
#: and how many positions a lexeme keeps in it.
_VECTOR_ORDER = tuple(
    (index, weight, _POSITIONS_PER_FIELD[weight]) for index, weight in ((0, "A"), (3, "C"), (1, "B"), (2, "D"))
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
    return [w if w.islower() else w.translate(_ASCII_LOWER) for w in words]


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
                place = f"{position if position < _MAX_POSITION else _MAX_POSITION}{weight}"
                kept = positions.get(word)
                if kept is None:
                    positions[word] = [place]
                else:
                    kept.append(place)
    vector = " ".join(f"{_lexeme(t)}:{','.join(p)}" for t, p in positions.items())
    return vector, counts, position


def node_index(node: Node) -> NodeIndex:
    """`tsvector_literal` of the literal and the stemmed fields and `node_term_counts`, at once."""
    name = indexed_name(node)
    tag_text = " ".join(node.tags)
    kept_tags = manual_tags(node.tags)
    name_t, description_t, body_t, tags_t = (tokens(t) for t in (name, node.description, node.body, tag_text))
    stem_tags_t = tags_t if kept_tags == tag_text else tokens(kept_tags)
    tsv, literal, literal_size = _vector_and_counts(
        (_lowered(name_t), _lowered(description_t), _lowered(body_t), _lowered(tags_t))
    )
    stv, stems, stem_size = _vector_and_counts(
        (
            _lowered(stem_words(name_t)),
            _lowered(stem_words(description_t)),
            _lowered(stem_words(body_t)),
            _lowered(stem_words(stem_tags_t)),
        )
    )
    return NodeIndex(tsv, stv, literal, stems, literal_size + len(node.initiatives) + stem_size)
