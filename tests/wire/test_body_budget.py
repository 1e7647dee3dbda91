"""The request bodies a real `kaeru serve --http` holds at once are bounded together: with large
uploads held open (declared, or chunked, most of each sent), one more that would pass the budget is
answered 503 `unavailable` with `Retry-After` — by its declared length before its body is read, or as
its chunked body is read — while a small call is still served; once an upload ends or its client goes
away, a large one is taken again. Uploads without a valid token hold nothing, and one that declared
the largest body holds only what it sent of it; two of the largest fit beside a small call in flight;
a body framed both by its length and chunked is refused 400 (`kaeru.mcp.gate.BodyBudget`; the same
in process: tests/wire/test_gate_budget.py). Before, nothing bounded them together: eight bodies of
63 MiB at once took the server past 1 GB.

Uploads are held and probed on raw sockets with `Expect: 100-continue`: a final answer instead of
`100 Continue` says the server refused the request unread. Whether there is room is asked without a
token: the budget is checked before the token, but bytes are held only after it, so the probe
(refused 401 when there is room) never takes the room it asks about."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from kaeru.mcp.addresses import MAX_MESSAGE_BYTES
from kaeru.mcp.gate import LARGE_AT_ONCE
from tests.backends import new_vault
from tests.wire.support import (
    LOOPBACK,
    HttpServer,
    http_server,
    initialize_request,
    raw_post,
    subprocess_env,
    wait_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

KiB = 1024
MiB = 1024 * KiB
TOKEN = "body-budget-admin-token-9e2"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
#: An `initialize` request without its closing brace: any number of spaces, then `}`, make it whole.
OPENING = json.dumps(initialize_request(7))[:-1].encode()
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **BEARER}
#: How often a held upload sends a byte, so the server does not close it as stalled (15 s).
TRICKLE_S = 1.0
#: What a held large upload leaves unsent of its declared length: room for its trickle, a byte a
#: second, and for `finish` — small beside the 2 MiB a probe asks for.
UNSENT = 256 * KiB

Answer = tuple[int, dict[str, str], dict[str, object]]


def _padded(size: int) -> bytes:
    """An `initialize` request of exactly `size` bytes (padded with spaces, which JSON ignores)."""
    return OPENING + b" " * (size - len(OPENING) - 1) + b"}"


def _chunks(size: int) -> Iterator[bytes]:
    body = _padded(size)
    for at in range(0, len(body), MiB):
        yield body[at : at + MiB]


class Upload:
    """One POST to `/mcp` on its own connection, its body sent when the test says so."""

    def __init__(self, server: HttpServer, length: int | None, *, token: bool = True, framing: str | None = None):
        self.length = length
        self.sock = socket.create_connection((LOOPBACK, server.port), timeout=120)
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.sent = 0
        if framing is None:
            framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
        bearer = f"Authorization: Bearer {TOKEN}\r\n" if token else ""
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {LOOPBACK}:{server.port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nExpect: 100-continue\r\n{bearer}{framing}\r\n\r\n"
        )
        self.sock.sendall(head.encode())
        self.buffer = b""
        #: `100` when the server waits for the body; else its final answer's status, the body unread.
        self.first, self.headers = self._head()

    def _head(self) -> tuple[int, dict[str, str]]:
        while b"\r\n\r\n" not in self.buffer:
            data = self.sock.recv(65536)
            assert data, f"the server closed the connection: {self.buffer!r}"
            self.buffer += data
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        fields = (line.partition(":") for line in lines[1:])
        return int(lines[0].split()[1]), {name.strip().lower(): value.strip() for name, _, value in fields}

    def answer(self) -> Answer:
        """The final answer: status, headers, JSON body."""
        status, headers = (self.first, self.headers) if self.first != 100 else self._head()
        length = int(headers["content-length"])
        while len(self.buffer) < length:
            data = self.sock.recv(65536)
            assert data, "the server closed the connection mid-answer"
            self.buffer += data
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, json.loads(body)

    def send(self, data: bytes) -> None:
        with self.lock:
            framed = data if self.length is not None else b"%x\r\n%b\r\n" % (len(data), data)
            self.sock.sendall(framed)
            self.sent += len(data)

    def most(self, unsent: int = UNSENT) -> None:
        """Send the opening of the body and spaces after it, all of its declared length but `unsent`."""
        assert self.length is not None
        self.send(OPENING)
        self.send(b" " * (self.length - len(OPENING) - unsent))

    def hold(self) -> None:
        """Keep sending a space every `TRICKLE_S` until `close` or `finish`."""

        def trickle() -> None:
            while not self.stopped.wait(TRICKLE_S):
                try:
                    self.send(b" ")
                except OSError:  # the server has stopped: the test's own assertions say why
                    return

        threading.Thread(target=trickle, daemon=True).start()

    def finish(self) -> Answer:
        """Send the rest of the body (spaces, then `}`) and read the answer."""
        self.stopped.set()
        if self.length is not None:
            with self.lock:  # a trickle under way sends its byte first
                rest = self.length - self.sent - 1
            self.send(b" " * rest + b"}")
        else:
            self.send(b"}")
            self.sock.sendall(b"0\r\n\r\n")
        return self.answer()

    def close(self) -> None:
        """Go away mid-body, as a client that gives up does."""
        self.stopped.set()
        with self.lock:
            self.sock.close()


def _room(server: HttpServer, size: int = 2 * MiB) -> bool:
    """Whether a large request of `size` declared bytes finds room now, asked without a token: with
    room it is refused 401 by the token check, holding nothing; without, 503 before it."""
    probe = Upload(server, size, token=False)
    try:
        if probe.first == 100:
            probe.send(OPENING)
        status = probe.answer()[0]
        assert status in (401, 503), status
        return status == 401
    finally:
        probe.close()


def _assert_busy(answer: Answer, what: str) -> None:
    """A 503 that the SDK's client raises as the `unavailable` message, retryable, with `Retry-After`."""
    status, headers, body = answer
    assert status == 503, (status, body)
    assert headers.get("retry-after") == "1", headers
    error = body["error"]
    assert isinstance(error, dict), body
    assert error["code"] == -32603, error
    message = error["message"]
    assert isinstance(message, str) and message.startswith("unavailable: this server is taking in other large"), error
    assert what in message and "nothing was applied; retry in a moment" in message, message
    data = error["data"]
    assert isinstance(data, dict) and data["code"] == "unavailable" and data["retryable"] is True, error


def _chunked(server: HttpServer, size: int) -> Answer:
    """A request of `size` bytes sent chunked (no length beforehand), whole, by the SDK's HTTP client."""
    answer = httpx2.post(server.url, content=_chunks(size), headers=HEADERS, timeout=120)
    return answer.status_code, dict(answer.headers), answer.json()


def _small_call_served(server: HttpServer) -> bool:
    return raw_post(server.url, initialize_request(), BEARER)[0] == 200


def test_bodies_in_flight_share_one_budget(tmp_path: Path) -> None:
    assert LARGE_AT_ONCE == 2, "the uploads below fill a budget of two maximum-size bodies"
    vault = new_vault("sqlite", tmp_path)
    with http_server(subprocess_env(vault.env(), KAERU_AUTH_TOKEN=TOKEN), tmp_path) as server:
        # Stalled uploads without a token hold nothing: a teammate's largest call is taken.
        strangers = [Upload(server, MAX_MESSAGE_BYTES, token=False) for _ in range(LARGE_AT_ONCE + 1)]
        assert [upload.first for upload in strangers] == [100] * len(strangers)  # the gate reads ahead
        taken = httpx2.post(server.url, content=_padded(MAX_MESSAGE_BYTES), headers=HEADERS, timeout=120)
        assert taken.status_code == 200, taken.text[:300]
        for upload in strangers:
            upload.send(OPENING)
            assert upload.answer()[0] == 401
            upload.close()

        # An upload past the token check holds what it sent, not what it declared: two that declared
        # the largest body and send a byte a second (each within the stall timeout) hold a few bytes.
        slow = [Upload(server, MAX_MESSAGE_BYTES) for _ in range(LARGE_AT_ONCE)]
        for upload in slow:
            assert upload.first == 100, upload.first
            upload.send(OPENING)
            upload.hold()
        # A small call in flight beside them, most of its body sent.
        small = Upload(server, 512 * KiB)
        assert small.first == 100, small.first
        small.most(KiB)
        small.hold()
        assert _small_call_served(server)
        taken = httpx2.post(server.url, content=_padded(MAX_MESSAGE_BYTES), headers=HEADERS, timeout=120)
        assert taken.status_code == 200, taken.text[:300]
        for upload in slow:
            upload.close()

        # Two of the largest fit at once, the small call still in flight: with one held, another is taken.
        held = [Upload(server, MAX_MESSAGE_BYTES)]
        assert held[0].first == 100, held[0].first
        held[0].most()
        held[0].hold()
        assert _small_call_served(server)
        taken = httpx2.post(server.url, content=_padded(MAX_MESSAGE_BYTES), headers=HEADERS, timeout=120)
        assert taken.status_code == 200, taken.text[:300]

        # Two large uploads, most of each sent, fill the large bodies' share; they stall.
        held.append(Upload(server, MAX_MESSAGE_BYTES))
        assert held[1].first == 100, held[1].first
        held[1].most()
        held[1].hold()
        wait_until(lambda: not _room(server), 60, "the held uploads' bytes held")
        # A small call is still served (the small bodies' lane) ...
        assert _small_call_served(server)
        # ... a large one is refused by its declared length, before its body is read (no 100 Continue) ...
        probe = Upload(server, 2 * MiB)
        assert probe.first == 503, f"a large request taken ({probe.first} Continue) with the budget full"
        _assert_busy(probe.answer(), f"its {2 * MiB:,} bytes were not read")
        probe.close()
        # ... and a chunked one as it is read, past its first megabyte.
        _assert_busy(_chunked(server, 8 * MiB), "refused as its body was read")
        # One that declares a few bytes and is sent chunked — read as chunked, however long — is
        # refused unread, whatever room there is: before, it held its declared 10 bytes of 8 MiB.
        twice = Upload(server, None, framing="Content-Length: 10\r\nTransfer-Encoding: chunked")
        assert twice.first == 400, f"a body framed twice was read ({twice.first})"
        status, _, refused = twice.answer()
        error = refused["error"]
        assert isinstance(error, dict) and "Content-Length" in str(error["message"]), refused
        twice.close()

        # A client that goes away mid-body gives its share back.
        held.pop().close()
        wait_until(lambda: _room(server), 60, "room once an upload went away")

        # A chunked upload held open, most of it sent: its bytes count as they are read.
        chunked = Upload(server, None)
        assert chunked.first == 100, chunked.first
        chunked.send(OPENING)
        for _ in range(62):
            chunked.send(b" " * MiB)
        chunked.send(b" " * (MiB // 2))
        chunked.hold()
        wait_until(lambda: not _room(server), 60, "the chunked upload's bytes held")
        probe = Upload(server, 2 * MiB)
        _assert_busy(probe.answer(), f"its {2 * MiB:,} bytes were not read")
        probe.close()
        assert _small_call_served(server)

        # Once it ends, and the other upload goes away, a large request is taken again.
        status, _, answered = chunked.finish()
        assert status == 200 and "result" in answered, answered
        held.pop().close()
        status, _, answered = small.finish()
        assert status == 200 and "result" in answered, answered
        again = httpx2.post(server.url, content=_padded(60 * MiB), headers=HEADERS, timeout=120)
        assert again.status_code == 200, again.text[:300]
        assert "result" in again.json(), again.text[:300]
    log = server.output()
    assert "refused /mcp from 127.0.0.1: request bodies in flight at their limit" in log, log[-3000:]
    assert "refused /mcp from 127.0.0.1: both Content-Length and Transfer-Encoding" in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
