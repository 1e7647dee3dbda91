"""A stdio server started while its PostgreSQL refuses connections serves anyway, and uses the
database from the first call after it answers.

Found by a probe of kaeru on PostgreSQL: `kaeru serve` exited before `initialize` when the database
was not up yet (a VPN coming up after the editor), and the agent had no memory that whole session.
The database "comes up" here as a forwarder that starts listening on the URL's port.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from kaeru.storage.pending import RETRY_S
from tests.backends import drop_vault, new_vault, postgres_admin_url
from tests.wire.support import LOOPBACK, connect, free_port, http_server, structured, subprocess_env, wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(120),
    pytest.mark.skipif(not postgres_admin_url(), reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset"),
]


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


@contextmanager
def _forwarder(port: int, to: tuple[str, int]) -> Iterator[None]:
    """Listen on `port` and pass every connection on to `to`, both ways, until the block ends."""
    listener = socket.create_server((LOOPBACK, port))
    stopped = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        while not stopped.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(to)
            held.extend((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield
    finally:  # the database "goes away": nothing listens, and every connection through it is cut
        stopped.set()
        with suppress(OSError):  # wakes the accept blocked on it (closing alone leaves it listening)
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        for conn in held:
            with suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()


def test_a_stdio_server_waits_for_a_database_that_comes_up_after_it(tmp_path: Path) -> None:
    vault = new_vault("postgres", tmp_path)
    assert vault.database_url
    real = urlsplit(vault.database_url)
    port = free_port()  # nothing listens there yet: connections are refused
    late = urlunsplit(real._replace(netloc=real.netloc.replace(f"{real.hostname}:{real.port}", f"{LOOPBACK}:{port}")))
    env = subprocess_env({"KAERU_VAULT": str(tmp_path / "unused"), "KAERU_DATABASE_URL": late})

    async def session() -> None:
        async with connect("stdio", env, tmp_path) as client:
            waiting = structured(await client.call_tool("note", {"initiative": "late", "text": "an early note"}))
            assert waiting["issues"][0]["code"] == "unavailable" and waiting["issues"][0]["retryable"] is True
            assert "connects at the first call after the database does" in waiting["issues"][0]["message"]
            with _forwarder(port, (str(real.hostname), int(real.port or 5432))):
                await asyncio.sleep(RETRY_S + 0.2)
                noted = structured(await client.call_tool("note", {"initiative": "late", "text": "a note once up"}))
                assert noted["state"] == "applied", noted
                found = structured(await client.call_tool("search", {"initiatives": ["late"], "text": "note"}))
                assert [h["id"] for h in found["data"]["hits"]] == [noted["data"]["primary"]["id"]]

    try:
        asyncio.run(session())
    finally:
        drop_vault(vault)


def _health(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=90) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def test_health_says_whether_the_database_answers(tmp_path: Path) -> None:
    """`/health` answered `ok` while PostgreSQL was gone: a load balancer kept sending calls that
    could only be answered `unavailable`. It reads the vault: 503 while the database is away."""
    vault = new_vault("postgres", tmp_path)
    assert vault.database_url
    real = urlsplit(vault.database_url)
    port = free_port()
    through = urlunsplit(
        real._replace(netloc=real.netloc.replace(f"{real.hostname}:{real.port}", f"{LOOPBACK}:{port}"))
    )
    env = subprocess_env({"KAERU_VAULT": str(tmp_path / "unused"), "KAERU_DATABASE_URL": through})
    upstream = (str(real.hostname), int(real.port or 5432))
    first = _forwarder(port, upstream)
    first.__enter__()
    try:
        with http_server(env, tmp_path) as server:
            assert _health(f"{server.base}/health") == (200, "ok")
            first.__exit__(None, None, None)  # the database goes away
            # `/health` answers its last verdict again for a second (decision 500).
            wait_until(lambda: _health(f"{server.base}/health")[0] == 503, 30, "health once the database is gone")
            code, said = _health(f"{server.base}/health")
            assert code == 503 and said.startswith("unavailable:"), (code, said)
            assert real.hostname not in said and "postgresql" not in said, "no token is asked: nothing of the URL"
            with _forwarder(port, upstream):  # and comes back
                wait_until(lambda: _health(f"{server.base}/health")[0] == 200, 90, "health once it is back")
    finally:
        first.__exit__(None, None, None)
        drop_vault(vault)
