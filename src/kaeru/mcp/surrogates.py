"""Answering a stdio request whose JSON holds a lone UTF-16 surrogate escape (`"\\ud800"`).

JSON allows such an escape, but it is not Unicode text, and the SDK's parser refuses the whole
line. Over HTTP the SDK then answers the POST with a parse error, but over stdio a refused line is
only logged: the caller's request would wait forever. This builds the answer instead, with the
request's id: for a plain call of one of kaeru's tools, the usual `rejected` tool result
(`invalid_argument`, naming the argument), otherwise a JSON-RPC "invalid params" error naming the
path. Nothing is stored: the text cannot be kept as sent, and changing it silently would be worse.
"""

from __future__ import annotations

import json
from typing import Any

from kaeru.domain.surrogates import lone_surrogate, refusal_of_lone_surrogate
from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.fastpath import WIRE_VERSIONS, wire_result

#: JSON-RPC "invalid params".
INVALID_PARAMS = -32602


def answer(registry: ToolRegistry, line: bytes, protocol_version: str | None) -> dict[str, Any] | None:
    """The JSON-RPC answer to `line`, a request the SDK could not read because of a lone surrogate;
    None when that is not why (the SDK's own handling stands) or when it is a notification."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # nested too deep to read: `unreadable` answers it
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)) or lone_surrogate(str(request_id)):
        return None
    params = message.get("params")
    try:
        hit = lone_surrogate(params)
    except RecursionError:  # deep enough to read, too deep to walk: `unreadable` answers it
        return None
    if hit is None:
        return None
    call = plain_tool_call(registry, message, protocol_version)
    if call is not None and (problem := refusal_of_lone_surrogate(call[1])) is not None:
        name, arguments = call
        replay_key = arguments.get("request_id")
        key = replay_key if isinstance(replay_key, str) and not lone_surrogate(replay_key) else None
        return {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": wire_result(registry.rejected(name, problem, key), registry.output),
        }
    where, code_point = hit
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": INVALID_PARAMS,
            "message": f"params.{where} holds a lone UTF-16 surrogate ({code_point}), which is not Unicode text",
        },
    }


def plain_tool_call(
    registry: ToolRegistry, message: dict[str, Any], protocol_version: str | None
) -> tuple[str, dict[str, Any]] | None:
    """`(tool, arguments)` when `message` is a plain call of a tool `registry` offers at a version
    whose result `wire_result` writes (so it can be answered with a tool result); else None."""
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if (
        message.get("method") == "tools/call"
        and protocol_version in WIRE_VERSIONS
        and isinstance(name, str)
        and registry.has(name)  # a tool this server offers (decision 439)
        and isinstance(arguments, dict)
    ):
        return name, arguments
    return None
