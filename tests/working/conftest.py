"""A controllable clock and a tool-call helper for working-set tests."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

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


@pytest.fixture
def timed(store: Store, vault: VaultSpec, clock: Clock) -> Service:
    return Service(store, vault.settings(), clock=clock)


@pytest.fixture
def call(timed: Service) -> Call:
    return make_call(timed)
