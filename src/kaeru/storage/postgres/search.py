"""PostgreSQL's full-text search: `tsvector @@ tsquery` over lexemes built in Python from
`kaeru.domain.text` tokens (never by a PostgreSQL text-search parser), so what matches is identical
to SQLite's FTS5 index, ranked by FTS5's bm25 (`bm25.py`, decision 17.G1). The vectors a node write
stores (`tsv` literal, `stv` stems) are built in `indexing.py`."""

from __future__ import annotations

import bisect
import string
from collections.abc import Sequence
from typing import Any

from kaeru.domain.model import HypothesisStatus, NodeType
from kaeru.domain.naming import forms
from kaeru.storage.postgres import bm25
from kaeru.storage.postgres.db import PgDb
from kaeru.storage.records import SearchQuery, SearchRow
from kaeru.storage.sql.db import Part, layer_facets

#: The tsvector weight of each indexed field (tsquery weight labels select fields, like FTS5 columns).
FIELD_WEIGHTS = {"name": "A", "description": "B", "tags": "C", "body": "D"}
#: Whether a hit is a refuted hypothesis (a currentness tie-break of search).
_REFUTED = f"coalesce(n.node_type = '{NodeType.HYPOTHESIS}' AND n.status = '{HypothesisStatus.REFUTED}', FALSE)"
#: ASCII capitals to lower case: FTS5's `ascii` tokenizer lowers those letters, and only those.
ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def term(token: str) -> str:
    """The index term of a `domain.text` token, as FTS5's `ascii` tokenizer stores it.

    Tokens are already case-folded, but folding can leave ASCII capitals (NFKD turns the
    mathematical letter "𝐀", which has no case mapping, into "A"); FTS5 lowercases ASCII letters,
    and only those, on both the indexed and the query side, so the lexemes here do the same.
    """
    return token.translate(ASCII_LOWER)


def lexeme(token: str) -> str:
    """One literal lexeme for tsvector/tsquery input: quoted, with quotes and backslashes escaped."""
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


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
    return (" & " if match_all else " | ").join(lexeme(term(t)) + suffix for t in query_tokens)


#: Whether a live node in the scope supersedes `n` (search omits such hits by default).
_SUPERSEDED = (
    "EXISTS (SELECT 1 FROM edges e JOIN nodes s ON s.id = e.src JOIN memberships ms ON ms.node_seq = s.seq "
    "WHERE e.dst = n.id AND e.edge_type = 'supersedes' AND NOT e.retracted AND NOT s.retracted "
    "AND ms.initiative_id = ANY(%(scope)s::bigint[]))"
)
#: The same, written so that the planner cannot turn it into a hash of every supersession edge (an
#: `EXISTS` may be: it then read every supersession edge of the vault for a search of a few hits;
#: a sub-select with LIMIT is looked up per match through `edges_dst`).
_SUPERSEDED_EACH = (
    "coalesce((SELECT TRUE FROM edges e JOIN nodes s ON s.id = e.src JOIN memberships ms ON ms.node_seq = s.seq "
    "WHERE e.dst = n.id AND e.edge_type = 'supersedes' AND NOT e.retracted AND NOT s.retracted "
    "AND ms.initiative_id = ANY(%(scope)s::bigint[]) LIMIT 1), FALSE)"
)
#: Words are common when more than one node in this many holds them (the document frequencies the
#: statistics keep): then a ranked search reads its matches from the term counts, not the GIN index.
COMMON_DIVISOR = 4
#: A search flags superseded matches from the ids read once from the edges' side when the scope
#: holds at most this many superseded nodes; past it, by the predicate per match.
SUPERSEDED_IDS = 4096


def _vector(query: SearchQuery) -> str:
    """The tsvector column a query matches: stems for `recall`, literal tokens for `search`."""
    return "stv" if query.stemmed else "tsv"


class TsSearch(Part):
    """Search over the `tsv`/`stv` columns of `nodes`; statements in psycopg's own `%(name)s` style."""

    _db: PgDb  # `raw_one`/`raw_rows` run statements as written
    _read_only: bool
    #: The matches a ranked search of this read snapshot counted (`_remember_count`).
    _counted: dict[tuple[Any, ...], int]
    #: Words held by more than one node in this many are matched from their term counts (0: never;
    #: tests set it both ways).
    common_divisor = COMMON_DIVISOR
    #: At most this many superseded nodes in scope are flagged from a list of ids (tests lower it).
    superseded_ids = SUPERSEDED_IDS

    def flush_term_stats(self) -> None:
        """Apply the statistics' changes a write has gathered (the session's; a read has none)."""

    def _filters(self, query: SearchQuery, match: bool = True, few: bool = False) -> tuple[str, str, dict[str, Any]]:
        """WHERE clause for the matches, the "superseded in scope" predicate, and their params;
        without `match`, the words' own condition is left to the caller (`_common_match`).

        `few`: the GIN index finds the matches (a rare word's), so the scope is tested on each
        match's own row (`nodes.initiatives`, which is a live node's memberships) instead of joined
        to `memberships`. The index's estimate of a rare word's matches is coarse (many times the
        rows that match), and with the join the planner then hashed all of the scope's memberships
        to keep a few rows (decision 142)."""
        params: dict[str, Any] = {"scope": list(query.initiative_ids)}
        if few:
            member = "n.initiatives && %(scope)s::bigint[]"
        elif query.layers:
            # The scope's members of those layers read from their ranges of `memberships_pkey`
            # (initiative, facet = tier:layer, node), not every member's row tested: a core or hot
            # layer holds a few nodes of a large scope (decision 276). The columns are still tested.
            member = (
                "n.seq IN (SELECT m.node_seq FROM memberships m WHERE m.initiative_id = ANY(%(scope)s::bigint[]) "
                "AND m.facet = ANY(%(facets)s::text[]))"
            )
            params["facets"] = list(layer_facets(query.layers, query.tiers))
        else:
            member = (
                "EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq "
                "AND m.initiative_id = ANY(%(scope)s::bigint[]))"
            )
        clauses = ["NOT n.retracted", "n.node_type <> 'audit_event'", member]
        for column, values in query.columns:
            clauses.append(f"n.{column} = ANY(%({column})s::text[])")
            params[column] = list(values)
        plain = [tag for tag in query.tags if len(forms(tag)) == 1]
        if plain:
            clauses.append("n.tags @> %(tags)s::text[]")
            params["tags"] = plain
        for i, tag in enumerate(tag for tag in query.tags if len(forms(tag)) > 1):
            # Either form: the decomposed one an older kaeru stored (decision 184).
            clauses.append(f"n.tags && %(tag_forms{i})s::text[]")
            params[f"tag_forms{i}"] = list(forms(tag))
        if query.tokens and match:
            clauses.append(f"n.{_vector(query)} @@ %(q)s::tsquery")
            params["q"] = tsquery_literal(query.tokens, query.match_all, query.prefix, query.fields)
        return " AND ".join(clauses), _SUPERSEDED, params

    def _statistics(self, query: SearchQuery) -> tuple[int, int, list[int]]:
        """The vault's live nodes and their tokens, and each query term's document frequency in the
        searched fields (a prefix's counted through the GIN index)."""
        self.flush_term_stats()  # a write's own search counts what it wrote
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
            variant = "stemmed" if query.stemmed else "literal"  # a column of `term_stats` (16.L3)
            totals = self._db.raw_one(
                f"SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0), ARRAY(SELECT coalesce(sum(t.{variant}), 0) "
                "FROM unnest(%(terms)s::text[]) WITH ORDINALITY q(term, i) LEFT JOIN term_stats t "
                "ON t.term = q.term AND t.fields & %(mask)s <> 0 "
                "GROUP BY q.i ORDER BY q.i) FROM text_totals",
                {"terms": [term(t) for t in query.tokens], "mask": bm25.field_mask(query.fields)},
            )
            docs = [int(d) for d in totals[2]] if totals else [0] * len(query.tokens)
        rows, size = (int(totals[0]), int(totals[1])) if totals else (0, 0)
        return rows, size, docs

    def vault_counts_at_most(self, stems: Sequence[str], cap: int) -> list[int | None]:
        # The kept statistics (migration 017) count them exactly at one look-up a stem.
        _, _, docs = self._statistics(SearchQuery([], list(stems), stemmed=True))
        return [n if n <= cap else None for n in docs]

    def _bm25(self, query: SearchQuery) -> tuple[str, str, str | None, dict[str, Any]]:
        """`query`'s BM25 (`bm25.score_sql`) with the vault's statistics read now: the LATERAL join,
        the score expression, the match condition read from the join when the words are common
        (`bm25.present_sql`; None: the caller matches through the GIN index), and their params."""
        rows, size, docs = self._statistics(query)
        avgdl = float(size) / float(rows) if rows else 1.0
        idfs = [bm25.idf(rows, d) for d in docs]
        terms = [term(t) for t in query.tokens]
        column = "stf" if query.stemmed else "ltf"
        lateral, score, params = bm25.score_sql(column, terms, query.prefix, query.fields, idfs, avgdl)
        return lateral, score, self._common_match(query, rows, docs), params

    def _common_match(self, query: SearchQuery, rows: int, docs: Sequence[int]) -> str | None:
        """The match condition of words that most nodes hold, from the term counts the score reads
        (`bm25.present_sql`), or None. The GIN index finds few matches fast, but for a common word
        it finds nearly every node, and the planner then scans them all testing `tsv @@ query` —
        reading each node's tsvector (~1.2 KB, out of line) besides its term counts, also for
        nodes outside the scope; the counts alone decide the same rows (decision 16.Q1)."""
        if query.prefix or not rows:
            return None
        matched = min(docs) if query.match_all else sum(docs)
        return bm25.present_sql(len(docs), query.match_all) if matched * self.common_divisor > rows else None

    def _superseded_ids(self, params: dict[str, Any]) -> list[str] | None:
        """The ids a live node of the scope supersedes (the `superseded` predicate, read from the
        edges' side), or None past `superseded_ids` of them."""
        found = self._db.raw_rows(
            "SELECT DISTINCT e.dst FROM edges e JOIN nodes s ON s.id = e.src JOIN memberships ms "
            "ON ms.node_seq = s.seq WHERE e.edge_type = 'supersedes' AND NOT e.retracted AND NOT s.retracted "
            f"AND ms.initiative_id = ANY(%(scope)s::bigint[]) LIMIT {int(self.superseded_ids) + 1}",
            {"scope": params["scope"]},
        )
        return None if len(found) > self.superseded_ids else [str(r[0]) for r in found]

    def search(self, query: SearchQuery) -> tuple[list[SearchRow], int, int]:
        if not query.initiative_ids:
            return [], 0, 0
        if not query.tokens:
            return self._search_unranked(query)
        lateral, score, common, more = self._bm25(query)
        where, _, params = self._filters(query, match=False, few=common is None)
        params.update(more)
        if common is None:
            where += f" AND n.{_vector(query)} @@ %(q)s::tsquery"
            params["q"] = tsquery_literal(query.tokens, query.match_all, query.prefix, query.fields)
        else:
            where += f" AND ({common})"
        sup = "FALSE"
        if query.omit_superseded and common is None:
            sup = _SUPERSEDED_EACH  # few matches: each looked up
        elif query.omit_superseded:
            # Many matches, few superseded nodes: their ids read once instead of a look-up per match.
            targets = self._superseded_ids(params)
            if targets is None:
                sup = _SUPERSEDED_EACH
            elif targets:
                sup, params["targets"] = "n.id = ANY(%(targets)s::text[])", targets
        params["window"] = int(query.window)
        params["head"] = int(query.superseded_head) if query.superseded_out is not None else 0
        # Every match is scored once (`hits`), then counted (kept and superseded), and only the best
        # window of the kept and the best head of the superseded are joined to their nodes. bm25 is
        # negative, best first, as FTS5's: the same order as SQLite's, ties newest first.
        rows = (self._db.raw_rows if common is not None else self._alone)(
            f"WITH hits AS MATERIALIZED (SELECT n.seq, {score} AS score, {sup} AS sup FROM nodes n {lateral} "
            f"WHERE {where}), c AS (SELECT count(*) FILTER (WHERE NOT sup) AS kept, count(*) FILTER (WHERE sup) "
            "AS gone FROM hits) "
            f"SELECT c.kept, c.gone, n.id, h.seq, h.score, {_REFUTED}, h.sup FROM c LEFT JOIN LATERAL ("
            "(SELECT seq, score, sup FROM hits WHERE NOT sup ORDER BY score, seq DESC LIMIT %(window)s) UNION ALL "
            "(SELECT seq, score, sup FROM hits WHERE sup AND c.gone > 0 ORDER BY score, seq DESC LIMIT %(head)s)) h "
            # each of the few rows kept looked up by its key (a join would scan every node to hash them)
            "ON TRUE LEFT JOIN LATERAL (SELECT n.id, n.node_type, n.status FROM nodes n WHERE n.seq = h.seq) n ON TRUE "
            "ORDER BY h.sup, h.score, h.seq DESC",
            params,
        )
        # The counts come on every row, and on one row of NULLs when no hit is returned.
        matched, omitted = int(rows[0][0]), int(rows[0][1])
        self._remember_count(query, matched + omitted)
        hits = [r for r in rows if r[3] is not None]
        kept = [SearchRow(r[2], int(r[3]), float(r[4]), bool(r[5])) for r in hits if not r[6]]
        total = matched if len(kept) >= query.window and query.count_total else len(kept)
        if omitted and query.superseded_out is not None:
            # The best omitted matches themselves (only when some were), each placed among the rows.
            ranks = [(r.score, -r.seq) for r in kept]  # ascending in the ranking's order
            query.superseded_out.extend(
                (bisect.bisect_left(ranks, (float(g[4]), -int(g[3]))), g[2]) for g in hits if g[6]
            )
        return kept, total, omitted

    def _alone(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """A statement of the GIN plan run without parallel workers (decision 16.P3): the index's
        estimate for a rare word (far above the dozen rows that hold it) drew parallel workers,
        whose start cost many times what the statement takes alone. The setting holds for this
        statement only (both sent in its pipeline and the next)."""
        self._db.send("SET LOCAL max_parallel_workers_per_gather = 0")
        found = self._db.raw_rows(sql, params)
        self._db.send("SET LOCAL max_parallel_workers_per_gather TO DEFAULT")
        return found

    @staticmethod
    def _count_key(query: SearchQuery) -> tuple[Any, ...]:
        """What `count_matches` counts: the matches of these words under these filters in scope."""
        return (
            tuple(query.initiative_ids), tuple(query.tokens), query.match_all, query.prefix, query.stemmed,
            tuple(query.fields), tuple((c, tuple(v)) for c, v in query.columns), tuple(query.tags),
        )  # fmt: skip

    def _remember_count(self, query: SearchQuery, matched: int) -> None:
        """A read snapshot keeps what a ranked search counted, so `count_matches` of the same words
        (recall's scope idf of a one-word query, right after its ranked search) is not a second
        pass over every match; a write transaction's statements each see their own snapshot."""
        if self._read_only:
            self._counted[self._count_key(query)] = matched

    def _search_unranked(self, query: SearchQuery) -> tuple[list[SearchRow], int, int]:
        """A search without words: the filters' matches, newest first."""
        where, superseded, params = self._filters(query)
        select = f"SELECT n.id, n.seq, 0.0::float8 AS score, {_REFUTED}"
        order = "ORDER BY n.seq DESC"
        keep = f"{where} AND NOT {superseded}" if query.omit_superseded else where
        params["window"] = int(query.window)
        rows = self._db.raw_rows(f"{select} FROM nodes n WHERE {keep} {order} LIMIT %(window)s", params)
        total = len(rows)
        omitted = 0
        full = total >= query.window and query.count_total
        # Without `count_total` (recall's channels) nothing past the window is counted, nor the
        # superseded matches it hid: a pass over every match of the scope (decision 276).
        if query.count_total and (query.omit_superseded or full):
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
            params["head"] = int(query.superseded_head)
            gone = self._db.raw_rows(
                f"{select} FROM nodes n WHERE {where} AND {superseded} {order} LIMIT %(head)s", params
            )
            ranks = [(float(r[2]), -int(r[1])) for r in rows]
            query.superseded_out.extend((bisect.bisect_left(ranks, (float(g[2]), -int(g[1]))), g[0]) for g in gone)
        return [SearchRow(r[0], int(r[1]), float(r[2]), bool(r[3])) for r in rows], total, omitted

    def count_matches(self, query: SearchQuery) -> int:
        if not query.initiative_ids:
            return 0
        if not query.tokens or query.prefix:
            where, _, params = self._filters(query)
            row = self._db.raw_one(f"SELECT count(*) FROM nodes n WHERE {where}", params)
            return int(row[0]) if row else 0
        known = self._counted.get(self._count_key(query)) if self._read_only else None
        if known is not None:
            return known
        lateral, _, common, more = self._bm25(query)
        where, _, params = self._filters(query, match=False, few=common is None)
        if common is None:
            where += f" AND n.{_vector(query)} @@ %(q)s::tsquery"
            params["q"] = tsquery_literal(query.tokens, query.match_all, query.prefix, query.fields)
            row = self._db.raw_one(f"SELECT count(*) FROM nodes n WHERE {where}", params)
        else:
            params.update(more)
            row = self._db.raw_one(f"SELECT count(*) FROM nodes n {lateral} WHERE {where} AND ({common})", params)
        return int(row[0]) if row else 0
