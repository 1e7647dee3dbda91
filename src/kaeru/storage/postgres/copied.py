"""A common-word search and count on PostgreSQL answered from the store's in-memory copies
(`textcache.TextCopies`, decision 16.C1) when they can: the same rows, order, scores, `total`,
omissions and successors as `TsSearch`'s common-word plan, whose steps this follows; otherwise that
plan (or the GIN one) answers, unchanged."""

from __future__ import annotations

import bisect
from itertools import repeat
from typing import Any

from kaeru.storage.postgres import bm25
from kaeru.storage.postgres.copystate import Phrase
from kaeru.storage.postgres.search import TsSearch, term
from kaeru.storage.postgres.textcache import COPIES_DIVISOR, CopiedRanking, TextCopies
from kaeru.storage.records import SearchQuery, SearchRow
from kaeru.storage.sql.copies import Ranking

_new_tuple = tuple.__new__


class CopiedSearch(TsSearch):
    """`TsSearch` with common words ranked and counted from the store's copies in a read snapshot."""

    #: Rank from the copies when they can (tests switch it off to compare with the SQL plans).
    text_cache = True
    _copies: TextCopies | None
    #: `_statistics` of this read snapshot by query words (they cannot change within it).
    _stats: dict[tuple[Any, ...], tuple[int, int, list[int]]]

    def _statistics(self, query: SearchQuery) -> tuple[int, int, list[int]]:
        if not self._read_only:
            return super()._statistics(query)
        key = (tuple(query.tokens), query.stemmed, query.prefix, tuple(query.fields))
        found = self._stats.get(key)
        if found is None:
            found = self._stats[key] = super()._statistics(query)
        return found

    def _copied(self, query: SearchQuery, scores: bool) -> Ranking | None:
        """`query`'s matches in scope ranked (or only counted) from the copies, or None: only in a
        read snapshot, for whole words that not only a few nodes hold (their matches are exactly the
        rows holding a word in a searched field, as the SQL plans' are), without column or tag
        filters."""
        copies = self._copies
        if copies is None or not self.text_cache or not self._read_only or not query.initiative_ids:
            return None
        if not query.tokens or query.prefix or query.columns or query.tags:
            return None
        rows, size, docs = self._statistics(query)
        # Words one node in `COPIES_DIVISOR` holds are ranked from the copies too, though SQL would
        # match them through the GIN index: SQL decompresses each of a question's few thousand
        # matches' term counts, where the copies' vectors are read once (decision 140). 0: never.
        divisor = self.common_divisor and max(self.common_divisor, COPIES_DIVISOR)
        matched = min(docs) if query.match_all else sum(docs)
        if not rows or matched * divisor <= rows:
            return None
        column = "stf" if query.stemmed else "ltf"
        fields = tuple(f for f in bm25.FIELDS if f in query.fields)
        phrases: list[Phrase] = [(column, term(t), fields) for t in query.tokens]
        idfs = [bm25.idf(rows, d) for d in docs] if scores else None
        avgdl = float(size) / float(rows) if rows else 1.0  # as `_bm25`
        return copies.rank(
            self._db, phrases, list(query.initiative_ids), query.match_all, idfs, avgdl, docs=docs, vault=rows
        )

    def search(self, query: SearchQuery) -> tuple[list[SearchRow], int, int]:
        found = self._search_copied(query)
        return found if found is not None else super().search(query)

    def _search_copied(self, query: SearchQuery) -> tuple[list[SearchRow], int, int] | None:
        ranking = self._copied(query, scores=True)
        if not isinstance(ranking, CopiedRanking) or ranking.rows is None or ranking.scores is None:
            return None
        targets: list[int] = []
        if query.omit_superseded:
            seqs = self._superseded_seqs(list(query.initiative_ids))
            if seqs is None:
                return None  # many superseded nodes: the SQL plan looks each match up
            targets = seqs
        np, rows, scores = ranking.np, ranking.rows, ranking.scores
        gone = np.isin(rows, np.array(targets, dtype=np.int64)) if targets else np.zeros(len(rows), dtype=bool)
        kept = Ranking(np, rows[~gone], scores[~gone])
        omitted = int(np.count_nonzero(gone))
        self._remember_count(query, kept.count + omitted)
        seqs, best = kept.top(int(query.window)) if kept.count else ([], [])
        head = int(query.superseded_head) if omitted and query.superseded_out is not None else 0
        gone_seqs, gone_scores = Ranking(np, rows[gone], scores[gone]).top(head) if head else ([], [])
        assert self._copies is not None
        ids = self._copies.ids(np, self._db, [*seqs, *gone_seqs])
        refuted = (ranking.refuted[np.array(seqs, dtype=np.int64)] > 0).tolist() if seqs else []
        # SearchRow's own constructor is a Python lambda: a broad page makes 5,000 of them.
        hits = list(map(_new_tuple, repeat(SearchRow), zip(ids, seqs, best, refuted, repeat(None))))
        total = kept.count if len(hits) >= query.window and query.count_total else len(hits)
        if head and query.superseded_out is not None:
            # The best omitted matches, each placed among the rows (as the SQL plan places them).
            ranks = [(score, -s) for s, score in zip(seqs, best, strict=True)]
            query.superseded_out.extend(
                (bisect.bisect_left(ranks, (score, -s)), node)
                for s, score, node in zip(gone_seqs, gone_scores, ids[len(seqs) :], strict=True)
            )
        return hits, total, omitted

    def _superseded_seqs(self, scope: list[int]) -> list[int] | None:
        """The nodes a live node of the scope supersedes (`_superseded_ids`, by seq), or None past
        `superseded_ids` of them."""
        found = self._db.raw_rows(
            "SELECT DISTINCT d.seq FROM edges e JOIN nodes s ON s.id = e.src JOIN memberships ms "
            "ON ms.node_seq = s.seq JOIN nodes d ON d.id = e.dst WHERE e.edge_type = 'supersedes' "
            "AND NOT e.retracted AND NOT s.retracted AND ms.initiative_id = ANY(%(scope)s::bigint[]) "
            f"LIMIT {int(self.superseded_ids) + 1}",
            {"scope": scope},
        )
        return None if len(found) > self.superseded_ids else [int(r[0]) for r in found]

    def count_matches(self, query: SearchQuery) -> int:
        if self._read_only and self._count_key(query) not in self._counted:
            ranking = self._copied(query, scores=False)
            if ranking is not None:
                self._remember_count(query, ranking.count)
                return ranking.count
        return super().count_matches(query)
