"""Replay rows on PostgreSQL after migration 019 (decision 224): the digest as its 32 bytes and the
response packed as SQLite packs it; a database written before it still replays its stored rows."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.errors import RequestIdReused
from kaeru.service import Service
from kaeru.storage.postgres.store import PostgresStore
from tests.backends import postgres_admin_url

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)

#: Migration 019 undone: digests as hex text, responses as JSON text, the schema level 18.
_BEFORE_MIGRATION_19 = (
    "ALTER TABLE requests ALTER COLUMN args_hash TYPE text USING encode(args_hash, 'hex'), "
    "ALTER COLUMN response TYPE text USING convert_from(response, 'UTF8')",
    "DELETE FROM schema_migrations WHERE version = 19",
)


def _note(service: Service, request_id: str, text: str = "The ferry leaves at nine") -> tuple[Any, bool]:
    return service.note(parse("note", {"initiative": "harbour", "text": text, "request_id": request_id}))


def _rows(url: str) -> list[tuple[str, int, bytes]]:
    with psycopg.connect(url) as pg:
        found = pg.execute(
            "SELECT request_id, octet_length(args_hash), substr(response, 1, 1) FROM requests ORDER BY request_id"
        ).fetchall()
    return [(str(r[0]), int(r[1]), bytes(r[2])) for r in found]


def test_a_database_from_before_packed_replay_rows_still_replays(url: str) -> None:
    settings = Settings(vault_dir=Path("/nonexistent"), database_url=url)
    store = PostgresStore(url)
    try:
        first, replayed = _note(Service(store, settings), "ferry-1")
        assert not replayed and first.primary is not None
    finally:
        store.close()
    # Today's row: 32 bytes of digest, a packed response (not JSON text).
    assert _rows(url) == [("ferry-1", 32, b"\x01")]

    # The same row as the code before migration 019 wrote it: hex digest, the response as JSON text.
    with psycopg.connect(url) as pg:
        pg.execute(
            "UPDATE requests SET response = convert_to(%s, 'UTF8'), created_at = %s WHERE request_id = 'ferry-1'",
            (json.dumps(first.to_json(), sort_keys=True), datetime.now(UTC).isoformat()),
        )
        for sql in _BEFORE_MIGRATION_19:
            pg.execute(sql)
        assert pg.execute("SELECT length(args_hash), left(response, 1) FROM requests").fetchone() == (64, "{")

    store = PostgresStore(url)  # migrates to 019
    try:
        service = Service(store, settings)
        again, replayed = _note(service, "ferry-1")
        assert replayed and again.to_json() == first.to_json()
        fresh, replayed = _note(service, "ferry-2", "The ferry leaves at ten")
        assert not replayed and fresh.primary is not None and fresh.primary != first.primary
        # The old row's JSON kept as its bytes, its digest turned into 32 bytes; the new row packed.
        assert _rows(url) == [("ferry-1", 32, b"{"), ("ferry-2", 32, b"\x01")]
        assert _note(service, "ferry-1")[0].primary == first.primary
        assert _note(service, "ferry-2", "The ferry leaves at ten")[0].primary == fresh.primary
        with pytest.raises(RequestIdReused):
            _note(service, "ferry-1", "The ferry leaves at noon")
    finally:
        store.close()
