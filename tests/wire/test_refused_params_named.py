"""A request whose params the SDK refuses is told which field, over a real `kaeru serve` on stdio (raw
JSON lines) and over HTTP: an `initialize` whose `clientInfo` lacks its `version`, that lacks
`clientInfo` or `capabilities`, whose `capabilities.roots` is no object, or that has no params; a
`prompts/get` argument that is no string, a `resources/read` without `uri`, a `completion/complete`
of `{}`, a `tools/call` with `params: null`. Each is still `-32602`, its message now naming the field
and what is wrong with it, and `data` saying both (`field`, `reason`). Before, each was answered
"Invalid request parameters" with empty `data`: a client that could not connect never learnt why.
A valid request is answered as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.wire.stdio_lines import Piped
from tests.wire.support import http_server, initialize_request, raw_post

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

_GOOD = initialize_request()["params"]

#: Each refused `initialize`'s params (None: sent without any), and the field and reason it is told.
INITIALIZE: list[tuple[dict[str, Any] | None, str, str]] = [
    ({**_GOOD, "clientInfo": {"name": "no-version"}}, "params.clientInfo.version", "is required"),
    ({k: v for k, v in _GOOD.items() if k != "clientInfo"}, "params.clientInfo", "is required"),
    ({k: v for k, v in _GOOD.items() if k != "capabilities"}, "params.capabilities", "is required"),
    ({**_GOOD, "capabilities": {"roots": 5}}, "params.capabilities.roots", "must be an object, not a number"),
    (None, "params", "is required"),
]
#: Each refused request after the handshake: (method, params — None: `params: null`), field, reason.
REQUESTS: list[tuple[str, dict[str, Any] | None, str, str]] = [
    (
        "prompts/get",
        {"name": "resume", "arguments": {"initiative": 5}},
        "params.arguments.initiative",
        "must be a string, not a number",
    ),
    ("resources/read", {}, "params.uri", "is required"),
    ("completion/complete", {}, "params.argument", "is required (and 1 more problem)"),
    ("tools/call", None, "params", "is required"),
]


#: A valid request, answered as ever; and one whose params pass but that its handler refuses, with
#: its own error untouched.
COMPLETE: tuple[str, dict[str, Any]] = (
    "completion/complete",
    {"ref": {"type": "ref/prompt", "name": "resume"}, "argument": {"name": "initiative", "value": ""}},
)
UNKNOWN: tuple[str, dict[str, Any]] = (
    "prompts/get",
    {"name": "resume", "arguments": {"initiative": "no-such-initiative"}},
)


def _served_as_before(completed: dict[str, Any], unknown: dict[str, Any]) -> None:
    assert completed["id"] == 30 and completed["result"]["completion"]["values"] == [], completed
    assert unknown == {
        "jsonrpc": "2.0",
        "id": 31,
        "error": {"code": -32602, "message": "unknown_initiative: no initiative named 'no-such-initiative'"},
    }, unknown


def _request(request_id: int, method: str, params: dict[str, Any] | None, *, null: bool = False) -> dict[str, Any]:
    """A JSON-RPC request; `params` None is left out, or sent as `null` when `null`."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None or null:
        message["params"] = params
    return message


def _named(answer: dict[str, Any], request_id: int, field: str, reason: str) -> None:
    assert answer.get("id") == request_id, answer
    assert answer.get("error") == {
        "code": -32602,
        "message": f"Invalid request parameters: {field} {reason}",
        "data": {"field": field, "reason": reason},
    }, answer


class _Lines(Piped):
    """`kaeru serve` on pipes, spoken to one raw JSON line at a time (nothing sent for it first)."""

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        self.tell(message)
        return self.receive()

    def tell(self, message: dict[str, Any]) -> None:
        self.send(json.dumps(message).encode())


def test_refused_params_name_their_field_on_stdio(server_env: dict[str, str], tmp_path: Path) -> None:
    server = _Lines(server_env, tmp_path / "serve.log")
    try:
        for n, (params, field, reason) in enumerate(INITIALIZE, start=10):
            _named(server.ask(_request(n, "initialize", params)), n, field, reason)
        # The client that mends its `initialize` connects on the same session, answered as ever.
        answer = server.ask(_request(1, "initialize", _GOOD))
        assert answer["result"]["serverInfo"]["name"] == "kaeru-memory", answer
        server.tell({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for n, (method, params, field, reason) in enumerate(REQUESTS, start=20):
            _named(server.ask(_request(n, method, params, null=True)), n, field, reason)
        _served_as_before(server.ask(_request(30, *COMPLETE)), server.ask(_request(31, *UNKNOWN)))
    finally:
        code = server.close()
    assert code == 0, server.log.read_text()
    assert "Traceback" not in server.log.read_text()


def test_refused_params_name_their_field_over_http(server_env: dict[str, str], tmp_path: Path) -> None:
    with http_server(server_env, tmp_path) as server:
        for n, (params, field, reason) in enumerate(INITIALIZE, start=10):
            status, body = raw_post(server.url, _request(n, "initialize", params))
            _named(json.loads(body), n, field, reason)
            assert status == 200, (status, body)
        status, body = raw_post(server.url, _request(1, "initialize", _GOOD))
        assert status == 200 and json.loads(body)["result"]["serverInfo"]["name"] == "kaeru-memory", body
        version = {"MCP-Protocol-Version": _GOOD["protocolVersion"]}
        for n, (method, params, field, reason) in enumerate(REQUESTS, start=20):
            status, body = raw_post(server.url, _request(n, method, params, null=True), version)
            _named(json.loads(body), n, field, reason)
        answers = [
            json.loads(raw_post(server.url, _request(30 + i, *asked), version)[1])
            for i, asked in enumerate((COMPLETE, UNKNOWN))
        ]
        _served_as_before(*answers)
