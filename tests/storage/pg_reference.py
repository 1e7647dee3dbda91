"""Plain definitions of what a PostgreSQL node write stores for matching and ranking, one field and
one variant at a time: the oracle `postgres.indexing.node_index` (one pass, decision 16.L4) is
checked against, and what the BM25 statistics are counted from in the tests. Written here, not in
the product, which only needs the one-pass version."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence

from kaeru.domain.model import Node
from kaeru.domain.text import indexed_name, manual_tags, stem_words, tokens
from kaeru.storage.postgres.indexing import MAX_POSITION, POSITIONS_PER_FIELD
from kaeru.storage.postgres.search import lexeme, term

Terms = dict[str, list[int]]


def tsvector_literal(
    name: str,
    description: str | None,
    tags: Sequence[str],
    body: str | None,
    fold: Callable[[str], str] | None = None,
) -> str:
    """The tsvector text of one node: its `domain.text` tokens (or their `fold`, e.g. stems) as
    lexemes, weighted by field — name and tags first, then description and body — each lexeme
    keeping up to its field's `POSITIONS_PER_FIELD` positions, clamped at `MAX_POSITION`."""
    positions: dict[str, list[str]] = {}
    per_field: dict[tuple[str, str], int] = {}
    position = 0
    for weight, text in (("A", name), ("C", " ".join(tags)), ("B", description), ("D", body)):
        for raw in tokens(text):
            token = term(fold(raw) if fold is not None else raw)
            position += 1
            key = (token, weight)
            kept = per_field.get(key, 0)
            if kept < POSITIONS_PER_FIELD[weight]:
                per_field[key] = kept + 1
                positions.setdefault(token, []).append(f"{min(position, MAX_POSITION)}{weight}")
    return " ".join(f"{lexeme(t)}:{','.join(p)}" for t, p in positions.items())


def _counts(texts: Sequence[str | None], stemmed: bool) -> tuple[Terms, int]:
    """Each term's occurrences per field of `texts` (name, description, body, tags), and how many
    tokens the fields hold; terms lowered as FTS5's `ascii` tokenizer stores them."""
    found: Terms = {}
    size = 0
    for i, text in enumerate(texts):
        words = tokens(text)
        size += len(words)
        for raw, n in Counter(stem_words(words) if stemmed else words).items():
            found.setdefault(term(raw), [0, 0, 0, 0])[i] += n
    return found, size


def node_term_counts(node: Node) -> tuple[Terms, Terms, int]:
    """A live node's literal and stemmed terms (`{term: [name, description, body, tags]}`) and its
    `dl`: the same field texts SQLite puts in the literal and the stem columns of `nodes_fts`, and
    the row's length as FTS5 counts it (both variants and one scope token per initiative)."""
    name = indexed_name(node)
    literal, literal_size = _counts((name, node.description, node.body, " ".join(node.tags)), False)
    stems, stem_size = _counts((name, node.description, node.body, manual_tags(node.tags)), True)
    return literal, stems, literal_size + len(node.initiatives) + stem_size


def node_terms(node: Node) -> tuple[str, str, int]:
    """A live node's `ltf`, `stf` (as JSON) and `dl` (`node_term_counts`)."""
    literal, stems, size = node_term_counts(node)
    return json.dumps(literal), json.dumps(stems), size
