"""Vectors as `real[]` (decision 17.V1): semantic recall ranks them in the database, by an exact scan.

`node_vectors.vector` held the float32 little-endian bytes SQLite keeps (`service.embedding.pack`);
PostgreSQL cannot compute on a `bytea`, so each vector is rewritten as an array of the same float32
values (exactly: no rounding) in `embedding`, and the bytes are dropped. Rows are converted in
batches of a thousand, keyed by their primary key, inside the migrating transaction.
"""

from __future__ import annotations

import struct
from typing import Any

BATCH = 1000


def up(conn: Any) -> None:
    """`conn` is the migrating psycopg connection, inside the migration's transaction."""
    conn.execute("ALTER TABLE node_vectors ADD COLUMN embedding real[]")
    after = ("", "")
    while True:
        found = conn.execute(
            "SELECT node_id, model, vector FROM node_vectors WHERE (node_id, model) > (%s, %s) "
            "ORDER BY node_id, model LIMIT %s",
            (*after, BATCH),
        ).fetchall()
        if not found:
            break
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE node_vectors SET embedding = %s::real[] WHERE node_id = %s AND model = %s",
                [
                    (list(struct.unpack(f"<{len(blob) // 4}f", bytes(blob))), node_id, model)
                    for node_id, model, blob in found
                ],
            )
        after = (found[-1][0], found[-1][1])
    conn.execute("ALTER TABLE node_vectors ALTER COLUMN embedding SET NOT NULL")
    conn.execute("ALTER TABLE node_vectors DROP COLUMN vector")
