"""An HTTP server whose PostgreSQL stops answering between calls (a restart, a failover, a database
closed to connections): a request whose token cannot be checked is told why — 503, the JSON-RPC
error the SDK's client raises with the `unavailable` message, the viewer's page saying so — not a
500 with a traceback in the log; and the next call after the database is back is served
(decision 175)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.backends import VaultSpec
from tests.wire.closed_database import closed
from tests.wire.support import call_ok, http_server, initialize_request, raw_post, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def _answer(request: urllib.request.Request | str) -> tuple[int, str]:
    """(status, body) of one request, given past the pool's own wait for a connection (30 s)."""
    try:
        with urllib.request.urlopen(request, timeout=90) as response:
            return int(response.status), response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return int(error.code), error.read().decode(errors="replace")


def _post_initialize(base: str) -> tuple[int, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    data = json.dumps(initialize_request()).encode()
    return _answer(urllib.request.Request(f"{base}/mcp", data=data, headers=headers, method="POST"))


def _get(base: str) -> tuple[int, str]:
    return _answer(f"{base}/ui/")


async def _into(
    answered: dict[str, tuple[int, str]], what: str, ask: Callable[[str], tuple[int, str]], base: str
) -> None:
    answered[what] = await anyio.to_thread.run_sync(ask, base)


@pytest.mark.anyio
async def test_a_token_that_cannot_be_checked_is_told_unavailable(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    if vault.backend != "postgres":
        pytest.skip("a database server that stops answering is PostgreSQL's (SQLite's file is held open)")
    with http_server(server_env, tmp_path) as server:
        async with (
            httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=90)) as http,
            Client(streamable_http_client(server.url, http_client=http)) as client,
        ):
            await call_ok(client, "note", {"initiative": "pg", "text": "the redshank before the gap"})
            with closed(vault):
                # No token anywhere: whether one is needed is asked of the vault, which refuses new
                # connections: said with libpq's reason once the pool has none to give (decision
                # 236), not after the pool's whole 30 s wait. The three are asked together.
                answered: dict[str, tuple[int, str]] = {}

                async def sdk_call() -> None:
                    with pytest.raises(
                        MCPError, match=r"unavailable: cannot connect to PostgreSQL .*not currently accepting"
                    ):
                        await client.call_tool("search", {"initiatives": ["pg"], "text": "redshank"})

                async with anyio.create_task_group() as group:
                    group.start_soon(sdk_call)
                    for what, ask in (("mcp", _post_initialize), ("ui", _get)):
                        group.start_soon(_into, answered, what, ask, server.base)
                status, body = answered["mcp"]
                assert status == 503, body
                error = json.loads(body)["error"]
                assert error["message"].startswith("unavailable: ") and error["data"]["retryable"] is True, error
                status, page = answered["ui"]
                assert status == 503 and "The vault did not answer" in page, page

            def answers() -> bool:
                return raw_post(server.url, initialize_request())[0] == 200

            wait_until(answers, 60, "the server answering once its database is back")
            found = await call_ok(client, "search", {"initiatives": ["pg"], "text": "redshank"})
            assert found["data"]["total"] == 1
    assert "Traceback" not in server.log.read_text(errors="replace")
