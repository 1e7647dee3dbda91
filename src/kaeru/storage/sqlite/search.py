"""SQLite's full-text search: FTS5 `MATCH`, bm25 ranking and the rare/common-words planner, and
the index rows a node write maintains (literal words for `search`, their stems for `recall`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import apsw

from kaeru.domain.indexroom import index_texts
from kaeru.domain.languages import from_tags as language_of
from kaeru.domain.model import EdgeType, HypothesisStatus, Node, NodeType
from kaeru.domain.text import indexed_name
from kaeru.storage.migrate import INDEX_PENDING
from kaeru.storage.records import SearchQuery, SearchRow
from kaeru.storage.sql.copies import Ranking
from kaeru.storage.sql.db import PROBED_SCOPES
from kaeru.storage.sql.edges import VERDICT_TYPES
from kaeru.storage.sql.rows import NODE_COLS
from kaeru.storage.sql.sections import SectionQueries
from kaeru.storage.sqlite.copies import watermark
from kaeru.storage.sqlite.impacts import COLUMNS
from kaeru.storage.sqlite.matching import CommonWords, fts_match, scope_tokens, tags_held, tags_match

#: A stored row as `_node` reads it (`seq, id, NODE_COLS` of the join's `n`), and as many NULLs:
#: the two arms of a rare search's UNION.
_STORED_COLS = ", ".join(f"n.{c.strip()}" for c in f"seq, id, {NODE_COLS}".split(","))
_NO_STORED_COLS = ", ".join("NULL" for _ in _STORED_COLS.split(","))
#: Live verdict edges `e`, written exactly as the condition of the partial index `edges_verdicts`
#: (migration 007): SQLite uses a partial index only for a query that repeats its condition.
_LIVE_VERDICT = f"{VERDICT_TYPES} AND e.retracted = 0"
#: Whether a live verdict edge points at `n` (its source may be retracted: a superset, never less).
_CONTESTED = f"EXISTS (SELECT 1 FROM edges e WHERE e.dst = n.id AND {_LIVE_VERDICT})"
#: Below this many matching rows, a query skips the scope term and filters by membership instead.
SCOPE_THRESHOLD = 2000
#: When the words match at most this many rows in the whole vault, the ranking joins the rows of `nodes`
#: and reads their stored columns: the page needs no second statement (`SqliteSession._stored`).
INLINE_ROWS = 32
#: The join from full-text matches to their nodes, through the slim `nodes_head` index (migration
#: 005): the planner would take the rowid lookup into `nodes`, whose rows carry whole bodies.
_MATCHED_NODES = "JOIN nodes n INDEXED BY nodes_head ON n.seq = nodes_fts.rowid"
#: Whether a hit is a refuted hypothesis (a currentness tie-break of search), from `nodes_head`.
_REFUTED = f"(n.node_type = '{NodeType.HYPOTHESIS}' AND n.status = '{HypothesisStatus.REFUTED}')"
#: bm25 column weights of `nodes_fts` (name, description, body, tags, scope, then the same four as
#: stems): a literal search ranks by the literal columns, a stemmed one by the stem columns.
_LITERAL_WEIGHTS = "4.0, 2.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0"
_STEM_WEIGHTS = "0.0, 0.0, 0.0, 0.0, 0.0, 4.0, 2.0, 1.0, 2.0"
#: An initiative's scope token counted once (its column alone): whether a row is in the scope.
_SCOPE_WEIGHTS = (0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0)
#: A common-word search ranks in the full-text index alone and joins only its best matches to `nodes_head`
#: (16.B1): first the window plus this many more, to spare a second round when a few are filtered out or superseded.
TOP_K_SLACK = 64
#: A common-word search flags the superseded candidates from a set of ids read once when the scope
#: holds at most this many superseded nodes (decision 16.K1); past it, by a look-up per candidate.
SUPERSEDED_IDS = 4096
#: A scope of at most `few_rows` members, 1/FEW_SHARE of the vault, is ranked by SQL, not new copies (146).
FEW_SHARE = 8
#: `scope_size` answers remembered (decision 16.E4).
SCOPE_SIZES = 256
_new_tuple = tuple.__new__


class FtsSearch(SectionQueries):
    """Search over `nodes_fts`; a read snapshot keeps the stored rows a small search read."""

    #: Rank a common-word search's best matches in the index alone (decision 16.B1); off, every
    #: match is joined, filtered and ranked (the exhaustive plan, kept for `bench.broad` and tests).
    top_k = True
    #: Words matching at most this many rows in the whole vault take the rare plan (0: none do; tests).
    rare_rows = SCOPE_THRESHOLD
    #: A scope of at most this many members, a small share of the vault, ranks in SQL (0: never; tests).
    few_rows = SCOPE_THRESHOLD
    #: The top-k plan's first candidate count beyond the window (tests lower it to force rounds).
    top_k_slack = TOP_K_SLACK
    #: At most this many superseded nodes in scope are flagged from a set (tests lower it).
    superseded_ids = SUPERSEDED_IDS
    #: Rank a common-word search in memory when it can (decision 16.B4); off, the SQL plans do.
    text_cache = True

    _common: CommonWords
    _c: apsw.Connection
    _snapshot: bool
    _stored: dict[int, tuple[Any, ...]]
    _stored_seqs: dict[str, int]

    def scope_size(self, initiative_ids: Sequence[int]) -> int:
        """`SectionQueries.scope_size`, remembered at the watermark in a read snapshot (decision
        16.E4): a count of ~400k memberships at 1M nodes that `recall` asks at every call. The
        memberships and a board's retraction change only when `put_node` writes a node, which
        moves the watermark (`copies.watermark`), so an entry at the snapshot's own watermark is
        exactly what the count would answer."""
        if not self._snapshot or not initiative_ids:
            return super().scope_size(initiative_ids)
        key = (tuple(initiative_ids), watermark(self._db))
        sizes = self._common.scope_sizes
        size = sizes.get(key)
        if size is None:
            size = super().scope_size(initiative_ids)
            if len(sizes) >= SCOPE_SIZES:
                sizes.clear()
            sizes[key] = size
        return size

    def _few(self, initiative_ids: Sequence[int], limit: int, facets: Sequence[str] = ()) -> bool:
        asked = self._snapshot and not facets  # `scope_size` remembered at this snapshot's watermark: no count
        known = self._common.scope_sizes.get((tuple(initiative_ids), watermark(self._db))) if asked else None
        return known <= limit if known is not None else super()._few(initiative_ids, limit, facets)

    def _index(self, seq: int, node: Node) -> None:
        """One row of the full-text index: literal words (search) and their stems (recall)."""
        name = indexed_name(node)
        if node.node_type is NodeType.AUDIT_EVENT:  # no write path makes one; a count would join again
            self._common.audit_free = False
        lang = language_of(node.tags)  # the stems by the node's language's rules (decision 191)
        texts = index_texts(name, node.description, node.body, node.tags, lang)  # cut as PostgreSQL's
        values = (seq, *texts[:4], scope_tokens(node.initiatives), *texts[4:])
        self._db.run(
            "INSERT INTO nodes_fts (rowid, name, description, body, tags, scope, stem_name, stem_description, "
            "stem_body, stem_tags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            values,
        )

    def reindex_text(self) -> int:
        """Fill the full-text index for every live node (after a migration that rebuilt it)."""
        self._db.run("DELETE FROM nodes_fts")
        count = 0
        for row in self._db.rows(f"SELECT seq, id, {NODE_COLS} FROM nodes WHERE retracted = 0"):
            self._index(int(row[0]), self._d.node(row[0], row[1], row[2:]))
            count += 1
        self._db.run(f"DELETE FROM meta WHERE {INDEX_PENDING}")
        self._common.text.clear()  # the same rows again, but copies are never trusted across a rebuild
        return count

    rebuild_text_index = reindex_text

    def _filters(self, query: SearchQuery) -> tuple[str, list[Any], str, list[Any]]:
        """WHERE clause and params for the matches, and the "superseded in scope" predicate."""
        # Without words a small scope's members (of the layers asked, 277) are listed, not walked (147).
        ids = query.initiative_ids
        member, params = (
            self._member_of(ids) if query.tokens else self._members_listed(ids, "n", query.layers, query.tiers)
        )
        clauses = ["n.retracted = 0", "n.node_type <> 'audit_event'", member]
        for column, values in query.columns:
            listed, more = self._d.in_(f"n.{column}", values, "text")
            clauses.append(listed)
            params.extend(more)
        if not query.tokens and (tagged := tags_match(query.tags, query.initiative_ids)) is not None:
            clauses.append("n.seq IN (SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?)")  # 278
            params.append(tagged)
        for held, more in tags_held(query.tags, self._d.listed):
            clauses.append(held)
            params.extend(more)
        scope, sup_params = self._d.in_("ms.initiative_id", ids)
        superseded = (
            "EXISTS (SELECT 1 FROM edges e JOIN nodes s ON s.id = e.src JOIN memberships ms ON ms.node_seq = s.seq "
            f"WHERE e.dst = n.id AND {_LIVE_VERDICT} AND e.edge_type = '{EdgeType.SUPERSEDES}' AND s.retracted = 0 "
            f"AND {scope})"
        )
        return " AND ".join(clauses), params, superseded, sup_params

    def _matches_at_most(self, match: str, cap: int) -> bool:
        """Whether at most `cap` rows match `match` in the whole vault: an unranked probe, which stops
        after `cap + 1` rows where fts5vocab would read a term's whole doclist."""
        return self._count_at_most(match, cap + 1) <= cap

    @staticmethod
    def _match(query: SearchQuery, scoped: bool) -> str:
        """`query`'s MATCH string: its words alone, or intersected with its initiatives' scope tokens."""
        scope = query.initiative_ids if scoped else ()
        return fts_match(query.tokens, query.match_all, query.prefix, scope, query.fields, query.stemmed)

    def _is_rare(self, bare: str) -> bool:
        """Whether the words of `bare` match at most SCOPE_THRESHOLD rows; a common answer is
        remembered (`CommonWords`), so the next search of these words skips the count."""
        if bare in self._common:
            return False
        if self._matches_at_most(bare, self.rare_rows):
            return True
        self._common.add(bare)
        return False

    def _search_rare(
        self, query: SearchQuery, weights: str, where: str, params: list[Any], superseded: str, sup_params: list[Any]
    ) -> tuple[list[SearchRow], int, int] | None:
        """The search when its words match at most SCOPE_THRESHOLD rows in the whole vault: counted up
        to the cap, then ranked and filtered by membership, in one statement. None when the words are
        more common than that (the caller then lets the index intersect them with the scope)."""
        bare = self._match(query, scoped=False)
        if bare in self._common or not self.rare_rows:
            return None
        # Several words (a `recall` query, a phrase of words): each new combination is a MATCH not
        # seen before, and the statement below would rank its first rows before counting them —
        # FTS5's bm25 counts every phrase's rows first, a walk over each common word's whole
        # doclist. The unranked probe stops after `rare_rows + 1` rows, and a common answer is
        # remembered (decision 126).
        probed = len(query.tokens) > 1
        if probed and not self._is_rare(bare):
            return None
        gone, gone_params = (superseded, sup_params) if query.omit_superseded else ("0", [])
        flags = f"{_REFUTED}, {gone}, {_CONTESTED}"
        # `m` ranks the first matches, up to one more than INLINE_ROWS, in one pass over the index;
        # when they are all there are (`k`), they are joined to `nodes` itself and bring their
        # stored columns, the page's nodes — one full-text pass for the whole search. Otherwise `c`
        # counts the matches up to the cap without ranking them, and only under the cap does the
        # second arm rank them again and filter them through the slim `nodes_head`. `k` and `c`
        # are the outer loops of their arms, so `c` is never counted for a small search.
        inline = INLINE_ROWS if self._snapshot else 0
        rows = self._db.rows(
            f"WITH m AS MATERIALIZED (SELECT rowid AS seq, bm25(nodes_fts, {weights}) AS score FROM nodes_fts "
            f"WHERE nodes_fts MATCH ?1 LIMIT {inline + 1}), k AS MATERIALIZED (SELECT count(*) AS n FROM m), "
            "c AS MATERIALIZED (SELECT count(*) AS n FROM "
            f"(SELECT 1 FROM nodes_fts WHERE nodes_fts MATCH ?1 LIMIT {self.rare_rows + 1})) "
            f"SELECT n.id, n.seq, m.score AS score, {flags}, {_STORED_COLS} "
            f"FROM k CROSS JOIN m CROSS JOIN nodes n ON n.seq = m.seq WHERE k.n <= {inline} AND {where} UNION ALL "
            f"SELECT n.id, n.seq, bm25(nodes_fts, {weights}) AS score, {flags}, {_NO_STORED_COLS} "
            f"FROM k CROSS JOIN c CROSS JOIN nodes_fts {_MATCHED_NODES} "
            f"WHERE k.n > {inline} AND c.n <= {self.rare_rows} AND nodes_fts MATCH ?1 AND {where} "
            "ORDER BY score, n.seq DESC",
            [bare, *gone_params, *params, *gone_params, *params],  # each arm binds its own
        )
        if not rows and not probed and not self._is_rare(bare):
            return None
        kept = [SearchRow(r[0], r[1], r[2], bool(r[3]), bool(r[5])) for r in rows if not r[4]]
        _note_superseded(query, [(r[0], bool(r[4])) for r in rows])
        for r in rows:
            if r[6] is not None:
                self._stored[r[1]] = r[6:]
                self._stored_seqs[r[0]] = r[1]
        return kept[: query.window], len(kept), len(rows) - len(kept)

    def _search_common(
        self, query: SearchQuery, weights: str, where: str, params: list[Any], superseded: str, sup_params: list[Any]
    ) -> tuple[list[SearchRow], int, int]:
        """The top-k plan of a common-word search (decision 16.B1): exact, not an estimate.

        `c` ranks the matches in the full-text index alone (bm25 and the rowid, no join) and keeps
        the best `cap`; only those are joined to `nodes_head`, filtered and flagged (refuted,
        superseded). bm25 and the filters do not depend on each other, so the kept rows are exactly
        the exhaustive plan's first ones; when fewer than the window survive and more matches
        exist, the cap grows fourfold and the ranking runs again. Then `total` is counted without
        ranking, and the superseded matches are counted from the supersession edges' side.
        """
        match = self._match(query, scoped=True)
        gone, gone_params = (superseded, sup_params) if query.omit_superseded else ("0", [])
        # The matches a live node in scope supersedes are few: read from the edges' side once, they
        # are flagged here instead of by a look-up per candidate (decision 16.K1); past
        # SUPERSEDED_IDS of them, the look-up per candidate again.
        targets = self._superseded_ids(query.initiative_ids) if query.omit_superseded else frozenset()
        if targets is not None:
            gone, gone_params = "0", []
        # The scoped match is exactly the live members of the scope (`_index_exact`): the candidates
        # are joined for their ids and flags only, not filtered again (decision 16.K1).
        kept_where, kept_params = ("1", []) if self._index_exact() else (where, params)
        window = int(query.window)
        cap = window + self.top_k_slack
        while True:
            rows = self._db.rows(
                f"WITH c AS MATERIALIZED (SELECT rowid AS seq, bm25(nodes_fts, {weights}) AS score FROM nodes_fts "
                f"WHERE nodes_fts MATCH ? ORDER BY score, rowid DESC LIMIT {cap}), "
                "k AS MATERIALIZED (SELECT count(*) AS n FROM c) "
                f"SELECT n.id, n.seq, c.score, {_REFUTED}, {gone}, k.n FROM k CROSS JOIN c "
                f"CROSS JOIN nodes n INDEXED BY nodes_head ON n.seq = c.seq WHERE {kept_where} "
                "ORDER BY c.score, n.seq DESC",
                [match, *gone_params, *kept_params],
            )
            candidates = int(rows[0][5]) if rows else self._count_at_most(match, cap)
            if targets:
                rows = [(r[0], r[1], r[2], r[3], r[0] in targets) for r in rows]
            kept = [r for r in rows if not r[4]]
            if candidates < cap or len(kept) >= window:
                break
            cap *= 4
        _note_superseded(query, [(r[0], bool(r[4])) for r in rows])
        hits = [SearchRow(r[0], r[1], r[2], bool(r[3])) for r in kept[:window]]
        if candidates < cap:  # every match was ranked
            return hits, len(kept), len(rows) - len(kept)
        if not query.count_total:
            return hits, len(kept), len(rows) - len(kept)
        matched = self._scoped_count(match, where, params, query)
        omitted = (
            self._superseded_matches(match, where, params, query.initiative_ids)
            if query.omit_superseded and (targets is None or targets)
            else 0
        )
        return hits, matched - omitted, omitted

    def _ranking(self, query: SearchQuery, scores: bool = True) -> Ranking | None:
        """The scope's matches of `query` ranked in memory as FTS5's bm25 ranks them (decision 16.B4),
        or None when SQL ranks: outside a read snapshot, for a prefix, when the index does not hold
        exactly the scope's live members, or for a few of a large vault's rows (a copy holds them all)."""
        if not self.text_cache or not self._snapshot or query.prefix or not query.initiative_ids:
            return None
        if not self._index_exact():
            return None
        base = _STEM_WEIGHTS if query.stemmed else _LITERAL_WEIGHTS
        columns = {("stem_" + f if query.stemmed else f) for f in query.fields}
        weights = tuple(float(w) if COLUMNS[i] in columns else 0.0 for i, w in enumerate(base.split(",")))
        words = [(fts_match([t], False, False, (), query.fields, query.stemmed), weights) for t in query.tokens]
        scopes = [(f'scope : ("s{int(i)}")', _SCOPE_WEIGHTS) for i in query.initiative_ids]
        if not self._common.text.held(words, scopes):
            size = self.scope_size(query.initiative_ids)
            if size <= self.few_rows and size * FEW_SHARE <= watermark(self._db)[0]:
                return None
        return self._common.text.rank(self._db, self._c, words, scopes, query.match_all, scores)

    def _search_cached(
        self, query: SearchQuery, where: str, params: list[Any]
    ) -> tuple[list[SearchRow], int, int] | None:
        """A common-word search ranked in memory (decision 16.B4): the same rows, order, scores,
        `total` and omissions as `_search_common`, whose steps it follows; None when it cannot."""
        targets = self._superseded_ids(query.initiative_ids) if query.omit_superseded else frozenset()
        if targets is None:
            return None
        ranking = self._ranking(query)
        if ranking is None:
            return None
        window = int(query.window)
        cap = window + self.top_k_slack
        while True:
            seqs, scores = ranking.top(cap)
            ids, refuted = self._common.text.facts(ranking.np, self._db, seqs, _REFUTED)
            gone = [i in targets for i in ids] if targets else [False] * len(ids)
            kept = len(ids) - sum(gone)
            if len(seqs) < cap or kept >= window:
                break
            cap *= 4
        if targets:
            _note_superseded(query, list(zip(ids, gone, strict=True)))
        rows: Iterator[tuple[str, int, float, bool, None]] = zip(ids, seqs, scores, refuted, itertools.repeat(None))
        if targets:
            rows = itertools.compress(rows, [not g for g in gone])
        # SearchRow's own constructor is a Python lambda: a broad page makes 5,000 of them.
        hits = list(map(_new_tuple, itertools.repeat(SearchRow), itertools.islice(rows, window)))
        if len(seqs) < cap or not query.count_total:  # every match was ranked, or no total asked
            return hits, kept, len(ids) - kept
        match = self._match(query, scoped=True)
        omitted = self._superseded_matches(match, where, params, query.initiative_ids) if targets else 0
        return hits, ranking.count - omitted, omitted

    def _superseded_ids(self, ids: Sequence[int]) -> frozenset[str] | None:
        """The ids a live node of the scope supersedes (the `superseded` predicate of `_filters`,
        read from the edges' side through `edges_verdicts`), or None past `superseded_ids` of them."""
        scope, scope_params = self._d.in_("ms.initiative_id", ids)
        found = self._db.rows(
            "SELECT DISTINCT e.dst FROM edges e INDEXED BY edges_verdicts CROSS JOIN nodes s ON s.id = e.src "
            f"WHERE {_LIVE_VERDICT} AND e.edge_type = '{EdgeType.SUPERSEDES}' AND s.retracted = 0 "
            f"AND EXISTS (SELECT 1 FROM memberships ms WHERE ms.node_seq = s.seq AND {scope}) "
            f"LIMIT {self.superseded_ids + 1}",
            scope_params,
        )
        return None if len(found) > self.superseded_ids else frozenset(r[0] for r in found)

    def _count_at_most(self, match: str, cap: int) -> int:
        row = self._db.one(
            "SELECT count(*) FROM (SELECT 1 FROM nodes_fts WHERE nodes_fts MATCH ? LIMIT ?)", (match, cap)
        )
        return int(row[0]) if row else 0

    def _index_exact(self) -> bool:
        """Whether the rows a scoped match finds are exactly the live, non-audit members of its scope (decision
        16.K1). `put_node` deletes a node's index row when it is retracted and writes it again, scope tokens
        included, whenever its memberships change (both in the same write as `memberships`; `doctor` checks
        the rows against the live nodes), so only an `audit_event` node in the index could differ: none is
        ever written, and an old vault is read once."""
        known = self._common.audit_free
        if known is None:
            row = self._db.one(
                "SELECT EXISTS (SELECT 1 FROM nodes INDEXED BY nodes_head WHERE node_type = 'audit_event' "
                "AND retracted = 0)"
            )
            known = self._common.audit_free = not (row is not None and row[0])
        return known

    def _scoped_count(self, match: str, where: str, params: list[Any], query: SearchQuery) -> int:
        """How many live, non-audit nodes of the scope match `match` (a scoped MATCH) and the filters. Without
        column or tag filters, and when the index holds exactly the scope's live members (`_index_exact`),
        this is a count of the index's rows alone: the doclists of the words and of the scope tokens
        intersected in FTS5, cheaper than joining every match to `nodes_head` and checking its memberships
        again (decision 16.K1)."""
        if not query.columns and not query.tags and self._index_exact():
            ranking = self._ranking(query, scores=False)
            if ranking is not None:
                return ranking.count
            row = self._db.one("SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH ?", (match,))
        else:
            row = self._db.one(
                f"SELECT count(*) FROM nodes_fts {_MATCHED_NODES} WHERE nodes_fts MATCH ? AND {where}",
                [match, *params],
            )
        return int(row[0]) if row else 0

    def _superseded_matches(self, match: str, where: str, params: list[Any], ids: Sequence[int]) -> int:
        """How many matches a live node in scope supersedes, found from the edges' side: the live
        supersession edges (the partial index `edges_verdicts`) are few beside a common word's matches,
        and each target is checked against the match by its rowid."""
        scope, scope_params = self._d.in_("ms.initiative_id", ids)
        # The edges first, through `edges_verdicts` (CROSS JOIN keeps the order): left to itself the
        # planner walks all of the scope's memberships.
        row = self._db.one(
            "SELECT count(*) FROM (SELECT DISTINCT e.dst AS id FROM edges e INDEXED BY edges_verdicts "
            f"CROSS JOIN nodes s ON s.id = e.src WHERE {_LIVE_VERDICT} AND e.edge_type = '{EdgeType.SUPERSEDES}' "
            "AND s.retracted = 0 AND EXISTS (SELECT 1 FROM memberships ms WHERE ms.node_seq = s.seq "
            f"AND {scope})) d CROSS JOIN nodes n ON n.id = d.id WHERE {where} "
            "AND EXISTS (SELECT 1 FROM nodes_fts WHERE nodes_fts MATCH ? AND nodes_fts.rowid = n.seq)",
            [*scope_params, *params, match],
        )
        return int(row[0]) if row else 0

    def search(self, query: SearchQuery) -> tuple[list[SearchRow], int, int]:
        where, params, superseded, sup_params = self._filters(query)
        every = 0  # when known: a bound on the matches, so one ranked pass holds them all
        if query.tokens:
            weights = _STEM_WEIGHTS if query.stemmed else _LITERAL_WEIGHTS
            rare = self._search_rare(query, weights, where, params, superseded, sup_params)
            if rare is not None:
                return rare
            if self.top_k and not query.columns and not query.tags:
                cached = self._search_cached(query, where, params)
                if cached is not None:
                    return cached
            match = self._match(query, scoped=True)
            if self.top_k and not query.columns and not query.tags:
                # The top-k plan pays off only when the scope's matches exceed its first candidate
                # cap: under it, it would rank every match anyway and then join and sort them a
                # second time (decision 16.B3). The unranked probe stops at the cap; under it, the
                # plan below ranks every match at once (so a window of superseded matches cannot
                # leave the page empty).
                cap = int(query.window) + self.top_k_slack
                if not self._matches_at_most(match, cap):
                    return self._search_common(query, weights, where, params, superseded, sup_params)
                every = cap
            source = f"FROM nodes_fts {_MATCHED_NODES} WHERE nodes_fts MATCH ? AND "
            head: list[Any] = [match]
            columns = f"n.id, n.seq, bm25(nodes_fts, {weights}) AS score, {_REFUTED}"
            order = "ORDER BY score, n.seq DESC"
        else:
            source = "FROM nodes n WHERE "
            head = []
            columns = f"n.id, n.seq, 0.0 AS score, {_REFUTED}"
            order = "ORDER BY n.seq DESC"
        if not query.omit_superseded:
            rows = self._db.rows(
                f"SELECT {columns} {source}{where} {order} LIMIT {int(query.window)}", [*head, *params]
            )
            total = len(rows)
            if len(rows) == query.window and query.count_total:
                count = self._db.one(f"SELECT count(*) {source}{where}", [*head, *params])
                total = int(count[0]) if count else 0
            return [SearchRow(r[0], r[1], r[2], bool(r[3])) for r in rows], total, 0
        # One pass flags superseded rows instead of a second query counting them.
        limit = max(int(query.window) * 2, every)
        flagged = self._db.rows(
            f"SELECT {columns}, {superseded} AS gone {source}{where} {order} LIMIT {limit}",
            [*sup_params, *head, *params],
        )
        kept = [r for r in flagged if not r[4]]
        omitted = len(flagged) - len(kept)
        _note_superseded(query, [(r[0], bool(r[4])) for r in flagged])
        total = len(kept)
        if len(flagged) == limit or len(kept) > query.window:
            if query.count_total:
                # One more pass over the matches counts both the kept and the superseded.
                counts = self._db.one(
                    f"SELECT count(*), coalesce(sum({superseded}), 0) {source}{where}",
                    [*sup_params, *head, *params],
                )
                matched, omitted = (int(counts[0]), int(counts[1])) if counts else (0, 0)
                total = matched - omitted
            kept = kept[: query.window]
        return [SearchRow(r[0], r[1], r[2], bool(r[3])) for r in kept], total, omitted

    def count_matches(self, query: SearchQuery) -> int:
        where, params, _, _ = self._filters(query)
        if not query.tokens:
            row = self._db.one(f"SELECT count(*) FROM nodes n WHERE {where}", params)
            return int(row[0]) if row else 0
        bare, source = self._match(query, scoped=False), f"nodes_fts {_MATCHED_NODES}"
        if self._is_rare(bare):  # at most SCOPE_THRESHOLD rows: filtered by membership, or by the scope's
            # tokens when the index holds exactly its live members (16.K1): no join, no look-up a match
            few = 0 < len(query.initiative_ids) <= PROBED_SCOPES and not (query.columns or query.tags)
            if few and self._index_exact():
                bare, source, where, params = self._match(query, scoped=True), "nodes_fts", "1", []
            row = self._db.one(f"SELECT count(*) FROM {source} WHERE nodes_fts MATCH ? AND {where}", [bare, *params])
            return int(row[0]) if row else 0
        return self._scoped_count(self._match(query, scoped=True), where, params, query)


def _note_superseded(query: SearchQuery, ranked: list[tuple[str, bool]]) -> None:
    """Fill `query.superseded_out` from the ranked `(id, omitted as superseded)` matches."""
    if query.superseded_out is None:
        return
    kept = 0
    for node_id, gone in ranked:
        if not gone:
            kept += 1
        elif len(query.superseded_out) < query.superseded_head:
            query.superseded_out.append((kept, node_id))
