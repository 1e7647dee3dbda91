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
import re
from typing import Any

from kaeru.domain.surrogates import lone_surrogate
from kaeru.errors import InvalidArgument
from kaeru.mcp import surrogates
from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.addresses import BATCH, NOT_AN_OBJECT
from kaeru.mcp.fastpath import wire_result

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
#: How much of the parser's own complaint an answer repeats.
_SAID = 200


def answer(
    registry: ToolRegistry, line: bytes, protocol_version: str | None, problem: Exception
) -> dict[str, Any] | list[dict[str, Any]] | None:
    """The JSON-RPC answer to `line`, which the SDK's parser refused with `problem`; None when no
    answer is owed (a notification, or a response the client sent)."""
    if (reply := surrogates.answer(registry, line, protocol_version)) is not None:
        return reply
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:
        if not line.strip():
            return None
        said = str(exc)[:_SAID]
        if (found := _top_level_id(line[:HEAD])) is not None:
            # JSON Python cannot read whole (nested past its recursion limit, a number past its
            # digit limit) or a line with more after its object: its request still waits on its id.
            return _error(found, INVALID_REQUEST, f"Invalid Request: the message could not be read ({said})")
        return _error(None, PARSE_ERROR, f"Parse error: the line is not JSON ({said})")
    if isinstance(message, list):  # a batch: refused, but each request in it is answered
        said = BATCH
        ids = [m.get("id") for m in message if isinstance(m, dict) and isinstance(m.get("method"), str)]
        answers = [
            _error(i, INVALID_REQUEST, said) for i in ids if isinstance(i, (int, str)) and not isinstance(i, bool)
        ]
        return answers or _error(None, INVALID_REQUEST, said)
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, NOT_AN_OBJECT)
    request_id = message.get("id")
    if not isinstance(message.get("method"), str):
        return None  # a response to the server, or no message at all: nothing to answer
    if "id" not in message:
        return None  # a notification: no one to answer
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        # `true`, `null`, a float, an object: a request all the same, whose sender waits (JSON-RPC:
        # an id that cannot be said back is answered as null; decision 443).
        return _error(None, INVALID_REQUEST, "Invalid Request: an id is a string or an integer")
    why = _reason(problem)
    if isinstance(request_id, str) and lone_surrogate(request_id):
        return _error(None, INVALID_REQUEST, "Invalid Request: the id is not Unicode text (a lone surrogate)")
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


#: How much of a line over the limit is kept to find its id.
HEAD = 64 * 1024


def too_long(head: bytes, said: str) -> dict[str, Any]:
    """The answer to a line over the size limit, of which only `head` was kept: an Invalid Request
    error, with the request's id when the head names it at the message's top level."""
    return _error(_top_level_id(head), INVALID_REQUEST, f"Invalid Request: {said}")


def _top_level_id(head: bytes) -> int | str | None:
    """The `id` member of the JSON object `head` begins, when it comes before the head ends (a
    member of `params` named `id` is not it); None otherwise."""
    text = head.decode("utf-8", "replace")
    depth, i = 0, 0
    while i < len(text):
        char = text[i]
        if char == '"':
            end = i + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            key = text[i + 1 : end]
            i = end + 1
            if (
                depth == 1
                and key == "id"
                and (found := re.match(r'\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?![.\deE]))', text[i:]))
            ):
                try:
                    value = json.loads(found[1])
                except ValueError:
                    return None
                return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None
            continue
        depth += 1 if char in "{[" else -1 if char in "}]" else 0
        i += 1
    return None


def _error(request_id: int | str | None, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error; an id that is no Unicode text (a lone surrogate) cannot be said back, so
    it is answered as null, as an id that cannot be read."""
    if isinstance(request_id, str) and lone_surrogate(request_id):
        request_id = None
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
