"""SQLite's vectors (decisions 17.V1, 17.X1): one bit a dimension to find candidates, exact ranking.

Each stored vector (float32 little-endian, `service.embedding.pack`, in `node_vectors`) has a code
under the same row id in `vector_codes` (migration 017): one bit a dimension, set where the value's
sign bit is clear — 48 bytes for 384 dimensions, in a small rowid table that is cheap to scan. Both
are written by `put_vector` in one transaction: the code is never stale.

`nearest_vectors` takes the codes nearest to the query's by Hamming distance (all of the model's
codes, no scope filter), ranks those vectors by their exact
cosine similarity, then keeps the live members of the scope in that order, checked a block at a
time. When too few candidates are in the scope it asks for more, in proportion, then falls back to
the exact scan; when the candidates are all of the model's vectors, the answer is the exact one.

The codes are scanned in memory (decision 17.Y1): a `CodeCache`, owned by the store, keeps each
model's codes (48 bytes a vector: ~5 MB at 100k, bounded) as a numpy array and compares them with
XOR and a popcount, an order of magnitude faster than SQLite's scalar function over the table. It is
never stale: migration 019's triggers move a clock on in every transaction that changes a code and
stamp the row, and every scan first reads the clock in its own snapshot — equal, the copy serves;
ahead, the rows stamped since are read back (a note: one row); behind (an older snapshot than the
copy), SQLite scans as before. Only a read snapshot (committed rows) updates the copy. The vectors
themselves stay in the database: the exact ranking of the candidates is SQL's. Without numpy (an
install that left the dependency out) or above the bound, SQLite scans. (A vault file overwritten behind a
running server is outside this, as it is outside SQLite's own guarantees.)

With the `[semantic]` extra, `vec_distance_hamming`, `vec_bit` and `vec_distance_cosine` are
sqlite-vec's (PyPI `sqlite-vec`, a loadable extension; no `vec0` table, so a vault opened without it
still opens, migrates, backs up and is checked). Without it (or where the extension cannot be
loaded), Python functions of the same names stand in: SQLite hands them one row at a time, so
vectors are still never all in memory; only test embedders use that path.
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw

from kaeru.storage.sql.codes import CACHE_BYTES, CodeRanked, Codes, hamming, quantize
from kaeru.storage.sql.copies import numpy_module
from kaeru.storage.sql.db import Db, Part

__all__ = ["CodeCache", "SqliteVectors", "hamming", "install", "native_available", "quantize"]

#: The byte order of a stored vector (float32, little-endian: `service.embedding.pack`).
_NATIVE_LITTLE = array("f", [1.0]).tobytes() == b"\x00\x00\x80\x3f"
#: (`sql.codes`: `_Codes` for the tests that built one here.)
_Codes = Codes


def native_available() -> bool:
    """True when sqlite-vec is installed (nothing is imported)."""
    return importlib.util.find_spec("sqlite_vec") is not None


def _loadable_path() -> str:
    """sqlite-vec's loadable extension, found beside its package without importing it: the package's
    `__init__` imports numpy and the standard `sqlite3` module (memory and start-up time) for helpers
    kaeru does not use (decision 95). Where the layout is not the one `sqlite_vec.loadable_path()`
    names (`vec0` beside `__init__.py`), the package is imported and asked."""
    spec = importlib.util.find_spec("sqlite_vec")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        if any(Path(folder).glob("vec0.*")):
            return str(Path(folder) / "vec0")
    import sqlite_vec

    return str(sqlite_vec.loadable_path())


def install(conn: apsw.Connection, native: bool = True) -> bool:
    """Give `conn` `vec_distance_cosine`, `vec_distance_hamming` and `vec_bit`; True when they are
    sqlite-vec's."""
    if native and native_available():
        try:
            conn.enable_load_extension(True)
            conn.load_extension(_loadable_path())
            return True
        except apsw.Error:
            pass
        finally:
            conn.enable_load_extension(False)
    conn.create_scalar_function("vec_distance_cosine", _sql_cosine_distance, 2, deterministic=True)
    conn.create_scalar_function("vec_distance_hamming", _sql_hamming, 2, deterministic=True)
    conn.create_scalar_function("vec_bit", _sql_bit, 1, deterministic=True)
    return False


def _floats(blob: bytes) -> array[float]:
    values = array("f")
    values.frombytes(blob)
    if not _NATIVE_LITTLE:
        values.byteswap()
    return values


def _sql_cosine_distance(*values: Any) -> float:
    return cosine_distance(values[0], values[1])


def _sql_hamming(*values: Any) -> float:
    return float(hamming(values[0], values[1]))


def _sql_bit(*values: Any) -> Any:
    return values[0]


def cosine_distance(a: bytes, b: bytes) -> float:
    """1 − cosine similarity of two float32 vectors, as sqlite-vec computes it."""
    x, y = _floats(a), _floats(b)
    if len(x) != len(y):
        raise ValueError(f"vector dimensions differ: {len(x)} and {len(y)}")
    dot = sum(p * q for p, q in zip(x, y, strict=True))
    norms = math.sqrt(sum(p * p for p in x) * sum(q * q for q in y))
    return 1.0 - dot / norms if norms else 1.0


class CodeCache:
    """The codes of `vector_codes` in memory, per model, for one store (decision 17.Y1): never
    stale (see the module's docstring), bounded by `CACHE_BYTES`, shared by the store's sessions
    and threads (a lock guards updates; a scan works on an immutable copy)."""

    def __init__(self, max_bytes: int | None = None):
        self._max = CACHE_BYTES if max_bytes is None else max_bytes
        self._held: dict[str, _Codes] = {}
        self._lock = threading.Lock()
        #: Copies taken whole and rows read back since: what the tests check.
        self.loads = 0
        self.rows_read = 0

    def nearest(self, db: Db, model: str, code: bytes, count: int, committed: bool) -> list[int] | None:
        """The row ids of the `count` codes of `model` nearest to `code` as `db`'s transaction sees
        them, or None when this cache cannot say (no numpy, too big, a snapshot older than the copy,
        or a write transaction whose codes differ from the copy's): SQLite scans then."""
        np = numpy_module()
        if np is None:
            return None
        clock = db.one("SELECT version, removed FROM vector_code_clock WHERE id = 1")
        if clock is None:
            return None
        held = self._fresh(np, db, model, int(clock[0]), int(clock[1]), committed)
        return None if held is None else held.nearest(np, code, count)

    def _fresh(self, np: Any, db: Db, model: str, version: int, removed: int, committed: bool) -> Codes | None:
        with self._lock:
            held = self._held.get(model)
            if held is not None and held.version == version:
                return held
            # Only committed rows are kept: a write transaction's own may yet be rolled back, and its
            # clock's number then reused by another's.
            if not committed or (held is not None and held.version > version):
                return None
            if held is not None and held.removed == removed:
                rows = db.rows(
                    "SELECT id, code FROM vector_codes WHERE version > ? AND model = ?", (held.version, model)
                )
                self.rows_read += len(rows)
                fresh = held.updated(np, rows, version)
            else:
                rows = db.rows("SELECT id, code FROM vector_codes WHERE model = ? ORDER BY id", (model,))
                self.loads += 1
                self.rows_read += len(rows)
                fresh = Codes.load(np, rows, version, removed)
            others = sum(c.nbytes for m, c in self._held.items() if m != model)
            if fresh is None or others + fresh.nbytes > self._max:
                self._held.pop(model, None)
                return None
            self._held[model] = fresh
            return fresh


class SqliteVectors(CodeRanked, Part):
    #: The store's code cache (`SqliteStore` hands it to each session); None: SQLite scans.
    _codes: CodeCache | None = None

    def use_codes(self, cache: CodeCache) -> None:
        self._codes = cache

    def put_vector(self, node_id: str, model: str, text_sha: str, vector: bytes) -> None:
        ((row_id,),) = self._db.rows(
            "INSERT INTO node_vectors (node_id, model, text_sha, vector) VALUES (?, ?, ?, ?) ON CONFLICT "
            "(node_id, model) DO UPDATE SET text_sha = excluded.text_sha, vector = excluded.vector RETURNING id",
            (node_id, model, text_sha, vector),
        )
        self._db.run(
            "INSERT INTO vector_codes (id, model, code) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET code = excluded.code",
            (row_id, model, quantize(vector)),
        )

    def vector_digests_of(self, model: str, node_ids: Sequence[str]) -> dict[str, str]:
        """node id → the digest of the text its vector of `model` was computed from, for `node_ids`
        (those without one are left out): in one statement, for recall's candidates."""
        found = self._db.rows(
            "SELECT v.node_id, v.text_sha FROM json_each(?) c CROSS JOIN node_vectors v "
            "ON v.node_id = c.value AND v.model = ?",
            (json.dumps(list(node_ids)), model),
        )
        return {r[0]: r[1] for r in found}

    def stored_vectors(self, after: tuple[str, str] | None, limit: int) -> list[tuple[str, str, str, bytes]]:
        where, params = ("WHERE (node_id, model) > (?, ?) ", [*after]) if after is not None else ("", [])
        found = self._db.rows(
            f"SELECT node_id, model, text_sha, vector FROM node_vectors {where}ORDER BY node_id, model LIMIT ?",
            [*params, limit],
        )
        return [(r[0], r[1], r[2], bytes(r[3])) for r in found]

    def _ranked_candidates(self, model: str, code: bytes, vector: bytes, count: int) -> list[tuple[str, float]]:
        """The `count` vectors whose codes are nearest to `code` (Hamming distance), ranked by their
        exact cosine similarity to `vector`, best first, ties by node id; scope not yet applied."""
        ids = None if self._codes is None else self._codes.nearest(self._db, model, code, count, self._read_only)
        if ids is not None:
            found = self._db.rows(
                "SELECT v.node_id, vec_distance_cosine(v.vector, ?) AS distance FROM json_each(?) c "
                "CROSS JOIN node_vectors v ON v.id = c.value ORDER BY distance, v.node_id",
                (vector, json.dumps(ids)),
            )
            return [(r[0], 1.0 - float(r[1])) for r in found]
        found = self._db.rows(
            "SELECT v.node_id, vec_distance_cosine(v.vector, ?) AS distance FROM (SELECT id FROM vector_codes "
            "WHERE model = ? ORDER BY vec_distance_hamming(vec_bit(code), vec_bit(?)) LIMIT ?) c "
            "CROSS JOIN node_vectors v ON v.id = c.id ORDER BY distance, v.node_id",
            (vector, model, code, count),
        )
        return [(r[0], 1.0 - float(r[1])) for r in found]

    def _live(self, initiative_ids: Sequence[int], ids: list[str]) -> set[str]:
        """Which of `ids` are live members of the scope."""
        scope, params = self._member_of(initiative_ids)
        return {
            r[0]
            for r in self._db.rows(
                f"SELECT n.id FROM json_each(?) c CROSS JOIN nodes n ON n.id = c.value "
                f"WHERE n.retracted = {self._d.false} AND {scope}",
                [json.dumps(ids), *params],
            )
        }

    def _exact(self, initiative_ids: Sequence[int], model: str, vector: bytes, limit: int) -> list[tuple[str, float]]:
        """The exact scan of every vector of the model (decision 17.V1): the last resort for a scope
        that holds few of them. `CROSS JOIN` keeps the vectors the outer loop (SQLite's planner would
        scan the nodes' name index and look each vector up: four times slower, decision 17.V2)."""
        scope, params = self._member_of(initiative_ids)
        found = self._db.rows(
            "SELECT v.node_id, vec_distance_cosine(v.vector, ?) AS distance FROM node_vectors v "
            f"CROSS JOIN nodes n ON n.id = v.node_id WHERE v.model = ? AND n.retracted = {self._d.false} "
            f"AND {scope} ORDER BY distance, v.node_id LIMIT ?",
            [vector, model, *params, limit],
        )
        return [(r[0], 1.0 - float(r[1])) for r in found]
