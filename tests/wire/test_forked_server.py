"""`kaeru serve` forked from the worker's zygote through the launcher (`tests/cli/launcher.py`, what
the wire helpers start by default) serves as a server started anew does: the same answers to the same
session on equal vaults, over stdio and HTTP, on both backends; the same end on SIGTERM (exit status,
stderr, the store closed); and a launcher killed takes its server with it. The suite's server tests
are only as good as this parity.

What differs between two equal vaults by nature, and is blanked before comparing: node ids (and the
revision and name suffixes made from them), timestamps, the vault's place (folder, database name)
and, over HTTP, the port."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.backends import VaultSpec
from tests.cli import zygote_client
from tests.wire.support import (
    KAERU_SERVE,
    LOOPBACK,
    free_port,
    initialize_request,
    raw_post,
    serving_http,
    subprocess_env,
    tools_call_request,
    wait_until,
)

pytestmark = [pytest.mark.timeout(300)]

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SLUG = re.compile(r"(?<=[a-z0-9])-[0-9a-f]{6,12}\b")  # a revision's, a name's suffix from its node's id
#: an instant (ISO) or a day with its time of day as the compact text writes it (decision 478)
STAMP = re.compile(r"\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?)?")
PORT = re.compile(rf"(?<={re.escape(LOOPBACK)}:)\d+")

#: One agent's session: what each step sends (None: a notification, no answer).
SESSION: list[tuple[str, dict[str, Any]]] = [
    ("initialize", initialize_request(1)),
    ("initialized", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ("tools/list", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ("note", tools_call_request(3, "note", {"initiative": "parity", "name": "heron", "text": "a heron at the weir"})),
    ("search", tools_call_request(4, "search", {"initiatives": ["parity"], "text": "heron"})),
    ("recall", tools_call_request(5, "recall", {"initiatives": ["parity"], "query": "which bird by the weir"})),
    ("read", tools_call_request(6, "read", {"initiative": "parity", "node": "heron"})),
    ("rejected", tools_call_request(7, "note", {"initiative": "parity"})),
    ("unknown node", tools_call_request(8, "read", {"initiative": "parity", "node": "no-such-node"})),
]
HEADERS = {"MCP-Protocol-Version": "2025-06-18"}


def _argv(forked: bool, *args: str) -> list[str]:
    """`python -m kaeru ARGS`: through the launcher, forked from this worker's zygote (whatever
    KAERU_TEST_CLI_SPAWN says: this is the test of that fork), or started anew."""
    return zygote_client.launcher_argv(args) if forked else [*KAERU_SERVE[:3], *args]


def _plain(text: str, vault: VaultSpec) -> str:
    """`text` without what differs between two equal vaults by nature (the module's docstring)."""
    for name in (vault.database_url, str(vault.vault_dir)):
        if name:
            text = text.replace(name, "<place>")
    if vault.database_url:
        text = text.replace(vault.database_url.rsplit("/", 1)[-1], "<database>")
    return PORT.sub("<port>", SLUG.sub("-<n>", STAMP.sub("<time>", UUID.sub("<id>", text))))


def _over_stdio(vault: VaultSpec, forked: bool, log: Path) -> tuple[list[str], int, str]:
    """The session's answers from `kaeru serve` on stdio, then SIGTERM while it waits for more:
    (answers, exit status, stderr)."""
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            _argv(forked, "serve"),
            env=subprocess_env(vault.env()),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=sink,
        )
    assert proc.stdin is not None and proc.stdout is not None
    answers: list[str] = []
    try:
        for _, message in SESSION:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            if "id" in message:
                answers.append(proc.stdout.readline().decode())
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    return answers, code, log.read_text(errors="replace")


def _over_http(vault: VaultSpec, forked: bool, log: Path) -> tuple[list[str], int, str]:
    """The same over `kaeru serve --http` (status and body of each POST), then SIGTERM."""
    port = free_port()
    argv = _argv(forked, "serve", "--http", "--host", LOOPBACK, "--port", str(port))
    with serving_http(argv, subprocess_env(vault.env()), log, port) as server:
        answers = [f"{status} {body}" for status, body in (raw_post(server.url, m, HEADERS) for _, m in SESSION)]
        server.proc.send_signal(signal.SIGTERM)
        code = server.proc.wait(60)
    return answers, code, server.output()


def _sidecars(vault: VaultSpec) -> list[str]:
    return sorted(p.name for p in vault.vault_dir.glob("*.sqlite3-*")) if vault.backend == "sqlite" else []


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_forked_server_answers_and_ends_as_a_spawned_one(
    twin: tuple[VaultSpec, VaultSpec], transport: str, tmp_path: Path
) -> None:
    session = _over_stdio if transport == "stdio" else _over_http
    forked_vault, spawned_vault = twin
    by_fork = session(forked_vault, True, tmp_path / "forked.log")
    by_spawn = session(spawned_vault, False, tmp_path / "spawned.log")
    names = [name for name, message in SESSION if "id" in message or transport == "http"]
    answers, code, stderr = by_spawn
    assert len(answers) == len(names) and code == 0 and "Traceback" not in stderr, by_spawn
    assert '"state":"applied"' in answers[names.index("note")] and '"isError":true' in answers[-2], answers
    for name, one, other in zip(names, by_fork[0], answers, strict=True):
        assert _plain(one, forked_vault) == _plain(other, spawned_vault), name
    # SIGTERM: the launcher forwards it, and ends with the server's own status (a launcher that
    # did not would die of it, -15, and leave the server running).
    assert (by_fork[1], _plain(by_fork[2], forked_vault)) == (code, _plain(stderr, spawned_vault))
    assert _sidecars(forked_vault) == _sidecars(spawned_vault) == [], "the store was closed: no -wal left"


def _children(pid: int) -> set[int]:
    return {int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}


@pytest.fixture
def own_zygote() -> Iterator[zygote_client.Zygote]:
    """A zygote of this test's own: its children are this test's servers only."""
    started = zygote_client.launch(serve=True)
    yield started
    zygote_client.stop(started)


def _launched(vault: VaultSpec, zygote: zygote_client.Zygote) -> tuple[subprocess.Popen[bytes], int]:
    """A launcher started as the SDK starts a stdio server (a session of its own), once its server
    answered `initialize`; and the server's pid."""
    proc = subprocess.Popen(
        zygote_client.launcher_argv(["serve"], zygote),
        env=subprocess_env(vault.env()),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(initialize_request()).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    (server,) = _children(zygote.process.pid)
    return proc, server


def _gone(proc: subprocess.Popen[bytes], server: int, zygote: zygote_client.Zygote) -> None:
    """The launcher ended as killed, its server killed and reaped, the server's pipe closed."""
    assert proc.wait(60) == -signal.SIGKILL
    wait_until(lambda: not Path(f"/proc/{server}").exists(), 60, "the server to be killed and reaped")
    assert proc.stdout is not None and proc.stdout.read() == b"", "nothing holds the server's stdout"
    for stream in (proc.stdin, proc.stdout):
        assert stream is not None
        stream.close()


def test_a_killed_launcher_or_zygote_leaves_no_server(
    sqlite_vault: VaultSpec, own_zygote: zygote_client.Zygote
) -> None:
    """SIGKILL cannot be forwarded: the launcher's end of its connection is what the zygote kills the
    server on. A zygote that ends (its worker gone) kills the servers still running, and their
    launchers end as killed. Started as the SDK starts a stdio server, a server leads a session of
    its own, as the SDK's does."""
    proc, server = _launched(sqlite_vault, own_zygote)
    try:
        assert os.getsid(server) == server != proc.pid
        proc.kill()
        _gone(proc, server, own_zygote)
        proc, server = _launched(sqlite_vault, own_zygote)
        assert own_zygote.process.stdin is not None
        own_zygote.process.stdin.close()  # what the worker's exit does
        assert own_zygote.process.wait(60) == 0
        _gone(proc, server, own_zygote)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_servers_are_forked_unless_a_test_asks_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    """The helpers' default, and each way out of it: `spawn=True`, KAERU_TEST_CLI_SPAWN=1, an
    environment that changes how the interpreter starts, a command that is not `python -m kaeru`."""
    env = subprocess_env({"KAERU_VAULT": "/nonexistent"})
    launcher = str(zygote_client.LAUNCHER)
    monkeypatch.delenv(zygote_client.SPAWN, raising=False)
    assert launcher in zygote_client.server_argv(KAERU_SERVE, env)
    assert zygote_client.server_argv(KAERU_SERVE, env, spawn=True) == list(KAERU_SERVE)
    assert zygote_client.server_argv(KAERU_SERVE, {**env, "PYTHONDEVMODE": "1"}) == list(KAERU_SERVE)
    entry_point = (str(Path(sys.executable).with_name("kaeru")), "serve")
    assert zygote_client.server_argv(entry_point, env) == list(entry_point)
    monkeypatch.setenv(zygote_client.SPAWN, "1")
    assert zygote_client.server_argv(KAERU_SERVE, env) == list(KAERU_SERVE)
