"""Vectors in rowid tables, each with a code of one bit a dimension, for semantic recall's candidates
(decision 17.X1).

`node_vectors` was a `WITHOUT ROWID` table keyed by (node_id, model): its 1.5 KB vectors sat in the
key b-tree itself, spilled to overflow pages, and every key comparison of a look-up read them whole
(~16 µs a look-up at 100k). It becomes a rowid table with the same columns and a unique index on
(node_id, model). `vector_codes` holds, under the same rowid, the vector's code: the float32's sign
bit, cleared → bit set, most significant bit first, padded with clear bits to whole bytes (48 bytes
for 384 dimensions) — a small table that is cheap to scan. Plain tables (no `vec0` virtual table):
a vault opens, migrates, backs up and is checked without the sqlite-vec extension. From now on
`put_vector` (storage/sqlite/vectors.py) writes both in one transaction. This module computes the
codes on its own, so it stays what it was when it ran.
"""

from __future__ import annotations

from typing import Any

_SIGN_CLEAR = bytes(ord("1") if i < 0x80 else ord("0") for i in range(256))


def _code(blob: bytes) -> bytes:
    dims = len(blob) // 4
    pad = -dims % 8
    return int(blob[3::4].translate(_SIGN_CLEAR) + b"0" * pad, 2).to_bytes((dims + pad) // 8, "big") if dims else b""


def up(conn: Any) -> None:
    """`conn` is the migrating apsw connection, inside the migration's write transaction."""
    for statement in (
        "CREATE TABLE node_vectors_017 (id INTEGER PRIMARY KEY, node_id TEXT NOT NULL, model TEXT NOT NULL, "
        "text_sha TEXT NOT NULL, vector BLOB NOT NULL)",
        "INSERT INTO node_vectors_017 (node_id, model, text_sha, vector) "
        "SELECT node_id, model, text_sha, vector FROM node_vectors ORDER BY node_id, model",
        "DROP TABLE node_vectors",
        "ALTER TABLE node_vectors_017 RENAME TO node_vectors",
        "CREATE UNIQUE INDEX node_vectors_node ON node_vectors (node_id, model)",
        "CREATE TABLE vector_codes (id INTEGER PRIMARY KEY, model TEXT NOT NULL, code BLOB NOT NULL)",
    ):
        list(conn.execute(statement))
    conn.executemany(
        "INSERT INTO vector_codes (id, model, code) VALUES (?, ?, ?)",
        (
            (i, model, _code(bytes(vector)))
            for i, model, vector in conn.execute("SELECT id, model, vector FROM node_vectors")
        ),
    )
