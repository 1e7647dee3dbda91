"""Fixtures for the over-the-wire tests: anyio on asyncio, and subprocess environments per vault."""

from __future__ import annotations

import pytest

from tests.backends import VaultSpec
from tests.wire.support import subprocess_env


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server_env(vault: VaultSpec) -> dict[str, str]:
    """The environment for a `kaeru` subprocess on this test's vault (either backend)."""
    return subprocess_env(vault.env())


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name
