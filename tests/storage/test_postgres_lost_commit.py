"""A write whose COMMIT answer is lost is told as what it became (decision 444).

Between kaeru and PostgreSQL stands a relay (a real TCP proxy in this process) that, when armed,
ends the connection at the next write's COMMIT: after the server committed it (its answer not
passed on), or before the COMMIT reached it. The connection breaks either way, and until decision 444 both
were answered `unavailable` — "nothing was written; retry" — so an agent that retried a `note`
without `request_id` wrote it twice, unwarned. Now the write learns its transaction id in its
first exchange and asks the server, on a new connection, what became of it:

* committed: the call answers `applied`, as if the answer had come;
* never committed: `unavailable`, and nothing stands;
* the server cannot be asked: `unavailable` saying the write may stand, and a retry without
  `request_id` that repeats it gets `duplicate_call`, as after an answer that arrived.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from kaeru.config import Settings
from kaeru.errors import CommitUnknown, Unavailable
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import postgres_admin_url
from tests.schema_checked import checked_calls

pytestmark = pytest.mark.skipif(postgres_admin_url() is None, reason="needs PostgreSQL (KAERU_TEST_DATABASE_URL)")

#: A mutation writes its audit row last, then commits (decision 16.P2): what the relay looks for,
#: in that order, on one connection (one packet may hold both, or the COMMIT come in the next).
_AUDIT = b"INSERT INTO audit"
_COMMIT = b"COMMIT\x00"
#: The server's CommandComplete of a COMMIT: it has committed.
_COMMITTED = b"C\x00\x00\x00\x0bCOMMIT\x00"
#: The server's ReadyForQuery: a new connection is in (its start-up and authentication done).
_READY = b"Z\x00\x00\x00\x05"


class CommitCutter:
    """A relay to the test cluster. `arm("after")`: the next write's COMMIT is passed on (and what
    follows it, the pipeline's Sync), the server's answers dropped, and both sides closed once it
    says it committed; `arm("before")`: that COMMIT is never passed on, both sides closed.
    `refusing`: connections opened from now on are closed at once; `muting`: connections opened
    from now on come in, and then nothing they send reaches the server (a pooler queueing for a
    server, or a server that stopped answering)."""

    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self.mode: str | None = None
        self.refusing = False
        self.muting = False
        self.cut = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, mode: str) -> None:
        self.cut.clear()
        self.mode = mode

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.refusing:
                client.close()
                continue
            server = socket.create_connection(self.upstream)
            self._sockets += [client, server]
            cutting, muted = threading.Event(), threading.Event()
            muting = self.muting
            threading.Thread(target=self._to_server, args=(client, server, cutting, muted), daemon=True).start()
            threading.Thread(target=self._to_client, args=(server, client, cutting, muted, muting), daemon=True).start()

    def _to_server(
        self, client: socket.socket, server: socket.socket, cutting: threading.Event, muted: threading.Event
    ) -> None:
        audited = False
        try:
            while data := client.recv(65536):
                if muted.is_set():
                    continue
                audited = audited or _AUDIT in data
                written, audited = audited and _COMMIT in data, audited and _COMMIT not in data
                if written and self.mode is not None:
                    mode, self.mode = self.mode, None
                    if mode == "before":
                        self._close(client, server)
                        return
                    cutting.set()  # the answers are dropped from now on
                server.sendall(data)
        except OSError:
            pass
        self._close(client, server)

    def _to_client(
        self,
        server: socket.socket,
        client: socket.socket,
        cutting: threading.Event,
        muted: threading.Event,
        muting: bool,
    ) -> None:
        seen = b""
        try:
            while data := server.recv(65536):
                if not cutting.is_set():
                    if muting and _READY in data:
                        muted.set()  # in: from now on nothing it sends is passed on
                    client.sendall(data)
                    continue
                seen += data
                if _COMMITTED in seen:
                    break
        except OSError:
            pass
        self._close(client, server)

    def _close(self, client: socket.socket, server: socket.socket) -> None:
        for s in (client, server):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        if self.mode is None:
            self.cut.set()

    def close(self) -> None:
        self._listener.close()
        for s in self._sockets:
            s.close()


@pytest.fixture
def relayed(tmp_path: Path) -> Iterator[tuple[CommitCutter, Any, Service]]:
    from tests.pg import drop_database, fresh_database

    url = fresh_database()
    parts = urlsplit(url)
    cutter = CommitCutter((parts.hostname or "localhost", parts.port or 5432))
    netloc = f"{parts.username}:{parts.password}@127.0.0.1:{cutter.port}"
    settings = Settings.from_env(
        {"KAERU_VAULT": str(tmp_path / "vault"), "KAERU_DATABASE_URL": urlunsplit(parts._replace(netloc=netloc))}
    )
    store = open_store(settings)
    service = Service(store, settings)
    try:
        yield cutter, checked_calls(service), service
    finally:
        store.close()
        cutter.close()
        drop_database(url)


def _bodies(service: Service, initiative: str) -> list[str]:
    with service.store.read() as session:
        found = session.initiative_by_name(initiative)
        assert found is not None
        ids, _ = session.newest_members(found.id, None, 100)
        return [node.body for node in (session.get_node(i) for i in ids) if node is not None]


def _note(call: Any, body: str, **more: Any) -> dict[str, Any]:
    return call("note", initiative="lost-commit", text=body, **more)  # type: ignore[no-any-return]


def test_a_write_the_server_committed_is_applied_though_its_answer_was_lost(
    relayed: tuple[CommitCutter, Any, Service],
) -> None:
    cutter, call, service = relayed
    assert _note(call, "the first note")["state"] == "applied"
    cutter.arm("after")
    answer = _note(call, "the relay drops the answer to this one")
    assert cutter.cut.is_set()
    assert answer["state"] == "applied", answer["issues"]
    assert answer["data"]["primary"] is not None
    assert _bodies(service, "lost-commit").count("the relay drops the answer to this one") == 1
    assert _note(call, "and the next call works")["state"] == "applied"


def test_a_write_whose_commit_never_reached_the_server_is_unavailable_and_a_retry_writes_it_once(
    relayed: tuple[CommitCutter, Any, Service],
) -> None:
    cutter, call, service = relayed
    assert _note(call, "the first note")["state"] == "applied"
    cutter.arm("before")
    answer = _note(call, "this COMMIT never arrives")
    assert cutter.cut.is_set()
    assert answer["state"] == "rejected"
    (issue,) = answer["issues"]
    assert issue["code"] == "unavailable" and issue["retryable"] is True
    assert "COMMIT was lost" not in issue["message"]
    assert "this COMMIT never arrives" not in _bodies(service, "lost-commit")
    retried = _note(call, "this COMMIT never arrives")
    assert retried["state"] == "applied"
    assert [i["code"] for i in retried["issues"]] == []  # no duplicate_call: the first did not stand
    assert _bodies(service, "lost-commit").count("this COMMIT never arrives") == 1


@pytest.mark.parametrize("asking", ["refused", "never answered"])
def test_a_write_whose_fate_cannot_be_asked_says_it_may_stand_and_its_retry_is_flagged(
    relayed: tuple[CommitCutter, Any, Service], asking: str
) -> None:
    """The connection asking what became of the write is closed at once, or comes in and is never
    answered (behind PgBouncer the question waited in its queue for minutes: the question has a
    deadline of its own)."""
    cutter, call, service = relayed
    assert _note(call, "the first note")["state"] == "applied"
    cutter.arm("after")
    cutter.refusing, cutter.muting = asking == "refused", asking == "never answered"
    answer = _note(call, "committed, but nobody can say so")
    cutter.refusing = cutter.muting = False
    assert answer["state"] == "rejected"
    (issue,) = answer["issues"]
    assert issue["code"] == "unavailable" and issue["retryable"] is True
    assert "answer to COMMIT was lost" in issue["message"] and "request_id" in issue["message"]
    retried = _note(call, "committed, but nobody can say so")
    assert retried["state"] == "applied"
    (warning,) = retried["issues"]
    assert warning["code"] == "duplicate_call"
    assert _bodies(service, "lost-commit").count("committed, but nobody can say so") == 2


def test_a_read_whose_connection_breaks_at_its_end_is_unavailable_and_claims_no_write(
    relayed: tuple[CommitCutter, Any, Service],
) -> None:
    """A read ends with COMMIT too: its connection broken there is the plain `unavailable`, not
    "the write may stand" (a read wrote nothing)."""
    _, call, service = relayed
    assert _note(call, "the first note")["state"] == "applied"
    store = service.store
    with pytest.raises(Unavailable) as lost, store.read() as session:
        assert session.initiative_by_name("lost-commit") is not None  # the snapshot is open
        pid = session._db.connection.info.backend_pid  # type: ignore[attr-defined]
        with psycopg.connect(postgres_admin_url() or "", autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    assert not isinstance(lost.value, CommitUnknown), lost.value.message
    assert "COMMIT was lost" not in lost.value.message


def test_with_a_request_id_the_retry_of_a_write_whose_fate_is_unknown_replays_it(
    relayed: tuple[CommitCutter, Any, Service],
) -> None:
    cutter, call, service = relayed
    assert _note(call, "the first note")["state"] == "applied"
    cutter.arm("after")
    cutter.refusing = True
    answer = _note(call, "keyed, committed, unanswered", request_id="lost-commit-1")
    cutter.refusing = False
    assert answer["state"] == "rejected" and answer["issues"][0]["code"] == "unavailable"
    retried = _note(call, "keyed, committed, unanswered", request_id="lost-commit-1")
    assert retried["state"] == "applied" and retried["replayed"] is True
    assert _bodies(service, "lost-commit").count("keyed, committed, unanswered") == 1
