"""Lines a stdio `kaeru serve` answers itself because the SDK cannot read them, over a real process:
a request nested deeper than Python's JSON reader goes is answered as a parse error and the server
serves on (it exited with `RecursionError`: the lone-surrogate check read the line first and caught
only `ValueError`); and such a line calling a tool the server does not offer (`KAERU_TOOLS`,
decision 439) is not answered as that tool's `rejected` result, which would tell a model to mend
its arguments for a tool it cannot call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.wire.stdio_lines import Piped
from tests.wire.support import initialize_request

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


class Raw(Piped):
    """`kaeru serve` on pipes, spoken to a line at a time, after the handshake."""

    def __init__(self, env: dict[str, str], log: Path):
        super().__init__(env, log)
        self.send(json.dumps(initialize_request()).encode())
        assert self.receive()["id"] == 1
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')


def _call(request_id: int, tool: str, arguments: str) -> bytes:
    head = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool}})
    return (head[:-2] + f', "arguments": {arguments}}}}}').encode()


def _served_on_and_ended_cleanly(server: Raw) -> None:
    """The server still answers a ping, then ends at end of input with 0 and no traceback."""
    try:
        server.send(b'{"jsonrpc": "2.0", "id": 5, "method": "ping"}')
        assert server.receive() == {"jsonrpc": "2.0", "id": 5, "result": {}}
    finally:
        code = server.close()
    assert code == 0, server.log.read_text()
    assert "Traceback" not in server.log.read_text()


def test_a_request_nested_past_the_reader_is_answered_and_the_server_serves_on(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    server = Raw(server_env, tmp_path / "serve.log")
    try:
        for depth in (3_000, 100_000):
            server.send(_call(4, "note", '{"initiative": "x", "text": ' + "[" * depth + "]" * depth + "}"))
            answer = server.receive()
            # Its id is found where Python's reader gives up (decision 443): the caller is answered.
            assert answer["id"] == 4 and answer["error"]["code"] == -32600, answer
            assert "recursion" in answer["error"]["message"], answer
        server.send(_call(8, "note", '{"initiative": "x", "text": "t", "limit": ' + "9" * 5_000 + "}"))
        assert server.receive()["id"] == 8  # a number past Python's digit limit
        server.send(b'{"jsonrpc": "2.0", "id": 9, "method": "ping"}\x00')
        assert server.receive()["id"] == 9  # more after the object
    finally:
        _served_on_and_ended_cleanly(server)


def test_an_unreadable_call_of_a_tool_not_offered_is_no_result_of_that_tool(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    server = Raw({**server_env, "KAERU_TOOLS": "core"}, tmp_path / "serve.log")
    try:
        surrogate = '{"initiative": "x", "node": "n", "reason": "\\ud800"}'
        nested = '{"initiative": "x", "node": "n", "reason": ' + "[" * 400 + "]" * 400 + "}"
        for arguments in (surrogate, nested):
            server.send(_call(6, "forget", arguments))
            answer = server.receive()
            assert answer["id"] == 6 and "result" not in answer, answer
            assert answer["error"]["code"] in (-32600, -32602, -32700), answer  # a JSON-RPC error
        # The same line calling an offered tool is that tool's refusal, naming the argument.
        server.send(_call(7, "note", '{"initiative": "x", "text": "\\ud800"}'))
        answer = server.receive()
        assert answer["result"]["isError"] is True and answer["result"]["structuredContent"]["state"] == "rejected"
    finally:
        server.close()


def test_a_request_whose_id_is_no_unicode_text_is_answered_and_the_server_serves_on(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    """An id holding a lone surrogate cannot be said back: answered as null (it ended the server,
    whose answer repeated the id and could not be written as UTF-8; decision 443)."""
    server = Raw(server_env, tmp_path / "serve.log")
    try:
        server.send(b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}')
        answer = server.receive()
        assert answer["id"] is None and answer["error"]["code"] == -32600, answer
        server.send(_call(3, "note", '{"initiative": "x", "text": "\\udfff"}').replace(b'"id": 3', b'"id": "a\\udfff"'))
        assert server.receive()["id"] is None
        server.send(
            b'[{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}, {"jsonrpc": "2.0", "id": 4, "method": "ping"}]'
        )
        assert server.receive() is not None
        # An id JSON-RPC does not allow, on a line the SDK cannot read: answered, as null.
        deep = b"[" * 300 + b"]" * 300
        server.send(b'{"jsonrpc": "2.0", "id": true, "method": "tools/call", "params": {"x": ' + deep + b"}}")
        assert server.receive()["id"] is None
    finally:
        _served_on_and_ended_cleanly(server)
