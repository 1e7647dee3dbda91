"""LoCoMo through MCP: `kaeru serve` spawned over stdio, every turn written with the `note` tool and
every question asked with the `recall` tool, as another client would (`python -m bench.locomo --mcp …`).

The client is the `mcp` SDK's `Client` over its stdio transport (as bench/peers.py drives it), run
in a blocking portal so the harness's synchronous loop can call it. Calls are sequential: a note's
place in the write order is its place in the conversation (recall's temporal neighbours and
recency follow the write order), and concurrent writes would make that order a race. The server
runs on the wall clock with random ids, as it does for any client; nothing is pinned.

The ingests (what each writes per turn) are those of bench/locomo/ingests.py; each is one vault.

The harness keeps node id → turn id from the `note` answers (`data.primary.id`); the server never
sees a turn id except where an ingest puts one in a name. Ranking is read from
`structuredContent.data.hits`; the compact text block is checked to list the same ids in the same
order (a client that reads only the text sees the same ranking).
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from bench.locomo.data import Conversation
from bench.locomo.ingests import INGESTS, note_arguments
from bench.locomo.kaeru_side import DEPTH, LIMIT, Ranked

__all__ = ["INGESTS", "McpVault", "note_arguments", "recall_arguments"]


def recall_arguments(conv: Conversation, question: str) -> dict[str, Any]:
    """recall with its defaults: the question, the conversation's initiative, `limit` 10."""
    return {"query": question, "initiatives": [conv.initiative], "limit": LIMIT}


def server_command() -> list[str]:
    script = Path(sys.executable).with_name("kaeru")
    return [str(script), "serve"] if script.exists() else [sys.executable, "-m", "kaeru.cli.app", "serve"]


_TEXT_ID = re.compile(r"\bid=([0-9a-f-]{36})\b")


class ToolFailed(RuntimeError):
    """A tool call answered with `isError` or a rejected envelope."""


def _children_cpu_ns(pid: int) -> int:
    """CPU time (ns) of every thread of `pid` so far (`/proc/<pid>/task/*/schedstat`); 0 off Linux."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as handle:
                total += int(handle.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total


def _server_pid(before: set[int]) -> int | None:
    """The child process started since `before` was listed (the spawned server)."""
    me = os.getpid()
    found: list[int] = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit() or int(entry) in before:
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == me:
            found.append(int(entry))
    return max(found) if found else None


def _pids() -> set[int]:
    return {int(e) for e in os.listdir("/proc") if e.isdigit()} if os.path.isdir("/proc") else set()


@dataclass
class IngestStats:
    notes: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    server_cpu_ns: int = 0


@dataclass
class McpVault:
    """One `kaeru serve` over stdio on its own vault, and the node id → turn map of its ingest."""

    style: str  # one of INGESTS
    dir: Path
    errlog: TextIO
    turn_of: dict[str, tuple[str, str]] = field(default_factory=dict)
    pid: int | None = None
    text_mismatches: int = 0  # answers whose text block lists other ids than structuredContent
    truncated: int = 0  # answers with a budget_truncated issue
    _portal_cm: AbstractContextManager[Any] | None = None
    _client_cm: AbstractContextManager[Any] | None = None
    _portal: Any = None
    _client: Any = None

    def start(self) -> McpVault:
        from anyio.from_thread import start_blocking_portal
        from mcp import StdioServerParameters

        env = {"KAERU_VAULT": str(self.dir)}
        if os.environ.get("PYTHONPATH"):
            # The server imports the code the harness runs (a worktree's `src` before the installed
            # one), not the venv's editable install: the SDK passes the child no other variable.
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        command = server_command()
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        before = _pids()
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._client_cm = self._portal.wrap_async_context_manager(_session(params, self.errlog))
        self._client = self._client_cm.__enter__()
        self.pid = _server_pid(before)
        return self

    def close(self) -> None:
        if self._client_cm is not None:
            self._client_cm.__exit__(None, None, None)
            self._client_cm = None
        if self._portal_cm is not None:
            self._portal_cm.__exit__(None, None, None)
            self._portal_cm = None

    def __enter__(self) -> McpVault:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def cpu_ns(self) -> int:
        """The server's CPU time so far, all threads."""
        return _children_cpu_ns(self.pid) if self.pid else 0

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """One tool call: (the envelope from structuredContent, the text block)."""
        result = self._portal.call(self._client.call_tool, name, arguments)
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        envelope = result.structured_content
        if result.is_error or not isinstance(envelope, dict) or envelope.get("state") == "rejected":
            raise ToolFailed(f"{name} failed: {text[:500]}")
        return envelope, text

    def ingest(self, conv: Conversation, stats: IngestStats) -> None:
        t0, c0 = time.perf_counter(), self.cpu_ns()
        for turn in conv.turns:
            try:
                envelope, _ = self.call("note", note_arguments(conv, turn, self.style))
            except ToolFailed as exc:
                stats.failed.append({"turn": f"{conv.sample_id}/{turn.dia_id}", "error": str(exc)[:200]})
                continue
            self.turn_of[envelope["data"]["primary"]["id"]] = (conv.sample_id, turn.dia_id)
            stats.notes += 1
        stats.seconds += time.perf_counter() - t0
        stats.server_cpu_ns += self.cpu_ns() - c0

    def ask(self, conv: Conversation, question: str) -> Ranked:
        """One `recall` call; its hits mapped to turn ids (first occurrence kept, at most DEPTH).
        `cpu_ns` is the server's CPU time during the call, all its threads (the tool runs off the
        main thread, which only reads and writes stdio)."""
        t0, c0 = time.perf_counter_ns(), self.cpu_ns()
        envelope, text = self.call("recall", recall_arguments(conv, question))
        elapsed, cpu = time.perf_counter_ns() - t0, self.cpu_ns() - c0
        data = envelope["data"]
        ids = [hit["id"] for hit in data["hits"]]
        if _TEXT_ID.findall(text) != ids:
            self.text_mismatches += 1
        if any(issue.get("code") == "budget_truncated" for issue in envelope.get("issues") or ()):
            self.truncated += 1
        turns: list[str] = []
        foreign = 0
        for node_id in ids:
            sample_id, dia_id = self.turn_of.get(node_id, ("", ""))
            if sample_id != conv.sample_id:
                foreign += 1
            elif dia_id not in turns:
                turns.append(dia_id)
        plan = data.get("retrieval_plan") or {}
        channels = tuple(str(c.get("name")) for c in plan.get("channels") or ())
        return Ranked(turns[:DEPTH], elapsed, foreign, channels or None, cpu)


@asynccontextmanager
async def _session(params: Any, errlog: TextIO) -> AsyncIterator[Any]:
    from mcp import Client
    from mcp.client.stdio import stdio_client

    async with Client(stdio_client(params, errlog=errlog), cache=None) as client:
        yield client


def asker(vault: McpVault) -> Callable[[Conversation, str], Ranked]:
    return vault.ask
