"""The stdio transport's own answers, driven in process: lines fed to the reader kaeru's `serve`
reads from, answers read from the pipe it writes to (no server process, SQLite only: nothing here
is about the vault).

A line over the reader's limit is read past and answered with its size and its request's id, also
when it ends at end of input without a line break, and when it arrives in pieces longer than the
limit each. The limit of a real server is 64 MiB (`MAX_MESSAGE_BYTES`, checked whole by
`test_stdio_transport.py` with one 65 MiB line); the reading past is the same code at any limit,
so here the reader is made with a limit of 1 KiB, and the answer's words name the server's limit.
A line that is JSON but no object gets JSON-RPC's Invalid Request; one with an id but no method
(a response the client sent) is owed nothing. When the client has stopped reading, such an answer
cannot be written: the session ends cleanly, as at end of input, instead of raising."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.pipes import PipeReadStream, PipeWriteStream
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec

pytestmark = pytest.mark.anyio
LIMIT = 1024


@pytest.fixture
def registry(sqlite_vault: VaultSpec) -> Iterator[ToolRegistry]:
    settings = sqlite_vault.settings()
    store = open_store(settings)
    try:
        yield build_server(Service(store, settings)).registry
    finally:
        store.close()


class Session:
    """A reader fed by the test and a writer on a pipe, as `serve_pipes` connects them."""

    def __init__(self, registry: ToolRegistry, *, reading: bool = True):
        self.reader = asyncio.StreamReader(limit=LIMIT)
        self._answers, write_end = os.pipe()
        if not reading:  # the client has closed its end of the answers
            os.close(self._answers)
        self.reading = reading
        self.writer = PipeWriteStream(write_end)
        self._write_end = write_end
        self.stream = PipeReadStream(self.reader, registry, self.writer)

    async def run(self) -> list[Any]:
        """What the transport hands the dispatcher until the session ends (the end is not an error)."""
        handed: list[Any] = []
        with anyio.fail_after(30):
            while True:
                try:
                    handed.append(await self.stream.receive())
                except anyio.EndOfStream:
                    return handed

    def answers(self) -> list[dict[str, Any]]:
        os.close(self._write_end)
        data = b""
        while chunk := os.read(self._answers, 1 << 16):
            data += chunk
        os.close(self._answers)
        return [json.loads(line) for line in data.splitlines()]


def _over(request_id: Any, size: int, *, ending: bytes = b"\n") -> bytes:
    start = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping", "params": {"pad": ""}})[:-3]
    return (start + "x" * (size - len(start) - 3 - len(ending)) + '"}}').encode() + ending


def _too_large(answer: dict[str, Any], request_id: Any, size: int) -> None:
    assert answer["id"] == request_id
    assert answer["error"]["code"] == -32600
    assert f"the request is {size:,} bytes, over the 64 MiB" in answer["error"]["message"], answer


async def test_a_line_over_the_limit_at_end_of_input_is_answered_with_its_size_and_id(registry: ToolRegistry) -> None:
    session = Session(registry)
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode() + b"\n"
    last = _over(2, 3 * LIMIT, ending=b"")
    session.reader.feed_data(ping + last)
    session.reader.feed_eof()
    handed = await session.run()
    assert [m.message.id for m in handed] == [1], "the ping goes on to the dispatcher"
    [answer] = session.answers()
    _too_large(answer, 2, len(last))


async def test_a_line_arriving_in_pieces_each_past_the_limit_is_read_past_and_the_next_line_read(
    registry: ToolRegistry,
) -> None:
    session = Session(registry)
    line = _over("big", 5 * LIMIT)
    pieces = [line[: 2 * LIMIT], line[2 * LIMIT : 4 * LIMIT], line[4 * LIMIT :]]
    session.reader.feed_data(pieces[0])

    async def feed() -> None:
        for piece in pieces[1:]:
            await asyncio.sleep(0)
            session.reader.feed_data(piece)
        session.reader.feed_data(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}).encode() + b"\n")
        session.reader.feed_eof()

    async with anyio.create_task_group() as group:
        group.start_soon(feed)
        handed = await session.run()
    assert [m.message.id for m in handed] == [3]
    [answer] = session.answers()
    _too_large(answer, "big", len(line))


async def test_an_id_no_json_string_holds_is_answered_as_null(registry: ToolRegistry) -> None:
    """The head's `"id": "a\\q"` is no JSON string (an unknown escape): no id can be read from it."""
    session = Session(registry)
    line = _over("a-id", 2 * LIMIT).replace(b'"a-id"', b'"a\\q"')
    session.reader.feed_data(line)
    session.reader.feed_eof()
    assert await session.run() == []
    [answer] = session.answers()
    _too_large(answer, None, len(line))


@pytest.mark.parametrize("line", [b"42", b'"a string"', b"null", b"true"])
async def test_json_that_is_no_object_is_an_invalid_request(registry: ToolRegistry, line: bytes) -> None:
    session = Session(registry)
    session.reader.feed_data(line + b"\n")
    session.reader.feed_eof()
    assert await session.run() == []
    assert session.answers() == [
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "Invalid Request: a message is one JSON object"},
        }
    ]


async def test_a_message_with_an_id_and_no_method_is_owed_no_answer(registry: ToolRegistry) -> None:
    """Neither a request nor a response the SDK reads: what its parser said goes on to the
    dispatcher (which logs it, as the SDK's own transport does); nothing is written to the client."""
    session = Session(registry)
    session.reader.feed_data(b'{"jsonrpc": "2.0", "id": 7}\n')
    session.reader.feed_eof()
    [handed] = await session.run()
    assert isinstance(handed, Exception)
    assert session.answers() == []


@pytest.mark.parametrize("first", ["unreadable", "over the limit"])
async def test_an_answer_the_client_no_longer_reads_ends_the_session_cleanly(
    registry: ToolRegistry, first: str
) -> None:
    """The client closed its end of the answers before the transport's own answer was written: the
    write's broken pipe ends the session (the next turn, as end of input does), no line after it is
    handed on, and nothing is raised."""
    session = Session(registry, reading=False)
    bad = b"{not json\n" if first == "unreadable" else _over(5, 2 * LIMIT)
    session.reader.feed_data(bad + json.dumps({"jsonrpc": "2.0", "id": 6, "method": "ping"}).encode() + b"\n")
    session.reader.feed_eof()
    assert await session.run() == []
    assert session.writer.broken
    os.close(session._write_end)
