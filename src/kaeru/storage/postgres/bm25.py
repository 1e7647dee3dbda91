"""BM25 on PostgreSQL, by the formula of SQLite's FTS5 `bm25()` (issue 17, decision 17.G1).

`ts_rank` has no inverse document frequency: a rare query word counted no more than a common one,
so PostgreSQL ranked differently from SQLite. Here each live node keeps, beside its tsvectors, how
often each term occurs in each field (`ltf` literal terms, `stf` stems: `{term: [name,
description, body, tags]}`) and its length `dl` in the tokens FTS5 counts for the row (the four
literal fields, one scope token per initiative, the four stem fields). The vault's statistics are
kept in the same transaction as every write (by the writing session, 16.M3, or a trigger):
`term_stats` (how many live nodes hold a term, literally and as a stem, in exactly a given set of
fields; migration 017, before it `term_docs`, which is now a view of it) and `text_totals` (live
nodes and their tokens), both split over a few `shard` rows so that concurrent writers rarely wait
on one row.

The score is FTS5's, computed in the same order with the same doubles, so equal inputs give
bit-equal scores and ties fall the same way on both engines:

    idf(t) = log((N - df(t) + 0.5) / (df(t) + 0.5)), or 1e-6 when that is not positive
    score  = -sum_t idf(t) * (f(t) * (k1 + 1)) / (f(t) + k1 * (1 - b + b * dl / avgdl))

with k1 = 1.2, b = 0.75, N the live nodes, avgdl their mean `dl`, df(t) the live nodes holding `t`
in one of the searched fields, and f(t) its occurrences there weighted name 4, description 2,
body 1, tags 2. A prefix term's df counts the nodes holding any term it begins (found through the
GIN index), and its f adds up every such term's occurrences.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

#: FTS5's bm25 constants (fts5_aux.c).
K1 = 1.2
B = 0.75
#: The indexed fields in the order of a term's counts, their bit in `term_stats.fields`, and their
#: bm25 weight: SQLite's column weights (`_LITERAL_WEIGHTS`, `_STEM_WEIGHTS`).
FIELDS = ("name", "description", "body", "tags")
FIELD_BITS = {f: 1 << i for i, f in enumerate(FIELDS)}
WEIGHTS = (4.0, 2.0, 1.0, 2.0)
_dump = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


Terms = dict[str, list[int]]


def dump_terms(terms: Terms) -> str:
    """`ltf`/`stf` as stored."""
    return _dump(terms)


def fields_of(counts: Sequence[int]) -> int:
    """The fields bit set of one term's counts (the migration's `kaeru_term_fields`)."""
    return (counts[0] > 0) | ((counts[1] > 0) << 1) | ((counts[2] > 0) << 2) | ((counts[3] > 0) << 3)


class TermDelta:
    """How one transaction's node writes change the BM25 statistics (`term_stats`, `text_totals`):
    what the trigger adds row by row, gathered and applied once (decision 16.M3). `docs` holds,
    per (term, fields), the change of the literal count and of the stemmed count: one row of
    `term_stats` carries both (decision 16.L3)."""

    def __init__(self) -> None:
        self.docs: dict[tuple[str, int], list[int]] = {}
        self.rows = 0
        self.tokens = 0

    def add(self, literal: Terms | None, stems: Terms | None, dl: int | None, sign: int) -> None:
        """Count (`sign` 1) or uncount (-1) one row's terms; all None for a row out of the index."""
        docs = self.docs
        for variant, terms in ((0, literal), (1, stems)):
            for term, counts in (terms or {}).items():
                key = (term, fields_of(counts))
                found = docs.get(key)
                if found is None:
                    found = docs[key] = [0, 0]
                found[variant] += sign
        if dl is not None:
            self.rows += sign
            self.tokens += sign * dl

    def clear(self) -> None:
        self.docs.clear()
        self.rows = self.tokens = 0


def idf(rows: int, docs: int) -> float:
    """FTS5's inverse document frequency of a term that `docs` of `rows` rows hold."""
    value = math.log((rows - docs + 0.5) / (docs + 0.5))
    return value if value > 0.0 else 1e-6


def field_mask(fields: Sequence[str]) -> int:
    return sum(FIELD_BITS[f] for f in set(fields) if f in FIELD_BITS)


def _frequency(counts: str, fields: Sequence[str]) -> str:
    """SQL for the weighted frequency of one term in one node, from its counts array `counts`
    (a jsonb expression; NULL when the node lacks the term)."""
    parts = [
        f"({counts} ->> {i})::float8" + ("" if WEIGHTS[i] == 1.0 else f" * {WEIGHTS[i]}::float8")
        for i, f in enumerate(FIELDS)
        if f in fields
    ]
    return " + ".join(parts) or "0.0::float8"


def score_sql(
    column: str, terms: Sequence[str], prefix: bool, fields: Sequence[str], idfs: Sequence[float], avgdl: float
) -> tuple[str, str, dict[str, Any]]:
    """The BM25 score of node `n`: a LATERAL join computing each term's weighted frequency `f.f<i>`
    once, the score expression over it, and their parameters. `f.f<i>` is positive exactly when
    the node holds term `i` in one of `fields` (`present_sql`)."""
    params: dict[str, Any] = {"bm_k1": K1, "bm_k1p1": K1 + 1.0, "bm_b": B, "bm_1mb": 1 - B, "bm_avgdl": avgdl}
    frequencies = []
    lookups = []
    # Several terms looked up in one node's counts read them decompressed once (`detoasted`).
    counts = "d.v" if not prefix and len(terms) > 1 else f"n.{column}"
    for i, term in enumerate(terms):
        params[f"bm_t{i}"] = term
        params[f"bm_idf{i}"] = idfs[i]
        if prefix:
            # Every term the prefix begins: their occurrences add up, as FTS5 counts a prefix phrase's.
            frequencies.append(
                f"coalesce((SELECT sum({_frequency('e.value', fields)}) FROM jsonb_each(n.{column}) e "
                f"WHERE starts_with(e.key, %(bm_t{i})s)), 0.0::float8) AS f{i}"
            )
        else:
            lookups.append(f"{counts} -> %(bm_t{i})s AS e{i}")
            frequencies.append(f"coalesce({_frequency(f'x.e{i}', fields)}, 0.0::float8) AS f{i}")
    # OFFSET 0 keeps each lookup a column computed once, not an expression the planner copies into
    # every place that reads it.
    source = f" FROM (SELECT {detoasted(f'n.{column}')} AS v OFFSET 0) d" if counts == "d.v" else ""
    inner = f" FROM (SELECT {', '.join(lookups)}{source} OFFSET 0) x" if lookups else ""
    lateral = f"CROSS JOIN LATERAL (SELECT {', '.join(frequencies)}{inner} OFFSET 0) f"
    norm = "%(bm_k1)s::float8 * (%(bm_1mb)s::float8 + %(bm_b)s::float8 * n.dl / %(bm_avgdl)s::float8)"
    summands = [
        f"%(bm_idf{i})s::float8 * ((f.f{i} * %(bm_k1p1)s::float8) / (f.f{i} + {norm}))" for i in range(len(terms))
    ]
    return lateral, f"-1.0::float8 * ({' + '.join(summands)})", params


def present_sql(count: int, match_all: bool) -> str:
    """Whether node `n` matches the query, from the frequencies of `score_sql`'s LATERAL join: each
    weight is positive and each count a whole number, so `f.f<i> > 0` exactly when the node holds
    term `i` in a searched field, read from the one `ltf`/`stf` value the score reads anyway
    (decision 16.Q1). These are the rows `tsv @@ query` finds, except in a node with a field past
    the tsvector's last position (16,383), where a word in two fields keeps one position's weight
    there: the term counts find it in both fields, as FTS5 does."""
    return f" {'AND' if match_all else 'OR'} ".join(f"f.f{i} > 0.0::float8" for i in range(count))


def frequency_sql(counts: str, fields: Sequence[str]) -> str:
    """The weighted frequency of a term from its counts (`counts`: e.g. `n.stf -> %(t)s`, best
    looked up once in an inner select: each reference decompresses the node's term counts again),
    exactly as `score_sql` computes it (0.0 when the node lacks the term)."""
    return f"coalesce({_frequency(counts, fields)}, 0.0::float8)"


def detoasted(counts: str) -> str:
    """The term counts `counts` (a jsonb column), the same value, decompressed once: a node's row
    is wide enough that PostgreSQL keeps its counts compressed, and every `->` on the column
    decompresses them again — a question of eight words did it eight times a row (decision
    140). Concatenated to an empty object, the value comes back as the
    decompressed copy, which the lookups then share."""
    return f"('{{}}'::jsonb || {counts})"
