"""PostgreSQL's semantic candidates from codes held in memory (decisions 17.X1, 17.Y1 as on SQLite).

An exact scan of every vector in SQL (`unnest` of each `real[]`) takes seconds at 100k rows. A
`VectorCodes`, owned by the store and shared by its sessions and threads, keeps instead each
model's codes (`sql.codes`: one bit a dimension, 48 bytes for 384 dimensions) by node `seq`, picks
the candidates nearest the query's, and the session fetches only those vectors to rank them
exactly. The codes are what SQLite keeps too; the float vectors never all sit in the process: a
copy is read a batch at a time by a binary COPY, and only the sign bits are kept.

**Current for the query's snapshot, or not used**, as `textcache`'s copies are: a trigger adds the
node's `seq` to `text_changes` in the transaction of whoever writes a vector (migration 024: an
older kaeru, direct SQL too; node rows are logged since 013), and a copy is kept at one snapshot
`S`. A query in snapshot `T` that sees every transaction `S` saw first reads again the codes of
the nodes the log names (both kinds of row) for the transactions `S` did not see (the outbox rule of
`textcache`); a log pruned past `S`, or more than `REFRESH_ROWS` changes, reads the copy again
whole; another origin (a restore: the tables and both triggers, `snapshot.Now.codes_origin`)
forgets it, and while either trigger is missing or disabled the codes are not used. An older snapshot, a write transaction, a restore
under way, or no numpy: the exact scan answers. A vector whose row is gone keeps a stale code at
worst, which only adds a candidate its exact ranking then cannot find.

**A model too big for `max_bytes` is never read**: its size is estimated from its count of vectors
first (as `textcache` does from the rows), and the verdict kept while the tables are the same — kaeru
never deletes a vector, so the count only grows. The lock is waited for `LOCK_WAIT` at most, so a
long first read on one thread leaves the others to the exact scan rather than waiting in line.
"""

from __future__ import annotations

import threading
from typing import Any

from kaeru.storage.postgres.db import PgDb
from kaeru.storage.postgres.snapshot import Snapshot, changed_since, current, sees_all_of
from kaeru.storage.postgres.textcache import LOCK_WAIT
from kaeru.storage.sql.codes import CACHE_BYTES, Codes
from kaeru.storage.sql.copies import numpy_module

#: Past this many nodes changed since a copy's snapshot, it is read again whole.
REFRESH_ROWS = 4096
#: Node seqs whose vectors one statement reads while a copy is read whole.
BATCH = 8192
#: A binary COPY's header, and each row's field count and lengths before an array's elements.
_COPY_HEADER = 19
#: An array's own header in its binary form: dimensions, null flag, element type, size, lower bound.
_ARRAY_HEADER = 20


def arrays(np: Any, data: bytes | bytearray | memoryview) -> tuple[Any, Any] | None:
    """A binary COPY of (seq bigint, vector real[]) rows as node seqs and, one row a vector, each
    float32's bits as a big-endian int32; None when the vectors' lengths differ or an element is NULL."""
    body = memoryview(data)[_COPY_HEADER : len(data) - 2]  # (the trailer: a field count of -1)
    if len(body) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=">i4")
    size = int.from_bytes(body[14:18], "big")  # the first row's array, after its count, seq and length
    dims = (size - _ARRAY_HEADER) // 8
    row = 2 + 4 + 8 + 4 + size
    if size < _ARRAY_HEADER or len(body) % row:
        return None
    layout = [("n", ">i2"), ("l", ">i4"), ("seq", ">i8"), ("la", ">i4"), ("head", "V20"), ("v", ">i4", (2 * dims,))]
    table = np.frombuffer(body, dtype=np.dtype(layout))
    if (table["la"] != size).any():
        return None
    values = table["v"].reshape(len(table), dims, 2)
    if (values[:, :, 0] != 4).any():  # each element's length: -1 for a NULL
        return None
    return table["seq"].astype(np.int64), values[:, :, 1]


def signs(np: Any, data: bytes | bytearray | memoryview) -> tuple[Any, Any] | None:
    """`arrays` as node seqs and codes (one row of bytes a code, `quantize`'s bits)."""
    read = arrays(np, data)
    if read is None:
        return None
    return read[0], np.packbits(read[1] >= 0, axis=1)  # sign bit clear: set, most significant first


class _Held:
    """The copies at one snapshot, by model; replaced whole, never changed."""

    def __init__(self, snapshot: Snapshot, origin: str, models: dict[str, Codes]):
        self.snapshot, self.origin, self.models = snapshot, origin, models


class VectorCodes:
    """The codes of one store's vectors, per model (see the module's docstring); a lock guards
    updates, a scan works on arrays no other thread writes."""

    def __init__(self, max_bytes: int | None = None, refresh_rows: int | None = None):
        self.max_bytes = CACHE_BYTES if max_bytes is None else max_bytes
        self.refresh_rows = REFRESH_ROWS if refresh_rows is None else refresh_rows
        self._held: _Held | None = None
        self._lock = threading.Lock()
        #: Models whose codes would not fit `max_bytes` alone, and the tables (origin) that said so.
        self._too_big: dict[str, str] = {}
        #: Copies read whole and codes read (whole or back): what the tests check.
        self.loads = 0
        self.rows_read = 0

    def nearest(self, db: PgDb, model: str, code: bytes, count: int) -> list[int] | None:
        """The seqs of the nodes whose codes of `model` are nearest `code`, `count` of them, as
        `db`'s read snapshot sees them; None when this copy cannot say (the exact scan answers)."""
        np = numpy_module()
        if np is None:
            return None
        now = current(db)
        if now is None or not now.codes_logged:
            return None  # a vector written meanwhile would be named by no change log (a restore under way)
        codes = self._fresh(np, db, model, now.snapshot, now.horizon, now.codes_origin)
        return None if codes is None else codes.nearest(np, code, count)

    def _fresh(self, np: Any, db: PgDb, model: str, now: Snapshot, horizon: int, origin: str) -> Codes | None:
        if not self._lock.acquire(timeout=LOCK_WAIT):
            return None  # another thread reads a copy: the exact scan answers meanwhile
        try:
            return self._locked(np, db, model, now, horizon, origin)
        finally:
            self._lock.release()

    def _locked(self, np: Any, db: PgDb, model: str, now: Snapshot, horizon: int, origin: str) -> Codes | None:
        held = self._held
        if held is not None and held.origin != origin:
            held = None  # other tables (a restore): nothing kept is theirs
            self._too_big = {}
        if self._too_big.get(model) == origin:
            return None
        if held is not None and held.snapshot != now:
            if not sees_all_of(now, held.snapshot):
                return None  # an older snapshot than the copy's
            held = self._advanced(np, db, held, now, horizon)
        if held is None:
            held = _Held(now, origin, {})
        self._held = held
        codes = held.models.get(model)
        if codes is None:
            others = sum(c.nbytes for m, c in held.models.items() if m != model)
            if not self._fits(db, model, origin, self.max_bytes - others):
                return None
            codes = self._read(np, db, model, now)
            if codes is None or others + codes.nbytes > self.max_bytes:
                return None
            self._held = _Held(now, origin, {**held.models, model: codes})
        return codes

    def _fits(self, db: PgDb, model: str, origin: str, room: int) -> bool:
        """Whether the codes of `model` would take at most `room` bytes: ids and 64-bit words, from its
        count of vectors and their dimensions, before any is read. One too big for `max_bytes` alone
        is remembered for these tables (`origin`)."""
        found = db.raw_one(
            "SELECT count(*), (SELECT array_length(embedding, 1) FROM node_vectors WHERE model = %(model)s "
            "LIMIT 1) FROM node_vectors WHERE model = %(model)s",
            {"model": model},
        )
        count, dims = (int(found[0] or 0), int(found[1] or 0)) if found is not None else (0, 0)
        size = count * (8 + -(-dims // 64) * 8)
        if size > self.max_bytes:
            self._too_big[model] = origin
        return size <= room

    def _advanced(self, np: Any, db: PgDb, held: _Held, now: Snapshot, horizon: int) -> _Held | None:
        """`held` brought to snapshot `now`, or None when it cannot be (read again whole)."""
        seqs = changed_since(db, held.snapshot, horizon, self.refresh_rows, nodes_only=False)
        if seqs is None:
            return None
        models: dict[str, Codes] = {}
        for model, codes in held.models.items():
            rows = self._rows(np, db, model, seqs) if seqs else []
            if rows is None:
                continue
            self.rows_read += len(rows)
            fresh = codes.updated(np, rows, now)
            if fresh is not None:
                models[model] = fresh
        # Codes grown past the bound are given up, the newest read first (the exact scan answers).
        while models and sum(c.nbytes for c in models.values()) > self.max_bytes:
            del models[next(reversed(models))]
        return _Held(now, held.origin, models)

    def _rows(self, np: Any, db: PgDb, model: str, seqs: list[int]) -> list[tuple[int, bytes]] | None:
        """(seq, code) of the vectors of `model` of the nodes `seqs`."""
        read = signs(
            np,
            db.copy_out(
                "COPY (SELECT n.seq, v.embedding FROM nodes n JOIN node_vectors v ON v.node_id = n.id "
                "AND v.model = %(model)s WHERE n.seq = ANY(%(seqs)s::bigint[])) TO STDOUT (FORMAT BINARY)",
                {"model": model, "seqs": seqs},
            ),
        )
        if read is None:
            return None
        return [(int(s), c.tobytes()) for s, c in zip(read[0], read[1], strict=True)]

    def _read(self, np: Any, db: PgDb, model: str, now: Snapshot) -> Codes | None:
        """Every code of `model`, read a batch of vectors at a time in `seq` order."""
        seqs: list[Any] = []
        codes: list[Any] = []
        top = db.raw_one("SELECT max(seq) FROM nodes")
        last = int(top[0]) if top is not None and top[0] is not None else 0
        after = 0
        while after < last:
            read = signs(
                np,
                db.copy_out(
                    "COPY (SELECT n.seq, v.embedding FROM node_vectors v JOIN nodes n ON n.id = v.node_id "
                    "WHERE v.model = %(model)s AND n.seq > %(after)s AND n.seq <= %(upto)s ORDER BY n.seq) "
                    "TO STDOUT (FORMAT BINARY)",
                    {"model": model, "after": after, "upto": after + BATCH},
                ),
            )
            if read is None or (codes and read[1].shape[1] not in (0, codes[0].shape[1])):
                return None
            if len(read[0]):
                seqs.append(read[0])
                codes.append(read[1])
            self.rows_read += len(read[0])
            after += BATCH
        self.loads += 1
        width = codes[0].shape[1] if codes else 0
        ids = np.concatenate(seqs) if seqs else np.zeros(0, dtype=np.int64)
        flat = np.concatenate(codes) if codes else np.zeros((0, width), dtype=np.uint8)
        pad = -width % 8
        if pad:
            flat = np.concatenate([flat, np.zeros((len(flat), pad), dtype=np.uint8)], axis=1)
        words = (
            np.ascontiguousarray(np.ascontiguousarray(flat).view(np.uint64).T)
            if len(flat)
            else np.zeros((0, 0), dtype=np.uint64)
        )
        return Codes(ids, words, width, now)
