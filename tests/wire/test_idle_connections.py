"""`kaeru serve --http` closes a connection that asks nothing: found by a soak of the server, where a
few hundred connections that never sent a whole request (a leaking client, half a header) held every
descriptor the process had — each client, the owner's own too, then timed out, and asyncio logged a
traceback per failed `accept`, some 150 MB a minute — for as long as their peers kept them open."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from kaeru.mcp.connections import REQUEST_HEAD_S
from tests.wire.support import LOOPBACK, http_server, initialize_request, raw_post, subprocess_env, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _closed_by_server(conn: socket.socket) -> bool:
    conn.settimeout(REQUEST_HEAD_S * 3)
    try:
        return conn.recv(1024) == b""
    except ConnectionResetError:
        return True


def test_connections_that_send_no_whole_request_are_closed_and_others_still_served(tmp_path: Path) -> None:
    with http_server(subprocess_env({"KAERU_VAULT": str(tmp_path / "vault")}), tmp_path) as server:
        descriptors = len(os.listdir(f"/proc/{server.proc.pid}/fd"))
        silent = [socket.create_connection((LOOPBACK, server.port)) for _ in range(20)]
        halves = [socket.create_connection((LOOPBACK, server.port)) for _ in range(20)]
        for conn in halves:
            conn.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the head never ends
        wait_until(
            lambda: len(os.listdir(f"/proc/{server.proc.pid}/fd")) >= descriptors + 40, 10, "the connections held"
        )
        assert raw_post(server.url, initialize_request())[0] == 200, "a client that asks is served meanwhile"
        assert all(_closed_by_server(conn) for conn in [*silent, *halves])
        wait_until(
            lambda: len(os.listdir(f"/proc/{server.proc.pid}/fd")) <= descriptors + 2, 10, "descriptors given back"
        )
        for conn in [*silent, *halves]:
            conn.close()
        assert raw_post(server.url, initialize_request())[0] == 200
        assert "Traceback" not in server.output()
