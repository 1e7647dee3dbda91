"""Put a SQLite vault back into the shape an older kaeru left it in, so a test can watch today's
migrations run on it (fixtures written by old code live in tests/data/old_vault/)."""

from __future__ import annotations

from pathlib import Path

import apsw

#: Migration 010 undone: every revision, the current one included, in `node_revisions`; no request
#: id or actor on `nodes`; the replay keys keyed by id (their rows dropped); the schema level 9.
BEFORE_MIGRATION_10 = (
    "INSERT INTO node_revisions (node_seq, rev_no, revision, node_type, tier, name, body, description, tags, "
    "layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, "
    "request_id, actor) SELECT seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, "
    "visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, "
    "actor FROM nodes; "
    "ALTER TABLE nodes DROP COLUMN request_id; ALTER TABLE nodes DROP COLUMN actor; "
    "DROP TABLE requests; "
    "CREATE TABLE requests (initiative TEXT NOT NULL, operation TEXT NOT NULL, request_id TEXT NOT NULL, "
    "args_hash TEXT NOT NULL, response TEXT, created_at TEXT NOT NULL, "
    "PRIMARY KEY (initiative, operation, request_id)) WITHOUT ROWID; "
    "CREATE INDEX requests_created ON requests (created_at); "
    "DELETE FROM schema_migrations WHERE version = 10; PRAGMA user_version = 9; "
)


def sqlite_before_migration_10(path: Path) -> None:
    """Undo migration 010 on the vault file at `path` (no store may have it open)."""
    conn = apsw.Connection(str(path))
    try:
        conn.execute(f"BEGIN; ALTER TABLE past_revisions RENAME TO node_revisions; {BEFORE_MIGRATION_10}COMMIT")
    finally:
        conn.close()


#: PostgreSQL migration 011 undone (a database's URL, no store open on it): every revision, the
#: current one included, in `node_revisions`; no request id or actor on `nodes`; the schema level 10.
BEFORE_POSTGRES_MIGRATION_11 = (
    "ALTER TABLE past_revisions RENAME TO node_revisions",
    "INSERT INTO node_revisions (node_seq, rev_no, revision, node_type, tier, name, body, description, tags, "
    "layer, visibility, status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, "
    "actor) SELECT seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, "
    "status, properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor FROM nodes",
    "ALTER TABLE nodes DROP COLUMN request_id",
    "ALTER TABLE nodes DROP COLUMN actor",
    "DELETE FROM schema_migrations WHERE version = 11",
)


def postgres_before_migration_11(url: str) -> None:
    """Undo PostgreSQL migration 011 on the database at `url` (no store may have it open)."""
    import psycopg

    with psycopg.connect(url) as pg:  # one transaction, committed on leaving
        for sql in BEFORE_POSTGRES_MIGRATION_11:
            pg.execute(sql)
