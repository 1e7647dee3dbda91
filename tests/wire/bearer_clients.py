"""A person's token and an MCP client that sends it: what the HTTP token tests share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.backends import VaultSpec
from tests.cli.support import kaeru


def token_of(vault: VaultSpec, name: str, *flags: str) -> str:
    """A new token named `name` (`kaeru token add`, `flags` as given), as the CLI prints it once."""
    run = kaeru(vault, "token", "add", name, *flags, as_json=True)
    assert run.code == 0, run.stderr
    token: str = run.json()["token"]
    return token


@asynccontextmanager
async def bearer_client(url: str, token: str) -> AsyncIterator[Client]:
    """The official SDK's client on `url`, every request carrying `token`."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client
