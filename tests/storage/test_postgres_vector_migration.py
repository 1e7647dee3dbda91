"""PostgreSQL migration 010 (decision 17.V1): the vectors a vault stored as float32 bytes become
`real[]` with exactly the same values, and semantic recall ranks them after the upgrade."""

from __future__ import annotations

import random
import struct

import psycopg
import pytest

from kaeru.storage.migrate import load_migrations
from kaeru.storage.postgres.store import PostgresStore
from tests.backends import postgres_admin_url

pytestmark = pytest.mark.skipif(postgres_admin_url() is None, reason="PostgreSQL not configured")


def test_stored_vector_bytes_become_arrays_of_the_same_values() -> None:
    from tests.pg import blank_database, drop_database

    url = blank_database()
    rng = random.Random(11)
    # Awkward values too: negative zero, subnormal, tiny and huge float32 values.
    special = [0.0, -0.0, 1.4e-45, -1.4e-45, 1.17549435e-38, 3.4028234e38, -1.5, 2.0**-20]
    stored = {f"n{i:04d}": [rng.uniform(-1.0, 1.0) for _ in range(384)] for i in range(2500)}
    stored["n9999"] = special
    packed = {k: struct.pack(f"<{len(v)}f", *v) for k, v in stored.items()}
    try:
        migrations = load_migrations("kaeru.storage.postgres.migrations")
        before = [m for m in migrations if m.version < 10]
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT)"
            )
            for migration in before:
                conn.execute("BEGIN")
                migration.apply(conn, conn.execute)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, 'x')",
                    (migration.version, migration.name),
                )
                conn.execute("COMMIT")
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO node_vectors (node_id, model, text_sha, vector) VALUES (%s, 'm', 'd', %s)",
                    list(packed.items()),
                )
        store = PostgresStore(url)
        try:
            with store.read() as session:
                rows = session._db.rows("SELECT node_id, embedding FROM node_vectors ORDER BY node_id")
                columns = {
                    r[0]
                    for r in session._db.rows(
                        "SELECT column_name FROM information_schema.columns WHERE table_name = 'node_vectors'"
                    )
                }
        finally:
            store.close()
        assert "vector" not in columns
        assert len(rows) == len(packed)
        for node_id, embedding in rows:
            assert struct.pack(f"<{len(embedding)}f", *embedding) == packed[node_id], node_id
    finally:
        drop_database(url)
