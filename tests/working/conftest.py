"""A controllable clock and tool-call helpers for working-set tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import apsw
import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec

Call = Callable[..., dict[str, Any]]


class Clock:
    """Wall time that tests move forward explicitly (each reading still advances by 1 µs)."""

    def __init__(self, start: datetime):
        self.moment = start

    def __call__(self) -> datetime:
        self.moment += timedelta(microseconds=1)
        return self.moment

    def advance(self, **delta: float) -> None:
        self.moment += timedelta(**delta)


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))


def make_call(service: Service) -> Call:
    run = build_server(service).registry.run

    def call(tool: str, **args: Any) -> dict[str, Any]:
        return run(tool, args)

    return call


def checked_calls(registry: Any) -> tuple[Call, Callable[..., str]]:
    """`call`, which asserts each answer is `ok` or `applied`, and `made`, the id a write made."""

    def call(tool: str, **args: Any) -> dict[str, Any]:
        answer: dict[str, Any] = registry.run(tool, args)
        assert answer["state"] in ("ok", "applied"), answer
        return answer

    def made(tool: str, **args: Any) -> str:
        return str(call(tool, **args)["data"]["primary"]["id"])

    return call, made


def section(envelope: dict[str, Any], name: str) -> dict[str, Any]:
    """The `context` section called `name`."""
    return next(s for s in envelope["data"]["sections"] if s["name"] == name)


def section_ids(envelope: dict[str, Any], name: str) -> list[str]:
    return [item["id"] for item in section(envelope, name)["items"]]


@pytest.fixture
def timed(store: Store, vault: VaultSpec, clock: Clock) -> Service:
    return Service(store, vault.settings(), clock=clock)


@pytest.fixture
def call(timed: Service) -> Call:
    return make_call(timed)


class LockBetweenTwoChunks(threading.Thread):
    """Another process's writer on the SQLite vault file `path`: once a chunk of a merge or delete
    commits, it takes the write lock in the pause between two chunks (`give_writers_a_turn`) and
    holds it for `seconds`, past a short busy wait, for a chunk and for the call's own end."""

    def __init__(self, path: Path, seconds: float = 1.5):
        super().__init__()
        self.path, self.seconds = path, seconds
        self.holding = threading.Event()

    def run(self) -> None:
        other = apsw.Connection(str(self.path))
        other.set_busy_handler(lambda tries: (time.sleep(0.0005), True)[1])
        (seen,) = other.execute("PRAGMA data_version").fetchone()
        while other.execute("PRAGMA data_version").fetchone()[0] == seen:  # until a chunk commits
            time.sleep(0.0002)
        other.execute("BEGIN IMMEDIATE")
        self.holding.set()
        time.sleep(self.seconds)
        other.execute("ROLLBACK")
        other.close()
