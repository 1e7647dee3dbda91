"""A `kaeru serve` over stdio ends cleanly: on end of input, SIGTERM and SIGINT it closes the store and
exits 0 (so do `kaeru serve --http` and `kaeru ui` on either signal), every note it answered is stored, and on SQLite the last server to leave a vault removes its
`-wal` and `-shm` files (decision 16.I1) — while a server that leaves first does not disturb another
still serving the same vault.

The servers are forked from the worker's server zygote through its launcher (decision 432: signals
forwarded, the server's exit status its own), except one case of each way to end — end of input,
SIGTERM, SIGINT — on SQLite, started anew so a real interpreter's own signal path stays tested.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.cli.zygote_client import count_served_cpu, server_argv
from tests.wire.support import KAERU_SERVE, http_server, initialize_request, raw_post

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

NOTES = 40


class StdioServer:
    """A `kaeru serve` subprocess spoken to line by line (forked from the worker's server zygote
    unless `spawn`)."""

    def __init__(self, env: dict[str, str], log: Path, *, spawn: bool = False):
        self._err = log.open("wb")
        self.proc = subprocess.Popen(
            server_argv(KAERU_SERVE, env, spawn=spawn),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            env=env,
        )
        self.log = log
        self._next = 0
        self.request("initialize", initialize_request()["params"])
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    @property
    def _in(self) -> IO[bytes]:
        assert self.proc.stdin is not None
        return self.proc.stdin

    def _send(self, message: dict[str, Any]) -> None:
        self._in.write(json.dumps(message).encode() + b"\n")
        self._in.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, f"the server exited during {method}: {self.log.read_text()}"
            message = json.loads(line)
            if message.get("id") == self._next:
                result: dict[str, Any] = message["result"]
                return result

    def note(self, initiative: str, text: str) -> str:
        result = self.request("tools/call", {"name": "note", "arguments": {"initiative": initiative, "text": text}})
        envelope = result["structuredContent"]
        assert envelope["state"] == "applied", envelope
        node_id: str = envelope["data"]["primary"]["id"]
        return node_id

    def notes(self, initiative: str, count: int, start: int = 0) -> list[str]:
        return [
            self.note(initiative, f"observation {i}: the heron waits by the weir at dusk, tide {i % 7}")
            for i in range(start, start + count)
        ]

    def search_total(self, initiative: str, text: str) -> int:
        result = self.request(
            "tools/call", {"name": "search", "arguments": {"initiatives": [initiative], "text": text}}
        )
        envelope = result["structuredContent"]
        assert envelope["state"] == "ok", envelope
        total: int = envelope["data"]["total"]
        return total

    def end(self, how: str) -> int:
        """End the session by closing stdin (`eof`) or by a signal; the exit code."""
        if how == "eof":
            self._in.close()
        else:
            self.proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
        try:
            code = self.proc.wait(60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None and not stream.closed:
                    stream.close()
            self._err.close()
            count_served_cpu()
        return code


def _stop_by(proc: subprocess.Popen[Any], how: str) -> int:
    """Send `proc` SIGTERM (`sigterm`) or SIGINT and wait for its exit code; killed if it outlives the wait."""
    proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
    return _ended(proc)


def _sidecars(vault: VaultSpec) -> list[str]:
    """The SQLite `-wal` / `-shm` files beside the vault's database (none on PostgreSQL)."""
    if vault.backend != "sqlite":
        return []
    return sorted(p.name for p in vault.vault_dir.glob("*.sqlite3-*"))


def _stored(vault: VaultSpec, ids: list[str]) -> int:
    """How many of `ids` are live nodes of the vault, read by a fresh store after the servers left."""
    store = open_store(vault.settings())
    try:
        with store.read() as session:
            found = session.nodes_by_ids(ids)
        return sum(1 for node in found.values() if not node.retracted)
    finally:
        store.close()


@pytest.mark.parametrize("how", ["eof", "sigterm", "sigint"])
def test_a_server_ends_cleanly_and_leaves_no_wal(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path, how: str
) -> None:
    # Started anew on SQLite: each way to end reaches a real interpreter of its own once.
    server = StdioServer(server_env, tmp_path / "server.log", spawn=vault.backend == "sqlite")
    ids = server.notes("heron", NOTES)
    if vault.backend == "sqlite":
        assert any(name.endswith("-wal") for name in _sidecars(vault))  # the server did write through a WAL

    code = server.end(how)

    assert code == 0, server.log.read_text()
    assert _sidecars(vault) == []
    assert _stored(vault, ids) == NOTES
    assert "Traceback" not in server.log.read_text()


@pytest.mark.parametrize("how", ["eof", "sigterm"])
def test_a_server_ended_right_after_its_first_answer_leaves_no_wal(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path, how: str
) -> None:
    """The first answer starts the read path's warm-up on a thread of its own (decision 269); a
    session that ends at once waits for it, or leaves it as a kill would, and still closes cleanly."""
    server = StdioServer(server_env, tmp_path / "server.log")
    ids = server.notes("heron", 1)

    code = server.end(how)

    assert code == 0, server.log.read_text()
    assert _sidecars(vault) == []
    assert _stored(vault, ids) == 1
    assert "Traceback" not in server.log.read_text()


def test_the_first_server_to_leave_does_not_break_the_second_and_the_last_removes_the_wal(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    first = StdioServer(server_env, tmp_path / "first.log")
    second = StdioServer(server_env, tmp_path / "second.log")
    ids = first.notes("weir", NOTES) + second.notes("weir", NOTES, start=NOTES)

    assert first.end("eof") == 0, first.log.read_text()
    if vault.backend == "sqlite":
        # The second server still has the vault open: its WAL stays for it.
        assert any(name.endswith("-wal") for name in _sidecars(vault))
    # The second server goes on reading and writing, and sees everything the first one wrote.
    assert second.search_total("weir", "heron") == 2 * NOTES
    ids += second.notes("weir", NOTES, start=2 * NOTES)
    assert second.search_total("weir", "heron") == 3 * NOTES

    assert second.end("sigterm") == 0, second.log.read_text()
    assert _sidecars(vault) == []
    assert _stored(vault, ids) == 3 * NOTES


@pytest.mark.parametrize("how", ["sigterm", "sigint"])
def test_a_server_on_a_terminal_stops_on_a_signal(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path, how: str
) -> None:
    """On a terminal (stdin a tty, read by the SDK in a worker thread no cancellation reaches),
    SIGTERM and Ctrl-C still end the server: it closes the store and exits 0."""
    import os
    import pty

    master, slave = pty.openpty()
    log = (tmp_path / "tty.log").open("wb")
    proc = subprocess.Popen(
        server_argv(KAERU_SERVE, server_env), stdin=slave, stdout=subprocess.PIPE, stderr=log, env=server_env
    )
    os.close(slave)
    try:
        assert proc.stdout is not None
        calls = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_request()["params"]},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "note", "arguments": {"initiative": "tty", "text": "typed at a terminal"}},
            },
        ]
        for call in calls:
            os.write(master, json.dumps(call).encode() + b"\n")
        answers = [json.loads(proc.stdout.readline()) for _ in range(2)]
        node_id = answers[1]["result"]["structuredContent"]["data"]["primary"]["id"]
        code = _stop_by(proc, how)
    finally:
        os.close(master)
        log.close()
    assert code == 0, (tmp_path / "tty.log").read_text()
    assert _sidecars(vault) == []
    assert _stored(vault, [node_id]) == 1


def _http_notes(url: str, initiative: str, count: int) -> list[str]:
    ids = []
    for i in range(count):
        status, body = raw_post(
            url,
            {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {"name": "note", "arguments": {"initiative": initiative, "text": f"heron at the weir {i}"}},
            },
        )
        assert status == 200, body
        envelope = json.loads(body)["result"]["structuredContent"]
        assert envelope["state"] == "applied", envelope
        ids.append(envelope["data"]["primary"]["id"])
    return ids


@pytest.mark.parametrize("how", ["sigterm", "sigint"])
def test_an_http_server_ends_cleanly_on_a_signal(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path, how: str
) -> None:
    """`kaeru serve --http` (what a service manager or a container stops with SIGTERM): it closes the
    store and exits 0, instead of being killed by the signal uvicorn raises again after its shutdown."""
    with http_server(server_env, tmp_path) as server:
        ids = _http_notes(server.url, "heron", NOTES)
        if vault.backend == "sqlite":
            assert any(name.endswith("-wal") for name in _sidecars(vault))
        code = _stop_by(server.proc, how)
        output = server.output()
    assert code == 0, output
    assert _sidecars(vault) == []
    assert _stored(vault, ids) == NOTES
    assert "Traceback" not in output


@pytest.mark.parametrize("how", ["sigterm", "sigint"])
def test_the_viewer_ends_cleanly_on_a_signal(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path, how: str
) -> None:
    """`kaeru ui` holds the store open as the HTTP server does, and closes it on either signal."""
    ids = _stored_notes(vault, 3)
    log = tmp_path / "ui.err"
    with log.open("wb") as errors:
        proc = subprocess.Popen(
            server_argv([sys.executable, "-m", "kaeru", "ui"], server_env),
            env=server_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().startswith(b"kaeru viewer at "), log.read_text()
            if vault.backend == "sqlite":
                assert any(name.endswith("-shm") for name in _sidecars(vault))  # the vault is open
            code = _stop_by(proc, how)
        finally:
            proc.stdout.close() if proc.stdout else None
    assert code == 0, log.read_text()
    assert _sidecars(vault) == []
    assert _stored(vault, ids) == 3
    assert "Traceback" not in log.read_text()


def _stored_notes(vault: VaultSpec, count: int) -> list[str]:
    """`count` notes written in process (closed again) before a server opens the vault."""
    from kaeru.mcp.server import build_server
    from kaeru.service import Service

    store = open_store(vault.settings())
    try:
        registry = build_server(Service(store, vault.settings())).registry
        made = [registry.run("note", {"initiative": "weir", "text": f"tide {i}"}) for i in range(count)]
    finally:
        store.close()
    assert all(m["state"] == "applied" for m in made), made
    return [m["data"]["primary"]["id"] for m in made]


def _serving_pipes(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """`kaeru serve` on pipes, `initialize` answered and `notifications/initialized` sent."""
    with log.open("wb") as errors:
        proc = subprocess.Popen(
            server_argv(KAERU_SERVE, env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
        )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(initialize_request()).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1, log.read_text()
    _offer(proc, [{"jsonrpc": "2.0", "method": "notifications/initialized"}])
    return proc


def _offer(proc: subprocess.Popen[bytes], messages: list[dict[str, Any]]) -> None:
    """Write `messages` to the server's input; a server that has already stopped reading takes none."""
    assert proc.stdin is not None
    try:
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        proc.stdin.flush()
    except BrokenPipeError:
        pass


def _note_call(number: int, text: str) -> dict[str, Any]:
    arguments = {"initiative": "gone", "text": text, "request_id": f"gone-{number}"}
    return {
        "jsonrpc": "2.0",
        "id": 1 + number,
        "method": "tools/call",
        "params": {"name": "note", "arguments": arguments},
    }


def _ended(proc: subprocess.Popen[Any]) -> int:
    """The exit code of a server left to end by itself; killed (and the test failed) if it does not."""
    try:
        return proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except BrokenPipeError:
                    pass
        count_served_cpu()


def _live_notes(vault: VaultSpec) -> int:
    """How many live notes the vault holds, read by a fresh store after the servers left."""
    store = open_store(vault.settings())
    try:
        with store.read() as session:
            return len(session.live_node_batch(0, 10_000))
    finally:
        store.close()


def _said_at_most_one_line(log: Path) -> str:
    said = log.read_text()
    assert "Traceback" not in said and len(said.splitlines()) <= 1, said
    return said


@pytest.mark.parametrize("calls", [0, 3])
def test_a_server_whose_client_stops_reading_ends_cleanly_and_starts_nothing(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path, calls: int
) -> None:
    """A client that closes its end of the server's stdout (and keeps stdin open): the server ends
    as at end of input — the store closed, exit 0, one line on stderr — whether it was waiting
    (nothing to write: it crashed only when writing, and waited forever here) or is sent calls it
    could never answer, none of which is applied (each was applied, then its answer crashed it)."""
    log = tmp_path / "server.log"
    proc = _serving_pipes(server_env, log)
    assert proc.stdout is not None
    proc.stdout.close()
    _offer(proc, [_note_call(i, f"a note nobody will hear of {i}") for i in range(calls)])

    code = _ended(proc)

    said = _said_at_most_one_line(log)
    assert code == 0, said
    assert "the client stopped reading" in said
    assert _sidecars(vault) == []
    assert _live_notes(vault) == 0


def test_a_server_whose_client_closes_both_pipes_during_a_call_ends_cleanly_and_the_retry_stores_once(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    """Both pipes closed at once right after a write was sent (a client killed mid-call): the server
    ends cleanly (it crashed writing the answer), and the write is in the vault at most once — the
    call either ran to its commit or never started — so retrying it with its `request_id` stores it
    exactly once."""
    log = tmp_path / "server.log"
    proc = _serving_pipes(server_env, log)
    assert proc.stdin is not None and proc.stdout is not None
    call = _note_call(1, "the heron left the weir before the answer came " * 2000)
    _offer(proc, [call])
    proc.stdin.close()
    proc.stdout.close()

    code = _ended(proc)

    assert code == 0, _said_at_most_one_line(log)
    _said_at_most_one_line(log)
    assert _sidecars(vault) == []
    assert _live_notes(vault) <= 1
    retry = StdioServer(server_env, tmp_path / "retry.log")
    envelope = retry.request("tools/call", call["params"])["structuredContent"]
    assert envelope["state"] == "applied", envelope
    assert retry.end("eof") == 0
    assert _live_notes(vault) == 1
