"""A request whose vault token cannot be checked — the database closed to connections — is answered
503 `unavailable` and reaches the operator's log of a real `kaeru serve --http` as the tool calls
answered so do (`kaeru.mcp.logs.Outages`): the first at once, as `a token check` with the error's
class and first line, the others counted and said when the server stops, never the database's
password. Before, a deployment on vault tokens whose database went away logged nothing: every
request stopped at the token check, before any tool, and only `/health` said it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.backends import VaultSpec
from tests.wire.bearer_clients import bearer_client, token_of
from tests.wire.closed_database import assert_logged_bounded, closed, pg_vault
from tests.wire.support import call_ok, http_server, raw_post, subprocess_env, tools_call_request

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

__all__ = ["pg_vault"]  # the fixture, shared with test_unavailable_logged (tests/wire/closed_database.py)

REQUESTS = 5


@pytest.mark.anyio
async def test_a_vault_token_that_cannot_be_checked_is_logged_bounded(pg_vault: VaultSpec, tmp_path: Path) -> None:
    vault = pg_vault
    token = token_of(vault, "ada")
    env = subprocess_env(vault.env())  # no admin token: every request's token is the vault's to check
    with http_server(env, tmp_path) as server:
        async with bearer_client(server.url, token) as client:
            await call_ok(client, "note", {"initiative": "pg", "text": "the knot before the outage"})
        call = tools_call_request(1, "search", {"initiatives": ["pg"], "text": "knot"})
        headers = {"Authorization": f"Bearer {token}", "MCP-Protocol-Version": "2025-06-18"}
        with closed(vault):
            for _ in range(REQUESTS):
                status, body = raw_post(server.url, call, headers)
                assert status == 503, body
                assert json.loads(body)["error"]["data"]["code"] == "unavailable", body
        status, body = raw_post(server.url, call, headers)
        assert status == 200, body
    log = server.output()
    # Every refused request counted, in fewer lines than requests.
    assert_logged_bounded(log, "a token check", REQUESTS, vault)
    assert token not in log
