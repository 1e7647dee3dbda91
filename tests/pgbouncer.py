"""PgBouncer in front of a test database: the pooler a team's PostgreSQL is often reached through
(Supabase's, Neon's and Heroku's pooled addresses are PgBouncer or work like it).

A real `pgbouncer` process (Debian's package, which the README's test command installs where it
can) listens on a free loopback port and hands its clients' transactions to at most `pool_size`
server connections, so that two transactions of one client may run on different server
connections and one server connection serves several clients in turn. Its configuration is
PgBouncer's defaults apart from what must be set: no startup parameter is ignored.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlsplit

import psycopg

from tests.wire.support import free_port, stop

#: Where Debian installs it (not on a user's PATH).
_DEBIAN = "/usr/sbin/pgbouncer"


def pgbouncer_binary() -> str | None:
    """The `pgbouncer` executable, or None where it is not installed."""
    return shutil.which("pgbouncer") or (_DEBIAN if os.access(_DEBIAN, os.X_OK) else None)


@contextmanager
def pgbouncer(database_url: str, *, pool_size: int, mode: str = "transaction") -> Iterator[str]:
    """A PgBouncer in `mode` in front of `database_url`'s server; yields the URL of the same
    database through it (same user, no password: the pooler holds the server's)."""
    binary = pgbouncer_binary()
    assert binary is not None, "pgbouncer is not installed"
    server = urlsplit(database_url)
    user, password = unquote(server.username or ""), unquote(server.password or "")
    database = server.path.lstrip("/")
    folder = Path(tempfile.mkdtemp(prefix="kaeru-pgbouncer-"))
    folder.chmod(0o755)  # run as root, PgBouncer drops to `nobody`, which must read its files
    port = free_port()
    target = f"host={server.hostname} port={server.port or 5432} user={user} password={password}"
    (folder / "pgbouncer.ini").write_text(
        f"[databases]\n{database} = {target} dbname={database}\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {folder / 'users.txt'}\n"
        f"pool_mode = {mode}\ndefault_pool_size = {pool_size}\nmax_client_conn = 200\n"
    )
    (folder / "users.txt").write_text(f'"{user}" ""\n')
    for name in ("pgbouncer.ini", "users.txt"):
        (folder / name).chmod(0o644)
    log = (folder / "log").open("w")
    as_nobody = ["-u", "nobody"] if os.geteuid() == 0 else []  # it refuses to run as root
    proc = subprocess.Popen([binary, *as_nobody, str(folder / "pgbouncer.ini")], stdout=log, stderr=log)
    url = f"postgresql://{user}@127.0.0.1:{port}/{database}"
    try:
        _wait_until_it_answers(url, proc, folder / "log")
        yield url
    finally:
        stop(proc)
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


def _wait_until_it_answers(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"pgbouncer exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@contextmanager
def late_flushes(url: str, delay: float = 0.05) -> Iterator[str]:
    """A TCP relay in front of `url`'s server (here, a pooler) that holds back a client's Flush
    message sent right after a Sync by `delay` seconds, and passes everything else on at once;
    yields the URL through it. The pooler then reads the Sync's answer — the end of a transaction
    — before the Flush, as it does when the client is slow (a busy machine), deterministically."""
    target = urlsplit(url)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    opened: list[socket.socket] = [listener]

    def relay(client: socket.socket) -> None:
        server = socket.create_connection((target.hostname or "127.0.0.1", target.port or 5432))
        opened.extend((client, server))
        threading.Thread(target=_copy, args=(server, client), daemon=True).start()
        _relay_messages(client, server, delay)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=relay, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    relayed = target._replace(netloc=f"{target.netloc.rsplit('@', 1)[0]}@127.0.0.1:{port}").geturl()
    try:
        yield relayed + ("&" if "?" in relayed else "?") + "sslmode=disable&gssencmode=disable"
    finally:
        for sock in opened:
            sock.close()


def _exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _copy(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        sink.close()


def _relay_messages(client: socket.socket, server: socket.socket, delay: float) -> None:
    """The client's side, message by message: the startup packet (no type byte), then typed ones."""
    try:
        startup = _exactly(client, 4)
        server.sendall(startup + _exactly(client, int.from_bytes(startup, "big") - 4))
        last = b""
        while True:
            head = _exactly(client, 5)
            message = head + _exactly(client, int.from_bytes(head[1:], "big") - 4)
            if head[:1] == b"H" and last == b"S":
                time.sleep(delay)
            server.sendall(message)
            last = head[:1]
    except (OSError, EOFError):
        pass
    finally:
        server.close()
