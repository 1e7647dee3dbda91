"""`kaeru serve --http` and `kaeru ui` listen before they announce: a port in use is said in one
line (exit 2, no "serving at" first), and port 0 announces the port the system gave. Every run and
server is forked from the worker's zygotes (decisions 419, 432)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cli.support import kaeru
from tests.cli.zygote_client import count_served_cpu, server_argv
from tests.wire.support import KAERU_SERVE, LOOPBACK, initialize_request, raw_post, stop, subprocess_env, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.mark.parametrize("command", [("serve", "--http"), ("ui",)])
def test_a_port_in_use_is_said_before_anything_is_announced(tmp_path: Path, command: tuple[str, ...]) -> None:
    vault = {"KAERU_VAULT": str(tmp_path / "vault")}
    # The viewer refuses a vault that is not there (decision 197): make one first.
    made = kaeru(vault, "migrate")
    assert made.code == 0, made.stderr
    with socket.create_server((LOOPBACK, 0)) as taken:
        port = taken.getsockname()[1]
        done = kaeru(vault, *command, "--port", str(port))
    assert done.code == 2, done.stderr
    assert f"cannot listen on {LOOPBACK}:{port}" in done.stderr and "another process listens there" in done.stderr
    assert "serving" not in done.stderr + done.stdout and "Traceback" not in done.stderr


@contextmanager
def _announced(tmp_path: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """`kaeru serve --http <options> --port 0`, running until the block ends: the URL it announced."""
    log = tmp_path / "serve.log"
    env = env or subprocess_env({"KAERU_VAULT": str(tmp_path / "vault")})
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            server_argv((*KAERU_SERVE, "--http", *options, "--port", "0"), env),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        announced = re.compile(r"serving MCP over streamable HTTP at (\S+)")
        wait_until(lambda: announced.search(log.read_text()) or proc.poll() is not None, 60, "the announcement")
        found = announced.search(log.read_text())
        assert found is not None, log.read_text()
        yield found.group(1)
    finally:
        stop(proc)
        count_served_cpu()


def _announced_port(tmp_path: Path, shown: str, *options: str) -> int:
    """Start `kaeru serve --http <options> --port 0`, wait for its announcement at `http://<shown>:N/mcp`,
    check GET /health answers there and so does an MCP request at that URL, stop it; N."""
    with _announced(tmp_path, *options) as url:
        found = re.fullmatch(rf"http://{re.escape(shown)}:(\d+)/mcp", url)
        assert found is not None, url
        port = int(found.group(1))
        with urllib.request.urlopen(f"http://{shown}:{port}/health", timeout=10) as answer:
            assert answer.status == 200 and answer.read().strip() == b"ok"
        status, body = raw_post(url, initialize_request())
        assert status == 200 and json.loads(body)["result"]["serverInfo"], (status, body)
        return port


def test_port_zero_announces_the_port_it_listens_on(tmp_path: Path) -> None:
    assert _announced_port(tmp_path, LOOPBACK) != 0


@pytest.mark.parametrize("host", [LOOPBACK, "::1"])
def test_connections_accepted_from_the_listening_socket_send_without_waiting(host: str) -> None:
    """Every connection the server accepts has Nagle's algorithm off (TCP_NODELAY), as asyncio sets
    it only on sockets that say IPPROTO_TCP. With it on, a response written in two parts waited for
    the client's delayed ACK: ~44 ms on every call of a kept-alive connection (decision 160)."""
    import asyncio

    from kaeru.mcp.addresses import listen

    if host == "::1" and not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        sock = listen(host, 0)
    except ValueError as exc:
        pytest.skip(f"cannot listen on {host}: {exc}")

    async def accepted_nodelay() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                conn = transport.get_extra_info("socket")
                seen.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        async with server:
            port = sock.getsockname()[1]
            _, writer = await asyncio.open_connection(host, port)
            try:
                return await asyncio.wait_for(seen, 30)
            finally:
                writer.close()

    assert asyncio.run(accepted_nodelay()) != 0


def test_an_ipv6_address_in_brackets_is_a_bind_address(tmp_path: Path) -> None:
    """`--host '[::1]'` is how a URL writes the address, and how a person copies it: it was refused
    ("Name or service not known"), while `::1` served (decision 232)."""
    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    assert _announced_port(tmp_path, "[::1]", "--host", "[::1]") != 0


def test_another_loopback_address_answers_at_the_url_it_announces(server_env: dict[str, str], tmp_path: Path) -> None:
    """`--host 127.0.0.2` (a loopback address other than 127.0.0.1, ::1 and localhost) announced its
    URL, and every MCP request to that URL was refused 421: the Host allow-list held the bound
    address only when it was not loopback. The announced URL answers; a foreign Host is still refused."""
    try:
        socket.create_server(("127.0.0.2", 0)).close()
    except OSError:
        pytest.skip("127.0.0.2 cannot be bound on this machine")
    with _announced(tmp_path, "--host", "127.0.0.2", env=server_env) as url:
        assert re.fullmatch(r"http://127\.0\.0\.2:\d+/mcp", url), url
        status, body = raw_post(url, initialize_request())
        assert status == 200 and json.loads(body)["result"]["serverInfo"], (status, body)
        status, body = raw_post(url, initialize_request(), {"Host": "rebound.example:80"})
        assert status == 421, body
