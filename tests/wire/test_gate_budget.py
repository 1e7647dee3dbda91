"""The bodies-in-flight budget (`kaeru.mcp.gate.BodyBudget`) as the gate keeps it, in process: each
request's body is handed to the gate a chunk at a time, as the transport hands it over, and an
upload is in flight for as long as its last chunk has not come. What a real server does with the
same requests: tests/wire/test_body_budget.py.

- A body framed two ways (`Content-Length` and `Transfer-Encoding`) is refused 400 unread: the
  transport reads it as chunked, and its declared few bytes were all it held of however many came.
- A declared length holds only the bytes that came: one taken whole at the first read let an
  upload sending a byte now and then hold the largest share indefinitely.
- Two of the largest bodies fit at once whatever small calls are in flight beside them."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Message, Receive, Scope, Send

from kaeru.mcp.addresses import MAX_MESSAGE_BYTES
from kaeru.mcp.gate import LARGE_AT_ONCE, RequestGate
from kaeru.mcp.logs import Refusals

pytestmark = pytest.mark.anyio

KiB = 1024
MiB = 1024 * KiB
HOST = "kaeru.test"
CLIENT = "198.51.100.7"
#: The largest body, shared by every request that sends it (bytes are never copied by the gate).
LARGEST = b" " * MAX_MESSAGE_BYTES


async def _app(scope: Scope, receive: Receive, send: Send) -> None:
    """What stands behind the gate here: reads a body whole, then answers 200 with how much came."""
    read = 0
    while True:
        message = await receive()
        read += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = json.dumps({"read": read}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


def _gate(name: str) -> RequestGate:
    security = TransportSecuritySettings(allowed_hosts=[HOST], allowed_origins=[])
    return RequestGate(_app, security, MAX_MESSAGE_BYTES, Refusals(logging.getLogger(f"kaeru.test.gate.{name}")))


class Call:
    """One POST to `/mcp` through `gate`, its body's chunks handed over as the test sends them."""

    def __init__(self, gate: RequestGate, length: int | None, *, chunked: bool | None = None):
        headers = [(b"host", HOST.encode()), (b"content-type", b"application/json")]
        if length is not None:
            headers.append((b"content-length", str(length).encode()))
        if chunked if chunked is not None else length is None:
            headers.append((b"transfer-encoding", b"chunked"))
        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "client": (CLIENT, 40000)}
        self.chunks: asyncio.Queue[Message] = asyncio.Queue()
        self.sent: list[Message] = []

        async def send(message: Message) -> None:
            self.sent.append(message)

        self.task = asyncio.ensure_future(gate(scope, self.chunks.get, send))

    async def send(self, data: bytes, *, last: bool = False) -> None:
        """Hand the gate one chunk, and return once it (or the app behind) has taken it, or answered."""
        await self.chunks.put({"type": "http.request", "body": data, "more_body": not last})
        for _ in range(10_000):
            if self.chunks.empty() or self.task.done():
                return
            await asyncio.sleep(0)
        raise AssertionError("the gate never read the chunk")

    async def answer(self) -> tuple[int, dict[str, object]]:
        await self.task
        status = self.sent[0]["status"]
        assert isinstance(status, int)
        body = b"".join(m.get("body", b"") for m in self.sent[1:])
        answered: dict[str, object] = json.loads(body)
        return status, answered

    def answered(self) -> bool:
        return self.task.done()


def _busy(answer: tuple[int, dict[str, object]]) -> bool:
    status, body = answer
    error = body.get("error")
    return status == 503 and isinstance(error, dict) and str(error["message"]).startswith("unavailable: ")


async def _opening(gate: RequestGate, length: int, sent: int) -> Call:
    """An upload declaring `length` bytes, `sent` of them come, the rest not yet."""
    call = Call(gate, length)
    await call.send(b"{" + b" " * (sent - 1))
    assert not call.answered(), call.sent
    return call


async def test_a_body_framed_both_ways_is_refused_unread(caplog: pytest.LogCaptureFixture) -> None:
    gate = _gate("framing")
    with caplog.at_level(logging.WARNING, logger="kaeru.test.gate.framing"):
        call = Call(gate, 5, chunked=True)
        call.chunks.put_nowait({"type": "http.request", "body": b"{}", "more_body": False})
        status, body = await call.answer()
    assert status == 400, body
    error = body["error"]
    assert isinstance(error, dict) and error["code"] == -32600, body
    message = error["message"]
    assert "Content-Length" in message and "Transfer-Encoding" in message and "send one of them" in message, body
    assert call.chunks.qsize() == 1, "the body was read"
    assert [r.getMessage() for r in caplog.records] == [
        f"refused /mcp from {CLIENT}: both Content-Length and Transfer-Encoding"
    ]
    assert gate.budget.held == 0


async def test_a_body_longer_than_it_declared_holds_every_byte_that_came() -> None:
    """The transport never hands over more than a declared length; the gate does not rely on it."""
    gate = _gate("longer")
    assert LARGE_AT_ONCE == 2
    held = [await _opening(gate, MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES - 1) for _ in range(LARGE_AT_ONCE)]
    liar = Call(gate, 5, chunked=False)
    for _ in range(10):
        await liar.send(b" " * MiB)
    await liar.send(b"{}", last=True)
    assert _busy(await liar.answer()), liar.sent
    for call in held:
        await call.send(b"}", last=True)
        assert (await call.answer())[0] == 200
    assert (gate.budget.held, gate.budget.held_large) == (0, 0)


async def test_an_upload_sent_slowly_holds_only_what_came() -> None:
    """Two uploads declaring the largest body, a kilobyte of each come: the largest body is still taken."""
    gate = _gate("slow")
    slow = [await _opening(gate, MAX_MESSAGE_BYTES, KiB) for _ in range(LARGE_AT_ONCE)]
    whole = Call(gate, MAX_MESSAGE_BYTES)
    await whole.send(LARGEST, last=True)
    assert await whole.answer() == (200, {"read": MAX_MESSAGE_BYTES})
    assert gate.budget.held == LARGE_AT_ONCE * KiB
    for call in slow:
        await call.send(b"}", last=True)
        assert await call.answer() == (200, {"read": KiB + 1})
    assert (gate.budget.held, gate.budget.held_large) == (0, 0)


async def test_two_of_the_largest_fit_beside_small_calls_in_flight() -> None:
    gate = _gate("two")
    small = await _opening(gate, 512 * KiB, 512 * KiB - 1)
    first = await _opening(gate, MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES - 1)
    second = Call(gate, MAX_MESSAGE_BYTES)
    await second.send(LARGEST, last=True)
    assert await second.answer() == (200, {"read": MAX_MESSAGE_BYTES})

    # The share is still bounded: with two large bodies in flight, a third is refused by its declared
    # length, and a chunked one once it grows past the small bodies' size; a small call is served.
    third = await _opening(gate, MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES - 1)
    assert _busy(await Call(gate, 2 * MiB).answer())
    growing = Call(gate, None)
    await growing.send(b"{" + b" " * (512 * KiB))
    assert not growing.answered()
    await growing.send(b" " * MiB)
    assert _busy(await growing.answer()), growing.sent
    another = Call(gate, 2)
    await another.send(b"{}", last=True)
    assert await another.answer() == (200, {"read": 2})

    for call in (small, first, third):
        await call.send(b"}", last=True)
        assert (await call.answer())[0] == 200
    assert (gate.budget.held, gate.budget.held_large) == (0, 0)
