"""A broad search's bm25 ranking computed in memory, exactly as FTS5 computes it (decision 16.B4).

FTS5 has no early termination: `bm25()` scores every match of a common word (40k rows at 100k
nodes: ~40–55 ms a statement), and it cannot rescore a list of candidates cheaply (16.K3: it counts
each phrase's documents again per row looked up). But its arithmetic is simple and its inputs are
few: per phrase, the number of rows holding it anywhere in the table (`nHit`) and, per row, its
weighted count of the phrase (`aFreq`: the column weight of each instance, summed) and its tokens
in all columns (`D`); for the table, its rows and tokens (the `averages` record). So a `TextCache`,
owned by the store (through `CommonWords`, which its sessions share), keeps for each phrase a search
asked for — a word in its columns, or an initiative's scope token — two dense arrays by row id
(`aFreq`, `D`; ~8 bytes a row of the vault), read once from FTS5 itself by a small auxiliary
function (`kaeru_impact`: the phrase's instances by column and `xColumnSize(-1)`, ~2 µs a row), and
ranks a query with numpy in the same order of floating-point operations as `fts5Bm25Function`, so
the scores are FTS5's to the bit (checked against `bm25()` by the property test
`tests/storage/test_search_top_k.py`), ties and all.

Never stale: a node's index row changes only when `put_node` writes the node (`_node_written`), and
every such write either inserts a new row of `nodes` (a new `seq`, never reused: nodes are never
deleted) or moves the node's previous revision into `past_revisions` (its `rev_seq` only grows:
that table is never pruned). So `(max(nodes.seq), max(past_revisions.rev_seq))`, read in the
search's own snapshot, is a watermark: a copy at an older one reads back the rows written since —
new rows by one range query (`rowid > seq`), revised ones (retracted, moved, rewritten) by id — and
a copy at a newer one (an older snapshot than the copy) is not used. Only a read snapshot (committed
rows) refreshes a copy; a write transaction ranks in SQL. Without numpy (the default install has
none), past the memory bound, or past `REFRESH_ROWS` revised rows (the copy is then read again
whole), the caller falls back to the SQL plans, which give the same answer.
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import apsw

from kaeru.storage.sql.db import Db

if TYPE_CHECKING:
    import numpy as np

#: FTS5's bm25 constants (`fts5Bm25Function`).
K1 = 1.2
B = 0.75
#: The columns of `nodes_fts`, in order (migration 006).
COLUMNS = ("name", "description", "body", "tags", "scope", "stem_name", "stem_description", "stem_body", "stem_tags")
#: The most memory a `TextCache` holds in phrase copies (8 bytes a row of the vault each): 64 MiB is
#: ~80 phrases at 100k nodes, ~8 at 1M. Only a copy idle for `IDLE_RANKINGS` rankings is given up
#: (least recently used first); while the copies in use fill it, a new phrase is ranked by SQL.
CACHE_BYTES = 64 * 2**20
#: A copy reads back at most this many revised rows by id (each is one FTS5 look-up, ~0.3 ms at
#: 100k); past it, the copy is read again whole.
REFRESH_ROWS = 64
#: A copy is given up to make room for another only when no ranking used it for this many rankings:
#: otherwise the new phrase is ranked by SQL. Reading a copy whole costs ~2 µs a row of the vault
#: (~2 s at 1M nodes, three times SQL's ranking of one broad word there), so copies that evict each
#: other in turn — more common words in use than fit the bound — would cost more than SQL every time.
IDLE_RANKINGS = 64
#: The bytes of a node id kept in memory (a UUID's text; another id is read each time).
ID_BYTES = 36
#: The auxiliary function that reads a row's `aFreq` (of phrase 0) and `D` for the copies.
FUNCTION = "kaeru_impact"
_SPLIT = 4294967296.0  # aFreq · 2**32 + D in one float (exact while aFreq < 2**21)


def _numpy() -> Any:
    """numpy when it is installed (the `[semantic]` extra brings it), else None."""
    if importlib.util.find_spec("numpy") is None:
        return None
    import numpy

    return numpy


def _impact(api: apsw.FTS5ExtensionApi, *weights: Any) -> float:
    """FTS5's bm25 inputs for this row and the query's first phrase: `aFreq` (the weight of each
    instance's column, summed) and `D` (`xColumnSize(-1)`), packed as aFreq · 2**32 + D."""
    freq = 0.0
    for column, offsets in enumerate(api.phrase_locations(0)):
        if offsets:
            freq += weights[column] * len(offsets)
    return freq * _SPLIT + api.column_size(-1)


def _varint(block: bytes, at: int) -> tuple[int, int]:
    """One SQLite varint (FTS5's `sqlite3Fts5GetVarint`) at `at`: its value and the next offset."""
    value = 0
    for _ in range(8):
        byte = block[at]
        at += 1
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at
    return (value << 8) | block[at], at + 1


def averages(block: bytes) -> tuple[int, int]:
    """The rows and the tokens of all columns in FTS5's `averages` record (`xRowCount`,
    `xColumnTotalSize(-1)`): a varint of rows, then one of tokens per column."""
    rows, at = _varint(block, 0)
    tokens = 0
    while at < len(block):
        size, at = _varint(block, at)
        tokens += size
    return rows, tokens


class _Copy:
    """One phrase's rows at one watermark, dense by row id (length `max(nodes.seq) + 1`): `freq` its
    bm25 `aFreq` in the row (0: not there), `size` the row's `D` where `freq` is set."""

    __slots__ = ("freq", "hits", "mark", "nbytes", "size", "used")

    def __init__(self, freq: np.ndarray, size: np.ndarray, mark: tuple[int, int]):
        self.freq, self.size, self.mark = freq, size, mark
        self.hits = int((freq > 0).sum())
        self.nbytes = int(freq.nbytes + size.nbytes)
        #: The cache's ranking count when a ranking last used it.
        self.used = 0


class _Facts:
    """Node ids and refuted flags by row id at one watermark; `known` marks the rows read."""

    def __init__(self, ids: np.ndarray, refuted: np.ndarray, known: np.ndarray, mark: tuple[int, int]):
        self.ids, self.refuted, self.known, self.mark = ids, refuted, known, mark
        self.nbytes = int(ids.nbytes + refuted.nbytes + known.nbytes)

    @classmethod
    def after(cls, np: Any, old: _Facts | None, revised: list[int] | None, mark: tuple[int, int]) -> _Facts:
        """`old` moved to `mark` (copied: a reader at its watermark may still hold it), forgetting the
        `revised` rows; empty when there is none or too much was revised."""
        size = mark[0] + 1
        ids = np.zeros(size, dtype=f"S{ID_BYTES}")
        refuted = np.zeros(size, dtype=bool)
        known = np.zeros(size, dtype=bool)
        if old is not None and revised is not None:
            ids[: len(old.ids)] = old.ids
            refuted[: len(old.refuted)] = old.refuted
            known[: len(old.known)] = old.known
            known[np.array(revised, dtype=np.int64)] = False
        return cls(ids, refuted, known, mark)


class Ranking:
    """The matches of one query in scope, scored as `bm25()` scores them: row ids and scores."""

    def __init__(self, np: Any, rows: np.ndarray, scores: np.ndarray | None):
        self.np, self.rows, self.scores = np, rows, scores
        self.count = len(rows)

    def top(self, cap: int) -> tuple[list[int], list[float]]:
        """The best `cap` matches, row ids and scores, by score then row id descending (the order of
        `ORDER BY bm25(…), rowid DESC`)."""
        np, rows, scores = self.np, self.rows, self.scores
        assert scores is not None
        if cap < len(rows):
            kth = np.partition(scores, cap - 1)[cap - 1]
            keep = np.flatnonzero(scores <= kth)  # every row tied with the last one kept, too
            rows, scores = rows[keep], scores[keep]
        order = np.lexsort((-rows, scores))[:cap]
        return rows[order].tolist(), scores[order].tolist()


class TextCache:
    """The phrase copies of one store (see the module's docstring): shared by its sessions and
    threads; a lock guards the copies, which are replaced, never changed, so a ranking works on
    arrays no other thread writes."""

    def __init__(self, max_bytes: int | None = None, refresh_rows: int | None = None):
        self.max_bytes = CACHE_BYTES if max_bytes is None else max_bytes
        self.refresh_rows = REFRESH_ROWS if refresh_rows is None else refresh_rows
        self._held: OrderedDict[tuple[str, tuple[float, ...]], _Copy] = OrderedDict()
        #: The ids and refuted flags of rows a page showed.
        self._facts: _Facts | None = None
        self._lock = threading.Lock()
        #: Rankings asked for so far (the clock of `_Copy.used`).
        self._rankings = 0
        self._registered: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()
        #: Copies read whole and rows read back since: what the tests check.
        self.loads = 0
        self.rows_read = 0

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._facts = None

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
        np = _numpy()
        if np is None or not words or not scopes:
            return None
        if conn not in self._registered:
            conn.register_fts5_function(FUNCTION, _impact)
            self._registered.add(conn)
        now = db.one("SELECT (SELECT max(seq) FROM nodes), (SELECT max(rev_seq) FROM past_revisions)")
        mark = (int(now[0] or 0), int(now[1] or 0)) if now is not None else (0, 0)
        block = db.one("SELECT block FROM nodes_fts_data WHERE id = 1")
        if block is None or block[0] is None:
            return None
        total_rows, total_tokens = averages(bytes(block[0]))
        if total_rows <= 0 or (mark[0] + 1) * 8 * (len(words) + len(scopes)) > self.max_bytes:
            return None  # nothing indexed, or copies that would not fit at once (not read in vain)
        with self._lock:
            self._rankings += 1
        copies = []
        for match, weights in (*words, *scopes):
            try:
                held = self._copy(np, db, match, weights, mark)
            except apsw.Error:  # the copy could not be read: SQL ranks (and reports a real fault)
                return None
            if held is None:
                return None
            copies.append(held)
        found, scope = copies[: len(words)], copies[len(words) :]
        in_scope = scope[0].freq > 0
        for other in scope[1:]:
            in_scope |= other.freq > 0
        present = found[0].freq > 0
        for other in found[1:]:
            if match_all:
                present &= other.freq > 0
            else:
                present |= other.freq > 0
        rows = np.flatnonzero(present & in_scope)
        if not scores:
            return Ranking(np, rows, None)
        # `fts5Bm25Function`, operation for operation: the scope phrases add 0 (their column weighs 0),
        # then each word `idf · (aFreq · (k1 + 1)) / (aFreq + k1 · (1 − b + b · D / avgdl))`, summed in
        # the query's phrase order, and the sum negated.
        avgdl = float(total_tokens) / float(total_rows)
        size = found[0].size[rows]
        for other in found[1:]:
            size = np.maximum(size, other.size[rows])  # the row's D, from whichever copy holds the row
        norm = K1 * ((1 - B) + (B * size.astype(np.float64)) / avgdl)
        total = np.zeros(len(rows), dtype=np.float64)
        for held in found:
            idf = math.log((total_rows - held.hits + 0.5) / (held.hits + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            freq = held.freq[rows].astype(np.float64)
            total = total + idf * ((freq * (K1 + 1.0)) / (freq + norm))
        return Ranking(np, rows.astype(np.int64), -1.0 * total)

    def facts(self, np: Any, db: Db, seqs: Sequence[int], refuted_sql: str) -> tuple[list[str], list[bool]]:
        """The id and the refuted flag of each row of `seqs` in this snapshot: kept ones (dense by
        row id, `ID_BYTES` an id), the rest read through `nodes_head` and kept (ids never change; a
        refuted flag changes only with a revision, which the next call reads back)."""
        now = db.one("SELECT (SELECT max(seq) FROM nodes), (SELECT max(rev_seq) FROM past_revisions)")
        mark = (int(now[0] or 0), int(now[1] or 0)) if now is not None else (0, 0)
        held: _Facts | None = None
        with self._lock:
            facts = self._facts
            if (mark[0] + 1) * (ID_BYTES + 2) > self.max_bytes // 4:
                self._facts = None  # too many rows to keep: read each time
            elif facts is None or mark > facts.mark:
                revised = self._revised(db, facts.mark, self.refresh_rows) if facts is not None else None
                self._facts = _Facts.after(np, facts, revised, mark)
            if self._facts is not None and self._facts.mark == mark:
                held = self._facts
        at = np.array(seqs, dtype=np.int64)
        if held is None:
            return self._read_facts(db, seqs, refuted_sql)
        # `known` first: a row is marked known only after its id and flag are written (below).
        missing = np.flatnonzero(~held.known[at])
        ids: list[str] = list(map(bytes.decode, held.ids[at].tolist()))
        refuted: list[bool] = held.refuted[at].tolist()
        if len(missing):
            wanted = at[missing]
            read_ids, read_refuted = self._read_facts(db, wanted.tolist(), refuted_sql)
            for i, node_id, flag in zip(missing.tolist(), read_ids, read_refuted, strict=True):
                ids[i], refuted[i] = node_id, flag
            fits = np.array([len(i) == ID_BYTES and i.isascii() for i in read_ids], dtype=bool)
            with self._lock:
                if self._facts is held:  # same watermark: rows only ever become known, values never change
                    kept = [i.encode() for i, f in zip(read_ids, fits, strict=True) if f]
                    held.ids[wanted[fits]] = np.array(kept, dtype=f"S{ID_BYTES}")
                    held.refuted[wanted[fits]] = np.array(read_refuted, dtype=bool)[fits]
                    held.known[wanted[fits]] = True
        return ids, refuted

    @staticmethod
    def _read_facts(db: Db, seqs: Sequence[int], refuted_sql: str) -> tuple[list[str], list[bool]]:
        rows = db.rows(
            f"SELECT n.seq, n.id, {refuted_sql} FROM json_each(?) j CROSS JOIN nodes n INDEXED BY nodes_head "
            "ON n.seq = j.value",
            (json.dumps(sorted(seqs)),),
        )
        read = {int(r[0]): (str(r[1]), bool(r[2])) for r in rows}
        ids = [read[s][0] for s in seqs]
        return ids, [read[s][1] for s in seqs]

    # --- the copies --------------------------------------------------------------------------
    def _copy(self, np: Any, db: Db, match: str, weights: tuple[float, ...], mark: tuple[int, int]) -> _Copy | None:
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
            fresh = self._refreshed(np, db, match, weights, held, mark) if held is not None else None
            if fresh is None:
                if not self._room_for(key, 8 * (mark[0] + 1)):
                    return None  # the copies in use fill the bound: SQL ranks this phrase
                fresh = self._load(np, db, match, weights, mark)
            fresh.used = self._rankings
            self._held[key] = fresh
            while self._held and sum(c.nbytes for c in self._held.values()) > self.max_bytes:
                self._held.popitem(last=False)
            return fresh if key in self._held else None

    def _room_for(self, key: tuple[str, tuple[float, ...]], nbytes: int) -> bool:
        """Whether a copy of `nbytes` fits once idle copies (unused for `IDLE_RANKINGS` rankings)
        are given up — which it does here, least recently used first. `key`'s own old copy, if
        any, is about to be replaced, so it counts for nothing."""
        others = [(k, c) for k, c in self._held.items() if k != key]
        busy = sum(c.nbytes for _, c in others if self._rankings - c.used < IDLE_RANKINGS)
        if busy + nbytes > self.max_bytes:
            return False
        held = sum(c.nbytes for _, c in others)
        for k, c in others:
            if held + nbytes <= self.max_bytes:
                break
            if self._rankings - c.used >= IDLE_RANKINGS:
                del self._held[k]
                held -= c.nbytes
        return True

    def _read(self, db: Db, match: str, weights: tuple[float, ...], where: str, params: Sequence[Any]) -> list[Any]:
        marks = ", ".join(repr(float(w)) for w in weights)
        return db.rows(
            f"SELECT rowid, {FUNCTION}(nodes_fts, {marks}) FROM nodes_fts WHERE nodes_fts MATCH ?{where}",
            (match, *params),
        )

    def _load(self, np: Any, db: Db, match: str, weights: tuple[float, ...], mark: tuple[int, int]) -> _Copy:
        freq = np.zeros(mark[0] + 1, dtype=np.float32)
        size = np.zeros(mark[0] + 1, dtype=np.float32)
        self._put(np, freq, size, self._read(db, match, weights, "", ()))
        self.loads += 1
        return _Copy(freq, size, mark)

    def _refreshed(
        self, np: Any, db: Db, match: str, weights: tuple[float, ...], held: _Copy, mark: tuple[int, int]
    ) -> _Copy | None:
        """`held` brought to `mark`: rows added since by range, rows revised since by id; None when
        more than `refresh_rows` were revised (the caller reads the copy again whole)."""
        revised = self._revised(db, held.mark, self.refresh_rows)
        if revised is None:
            return None
        freq = np.zeros(mark[0] + 1, dtype=np.float32)
        size = np.zeros(mark[0] + 1, dtype=np.float32)
        freq[: len(held.freq)] = held.freq
        size[: len(held.size)] = held.size
        rows: list[Any] = []
        if mark[0] > held.mark[0]:
            rows += self._read(db, match, weights, " AND rowid > ?", (held.mark[0],))
        if revised:
            at = np.array(revised, dtype=np.int64)
            freq[at] = 0
            size[at] = 0
            rows += self._read(
                db, match, weights, " AND rowid IN (SELECT value FROM json_each(?))", (json.dumps(revised),)
            )
        self._put(np, freq, size, rows)
        return _Copy(freq, size, mark)

    def _revised(self, db: Db, since: tuple[int, int], limit: int) -> list[int] | None:
        """The rows (existing at `since`) revised after it, or None past `limit` of them."""
        found = db.rows(
            "SELECT DISTINCT node_seq FROM past_revisions WHERE rev_seq > ? AND node_seq <= ? LIMIT ?",
            (since[1], since[0], limit + 1),
        )
        return None if len(found) > limit else sorted(int(r[0]) for r in found)

    def _put(self, np: Any, freq: np.ndarray, size: np.ndarray, rows: list[Any]) -> None:
        if not rows:
            return
        self.rows_read += len(rows)
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        packed = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
        tokens = np.fmod(packed, _SPLIT)
        freq[ids] = (packed - tokens) / _SPLIT
        size[ids] = tokens
