"""Fixtures of the service tests: a settable clock and a service that reads it."""

from __future__ import annotations

import pytest

from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.service.support import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def timed(store: Store, vault: VaultSpec, clock: Clock) -> Service:
    return Service(store, vault.settings(), clock=clock)
