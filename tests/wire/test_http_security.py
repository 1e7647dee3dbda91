"""Streamable HTTP is only as open as configured: bearer token, loopback by default, Host allow-list."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.cli.zygote_client import count_served_cpu, server_argv
from tests.wire.support import KAERU_SERVE, call_ok, free_port, http_server, initialize_request, raw_post, stop

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

TOKEN = "wire-test-token-8c1f0e5a"


def _is_initialize_result(body: str) -> bool:
    message = json.loads(body)
    return message.get("id") == 1 and "result" in message and "error" not in message


@pytest.mark.anyio
async def test_bearer_token_is_required_and_sufficient(server_env: dict[str, str], tmp_path: Path) -> None:
    env = {**server_env, "KAERU_AUTH_TOKEN": TOKEN}
    with http_server(env, tmp_path) as server:
        for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": TOKEN}):
            status, body = raw_post(server.url, initialize_request(), headers)
            assert status == 401, (headers, status, body)
            assert TOKEN not in body

        status, body = raw_post(server.url, initialize_request(), {"Authorization": f"Bearer {TOKEN}"})
        assert status == 200, body
        assert _is_initialize_result(body)

        # The SDK client without credentials cannot use the server …
        with pytest.raises(Exception):  # noqa: B017 - the SDK's error type for an HTTP 401 is not part of its API
            async with Client(server.url) as client:
                await client.call_tool("search", {"initiatives": ["auth"], "text": "x"})

        # … and with them, it works end to end.
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http,
            Client(streamable_http_client(server.url, http_client=http)) as client,
        ):
            noted = await call_ok(client, "note", {"initiative": "auth", "text": "authorised write zq7auth"})
            found = await call_ok(client, "search", {"initiatives": ["auth"], "text": "zq7auth"})
            assert [hit["id"] for hit in found["data"]["hits"]] == [noted["data"]["primary"]["id"]]


def test_non_loopback_bind_without_token_refuses_to_start(server_env: dict[str, str]) -> None:
    env = {k: v for k, v in server_env.items() if k != "KAERU_AUTH_TOKEN"}
    proc = subprocess.Popen(
        server_argv((*KAERU_SERVE, "--http", "--host", "0.0.0.0", "--port", str(free_port())), env),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        stop(proc)  # should it have started after all, it must not outlive the test
        count_served_cpu()
    assert proc.returncode not in (0, None)
    message = out + err
    assert "KAERU_AUTH_TOKEN" in message, message
    assert "Traceback" not in message, message


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example"},
        {"Host": "evil.example:80"},
        {"Origin": "http://evil.example"},
    ],
    ids=["host", "host-with-port", "origin"],
)
def test_foreign_host_or_origin_is_refused(headers: dict[str, str], server_env: dict[str, str], tmp_path: Path) -> None:
    with http_server(server_env, tmp_path) as server:
        status, body = raw_post(server.url, initialize_request(), headers)
        assert 400 <= status < 500, (status, body)
        assert status != 404
        assert "result" not in body

        # The same request from a loopback name is served: it was refused for the foreign name.
        for own in (f"127.0.0.1:{server.port}", f"localhost:{server.port}"):
            status, body = raw_post(server.url, initialize_request(), {"Host": own})
            assert status == 200, (own, status, body)
            assert _is_initialize_result(body)


def test_allowed_hosts_admit_the_names_a_proxy_serves_and_nothing_else(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    """`KAERU_ALLOWED_HOSTS` (a name on any port, or `name:port` on that port only) is added to the
    loopback names for Host and Origin; every other name is still refused."""
    env = {**server_env, "KAERU_ALLOWED_HOSTS": "kaeru.example.org, proxy.example.org:8443"}
    with http_server(env, tmp_path) as server:
        for headers in (
            {"Host": "kaeru.example.org"},
            {"Host": "kaeru.example.org", "Origin": "https://kaeru.example.org"},
            {"Host": "kaeru.example.org:8080", "Origin": "http://kaeru.example.org:8080"},
            {"Host": "proxy.example.org:8443"},
        ):
            status, body = raw_post(server.url, initialize_request(), headers)
            assert status == 200 and _is_initialize_result(body), (headers, status, body)
        for headers in (
            {"Host": "proxy.example.org:9999"},
            {"Host": "evil.example"},
            {"Origin": "http://evil.example"},
        ):
            status, body = raw_post(server.url, initialize_request(), headers)
            assert 400 <= status < 500 and "result" not in body, (headers, status, body)
