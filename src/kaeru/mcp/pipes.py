"""The stdio transport over pipes (or sockets): lines read by the event loop and parsed where they
are read, answers written straight to the descriptor — and the end of the session when the client
goes, by end of input or by no longer reading its answers."""

from __future__ import annotations

import asyncio
import json
import os
import select
import stat
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types
from mcp.shared.message import SessionMessage

from kaeru.mcp import unreadable
from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.addresses import MAX_MESSAGE_BYTES, too_large

if TYPE_CHECKING:
    from kaeru.mcp.server import KaeruServer

#: At end of input, how many 10 ms turns with no tool call running `_drain` waits for answers.
_DRAIN_IDLE_TURNS = 100


class PipeReadStream:
    """The server's read side straight from the pipe: each line is parsed where it is read.

    The SDK's `stdio_server` runs a reader task that hands every message to the dispatcher
    through a memory stream (and a writer task the other way); each hop is another event-loop
    turn. This is the same `ReadStream` protocol without the hop.
    """

    def __init__(self, reader: asyncio.StreamReader, registry: ToolRegistry, writer: PipeWriteStream):
        self._reader = reader
        self._registry = registry
        self._writer = writer
        self._pending = writer.pending
        #: The protocol version the client asked for (what the server agrees to, for the versions
        #: the fast path knows), for the shape of an answer given here.
        self._version: str | None = None

    async def receive(self) -> SessionMessage | Exception:
        while True:
            # A client that stopped reading answers ends the session as end of input does, and no
            # line read after that is dispatched (nothing would hear its answer).
            line = b"" if self._writer.broken else await self._line()
            if line is None:  # a line over the limit, answered and read past
                continue
            if not line or self._writer.broken:
                await self._drain()
                raise anyio.EndOfStream
            try:
                message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except Exception as exc:
                # A line the parser refuses is answered here, with the request's id where it has one
                # (the SDK would only log it, and the caller would wait forever); a line owed no
                # answer goes on to the dispatcher, as with the SDK's transport.
                reply = unreadable.answer(self._registry, line, self._version, exc)
                if reply is None:
                    return exc
                try:
                    await self._writer.send_json(reply)
                except anyio.BrokenResourceError:  # the client is gone: the next turn ends the session
                    pass
                continue
            if isinstance(message, mcp_types.JSONRPCRequest):
                if message.method == "initialize":
                    version = (message.params or {}).get("protocolVersion")
                    self._version = version if isinstance(version, str) else None
                elif message.method == "tools/call":
                    self._pending.add(message.id)
            elif isinstance(message, mcp_types.JSONRPCNotification) and message.method == "notifications/initialized":
                # `initialize` has been answered: the service and the tools are built from now, in a
                # thread of their own, so the first call finds them built or half-way (decision 16.S1;
                # until now the first `tools/list` started this, 16.O3).
                self._registry.preload()
            return SessionMessage(message)

    async def _line(self) -> bytes | None:
        """The next line (b"" at end of input). A line over `MAX_MESSAGE_BYTES` is read past — its
        head is kept only to find its id — and answered with the error HTTP gives the same request
        (None is returned): the reader raised, which ended the server with a traceback and lost the
        session (helper's probe, session 38)."""
        try:
            return await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:
            return end.partial
        except asyncio.LimitOverrunError as over:
            head = await self._reader.readexactly(over.consumed)
        size = len(head)
        while True:  # the rest of the line, a buffer at a time
            try:
                size += len(await self._reader.readuntil(b"\n"))
                break
            except asyncio.IncompleteReadError as end:
                size += len(end.partial)
                break
            except asyncio.LimitOverrunError as more:
                size += len(await self._reader.readexactly(more.consumed))
        reply = unreadable.too_long(head[: unreadable.HEAD], too_large(f"{size:,} bytes, over"))
        head = b""
        try:
            await self._writer.send_json(reply)
        except anyio.BrokenResourceError:  # the client is gone: the next turn ends the session
            pass
        return None

    async def _drain(self) -> None:
        """At end of input, wait until every tool call read has been answered.

        Calls run in a worker thread (decision 15.P1) and the SDK cancels the handlers still running
        when its read loop ends, so without this a client that sends its calls and closes its end
        (as a pipe does) would lose the answers of the last ones. A call that will never be answered
        (cancelled by the client while it ran) is waited for only until no call is left running; and
        none is waited for once the client has stopped reading answers: a call queued then never
        starts, and the one running finishes while the session ends.
        """
        idle = 0
        while self._pending and idle < _DRAIN_IDLE_TURNS and not self._writer.broken:
            idle = idle + 1 if self._registry.running == 0 else 0
            await anyio.sleep(0.01)

    async def aclose(self) -> None:
        return None

    def __aiter__(self) -> PipeReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> PipeReadStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class PipeWriteStream:
    """The server's write side: each message serialised and written to the descriptor at once.

    When the client stops reading — a write finds the pipe closed, or (a pipe) its read end closes
    while the server waits — the session ends as at end of input, cleanly: `gone` stops the reading
    of new calls, this write and every later one fail as a closed stream (what the SDK expects of a
    transport: it drops the answer), and `admits` lets no further tool call start.
    """

    def __init__(self, fd: int, gone: Callable[[], None] | None = None):
        self._fd = fd
        self._gone = gone
        #: Whether the client has stopped reading answers.
        self.broken = False
        #: Ids of the tool calls read and not yet answered (see `PipeReadStream._drain`).
        self.pending: set[str | int] = set()

    def admits(self) -> bool:
        """Whether a tool call may start: the client still reads answers. Asked in the call's worker
        thread just before it runs, so a call read before the client left is not applied unheard
        (one already running finishes: what it committed stays, and its `request_id` replays)."""
        return not self.broken and not reader_gone(self._fd)

    def lost(self) -> None:
        """The client stopped reading: say so once on stderr and end the session."""
        if self.broken:
            return
        self.broken = True
        say_client_gone()
        if self._gone is not None:
            self._gone()

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        if isinstance(message, (mcp_types.JSONRPCResponse, mcp_types.JSONRPCError)):
            self.pending.discard(message.id)
        await self._write(message.model_dump_json(by_alias=True, exclude_unset=True))

    async def send_json(self, message: dict[str, Any] | list[dict[str, Any]]) -> None:
        """A message the transport answers itself (see `PipeReadStream.receive`). One that repeats
        a lone surrogate of the line it answers (an id, a value the parser quoted) cannot be UTF-8:
        it goes out with every non-ASCII character escaped, still the same JSON (decision 443)."""
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            line = json.dumps(message, separators=(",", ":"))
        await self._write(line)

    async def _write(self, line: str) -> None:
        """Write `line` whole, however many writes the pipe takes.

        Raises:
            anyio.BrokenResourceError: the client no longer reads (see the class).
        """
        if self.broken:
            raise anyio.BrokenResourceError
        data = memoryview((line + "\n").encode("utf-8"))
        while data:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                await anyio.sleep(0.001)
                continue
            except (BrokenPipeError, ConnectionResetError):
                self.lost()
                raise anyio.BrokenResourceError from None
            data = data[written:]

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> PipeWriteStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _piped_file() -> int:
    """A pipe fed with the contents of stdin, a regular file (`kaeru serve < calls.jsonl`), for the
    event loop to read as it reads a pipe. The SDK's transport, which served such a file, cancelled
    the calls still running at the file's end: a call was applied and never answered."""
    source, (read_end, write_end) = os.dup(0), os.pipe()

    def feed() -> None:
        try:
            while chunk := os.read(source, 1 << 16):
                os.write(write_end, chunk)  # blocks while the reader is behind
        except OSError:  # the server stopped reading
            pass
        finally:
            os.close(write_end)
            os.close(source)

    threading.Thread(target=feed, name="kaeru-stdin-file", daemon=True).start()
    return read_end


async def serve_pipes(kaeru: KaeruServer) -> bool:
    """Serve over private duplicates of fds 0/1 read by the event loop; False if stdin is a terminal
    (a regular file is read through a pipe fed from it).

    While serving, fd 0 reads /dev/null and fd 1 goes to stderr, so stray output never corrupts the
    protocol stream (as the SDK's own transport does).
    """
    mode = os.fstat(0).st_mode
    if stat.S_ISREG(mode):
        wire_in = _piped_file()
    elif stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        wire_in = os.dup(0)
    else:
        return False
    wire_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
    )
    writer = PipeWriteStream(wire_out, transport.close)
    kaeru.registry.admits = writer.admits
    watched = _watch_reader(loop, wire_out, writer)
    try:
        await kaeru.server.run(
            PipeReadStream(reader, kaeru.registry, writer), writer, kaeru.server.create_initialization_options()
        )
    finally:
        if watched:
            loop.remove_reader(wire_out)
        transport.close()
    return True


def _watch_reader(loop: asyncio.AbstractEventLoop, fd: int, writer: PipeWriteStream) -> bool:
    """When `fd` is a pipe, end the session as soon as its reader closes it, also while no answer is
    being written (a client waiting for nothing would otherwise keep the server, and the vault,
    open). A pipe's write end polls as readable only then, as asyncio's own pipe transport relies
    on; a socket would poll readable for the client's own messages, and is left to the writes."""
    if not stat.S_ISFIFO(os.fstat(fd).st_mode):
        return False

    def closed() -> None:
        loop.remove_reader(fd)
        writer.lost()

    try:
        loop.add_reader(fd, closed)
    except (NotImplementedError, OSError):  # an event loop that cannot watch descriptors
        return False
    return True


def reader_gone(fd: int) -> bool:
    """Whether nobody reads `fd` any more: a pipe whose read end is closed polls POLLERR, a socket
    whose peer has gone POLLHUP."""
    if not hasattr(select, "poll"):
        return False
    probe = select.poll()
    probe.register(fd, select.POLLOUT)
    return any(mask & (select.POLLERR | select.POLLHUP) for _, mask in probe.poll(0))


def say_client_gone() -> None:
    """The one line a server whose client stopped reading leaves on stderr (a client's log shows it)."""
    try:
        os.write(2, b"kaeru serve: the client stopped reading (stdout closed); ending the session\n")
    except OSError:  # stderr went with it
        pass
