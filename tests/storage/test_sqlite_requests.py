"""Replay keys on SQLite after migration 010 (decision 16.I2): rows appended in the order they were
written, responses packed; a vault written before it still replays its stored responses, and a purge
deletes exactly the keys older than its cut-off."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import apsw
import pytest

from kaeru.api.requests import parse
from kaeru.errors import RequestIdReused
from kaeru.service import Service
from kaeru.storage.base import RequestKey
from kaeru.storage.sqlite.store import SqliteStore
from tests.backends import VaultSpec
from tests.storage.shapes import sqlite_before_migration_10


def _note(service: Service, request_id: str, text: str = "The ferry leaves at nine") -> tuple[Any, bool]:
    return service.note(parse("note", {"initiative": "harbour", "text": text, "request_id": request_id}))


def test_a_vault_from_before_packed_requests_still_replays(tmp_path: Path, monkeypatch: Any) -> None:
    import kaeru.storage.migrate as migrate
    from kaeru.storage.migrate import load_migrations

    # A response and its arguments' digest, as today's code stores them (on another vault).
    today = VaultSpec("sqlite", tmp_path / "today").settings()
    store = SqliteStore(today.sqlite_path)
    first, replayed = _note(Service(store, today), "ferry-1")
    assert not replayed and first.primary is not None
    with store.read() as session:
        stored = session.begin_request(RequestKey("harbour", "note", "ferry-1"), "", "")
    store.close()
    assert stored is not None and stored.response == first.to_json()

    # A vault before migration 010, holding that key with its response as JSON text, as it was written.
    settings = VaultSpec("sqlite", tmp_path / "vault").settings()
    shipped = load_migrations("kaeru.storage.sqlite.migrations")
    monkeypatch.setattr(migrate, "load_migrations", lambda package: [m for m in shipped if m.version < 10])
    SqliteStore(settings.sqlite_path).close()
    conn = apsw.Connection(str(settings.sqlite_path))
    conn.execute(
        "INSERT INTO requests VALUES ('harbour', 'note', 'ferry-1', ?, ?, ?)",
        (stored.args_hash, json.dumps(stored.response, sort_keys=True), datetime.now(UTC).isoformat()),
    )
    conn.close()

    monkeypatch.setattr(migrate, "load_migrations", lambda package: shipped)
    store = SqliteStore(settings.sqlite_path)
    try:
        service = Service(store, settings)
        again, replayed = _note(service, "ferry-1")
        assert replayed and again.primary == first.primary
        fresh, replayed = _note(service, "ferry-2", "The ferry leaves at ten")
        assert not replayed and fresh.primary is not None and fresh.primary != first.primary
        conn = apsw.Connection(str(settings.sqlite_path), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            kinds = [row[0] for row in conn.execute("SELECT typeof(response) FROM requests ORDER BY request_id")]
            # Both digests are 32 bytes (migration 013 turned the old row's hex into them; 16.D2).
            digests = list(
                conn.execute("SELECT typeof(args_hash), length(args_hash) FROM requests ORDER BY request_id")
            )
            indexes = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'requests'")}
        finally:
            conn.close()
        assert kinds == ["text", "blob"]
        assert digests == [("blob", 32), ("blob", 32)]
        # One b-tree keyed by the replay key (migration 018, decision 16.W1): no index beside it.
        assert indexes == {"requests"}
        # Both rows replay, each with its own response; a different call under a used id is refused.
        assert _note(service, "ferry-1")[0].primary == first.primary
        with pytest.raises(RequestIdReused):
            _note(service, "ferry-1", "The ferry leaves at noon")
        assert _note(service, "ferry-2", "The ferry leaves at ten")[0].primary == fresh.primary
    finally:
        store.close()


def test_a_purge_deletes_the_keys_older_than_its_cut_off(sqlite_vault: VaultSpec) -> None:
    settings = sqlite_vault.settings()
    store = SqliteStore(settings.sqlite_path)
    try:
        # The third key is written under a clock that went back: the purge still finds it.
        stamps = ["2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-01T12:00:00Z"]
        with store.write() as session:
            for i, stamp in enumerate(stamps):
                key = RequestKey("harbour", "note", f"r{i}")
                assert session.begin_request(key, f"hash{i}", stamp) is None
                session.finish_request(key, {"state": "applied", "n": i, "text": "ü ✓"})
        with store.write() as session:
            assert session.purge_requests("2026-01-02T00:00:00Z", timedelta(hours=12)) == 2
            assert session.purge_requests("2026-01-02T00:00:00Z", timedelta(hours=12)) == 0
        with store.write() as session:
            assert session.begin_request(RequestKey("harbour", "note", "r0"), "hash0", stamps[1]) is None
            assert session.begin_request(RequestKey("harbour", "note", "r2"), "hash2", stamps[1]) is None
            kept = session.begin_request(RequestKey("harbour", "note", "r1"), "hash1", stamps[1])
            assert kept is not None and kept.args_hash == "hash1"
            assert kept.response == {"state": "applied", "n": 1, "text": "ü ✓"}
        with store.write() as session:
            # A clock a year ahead purges nothing within the window of the newest key (decision 404).
            assert session.purge_requests("2027-01-01T00:00:00Z", timedelta(hours=12)) == 0
    finally:
        store.close()


def test_a_vault_from_before_migration_10_keeps_every_revision(sqlite_vault: VaultSpec) -> None:
    settings = sqlite_vault.settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    made, _ = service.note(
        parse("note", {"initiative": "harbour", "text": "The ferry leaves at nine", "request_id": "n1"})
    )
    assert made.primary is not None
    node_id = made.primary.id
    service.note(parse("note", {"initiative": "harbour", "text": "The tide turns at four"}))
    for hour in ("ten", "eleven"):
        service.revise(
            parse(
                "revise", {"initiative": "harbour", "node": node_id, "patch": {"body": f"The ferry leaves at {hour}"}}
            )
        )
    with store.read() as session:
        log = session.revision_log(node_id)
        moments = [entry.node.recorded_at for entry in log]
        as_of = [session.node_at(node_id, moment) for moment in moments]
        exported = list(session.export_revisions(None))
    store.close()
    assert [entry.node.rev_no for entry in log] == [1, 2, 3]
    assert len(exported) == 4

    sqlite_before_migration_10(settings.sqlite_path)
    store = SqliteStore(settings.sqlite_path)
    try:
        with store.read() as session:
            assert session.revision_log(node_id) == log
            assert [session.node_at(node_id, moment) for moment in moments] == as_of
            assert list(session.export_revisions(None)) == exported
            assert session.has_revision(node_id, 3) and session.has_revision(node_id, 1)
            assert not session.has_revision(node_id, 4)
        conn = apsw.Connection(str(settings.sqlite_path), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            # Only the revisions the node moved past stay in `past_revisions`.
            assert list(conn.execute("SELECT rev_no FROM past_revisions ORDER BY rev_no")) == [(1,), (2,)]
            assert list(conn.execute("SELECT request_id, actor FROM nodes WHERE rev_no = 3")) == [(None, "agent")]
        finally:
            conn.close()
        service = Service(store, settings)
        service.revise(
            parse("revise", {"initiative": "harbour", "node": node_id, "patch": {"body": "The ferry leaves at noon"}})
        )
        with store.read() as session:
            assert [e.node.rev_no for e in session.revision_log(node_id)] == [1, 2, 3, 4]
            assert session.revision_log(node_id)[:3] == log
    finally:
        store.close()
