"""`kaeru serve --http` closes a connection that asks nothing: found by a soak of the server, where a
few hundred connections that never sent a whole request (a leaking client, half a header) held every
descriptor the process had — each client, the owner's own too, then timed out, and asyncio logged a
traceback per failed `accept`, some 150 MB a minute — for as long as their peers kept them open."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import time
from pathlib import Path

import pytest

from kaeru.mcp.connections import REQUEST_HEAD_S
from tests.wire.support import (
    LOOPBACK,
    http_server,
    initialize_request,
    raw_post,
    subprocess_env,
    tools_call_request,
    wait_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _closed_by_server(conn: socket.socket) -> bool:
    conn.settimeout(REQUEST_HEAD_S * 3)
    try:
        return conn.recv(1024) == b""
    except ConnectionResetError:
        return True


def _answered_then_half(port: int) -> socket.socket:
    """A kept connection (one request answered whole) whose next request's head never ends: held
    until the keep-alive ran out (75 s, decision 435), not `REQUEST_HEAD_S` from its first byte."""
    conn = socket.create_connection((LOOPBACK, port))
    conn.sendall(f"GET /health HTTP/1.1\r\nHost: {LOOPBACK}:{port}\r\n\r\n".encode())
    conn.settimeout(30)
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += conn.recv(4096)
    head, _, body = answer.partition(b"\r\n\r\n")
    length = int(
        next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    )
    while len(body) < length:  # the answer whole: the next bytes begin another request
        body += conn.recv(4096)
    conn.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return conn


def test_connections_that_send_no_whole_request_are_closed_and_others_still_served(tmp_path: Path) -> None:
    with http_server(subprocess_env({"KAERU_VAULT": str(tmp_path / "vault")}), tmp_path, spawn=True) as server:
        descriptors = len(os.listdir(f"/proc/{server.proc.pid}/fd"))
        silent = [socket.create_connection((LOOPBACK, server.port)) for _ in range(20)]
        halves = [socket.create_connection((LOOPBACK, server.port)) for _ in range(20)]
        for conn in halves:
            conn.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the head never ends
        halves += [_answered_then_half(server.port) for _ in range(5)]
        wait_until(
            lambda: len(os.listdir(f"/proc/{server.proc.pid}/fd")) >= descriptors + 45, 10, "the connections held"
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


def _stalled_body(port: int, sent: bytes = b"") -> socket.socket:
    """A POST whose head promises a body it does not send (or sends only `sent` of)."""
    conn = socket.create_connection((LOOPBACK, port))
    conn.sendall(
        f"POST /mcp HTTP/1.1\r\nHost: {LOOPBACK}:{port}\r\nContent-Type: application/json\r\n".encode()
        + b"Accept: application/json, text/event-stream\r\nContent-Length: 4000\r\n\r\n"
        + sent
    )
    return conn


def test_a_request_whose_body_stops_coming_is_closed_and_others_still_served(tmp_path: Path) -> None:
    """A head, then no body (or part of one): held for ever, before any token was checked — the
    descriptor outage of the connections above, by another road (decision 407)."""
    with http_server(subprocess_env({"KAERU_VAULT": str(tmp_path / "vault")}), tmp_path) as server:
        stalled = [_stalled_body(server.port, b'{"jsonrpc": "2.0", ' if i % 2 else b"") for i in range(20)]
        assert raw_post(server.url, initialize_request())[0] == 200, "a client that asks is served meanwhile"
        assert all(_closed_by_server(conn) for conn in stalled)
        for conn in stalled:
            conn.close()
        assert raw_post(server.url, initialize_request())[0] == 200


def test_sigterm_ends_the_server_while_a_slow_upload_still_trickles(tmp_path: Path) -> None:
    """A body that keeps coming, a byte at a time, is not closed (it is not stalled); SIGTERM waited
    for it for ever, and a service manager then killed the server with its `-wal` left. The server
    cancels what still runs after a short grace and exits 0, the store closed (decision 407)."""
    vault = tmp_path / "vault"
    with http_server(subprocess_env({"KAERU_VAULT": str(vault)}), tmp_path) as server:
        assert raw_post(server.url, initialize_request())[0] == 200
        conn = _stalled_body(server.port, b"{")
        server.proc.send_signal(signal.SIGTERM)
        exited = False
        for _ in range(120):  # a byte every half second, far longer than the grace
            if server.proc.poll() is not None:
                exited = True
                break
            try:
                conn.sendall(b" ")
            except OSError:
                pass  # the server has let go of it: its exit follows
            time.sleep(0.5)
        conn.close()
        assert exited, "the server still runs: SIGTERM waited for the trickling upload"
        assert server.proc.returncode == 0, server.output()
    assert not list(vault.glob("*-wal")), "the store was closed: no write-ahead log left"


def test_a_client_gone_mid_upload_leaves_no_traceback(tmp_path: Path) -> None:
    """A dropped upload is nothing the server did wrong: the SDK logged a `ClientDisconnect`
    traceback at ERROR for each one (decision 407). Nothing is written."""
    vault = tmp_path / "vault"
    with http_server(subprocess_env({"KAERU_VAULT": str(vault)}), tmp_path) as server:
        for _ in range(3):
            conn = _stalled_body(server.port, b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":')
            time.sleep(0.3)  # the server reads what came, then the client is gone
            conn.close()
        assert raw_post(server.url, initialize_request())[0] == 200
        assert "Traceback" not in server.output() and "ClientDisconnect" not in server.output(), server.output()


#: Past uvicorn's own keep-alive (5 s), which closed an idle connection as the SDK's HTTP client
#: (httpx2, whose pool keeps one 5 s) or a proxy in front (60 s) might send on it.
IDLE_BETWEEN_CALLS_S = 6.0


def test_a_connection_idle_between_two_calls_is_kept_for_the_next(tmp_path: Path) -> None:
    """A client, or a reverse proxy or load balancer in front of the server, reuses its connection
    for the next call; the server closed it after 5 s of quiet, and a call sent as it did failed
    (`Server disconnected`, a proxy's 502). The server must keep it longer than they do."""
    with http_server(subprocess_env({"KAERU_VAULT": str(tmp_path / "vault")}), tmp_path) as server:
        conn = http.client.HTTPConnection(LOOPBACK, server.port, timeout=30)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        try:
            conn.request("POST", "/mcp", json.dumps(initialize_request()), headers)
            first = conn.getresponse()
            first.read()
            assert first.status == 200 and not first.will_close
            held = conn.sock
            time.sleep(IDLE_BETWEEN_CALLS_S)
            note = tools_call_request(2, "note", {"initiative": "kept", "text": "sent on a kept connection"})
            conn.request("POST", "/mcp", json.dumps(note), headers)
            second = conn.getresponse()
            answer = json.loads(second.read())
            assert conn.sock is held, "the same connection"
            assert second.status == 200 and answer["result"]["structuredContent"]["state"] == "applied", answer
        finally:
            conn.close()
