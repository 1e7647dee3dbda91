"""People and grants over HTTP, end to end: tokens made with `kaeru token add`, a real
`kaeru serve --http`, real bearer headers (issue 15)."""

from __future__ import annotations

import http.client
import json
import shlex
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from kaeru.service import Service, grants
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.cli.support import kaeru
from tests.wire.bearer_clients import bearer_client, token_of
from tests.wire.support import call_ok, http_server, initialize_request, raw_post, structured

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

ADMIN = "wire-admin-token-51c0a7"


async def _call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return structured(await client.call_tool(tool, args))


@pytest.mark.anyio
async def test_tokens_name_the_actor_and_limit_what_is_seen(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    alice = token_of(vault, "alice", "--initiatives", "web")
    reader = token_of(vault, "rita", "--read-only")
    revoked = token_of(vault, "gone")
    assert kaeru(vault, "token", "revoke", "gone").code == 0
    listed = kaeru(vault, "token", "list", as_json=True).json()["tokens"]
    assert [(t["name"], t["initiatives"], t["read_only"]) for t in listed] == [
        ("alice", ["web"], False),
        ("rita", None, True),
    ]
    assert alice not in json.dumps(listed)

    env = {**server_env, "KAERU_AUTH_TOKEN": ADMIN, "KAERU_ACTOR": "the-admin"}
    with http_server(env, tmp_path) as server:
        for headers in ({}, {"Authorization": f"Bearer {revoked}"}, {"Authorization": "Bearer kaeru_nope"}):
            status, body = raw_post(server.url, initialize_request(), headers)
            assert status == 401, (headers, status, body)

        async with bearer_client(server.url, ADMIN) as admin:
            secret = await call_ok(admin, "note", {"initiative": "payroll", "text": "payroll secret zq7pay"})
            secret_id = secret["data"]["primary"]["id"]
            await call_ok(admin, "note", {"initiative": "web", "text": "the cart rounds half up zq7web"})

        async with bearer_client(server.url, alice) as client:
            noted = await call_ok(client, "note", {"initiative": "web", "text": "alice notes zq7web too"})
            history = await call_ok(
                client, "trail", {"initiative": "web", "node": noted["data"]["primary"]["id"], "kind": "history"}
            )
            assert {e["actor"] for e in history["data"]["entries"]} == {"alice"}
            listing = await call_ok(client, "initiatives", {})
            assert [i["name"] for i in listing["data"]["initiatives"]] == ["web"]
            refused = await _call(client, "search", {"initiatives": ["payroll"], "text": "zq7pay"})
            assert refused["state"] == "rejected" and refused["issues"][0]["code"] == "forbidden"
            refused = await _call(client, "note", {"initiative": "payroll", "text": "x"})
            assert refused["issues"][0]["code"] == "forbidden"
            missed = await _call(client, "read", {"initiative": "web", "node": {"id": secret_id}})
            assert missed["issues"][0]["code"] == "not_found" and "zq7pay" not in json.dumps(missed)
            found = await call_ok(client, "search", {"initiatives": ["web"], "text": "zq7web"})
            assert found["data"]["total"] == 2

        async with bearer_client(server.url, reader) as client:
            refused = await _call(client, "note", {"initiative": "web", "text": "x"})
            assert refused["issues"][0]["code"] == "forbidden"
            found = await call_ok(client, "search", {"initiatives": ["payroll"], "text": "zq7pay"})
            assert found["data"]["total"] == 1

        async with bearer_client(server.url, ADMIN) as admin:
            history = await call_ok(admin, "trail", {"initiative": "payroll", "node": secret_id, "kind": "history"})
            assert {e["actor"] for e in history["data"]["entries"]} == {"the-admin"}

    after = kaeru(vault, "token", "list", as_json=True).json()["tokens"]
    assert all(t["last_used"] for t in after)  # both were used


@pytest.mark.anyio
async def test_once_the_vault_holds_a_token_loopback_needs_one_too(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    with http_server(server_env, tmp_path) as server:
        status, _ = raw_post(server.url, initialize_request())
        assert status == 200  # no token anywhere: loopback is open, as before
        token = token_of(vault, "bob")
        status, _ = raw_post(server.url, initialize_request())
        assert status == 401
        status, _ = raw_post(server.url, initialize_request(), {"Authorization": f"Bearer {token}"})
        assert status == 200


def _post_with_authorizations(url: str, values: list[str]) -> int:
    """One initialize POST carrying each of `values` as its own `Authorization` header: the status."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=15)
    try:
        connection.putrequest("POST", parts.path)
        body = json.dumps(initialize_request()).encode()
        for name, value in (
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Content-Length", str(len(body))),
            *(("Authorization", value) for value in values),
        ):
            connection.putheader(name, value)
        connection.endheaders(body)
        return connection.getresponse().status
    finally:
        connection.close()


def test_two_authorization_headers_are_refused(vault: VaultSpec, server_env: dict[str, str], tmp_path: Path) -> None:
    """Which of two tokens counted followed the order a proxy added them in (the many-people probe,
    session 51; decision 476): a limited and an unlimited token in one request, either order."""
    limited = token_of(vault, "eve", "--initiatives", "alpha")
    everything = token_of(vault, "ann")
    with http_server(server_env, tmp_path) as server:
        for values in ([f"Bearer {limited}", f"Bearer {everything}"], [f"Bearer {everything}", f"Bearer {limited}"]):
            assert _post_with_authorizations(server.url, values) == 401
        assert _post_with_authorizations(server.url, [f"Bearer {limited}"]) == 200


@pytest.mark.anyio
async def test_a_token_revoked_while_the_server_runs_is_refused_at_its_next_request(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    """No restart needed (decision 15.K1: the next request with it gets 401): an SDK session holding
    the token fails its next call, and a viewer cookie holding it is refused and cleared."""
    alice = token_of(vault, "alice")
    bob = token_of(vault, "bob")
    with http_server(server_env, tmp_path) as server:
        login = urllib.request.Request(f"{server.base}/ui/login?{urllib.parse.urlencode({'token': bob})}")
        opener = urllib.request.build_opener(_NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as signed_in:
            opener.open(login, timeout=15)
        assert signed_in.value.code == 303
        cookie = signed_in.value.headers["Set-Cookie"].split(";")[0]
        port = server.base.rsplit(":", 1)[1]
        assert cookie.startswith(f"kaeru_ui_{port}=")  # one a port: a browser shares a host's cookies
        assert _get(f"{server.base}/ui/", {"Cookie": cookie})[0] == 200

        async with bearer_client(server.url, alice) as client:
            await call_ok(client, "note", {"initiative": "web", "text": "alice writes before zq7rev"})
            assert kaeru(vault, "token", "revoke", "alice").code == 0
            with pytest.raises(MCPError) as refused:
                await client.call_tool("search", {"initiatives": ["web"], "text": "zq7rev"})
            # The reason reaches the agent (it was "Server returned an error response": decision 408).
            assert "a valid bearer token is required" in str(refused.value), refused.value
        status, _ = raw_post(server.url, initialize_request(), {"Authorization": f"Bearer {alice}"})
        assert status == 401
        # The scheme is case-insensitive (RFC 9110); the revoked token is refused whatever its spelling.
        status, _ = raw_post(server.url, initialize_request(), {"Authorization": f"bearer {alice}"})
        assert status == 401

        assert kaeru(vault, "token", "revoke", "bob").code == 0
        status, headers = _get(f"{server.base}/ui/", {"Cookie": cookie})
        assert (
            status == 401
            and f"kaeru_ui_{port}=" in headers.get("Set-Cookie", "")
            and "Max-Age=0" in headers["Set-Cookie"]
        )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _get(url: str, headers: dict[str, str]) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=15) as response:
            return int(response.status), response.headers
    except urllib.error.HTTPError as error:
        return int(error.code), error.headers


def test_an_identity_providers_access_token_maps_to_a_principal_failing_closed() -> None:
    from mcp.server.auth.provider import AccessToken

    from kaeru.mcp.bearer import principal_of

    def token(scopes: list[str], claims: dict[str, Any] | None = None, subject: str | None = None) -> AccessToken:
        return AccessToken(token="t", client_id="app-1", scopes=scopes, claims=claims, subject=subject)

    everything = principal_of(token(["kaeru:read", "kaeru:write", "kaeru:all"], subject="alice@example.org"))
    assert (everything.name, everything.initiatives, everything.read_only) == ("alice@example.org", None, False)
    limited = principal_of(token(["kaeru:read"], {"kaeru_initiatives": ["web", "infra"]}))
    assert (limited.name, limited.initiatives, limited.read_only) == ("app-1", frozenset({"web", "infra"}), True)
    nothing = principal_of(token(["kaeru:read", "kaeru:write"]))  # no claim and no kaeru:all: no initiative
    assert nothing.initiatives == frozenset() and not nothing.read_only


@pytest.mark.parametrize("kind", ["vault", "admin"])
def test_the_registration_serve_prints_sends_the_token_and_keeps_it_out_of_the_clients_file(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path, kind: str
) -> None:
    """`serve --http` prints how to register it. With only vault tokens it printed a `claude mcp
    add` with no header (every call then got 401); with KAERU_AUTH_TOKEN, a `--header "… Bearer
    $KAERU_AUTH_TOKEN"` the shell expands into the client's file. Now, whenever a token is needed,
    it prints a `kaeru setup … --token-env VAR` command: run as printed, the client's file names
    the variable, never the token, and with the variable holding a token the client is served."""
    token = token_of(vault, "carol") if kind == "vault" else ADMIN
    env = {**server_env, "KAERU_AUTH_TOKEN": ADMIN} if kind == "admin" else server_env
    with http_server(env, tmp_path) as server:
        line = next(s for s in server.output().splitlines() if s.startswith("register it with:"))
        command = shlex.split(line.removeprefix("register it with:"))
        assert command[:3] == ["kaeru", "setup", "claude-code"], line
        variable = command[command.index("--token-env") + 1]
        home = tmp_path / "home"
        home.mkdir()
        done = subprocess.run(
            [sys.executable, "-m", *command], env={**env, "HOME": str(home)}, capture_output=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        written = (home / ".claude.json").read_text()
        assert token not in written
        entry = json.loads(written)["mcpServers"]["kaeru"]
        assert entry["url"] == server.url
        # What Claude Code does with `${VAR}` in its configuration: the variable's value, where it runs.
        headers = {name: value.replace(f"${{{variable}}}", token) for name, value in entry["headers"].items()}
        status, body = raw_post(entry["url"], initialize_request(), headers)
        assert status == 200 and json.loads(body)["result"]["serverInfo"], (status, body)
        status, body = raw_post(entry["url"], initialize_request())
        assert status == 401, body


def _expire(vault: VaultSpec, name: str) -> str:
    """Time passes: the token `name` expired yesterday, as a renewal made a month ago (by a process
    whose clock read then) set it. Its expiry as stored."""
    store = open_store(vault.settings())
    try:
        now = Service(store, vault.settings()).rt.now()
        then = Service(store, vault.settings(), clock=lambda: now - timedelta(days=30))
        ended = grants.renew_token(then.rt, name, now - timedelta(days=1), "owner").expires_at
    finally:
        store.close()
    assert ended is not None
    return ended


def _refusal(url: str, token: str) -> tuple[int, str, str]:
    """An initialize POST with `token`: (status, body, its `WWW-Authenticate`)."""
    headers = {"Authorization": f"Bearer {token}"}
    request = urllib.request.Request(
        url,
        data=json.dumps(initialize_request()).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return int(response.status), response.read().decode(), response.headers.get("WWW-Authenticate", "")
    except urllib.error.HTTPError as error:
        return int(error.code), error.read().decode(), error.headers.get("WWW-Authenticate", "")


@pytest.mark.anyio
async def test_an_expired_token_is_refused_saying_so_and_a_renewal_accepts_it_again(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    """`kaeru token add --expires`: from its expiry on the token is refused on `/mcp` and the viewer
    as a revoked one is, without a restart, and its holder is told it expired and what to ask for;
    a caller without it is told nothing of it, and the admin token is not touched. `kaeru token
    renew` makes the same token work again."""
    alice = token_of(vault, "alice", "--expires", "1h")
    env = {**server_env, "KAERU_AUTH_TOKEN": ADMIN, "KAERU_ACTOR": "the-admin"}
    with http_server(env, tmp_path) as server:
        opener = urllib.request.build_opener(_NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as signed_in:
            opener.open(f"{server.base}/ui/login?{urllib.parse.urlencode({'token': alice})}", timeout=15)
        assert signed_in.value.code == 303
        cookie = signed_in.value.headers["Set-Cookie"].split(";")[0]
        assert _get(f"{server.base}/ui/", {"Cookie": cookie})[0] == 200

        async with bearer_client(server.url, alice) as client:
            await call_ok(client, "note", {"initiative": "web", "text": "alice writes before zq7exp"})
            ended = _expire(vault, "alice")
            said = f"token 'alice' expired at {ended}"
            with pytest.raises(MCPError) as refused:
                await client.call_tool("search", {"initiatives": ["web"], "text": "zq7exp"})
            assert said in str(refused.value), refused.value  # what the agent is shown

        status, body, challenge = _refusal(server.url, alice)
        assert status == 401 and said in json.loads(body)["error"]["message"], body
        assert 'error="invalid_token"' in challenge and said in challenge and "kaeru token renew alice" in challenge
        status, body, challenge = _refusal(server.url, "kaeru_nope")  # no token of the vault
        assert status == 401 and "a valid bearer token is required" in body
        assert "alice" not in body + challenge and "expired" not in body + challenge
        assert _refusal(server.url, ADMIN)[0] == 200

        status, headers = _get(f"{server.base}/ui/", {"Cookie": cookie})
        assert status == 401 and "Max-Age=0" in headers["Set-Cookie"]  # the viewer session ended
        with pytest.raises(urllib.error.HTTPError) as again:
            opener.open(f"{server.base}/ui/login?{urllib.parse.urlencode({'token': alice})}", timeout=15)
        assert again.value.code == 401

        [listed] = kaeru(vault, "token", "list", as_json=True).json()["tokens"]
        assert (listed["expires_at"], listed["expired"]) == (ended, True)
        assert kaeru(vault, "token", "renew", "alice", "--expires", "30d").code == 0
        assert _refusal(server.url, alice)[0] == 200
