"""A broad search's bm25 ranking computed in memory, exactly as FTS5 computes it (decision 16.B4).

FTS5 has no early termination: `bm25()` scores every match of a common word (tens of thousands
of rows at 100k nodes), and it cannot rescore a list of candidates cheaply (16.K3: it counts
each phrase's documents again per row looked up). But its arithmetic is simple and its inputs are
few: per phrase, the number of rows holding it anywhere in the table (`nHit`) and, per row, its
weighted count of the phrase (`aFreq`: the column weight of each instance, summed) and its tokens
in all columns (`D`); for the table, its rows and tokens (the `averages` record). So a `TextCache`,
owned by the store (through `CommonWords`, which its sessions share), keeps for each phrase a search
asked for — a word in its columns, or an initiative's scope token — its `aFreq` in each row in the
smallest type that holds every value exactly (whole weights, small counts: 1 byte for the benchmark
corpus's words), dense by row id, or for a phrase in fewer than ~1 row in 10 its rows' ids beside
their values (`PhraseCopy`, 5 bytes a match; decision 198), read once from FTS5 itself by a small
auxiliary function (`kaeru_impact`: the phrase's instances by column; a scope token's copy only
marks its rows); and once for all phrases the rows' `D`, decoded from FTS5's own
`nodes_fts_docsize` table as rankings need them, by id or all at once (2 bytes a row while every
row holds under 65,536 tokens; decision 138) — decision
16.E1: a session's ~17 phrases at 1M nodes take ~18 MB, where 16.B4's 8 bytes a row and phrase
took 8 MB each. It ranks a query with numpy in the same order of floating-point operations as
`fts5Bm25Function`, so the scores are FTS5's to the bit (checked against `bm25()` by the property
test `tests/storage/test_search_top_k.py`), ties and all.

Never stale: a node's index row changes only when `put_node` writes the node (`_node_written`), and
every such write either inserts a new row of `nodes` (a new `seq`, never reused: nodes are never
deleted) or moves the node's previous revision into `past_revisions` (its `rev_seq` only grows:
that table is never pruned). So `(max(nodes.seq), max(past_revisions.rev_seq))`, read in the
search's own snapshot, is a watermark: a copy (or the row sizes) at an older one reads back the rows
written since — new rows by one range query (`rowid > seq`), revised ones (retracted, moved,
rewritten) by id — and a copy at a newer one (an older snapshot than the copy) is not used. Only a
read snapshot (committed rows) refreshes a copy; a write transaction ranks in SQL. Without numpy
(an install that left the dependency out), past the memory bound, or past `REFRESH_ROWS` revised rows (the
copy is then read again whole), the caller falls back to the SQL plans, which give the same answer.
In a scope of at most half the vault, a word's copy holds the scope's rows only, its `nHit` counted
in the whole vault beside it (decision 259).
"""

from __future__ import annotations

import itertools
import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import apsw

from kaeru.storage.sql.copies import (
    SPARSE_SHARE,
    PhraseCopy,
    Ranking,
    bm25_scores,
    idf,
    numpy_module,
    packed_uuid,
    uuid_texts,
)
from kaeru.storage.sql.db import Db
from kaeru.storage.sqlite.copies import (
    COUNTER,
    ID_BYTES,
    READER,
    Facts,
    ImpactReader,
    Sizes,
    averages,
    count_matching,
    impact,
    put_sizes,
    read_facts,
    read_impacts,
    read_sizes,
    revised_since,
    watermark,
    within_scopes,
)
from kaeru.storage.sqlite.warmlist import RecentRankings

if TYPE_CHECKING:
    import numpy as np
    from numpy import ndarray

#: A phrase's MATCH and its columns' weights.
Phrase = tuple[str, tuple[float, ...]]
#: The columns of `nodes_fts`, in order (migration 006).
COLUMNS = ("name", "description", "body", "tags", "scope", "stem_name", "stem_description", "stem_body", "stem_tags")
#: The most memory a `TextCache` holds in phrase copies and row sizes (decision 16.E1: at most ~1 byte
#: a row of the vault a phrase, ~5 a match for a sparse one, 2 a row for the sizes): 64 MiB is ~60
#: common phrases at 1M nodes — a session's broad words in `search` and in `recall` (their stems), and
#: the scope, take ~17 at 1M (~19 MB) — and many more of the middle words a question holds (198).
#: Only a copy idle for `IDLE_RANKINGS` rankings is given up (least recently used first); while the
#: copies in use fill it, a new phrase is ranked by SQL.
CACHE_BYTES = 64 * 2**20
#: A copy reads back at most this many revised rows by id (each is one FTS5 look-up, many times a
#: row read in order); past it, the copy is read again whole.
REFRESH_ROWS = 64
#: A revised row read back by id (an FTS5 look-up opening the phrase's doclists again) costs about
#: this many rows of a copy read whole: a copy with fewer rows a revised row is read whole (274).
BY_ID_COST = 32
#: A copy is given up for another only when no ranking used it for this many rankings (else SQL
#: ranks the new phrase): copies evicting each other in turn would cost more than SQL every time.
IDLE_RANKINGS = 64
#: What a copy keeps alive besides its array's data, counted with it against `max_bytes`: the
#: array's header, the `PhraseCopy`, its watermark, its key's MATCH text (a word's and its scopes')
#: and the cache's entry, as tracemalloc measures them (`tests/storage/test_search_top_k.py`; the
#: key's column weights are shared, `TextCache._copy`).
COPY_OVERHEAD = 704
#: The share of `max_bytes` the ids and refuted flags of ranked rows (`ID_BYTES` + 1 a row) may take.
FACTS_SHARE = 3
#: The auxiliary function that reads a row's `aFreq` (of phrase 0) for the copies.
FUNCTION = "kaeru_impact"
#: Rows read and decoded at a time (a copy or the sizes of a million rows never sit in Python lists).
CHUNK_ROWS = 65_536


class TextCache:
    """The phrase copies and row sizes of one store (see the module's docstring): shared by its
    sessions and threads; a lock guards them. Copies and sizes are replaced, never changed, so a
    ranking works on arrays no other thread writes. The ids and refuted flags (`Facts`) are filled
    in place under the lock while rankings read them without it: a row's id is written before its
    state, and a reader reads the state first, so a row it sees as read has its id. The lock is
    held while a copy is read from the database (every row holding the phrase): another thread's
    ranking waits for it."""

    def __init__(self, max_bytes: int | None = None, refresh_rows: int | None = None):
        self.max_bytes = CACHE_BYTES if max_bytes is None else max_bytes
        self.refresh_rows = REFRESH_ROWS if refresh_rows is None else refresh_rows
        #: `BY_ID_COST` (tests set 0: revised rows read back by id up to `refresh_rows` whatever the copy).
        self.by_id_cost = BY_ID_COST
        #: Past this many row sizes not read yet, a ranking reads them all (None: a quarter of the
        #: rows; tests set both ways).
        self.bulk_rows: int | None = None
        #: How much smaller than dense a copy must be to be kept sparse (`PhraseCopy.of`; tests set
        #: 0, every copy sparse, and a large share, every copy dense).
        self.sparse_share = SPARSE_SHARE
        #: The copies, least recently used first (a use moves one to the end): the busy ones, used
        #: within the last `IDLE_RANKINGS` rankings, are a suffix, the idle ones a prefix.
        self._held: OrderedDict[tuple[str, tuple[float, ...]], PhraseCopy] = OrderedDict()
        #: The copies' `nbytes`, summed as they come and go (summing thousands of copies for every
        #: copy read or refreshed made a long session's searches slower and slower).
        self._bytes = 0
        #: One tuple of column weights for each set of them (a query builds its own), shared by keys.
        self._weights: dict[tuple[float, ...], tuple[float, ...]] = {}
        #: Every row's `D`, which all the copies' rankings share.
        self._sizes: Sizes | None = None
        #: The ids and refuted flags of rows a page showed.
        self._facts: Facts | None = None
        self._lock = threading.Lock()
        #: Rankings asked for so far (the clock of `PhraseCopy.used`).
        self._rankings = 0
        self._registered: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()
        #: Reads a copy whole (`_load`, under the lock: one read at a time).
        self._reader = ImpactReader()
        #: Copies read whole and rows read back since, and the sizes read whole: what the tests check.
        self.loads = 0
        self.rows_read = 0
        self.size_loads = 0
        #: Row sizes read by id for a ranking (`_sizes_for`).
        self.size_fills = 0
        self.recent = RecentRankings()  # kept for the next process's warm-up (decision 270)

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._bytes = 0
            self._sizes = None
            self._facts = None

    @property
    def nbytes(self) -> int:
        """The bytes of the copies and sizes held (what `max_bytes` bounds; the ids and flags apart)."""
        with self._lock:
            return self._bytes + (self._sizes.nbytes if self._sizes else 0)

    def held(self, words: Sequence[Phrase], scopes: Sequence[Phrase]) -> bool:
        """Whether a copy of every word (of the whole vault, or within `scopes`) and of every scope
        is held, at whatever watermark (`rank` would then read only the rows written since)."""
        within = within_scopes(scopes)
        with self._lock:
            return all((m, ()) in self._held for m, _ in scopes) and all(
                (m, w) in self._held or (f"({m}) AND ({within})", w) in self._held for m, w in words
            )

    def _within(self, np: Any, db: Db, scopes: Sequence[Phrase], mark: tuple[int, int], rows: int) -> str | None:
        """The scopes' MATCH when the words' copies are to hold their rows only — the scopes hold at
        most half of the vault's `rows` (decision 259) —, "" when the whole vault's; None when a
        scope's copy cannot be had. A scope's copy is read first when it is not held yet."""
        with self._lock:
            known = [self._held.get((m, ())) for m, _ in scopes]
        if any(k is None for k in known):
            known = [self._copy(np, db, m, (), mark) for m, _ in scopes]
        if any(k is None for k in known):
            return None
        return within_scopes(scopes) if 2 * sum(k.hits for k in known if k is not None) <= rows else ""

    def rank(
        self,
        db: Db,
        conn: apsw.Connection,
        words: Sequence[tuple[str, tuple[float, ...]]],
        scopes: Sequence[tuple[str, tuple[float, ...]]],
        match_all: bool,
        scores: bool = True,
    ) -> Ranking | None:
        """The rows matching `scopes` (any) and `words` (all or any), each `(MATCH of one phrase,
        column weights)`, with their bm25 scores (`scores`), as this read snapshot sees them; None
        when this cache cannot say (no numpy, too big, an older snapshot than a copy)."""
        # No copies (a one-shot command, decision 268): numpy is not even imported.
        if self.max_bytes <= 0 or not words or not scopes or (np := numpy_module()) is None:
            return None
        self.recent.note(words, scopes, match_all, scores)
        if conn not in self._registered:
            conn.register_fts5_function(FUNCTION, impact)
            conn.register_fts5_function(READER, self._reader)
            conn.register_fts5_function(COUNTER, self._reader.count)
            self._registered.add(conn)
        mark = watermark(db)
        block = db.one("SELECT block FROM nodes_fts_data WHERE id = 1")
        if block is None or block[0] is None:
            return None
        total_rows, total_tokens = averages(bytes(block[0]))
        # At least 2 bytes a row for the sizes and 1 a phrase: copies that could not fit at once
        # are not read in vain.
        if total_rows <= 0 or (mark[0] + 1) * (2 + len(words) + len(scopes)) > self.max_bytes:
            return None
        with self._lock:
            self._rankings += 1
        copies = []
        try:
            sizes = self._sizes_at(np, db, mark) if scores else None
            if scores and sizes is None:
                return None
            # A word's copy may hold its scope's rows only (decision 259); a scope phrase only says
            # which rows are in scope (its column weighs 0 in the ranking): its copy is read without
            # the auxiliary function (`()` weights), no Python call a row.
            if (within := self._within(np, db, scopes, mark, total_rows)) is None:
                return None
            for match, weights in words:
                key, word = (f"({match}) AND ({within})", (match, within)) if within else (match, None)
                if (held := self._copy(np, db, key, weights, mark, word)) is None:
                    return None
                copies.append(held)
            for match, _ in scopes:
                if (held := self._copy(np, db, match, (), mark)) is None:
                    return None
                copies.append(held)
        except apsw.Error:  # a copy could not be read: SQL ranks (and reports a real fault)
            return None
        found, scope = copies[: len(words)], copies[len(words) :]
        length = mark[0] + 1
        in_scope = scope[0].mask(np, length)
        for other in scope[1:]:
            in_scope |= other.mask(np, length)
        present = found[0].mask(np, length)
        for other in found[1:]:
            if match_all:
                present &= other.mask(np, length)
            else:
                present |= other.mask(np, length)
        present &= in_scope
        if sizes is None:  # a count: the rows are not listed
            return Ranking(np, None, None, int(np.count_nonzero(present)))
        rows = np.flatnonzero(present)
        # `fts5Bm25Function`, operation for operation: the scope phrases add 0 (their column weighs 0),
        # then each word's term, summed in the query's phrase order, and the sum negated.
        avgdl = float(total_tokens) / float(total_rows)
        freqs = [held.at(np, rows) for held in found]
        idfs = [idf(total_rows, held.vault_hits) for held in found]
        scored = bm25_scores(np, freqs, idfs, self._sizes_for(np, db, sizes, rows), avgdl)
        return Ranking(np, rows.astype(np.int64, copy=False), scored)

    def facts(self, np: Any, db: Db, seqs: Sequence[int], refuted_sql: str) -> tuple[list[str], list[bool]]:
        """The id and the refuted flag of each row of `seqs` in this snapshot: kept ones (dense by
        row id, `ID_BYTES` an id and a byte of state), the rest read through `nodes_head` and kept
        (ids never change; a refuted flag changes only with a revision, which the next call reads
        back)."""
        mark = watermark(db)
        held: Facts | None = None
        with self._lock:
            facts = self._facts
            if (mark[0] + 1) * (ID_BYTES + 1) > self.max_bytes // FACTS_SHARE:
                self._facts = None  # too many rows to keep: read each time
            elif facts is None or mark > facts.mark:
                revised = revised_since(db, facts.mark, self.refresh_rows) if facts is not None else None
                self._facts = Facts.after(np, facts, revised, mark)
            if self._facts is not None and self._facts.mark == mark:
                held = self._facts
        at = np.array(seqs, dtype=np.int64)
        if held is None:
            return read_facts(db, seqs, refuted_sql)
        # `state` first: a row is marked kept only after its id is written (below).
        state = held.state[at]
        missing = np.flatnonzero(state == 0)
        ids = uuid_texts(np, held.ids[at])
        refuted: list[bool] = (state == 2).tolist()
        if len(missing):
            wanted = at[missing]
            read_ids, read_refuted = read_facts(db, wanted.tolist(), refuted_sql)
            for i, node_id, flag in zip(missing.tolist(), read_ids, read_refuted, strict=True):
                ids[i], refuted[i] = node_id, flag
            raw = [packed_uuid(i) for i in read_ids]
            fits = np.array([r is not None for r in raw], dtype=bool)
            with self._lock:
                if self._facts is held and fits.any():  # same watermark: rows only become kept, never change
                    kept = np.frombuffer(b"".join(r for r in raw if r is not None), dtype=np.uint8)
                    held.ids[wanted[fits]] = kept.reshape(-1, ID_BYTES)
                    held.state[wanted[fits]] = np.where(np.array(read_refuted, dtype=bool)[fits], 2, 1)
        return ids, refuted

    def warm(self, db: Db, mark: tuple[int, int]) -> None:
        """Every row's size at `mark` read now, as a lasting process's first broad ranking would (269)."""
        np = numpy_module() if self.max_bytes > 0 else None
        if np is not None and 2 * mark[0] < self.max_bytes and (sizes := self._sizes_at(np, db, mark)):
            self._sizes_for(np, db, sizes, np.arange(len(sizes.size)))

    def _sizes_at(self, np: Any, db: Db, mark: tuple[int, int]) -> Sizes | None:
        """Every row's `D` at `mark`: the held sizes, brought up to it (new rows by range, revised
        ones by id, or all read again past `refresh_rows`); None for an older snapshot than them."""
        with self._lock:
            held = self._sizes
            if held is not None:
                if held.mark == mark:
                    return held
                if held.mark[0] > mark[0] or held.mark[1] > mark[1]:
                    return None
            revised = revised_since(db, held.mark, self.refresh_rows) if held is not None else None
            if held is None or revised is None:  # none read yet: as rankings need them
                self._sizes = Sizes(np.zeros(mark[0] + 1, dtype=np.uint16), mark, complete=False)
                return self._sizes
            else:
                size = np.zeros(mark[0] + 1, dtype=held.size.dtype)
                size[: len(held.size)] = held.size
                if revised:
                    size[np.array(revised, dtype=np.int64)] = 0
                    size = put_sizes(
                        np,
                        size,
                        read_sizes(db, " WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(revised),)),
                    )
                if mark[0] > held.mark[0]:
                    size = put_sizes(np, size, read_sizes(db, " WHERE id > ?", (held.mark[0],)))
            self._sizes = Sizes(size, mark, held.complete)
            return self._sizes

    def _sizes_for(self, np: Any, db: Db, sizes: Sizes, rows: np.ndarray) -> np.ndarray:
        """The `D` of `rows` (row ids), those not read yet read now: by id when they are few, else
        every row at once (reading one by id costs several times a row of the whole table): a process's
        first broad search at 1M nodes read the sizes of all its rows for a word in 14,000 of them
        (decision 138)."""
        found = cast("ndarray", sizes.size[rows])
        if sizes.complete or len(rows) == 0 or bool(found.all()):
            return found
        with self._lock:
            missing = rows[sizes.size[rows] == 0]
            bulk = self.bulk_rows if self.bulk_rows is not None else len(sizes.size) // 4
            if len(missing) > bulk:
                read = read_sizes(db, "", ())
                sizes.complete = True
                self.size_loads += 1
            else:
                read = read_sizes(db, " WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(missing.tolist()),))
                self.size_fills += 1
            sizes.size = put_sizes(np, sizes.size, read)
            sizes.nbytes = int(sizes.size.nbytes)  # widened when a row holds 65,536 tokens or more
            return cast("ndarray", sizes.size[rows])

    def _copy(
        self,
        np: Any,
        db: Db,
        match: str,
        weights: tuple[float, ...],
        mark: tuple[int, int],
        word: tuple[str, str] | None = None,
    ) -> PhraseCopy | None:
        """The copy of `match` at `mark`: held, brought up to it, or read; `word`: the word's own
        MATCH and its scopes' when `match` is their intersection (the copy then keeps the word's
        rows in the whole vault, bm25's `nHit`, as `vault_hits`)."""
        weights = self._weights.setdefault(weights, weights)
        key = (match, weights)
        with self._lock:
            held = self._held.get(key)
            if held is not None:
                self._held.move_to_end(key)
                held.used = self._rankings
                if held.mark == mark:
                    return held
                if held.mark[0] > mark[0] or held.mark[1] > mark[1]:
                    return None  # an older snapshot than the copy: SQL ranks
            fresh = self._refreshed(np, db, match, weights, held, mark, word) if held is not None else None
            if fresh is None:
                # A copy read again is as wide as before; a new one at most a byte a row (dense).
                guess = held.nbytes if held is not None else mark[0] + 1 + COPY_OVERHEAD
                if not self._room_for(key, guess):
                    return None  # the copies in use fill the bound: SQL ranks this phrase
                fresh = self._load(np, db, match, weights, mark, word)
            fresh.used = self._rankings
            old = self._held.pop(key, None)
            self._bytes -= old.nbytes if old is not None else 0
            if self._room_for(key, fresh.nbytes):
                self._held[key] = fresh  # at the end: the most recently used
                self._bytes += fresh.nbytes
            # else: read, but wider than guessed: this ranking uses it, the bound keeps the others
            return fresh

    def _room_for(self, key: tuple[str, tuple[float, ...]], nbytes: int) -> bool:
        """Whether a copy of `nbytes` fits beside the sizes once idle copies (unused for
        `IDLE_RANKINGS` rankings) are given up — which it does here, least recently used first.
        `key`'s own old copy, if any, is about to be replaced, so it counts for nothing. Only past
        the bound are the busy copies (the end of `_held`) and the ones given up visited."""
        own = self._held.get(key)
        fixed = self._sizes.nbytes if self._sizes is not None else 0
        total = fixed + self._bytes - (own.nbytes if own is not None else 0)
        if total + nbytes <= self.max_bytes:  # all fit: none visited (k scopes visited k² copies)
            return True
        busy = fixed
        for k in reversed(self._held):
            if self._rankings - self._held[k].used >= IDLE_RANKINGS:
                break
            busy += self._held[k].nbytes if k != key else 0
        if busy + nbytes > self.max_bytes:
            return False
        while total + nbytes > self.max_bytes:
            k, held = next(iter(self._held.items()))
            if k == key or self._rankings - held.used < IDLE_RANKINGS:  # only busy ones left: they fit
                break
            del self._held[k]
            self._bytes -= held.nbytes
            total -= held.nbytes
        return True

    def _read(
        self, db: Db, match: str, weights: tuple[float, ...], where: str, params: Sequence[Any]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The phrase's rows and their `aFreq` (int64 and float64 arrays); 1 for each row without
        `weights`."""
        np = numpy_module()
        marks = ", ".join(repr(float(w)) for w in weights)
        value = f"{FUNCTION}(nodes_fts, {marks})" if weights else "1.0"  # no weights: whether the row holds it
        rows = db.stream(f"SELECT rowid, {value} FROM nodes_fts WHERE nodes_fts MATCH ?{where}", (match, *params))
        ids, freqs = [], []
        while chunk := list(itertools.islice(rows, CHUNK_ROWS)):
            ids.append(np.fromiter((r[0] for r in chunk), dtype=np.int64, count=len(chunk)))
            freqs.append(np.fromiter((r[1] for r in chunk), dtype=np.float64, count=len(chunk)))
        if not ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        self.rows_read += sum(map(len, ids))
        return np.concatenate(ids), np.concatenate(freqs)

    def _load(
        self,
        np: Any,
        db: Db,
        match: str,
        weights: tuple[float, ...],
        mark: tuple[int, int],
        word: tuple[str, str] | None,
    ) -> PhraseCopy:
        if weights:  # every matching row's aFreq, collected by the reader, not returned row by row
            alone, within = word if word is not None else (match, "")
            ids, values = read_impacts(np, db, self._reader, alone, weights, COLUMNS, within=within)
            self.rows_read += len(ids)
        else:
            ids, values = self._read(db, match, weights, "", ())
        self.loads += 1
        copy = PhraseCopy.of(np, ids, values, mark, COPY_OVERHEAD, self.sparse_share)
        if word is not None:
            copy.vault_hits = count_matching(db, word[0], "", ())
        return copy

    def _refreshed(
        self,
        np: Any,
        db: Db,
        match: str,
        weights: tuple[float, ...],
        held: PhraseCopy,
        mark: tuple[int, int],
        word: tuple[str, str] | None,
    ) -> PhraseCopy | None:
        """`held` brought to `mark`: rows added since by range, rows revised since by id; None when
        more than `refresh_rows` were revised, or more than reading the copy whole would cost
        (`by_id_cost`): the caller then reads it again whole."""
        limit = min(self.refresh_rows, held.hits // self.by_id_cost) if self.by_id_cost else self.refresh_rows
        revised = revised_since(db, held.mark, limit)
        if revised is None:
            return None
        parts = []
        if mark[0] > held.mark[0]:
            parts.append(self._read(db, match, weights, " AND rowid > ?", (held.mark[0],)))
        if revised:
            parts.append(
                self._read(db, match, weights, " AND rowid IN (SELECT value FROM json_each(?))", (json.dumps(revised),))
            )
        fresh = held.refreshed(np, revised, parts, mark, COPY_OVERHEAD, self.sparse_share)
        if word is not None:  # the vault's rows holding the word: the new ones counted, or all again
            since = count_matching(db, word[0], " AND rowid > ?", (held.mark[0],)) if not revised else 0
            fresh.vault_hits = held.vault_hits + since if not revised else count_matching(db, word[0], "", ())
        return fresh
