"""`vec_distance_cosine` in every SQLite connection, so semantic recall ranks vectors in the database.

With the `[semantic]` extra installed, it is sqlite-vec's (PyPI `sqlite-vec`, a loadable extension:
an exact scan in C over the stored float32 blobs, no index and no migration). Without it (or where
the extension cannot be loaded), a Python function of the same name stands in: SQLite hands it one
row at a time, so vectors are still never all in memory; only test embedders use that path.
"""

from __future__ import annotations

import importlib.util
import math
from array import array
from typing import Any

import apsw

#: The byte order of a stored vector (float32, little-endian: `service.embedding.pack`).
_NATIVE_LITTLE = array("f", [1.0]).tobytes() == b"\x00\x00\x80\x3f"


def native_available() -> bool:
    """True when sqlite-vec is installed (nothing is imported)."""
    return importlib.util.find_spec("sqlite_vec") is not None


def install(conn: apsw.Connection, native: bool = True) -> bool:
    """Give `conn` a `vec_distance_cosine`; True when it is sqlite-vec's."""
    if native and native_available():
        import sqlite_vec

        try:
            conn.enable_load_extension(True)
            conn.load_extension(sqlite_vec.loadable_path())
            return True
        except apsw.Error:
            pass
        finally:
            conn.enable_load_extension(False)
    conn.create_scalar_function("vec_distance_cosine", _sql_cosine_distance, 2, deterministic=True)
    return False


def _floats(blob: bytes) -> array[float]:
    values = array("f")
    values.frombytes(blob)
    if not _NATIVE_LITTLE:
        values.byteswap()
    return values


def _sql_cosine_distance(*values: Any) -> float:
    return cosine_distance(values[0], values[1])


def cosine_distance(a: bytes, b: bytes) -> float:
    """1 − cosine similarity of two float32 vectors, as sqlite-vec computes it."""
    x, y = _floats(a), _floats(b)
    if len(x) != len(y):
        raise ValueError(f"vector dimensions differ: {len(x)} and {len(y)}")
    dot = sum(p * q for p, q in zip(x, y, strict=True))
    norms = math.sqrt(sum(p * p for p in x) * sum(q * q for q in y))
    return 1.0 - dot / norms if norms else 1.0
