"""PostgreSQL's full-text search: `tsvector @@ tsquery` over lexemes built in Python from
`kaeru.domain.text` tokens (never by a PostgreSQL text-search parser), so what matches is identical
to SQLite's FTS5 index, ranked by FTS5's bm25 (`bm25.py`, decision 17.G1); and the vectors a node
write stores (`tsv` literal, `stv` stems)."""

from __future__ import annotations

import bisect
import string
from collections.abc import Callable, Sequence
from typing import Any

from kaeru.domain.model import HypothesisStatus, Node, NodeType
from kaeru.domain.text import indexed_name, manual_tags, stem, tokens
from kaeru.storage.postgres import bm25
from kaeru.storage.postgres.db import PgDb
from kaeru.storage.records import SearchQuery, SearchRow
from kaeru.storage.sql.db import Part

#: tsvector positions are 14-bit; later positions are clamped (they only affect ranking).
_MAX_POSITION = 16383
#: Positions kept per lexeme and field; the body keeps one, which bounds the tsvector of a huge body
#: to its distinct words (PostgreSQL caps a tsvector at 1 MB).
_POSITIONS_PER_FIELD = {"A": 8, "B": 8, "C": 8, "D": 1}
#: The tsvector weight of each indexed field (tsquery weight labels select fields, like FTS5 columns).
FIELD_WEIGHTS = {"name": "A", "description": "B", "tags": "C", "body": "D"}
#: Whether a hit is a refuted hypothesis (a currentness tie-break of search).
_REFUTED = f"coalesce(n.node_type = '{NodeType.HYPOTHESIS}' AND n.status = '{HypothesisStatus.REFUTED}', FALSE)"
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def term(token: str) -> str:
    """The index term of a `domain.text` token, as FTS5's `ascii` tokenizer stores it.

    Tokens are already case-folded, but folding can leave ASCII capitals (NFKD turns the
    mathematical letter "𝐀", which has no case mapping, into "A"); FTS5 lowercases ASCII letters,
    and only those, on both the indexed and the query side, so the lexemes here do the same.
    """
    return token.translate(_ASCII_LOWER)


def _lexeme(token: str) -> str:
    """One literal lexeme for tsvector/tsquery input: quoted, with quotes and backslashes escaped."""
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(
    name: str,
    description: str | None,
    tags: Sequence[str],
    body: str | None,
    fold: Callable[[str], str] | None = None,
) -> str:
    """The tsvector text of one node: its `domain.text` tokens (or their `fold`, e.g. stems) as
    lexemes, weighted by field.

    Built here rather than with `to_tsvector`, whose parser would re-split and re-normalise tokens
    differently from FTS5 (e.g. letters unknown to the server's locale); this way the lexemes are
    exactly the terms SQLite indexes.
    """
    positions: dict[str, list[str]] = {}
    per_field: dict[tuple[str, str], int] = {}
    position = 0
    # Name and tags are short, so they come first and never reach the clamped last position, where
    # a lexeme seen in two fields would keep only one weight (and escape a field filter).
    for weight, text in (("A", name), ("C", " ".join(tags)), ("B", description), ("D", body)):
        for raw in tokens(text):
            token = term(fold(raw) if fold is not None else raw)
            position += 1
            key = (token, weight)
            kept = per_field.get(key, 0)
            if kept < _POSITIONS_PER_FIELD[weight]:
                per_field[key] = kept + 1
                positions.setdefault(token, []).append(f"{min(position, _MAX_POSITION)}{weight}")
    return " ".join(f"{_lexeme(t)}:{','.join(p)}" for t, p in positions.items())


def tsquery_literal(
    query_tokens: Sequence[str],
    match_all: bool,
    prefix: bool,
    fields: Sequence[str] = tuple(FIELD_WEIGHTS),
) -> str:
    """A tsquery that means exactly "these literal tokens": each quoted, joined by & or |, and
    limited to the weights of `fields` (FTS5's `{name tags} : (…)` column filter).

    User text never reaches the tsquery syntax: tokens come from `domain.text` and are quoted.
    """
    weights = "".join(sorted({FIELD_WEIGHTS[f] for f in fields if f in FIELD_WEIGHTS}))
    label = ("*" if prefix else "") + ("" if len(weights) == len(FIELD_WEIGHTS) else weights)
    suffix = f":{label}" if label else ""
    return (" & " if match_all else " | ").join(_lexeme(term(t)) + suffix for t in query_tokens)


def _vector(query: SearchQuery) -> str:
    """The tsvector column a query matches: stems for `recall`, literal tokens for `search`."""
    return "stv" if query.stemmed else "tsv"


class TsSearch(Part):
    """Search over the `tsv`/`stv` columns of `nodes`; statements in psycopg's own `%(name)s` style."""

    _db: PgDb  # `raw_one`/`raw_rows` run statements as written

    def flush_term_stats(self) -> None:
        """Apply the statistics' changes a write has gathered (the session's; a read has none)."""

    @staticmethod
    def _index_terms(node: Node) -> tuple[str, str]:
        """The literal and the stemmed tsvector of a live node: the same field texts SQLite puts in
        the literal and the stem columns of nodes_fts (an auto-generated name is not indexed; the
        stemmed index leaves out the kind/status/lang tag families)."""
        name = indexed_name(node)
        return (
            tsvector_literal(name, node.description, node.tags, node.body),
            tsvector_literal(name, node.description, [manual_tags(node.tags)], node.body, stem),
        )

    def _filters(self, query: SearchQuery) -> tuple[str, str, dict[str, Any]]:
        """WHERE clause for the matches, the "superseded in scope" predicate, and their params."""
        params: dict[str, Any] = {"scope": list(query.initiative_ids)}
        clauses = [
            "NOT n.retracted",
            "n.node_type <> 'audit_event'",
            "EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq AND m.initiative_id = ANY(%(scope)s::bigint[]))",
        ]
        for column, values in query.columns:
            clauses.append(f"n.{column} = ANY(%({column})s::text[])")
            params[column] = list(values)
        if query.tags:
            clauses.append("n.tags @> %(tags)s::text[]")
            params["tags"] = list(query.tags)
        if query.tokens:
            clauses.append(f"n.{_vector(query)} @@ %(q)s::tsquery")
            params["q"] = tsquery_literal(query.tokens, query.match_all, query.prefix, query.fields)
        superseded = (
            "EXISTS (SELECT 1 FROM edges e JOIN nodes s ON s.id = e.src JOIN memberships ms ON ms.node_seq = s.seq "
            "WHERE e.dst = n.id AND e.edge_type = 'supersedes' AND NOT e.retracted AND NOT s.retracted "
            "AND ms.initiative_id = ANY(%(scope)s::bigint[]))"
        )
        return " AND ".join(clauses), superseded, params

    def _bm25(self, query: SearchQuery) -> tuple[str, str, dict[str, Any]]:
        """The LATERAL join and score expression of `query`'s BM25 (`bm25.score_sql`), with the
        vault's statistics read now: the live nodes, their tokens, and each term's document
        frequency in the searched fields (a prefix's counted through the GIN index)."""
        self.flush_term_stats()  # a write's own search counts what it wrote
        terms = [term(t) for t in query.tokens]
        stemmed = bool(query.stemmed)
        column = "stf" if stemmed else "ltf"
        if query.prefix:
            found = [
                self._db.raw_one(
                    f"SELECT count(*) FROM nodes n WHERE n.{_vector(query)} @@ %s::tsquery",
                    (tsquery_literal([t], False, True, query.fields),),
                )
                for t in query.tokens
            ]
            docs = [int(r[0]) if r else 0 for r in found]
            totals = self._db.raw_one("SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0) FROM text_totals")
        else:
            totals = self._db.raw_one(
                "SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0), ARRAY(SELECT coalesce(sum(t.docs), 0) "
                "FROM unnest(%(terms)s::text[]) WITH ORDINALITY q(term, i) LEFT JOIN term_docs t "
                "ON t.stemmed = %(stemmed)s AND t.term = q.term AND t.fields & %(mask)s <> 0 "
                "GROUP BY q.i ORDER BY q.i) FROM text_totals",
                {"terms": terms, "stemmed": stemmed, "mask": bm25.field_mask(query.fields)},
            )
            docs = [int(d) for d in totals[2]] if totals else [0] * len(terms)
        rows, size = (int(totals[0]), int(totals[1])) if totals else (0, 0)
        avgdl = float(size) / float(rows) if rows else 1.0
        idfs = [bm25.idf(rows, d) for d in docs]
        return bm25.score_sql(column, terms, query.prefix, query.fields, idfs, avgdl)

    def search(self, query: SearchQuery) -> tuple[list[SearchRow], int, int]:
        if not query.initiative_ids:
            return [], 0, 0
        where, superseded, params = self._filters(query)
        if query.tokens:
            lateral, score, more = self._bm25(query)
            params.update(more)
            select = f"SELECT n.id, n.seq, {score} AS score, {_REFUTED}"
            source = f"nodes n {lateral}"
            # bm25 is negative, best first, as FTS5's: the same order as SQLite's, ties newest first.
            order = "ORDER BY score, n.seq DESC"
        else:
            select = f"SELECT n.id, n.seq, 0.0::float8 AS score, {_REFUTED}"
            source = "nodes n"
            order = "ORDER BY n.seq DESC"
        keep = f"{where} AND NOT {superseded}" if query.omit_superseded else where
        params["window"] = int(query.window)
        rows = self._db.raw_rows(f"{select} FROM {source} WHERE {keep} {order} LIMIT %(window)s", params)
        total = len(rows)
        omitted = 0
        full = total >= query.window and query.count_total
        if query.omit_superseded or full:
            # One pass counts both what was kept and what was hidden as superseded.
            flag = superseded if query.omit_superseded else "FALSE"
            counts = self._db.raw_one(
                f"SELECT count(*) FILTER (WHERE NOT sup), count(*) FILTER (WHERE sup) "
                f"FROM (SELECT {flag} AS sup FROM nodes n WHERE {where}) hits",
                params,
            )
            assert counts is not None
            if full:
                total = int(counts[0])
            omitted = int(counts[1])
        if omitted and query.superseded_out is not None:
            # The best omitted matches themselves (only when some were), each placed among the rows.
            params["head"] = int(query.superseded_head)
            gone = self._db.raw_rows(
                f"{select} FROM {source} WHERE {where} AND {superseded} {order} LIMIT %(head)s", params
            )
            ranks = [(float(r[2]), -int(r[1])) for r in rows]  # ascending in the ranking's order
            query.superseded_out.extend((bisect.bisect_left(ranks, (float(g[2]), -int(g[1]))), g[0]) for g in gone)
        return [SearchRow(r[0], int(r[1]), float(r[2]), bool(r[3])) for r in rows], total, omitted

    def count_matches(self, query: SearchQuery) -> int:
        if not query.initiative_ids:
            return 0
        where, _, params = self._filters(query)
        row = self._db.raw_one(f"SELECT count(*) FROM nodes n WHERE {where}", params)
        return int(row[0]) if row else 0
