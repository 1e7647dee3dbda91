"""Before serving, the server hides its long-lived heap from the garbage collector."""

from __future__ import annotations

import asyncio
import gc
import importlib
import sys
import weakref
from pathlib import Path

import pytest

from kaeru.mcp import transports
from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.heap import settle_heap
from kaeru.mcp.server import build_server
from kaeru.mcp.transports import _settle_when_idle
from kaeru.service import Service


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_settling_freezes_what_lives_and_collects_what_is_garbage() -> None:
    """A full collection then scans only what calls create; a garbage cycle made before serving is
    collected, not frozen for good."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a  # a cycle only the collector can free
    gone = weakref.ref(a)
    del a, b
    kept = [_Node()]
    try:
        settle_heap()
        assert gone() is None
        assert gc.get_freeze_count() > 0
        assert all(o is not kept for o in gc.get_objects())  # frozen: no collection walks it
    finally:
        gc.unfreeze()


def test_on_stdio_the_heap_is_settled_at_the_first_moment_no_call_runs(service: Service) -> None:
    """Settling walks the whole heap: it waits for the first call to be answered and then until no
    tool call is running (decisions 16.O3, 16.S1), and settles anyway if calls never stop, so the
    collector is never left off."""
    registry = ToolRegistry(service)

    async def scenario() -> list[int]:
        loop = asyncio.get_running_loop()
        frozen: list[int] = []
        gc.disable()
        _settle_when_idle(registry, loop, 0)
        await asyncio.sleep(0.3)
        frozen.append(gc.get_freeze_count())  # no call answered yet: not yet
        registry.running = 1
        await asyncio.sleep(0.3)
        frozen.append(gc.get_freeze_count())  # a call runs: not yet
        registry.running, registry.answered = 0, 1
        await asyncio.sleep(0.3)
        frozen.append(gc.get_freeze_count())
        gc.unfreeze()
        gc.disable()
        registry.running = 1  # a client that never pauses
        _settle_when_idle(registry, loop, 0)
        # `_SETTLE_TURNS` turns take at least that many `_SETTLE_TURN`s, more on a loaded machine
        # (each timer fires late): wait for the settling, up to a bound no healthy run reaches.
        turns_due = loop.time() + transports._SETTLE_TURN * transports._SETTLE_TURNS
        while not gc.get_freeze_count() and loop.time() < turns_due + 60:
            await asyncio.sleep(transports._SETTLE_TURN)
        settled_after = loop.time()
        frozen.append(gc.get_freeze_count())
        assert settled_after >= turns_due  # not settled while the call ran before its turns were out
        registry.running = 0
        return frozen

    try:
        before, waiting, idle, busy = asyncio.run(scenario())
        assert before == 0 and waiting == 0 and idle > 0 and busy > 0
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()


def test_a_call_that_imported_modules_asks_for_the_heap_to_be_settled_again(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Modules a first recall or export imports arrive after the first settling; left unfrozen, every
    later full collection would walk them (decision 267). One request per growth, none otherwise."""
    registry = build_server(service).registry
    asked: list[int] = []
    registry.settle = lambda: asked.append(len(sys.modules))
    note = {"name": "heap", "body": "a note", "initiatives": ["heap"]}
    try:
        asyncio.run(registry.envelope("note", note))  # a first note imports what notes need
        settle_heap()
        asked.clear()
        asyncio.run(registry.envelope("note", note))
        asyncio.run(registry.envelope("note", note))
        assert asked == []  # nothing imported since the settling
        (tmp_path / "kaeru_heap_probe.py").write_text("TABLE = {i: [i] for i in range(10)}\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        importlib.import_module("kaeru_heap_probe")
        asyncio.run(registry.envelope("note", note))
        asyncio.run(registry.envelope("note", note))
        assert asked == [len(sys.modules)]  # once for the growth, not again for the next call
    finally:
        sys.modules.pop("kaeru_heap_probe", None)
        gc.unfreeze()
