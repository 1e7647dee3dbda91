"""Fixtures for the scenario suite: anyio on asyncio; the round trip's template vault removed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.scenarios import roundtrip


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _roundtrip_template_removed() -> Iterator[None]:
    """The empty vault the round trips copy is made once per process, removed when the session ends."""
    yield
    roundtrip.remove_template()
