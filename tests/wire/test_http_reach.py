"""A team reaches `kaeru serve --http` by the names and addresses of the machine it runs on, and a
request the transport refuses before any tool runs is told why in words the SDK's client shows
(decision 227)."""

from __future__ import annotations

import json
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.cli.zygote_client import count_served_cpu, server_argv
from tests.wire.support import (
    KAERU_SERVE,
    LOOPBACK,
    HttpServer,
    free_port,
    http_server,
    initialize_request,
    raw_post,
    serving_http,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

TOKEN = "wire-reach-token-3f9d21"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


def _serving(env: dict[str, str], log_dir: Path, *options: str) -> AbstractContextManager[HttpServer]:
    """`kaeru serve --http <options> --port <free>` with `env` (forked from the worker's server
    zygote), ready (GET /health on loopback is ok)."""
    port = free_port()
    argv = server_argv((*KAERU_SERVE, "--http", *options, "--port", str(port)), env)
    return serving_http(argv, env, log_dir / f"kaeru-{port}.log", port)


def _server_on_every_address(env: dict[str, str], log_dir: Path) -> AbstractContextManager[HttpServer]:
    """`kaeru serve --http --host 0.0.0.0` (a token set, as a non-loopback bind needs), ready."""
    return _serving({**env, "KAERU_AUTH_TOKEN": TOKEN}, log_dir, "--host", "0.0.0.0")


def _outward_address() -> str | None:
    """This machine's address towards a non-loopback destination (no packet is sent), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address: str = probe.getsockname()[0]
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def _mcp_errors(raised: BaseException) -> list[MCPError]:
    """The `MCPError`s inside what the SDK's client raised (it nests them in exception groups)."""
    if isinstance(raised, MCPError):
        return [raised]
    if isinstance(raised, BaseExceptionGroup):
        return [error for inner in raised.exceptions for error in _mcp_errors(inner)]
    return []


def _served(body: str) -> bool:
    message = json.loads(body)
    return message.get("id") == 1 and "result" in message


def test_a_server_on_every_address_answers_to_the_machines_own_names_and_addresses(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    """Bound to 0.0.0.0, the server is reached as `<hostname>:port`, `<fqdn>:port` and at the
    machine's own addresses — what a teammate types — and still refuses a foreign name."""
    with _server_on_every_address(server_env, tmp_path) as server:
        own = [socket.gethostname(), socket.getfqdn()]
        outward = _outward_address()
        if outward is not None:
            own.append(outward)
        for name in own:
            status, body = raw_post(server.url, initialize_request(), {**BEARER, "Host": f"{name}:{server.port}"})
            assert status == 200 and _served(body), (name, status, body)
        status, body = raw_post(server.url, initialize_request(), {**BEARER, "Host": f"evil.example:{server.port}"})
        assert status == 421, body
    assert "Traceback" not in server.output()


@pytest.mark.anyio
async def test_a_refused_host_or_origin_is_said_with_its_fix(server_env: dict[str, str], tmp_path: Path) -> None:
    """A Host or Origin outside the allow-list is a JSON-RPC error naming the value and
    `KAERU_ALLOWED_HOSTS`, which the SDK's client raises with that message (it said only "Server
    returned an error response")."""
    with http_server(server_env, tmp_path) as server:
        status, body = raw_post(server.url, initialize_request(), {"Host": "kaeru.team.example:9876"})
        assert status == 421, body
        error = json.loads(body)["error"]
        assert "kaeru.team.example:9876" in error["message"] and "KAERU_ALLOWED_HOSTS" in error["message"]

        status, body = raw_post(server.url, initialize_request(), {"Origin": "http://evil.example"})
        assert status == 403, body
        error = json.loads(body)["error"]
        # Not "add its host to KAERU_ALLOWED_HOSTS to allow them": no browser page can call /mcp (no CORS).
        assert "http://evil.example" in error["message"] and "MCP clients" in error["message"]
        assert "no CORS headers" in error["message"]

        async with httpx2.AsyncClient(headers={"Host": "kaeru.team.example"}, timeout=30) as http:
            with pytest.raises(BaseException) as raised:  # the SDK nests its error in task groups
                async with Client(streamable_http_client(server.url, http_client=http)) as client:
                    await client.call_tool("initiatives", {})
        said = _mcp_errors(raised.value)
        assert said and all("KAERU_ALLOWED_HOSTS" in str(error) for error in said), said
    assert "Traceback" not in server.output()


@pytest.mark.anyio
async def test_a_note_the_contract_accepts_is_not_refused_for_its_size_over_http(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    """Text up to 4,000,000 characters is valid (decision 14) and stdio takes it; over HTTP a body
    over the SDK's 4 MiB default was answered 413 "Request body too large" in plain text, which the
    client reported as "Server returned an error response". 1.5 million Cyrillic characters are
    3 MB of UTF-8 a field: as text plus a reference's source, 6 MB."""
    text = ("ж" * 9 + " ") * 150_000
    with http_server(server_env, tmp_path) as server:
        async with Client(server.url) as client:
            result = await client.call_tool(
                "note", {"initiative": "big", "kind": "reference", "text": text, "source": text + " verbatim"}
            )
            envelope = result.structured_content
            assert envelope is not None and envelope["state"] == "applied", str(envelope)[:500]

        # A body over what the server takes in one call is told so, as a JSON-RPC error with the limit.
        oversized = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * (65 * 1024 * 1024)}}
        )
        answer = httpx2.post(
            server.url,
            content=oversized,
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
            timeout=60,
        )
        assert answer.status_code == 413, answer.text[:300]
        message = answer.json()["error"]["message"]
        assert "64 MiB" in message, message

        # Sent chunked, with no length to read beforehand, it is found while read and told the same
        # way: the SDK's own refusal was "Request body too large" in plain text.
        def chunks() -> Iterator[bytes]:
            data = oversized.encode()
            for at in range(0, len(data), 1 << 20):
                yield data[at : at + (1 << 20)]

        answer = httpx2.post(
            server.url,
            content=chunks(),
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
            timeout=60,
        )
        assert answer.status_code == 413, answer.text[:300]
        assert "64 MiB" in answer.json()["error"]["message"], answer.text[:300]
    assert "Traceback" not in server.output()


def test_a_protocol_version_no_release_has_is_named_as_the_mistake(server_env: dict[str, str], tmp_path: Path) -> None:
    """A client that sends an `MCP-Protocol-Version` no MCP release has was told that `params._meta`
    lacked envelope keys — the SDK's complaint on the path it sends unknown versions to. It is told
    the header is the mistake and which versions the server speaks, under MCP's own code for an
    unsupported version (decision 237); a known version is served as before."""
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    with http_server(server_env, tmp_path) as server:
        for version in ("junk", "2099-01-01"):
            answer = httpx2.post(server.url, content=request, headers={**headers, "MCP-Protocol-Version": version})
            assert answer.status_code == 400, answer.text[:300]
            error = answer.json()["error"]
            assert error["code"] == -32022, error
            assert repr(version) in error["message"] and "2025-06-18" in error["message"], error
            assert error["data"]["requested"] == version and error["data"]["supported"], error
        answer = httpx2.post(server.url, content=request, headers={**headers, "MCP-Protocol-Version": "2025-06-18"})
        assert answer.status_code == 200 and answer.json()["result"]["tools"], answer.text[:300]


def test_loopback_name_checks_are_unchanged(server_env: dict[str, str], tmp_path: Path) -> None:
    """On loopback the allow-list is what it was: loopback names only."""
    with http_server(server_env, tmp_path) as server:
        for host in (f"{LOOPBACK}:{server.port}", f"localhost:{server.port}"):
            status, body = raw_post(server.url, initialize_request(), {"Host": host})
            assert status == 200 and _served(body), (host, status, body)
        status, body = raw_post(server.url, initialize_request(), {"Host": f"{socket.gethostname()}.evil:80"})
        assert status == 421, body


def test_an_empty_kaeru_host_is_loopback_not_every_interface(server_env: dict[str, str], tmp_path: Path) -> None:
    """`KAERU_HOST=` (a compose file's unset variable) bound every interface with no token needed —
    a socket bound to "" listens on all of them, and the empty name counted as loopback. Now an
    empty `KAERU_HOST` is unset (127.0.0.1), and an empty bind address is no loopback."""
    from kaeru.mcp.addresses import is_loopback

    assert not is_loopback("") and not is_loopback("0.0.0.0") and is_loopback("127.0.0.1")
    env = {k: v for k, v in server_env.items() if k != "KAERU_AUTH_TOKEN"}
    with _serving({**env, "KAERU_HOST": ""}, tmp_path) as server:
        assert f"at http://{LOOPBACK}:{server.port}/mcp" in server.output(), server.output()
        outward = _outward_address()
        if outward is not None:
            with pytest.raises(OSError), socket.create_connection((outward, server.port), timeout=5):
                pass


def test_a_server_on_every_address_announces_a_name_a_client_can_use(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    with _server_on_every_address(server_env, tmp_path) as server:
        announced = server.output()
    assert f"at http://{socket.gethostname()}:{server.port}/mcp" in announced, announced
    assert "0.0.0.0" not in announced, announced


def test_a_get_on_the_endpoint_is_refused_not_held_open(server_env: dict[str, str], tmp_path: Path) -> None:
    """The server is stateless: a GET event stream would never carry a message, and it was held open
    for as long as the client waited. MCP's streamable HTTP transport says a server that offers no
    stream answers a GET with 405 (decision 231)."""
    with http_server(server_env, tmp_path) as server:
        answer = httpx2.get(server.url, headers={"Accept": "text/event-stream"}, timeout=10)
        assert answer.status_code == 405, answer.text[:300]
        assert "POST" in answer.headers.get("allow", "")
        assert "no event stream" in answer.json()["error"]["message"]
        assert answer.headers.get("allow") == "POST"
        # Other methods were answered `Allow: GET, POST, DELETE` by the SDK, two of them refused too;
        # DELETE got the SDK's 405 with no `Allow` at all (there is no session to end).
        answer = httpx2.delete(server.url, timeout=10)
        assert answer.status_code == 405 and answer.headers.get("allow") == "POST", answer.headers
        assert "no sessions" in answer.json()["error"]["message"]
        for method in ("PUT", "PATCH", "OPTIONS"):
            answer = httpx2.request(method, server.url, headers={"Content-Type": "application/json"}, timeout=10)
            assert answer.status_code == 405 and answer.headers.get("allow") == "POST", (method, answer.headers)
            assert method in answer.json()["error"]["message"], answer.text
        # Requests still work beside it.
        status, body = raw_post(server.url, initialize_request())
        assert status == 200 and _served(body), (status, body)


def test_a_body_that_is_json_but_no_object_is_refused_as_stdio_refuses_it(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    """`42`, `null`, `"x"`, `true` got a 400 -32602 "Validation error" with pydantic's four union
    errors and their links; stdio answers such a line "Invalid Request: a message is one JSON
    object" (-32600), and so does HTTP now. A body that is no JSON is still a parse error."""
    with http_server(server_env, tmp_path) as server:
        for payload in (42, None, "x", True, -1.5):
            status, body = raw_post(server.url, payload)
            error = json.loads(body)["error"]
            assert (status, error["code"], error["message"]) == (
                400,
                -32600,
                "Invalid Request: a message is one JSON object",
            ), (payload, body)
        request = urllib.request.Request(
            server.url,
            data=b"nonsense",
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=15)
        assert json.loads(refused.value.read())["error"]["code"] == -32700  # no JSON: a parse error
        status, body = raw_post(server.url, initialize_request())
        assert status == 200 and _served(body)


def test_a_batch_is_refused_in_words_on_both_transports(server_env: dict[str, str], tmp_path: Path) -> None:
    """A JSON-RPC batch (2025-03-26 allowed them) got a 400 "invalid params" with a thousand
    characters of the SDK's parser errors over HTTP, and one error with no id over stdio, where the
    client then waited for ever for its requests' answers."""
    batch = [{"jsonrpc": "2.0", "id": 10, "method": "ping"}, {"jsonrpc": "2.0", "id": 11, "method": "ping"}]
    with http_server(server_env, tmp_path) as server:
        status, body = raw_post(server.url, batch, {"MCP-Protocol-Version": "2025-03-26"})
        error = json.loads(body)["error"]
        assert status == 400 and error["code"] == -32600 and "batches are not supported" in error["message"]
        status, body = raw_post(server.url, initialize_request())
        assert status == 200 and _served(body)
    lines = [initialize_request(1), {"jsonrpc": "2.0", "method": "notifications/initialized"}, batch]
    lines.append({"jsonrpc": "2.0", "id": 12, "method": "ping"})
    proc = subprocess.run(
        server_argv(KAERU_SERVE, server_env),
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),
        capture_output=True,
        env=server_env,
        timeout=90,
        check=False,
    )
    count_served_cpu()
    answers = [json.loads(raw) for raw in proc.stdout.splitlines() if raw.strip()]
    assert proc.returncode == 0
    refused = next(a for a in answers if isinstance(a, list))
    assert [(a["id"], a["error"]["code"]) for a in refused] == [(10, -32600), (11, -32600)]
    assert {"jsonrpc": "2.0", "id": 12, "result": {}} in answers
