"""Answering a stdio line the SDK cannot read, so that no request waits forever.

Over stdio the SDK's transport only logs a line its parser refuses; over HTTP the POST is answered
with a parse error. A client that sent such a line — not JSON at all, or JSON nested deeper than
the parser's recursion limit (arguments ~200 levels deep) — waited for an answer that never came.
JSON-RPC 2.0 says what to answer: a line that is not JSON, a parse error (-32700) with a null id;
a request it can read the id of, an invalid-request error (-32600) with that id. A plain call of
one of kaeru's tools gets the usual `rejected` tool result instead (`invalid_argument` on
`arguments`), as malformed arguments always do. A lone surrogate has its own answer
(`surrogates`); a notification, or a line that names no request, is answered with nothing but
the parse error (there is no one to answer).
"""

from __future__ import annotations

import json
from typing import Any

from kaeru.errors import InvalidArgument
from kaeru.mcp import surrogates
from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.fastpath import wire_result

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
#: How much of the parser's own complaint an answer repeats.
_SAID = 200


def answer(
    registry: ToolRegistry, line: bytes, protocol_version: str | None, problem: Exception
) -> dict[str, Any] | None:
    """The JSON-RPC answer to `line`, which the SDK's parser refused with `problem`; None when no
    answer is owed (a notification, or a response the client sent)."""
    if (reply := surrogates.answer(registry, line, protocol_version)) is not None:
        return reply
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:
        if not line.strip():
            return None
        return _error(None, PARSE_ERROR, f"Parse error: the line is not JSON ({str(exc)[:_SAID]})")
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: a message is one JSON object")
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None
    if not isinstance(message.get("method"), str):
        return None  # a response to the server, or no message at all: nothing to answer
    why = _reason(problem)
    if (call := surrogates.plain_tool_call(registry, message, protocol_version)) is not None:
        name, arguments = call
        replay_key = arguments.get("request_id")
        refusal = InvalidArgument(f"arguments could not be read: {why}", field="arguments")
        envelope = registry.rejected(name, refusal, replay_key if isinstance(replay_key, str) else None)
        return {"jsonrpc": "2.0", "id": request_id, "result": wire_result(envelope, registry.output)}
    return _error(request_id, INVALID_REQUEST, f"Invalid Request: the message could not be read ({why})")


def _reason(problem: Exception) -> str:
    """The parser's complaint, in one short line (a pydantic error lists every failure)."""
    errors = getattr(problem, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            return str(first.get("msg", problem))[:_SAID]
        except (IndexError, KeyError, TypeError, AttributeError):  # another shape of error: said whole
            pass
    return str(problem).splitlines()[0][:_SAID] if str(problem) else type(problem).__name__


def _error(request_id: int | str | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
