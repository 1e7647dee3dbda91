"""An in-process MCP server over a fresh vault, spoken to through the SDK client (legacy handshake)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from mcp import Client

from kaeru.mcp.server import KaeruServer, build_server
from kaeru.service import Service


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def kaeru(service: Service) -> KaeruServer:
    return build_server(service)


@pytest.fixture
async def client(kaeru: KaeruServer) -> AsyncIterator[Client]:
    async with Client(kaeru.server, mode="legacy", cache=None) as connected:
        yield connected
