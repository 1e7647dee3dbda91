"""kaeru's own `tools/call` answered before the SDK's generic request pipeline (decision 63).

For a tool call the SDK's `ServerRunner` validates the raw params twice (the per-version surface,
then `CallToolRequestParams`), and shapes the handler's `CallToolResult` for the wire by dumping
it, validating the dump against the version's surface model and dumping that again: work on every
call that takes a large share of the stdio overhead budget (docs/benchmarks.md). Our tool results are plain dicts we built ourselves, so this context-tier middleware (it runs
before any SDK validation, and a middleware that answers without `call_next` owns its response)
answers the calls it can prove identical and hands everything else to the SDK untouched.

It answers only when every one of these holds, and otherwise calls `call_next(ctx)`:

* a `tools/call` request (not a notification), for a tool this registry has;
* params with nothing but a string `name` and, if present, an `arguments` object — no `_meta`
  (progress tokens), no `task`, no `arguments: null`; at a 2026-era version also the `_meta`
  envelope, holding nothing but its own keys and passing the SDK's own check of the params;
* the connection passed the SDK's own initialisation gate (`Connection.initialize_accepted`; a
  2026-era connection is born past it);
* the protocol version is one of `WIRE_VERSIONS` or `MODERN_WIRE_VERSIONS`, where the SDK's wire
  form of our result is exactly `wire_result` (`tests/wire/test_fast_path.py` checks both, per
  version).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types import methods as sdk_methods

from kaeru.errors import InvalidArgument
from kaeru.mcp.adapter import Output, ToolRegistry

#: Protocol versions whose `tools/call` result the SDK shapes by the 2025-11-25 surface model
#: (every handshake-era version shares it): `content`, `isError`, `structuredContent`, in that
#: order, and nothing else. The 2026-07-28 era adds `resultType` and a `serverInfo` stamp: it is
#: listed apart (`MODERN_WIRE_VERSIONS`).
WIRE_VERSIONS: Final = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})

#: The 2026-07-28 era (decision 162): no handshake, every request carries its envelope in `_meta`
#: (protocol version, client capabilities, optionally client info), and the SDK writes a result with
#: `resultType` after `isError` and the server's identity stamped last in `_meta`.
MODERN_WIRE_VERSIONS: Final = frozenset({"2026-07-28"})
#: The server-identity key of a 2026-era result's `_meta`.
SERVER_INFO_META_KEY: Final = "io.modelcontextprotocol/serverInfo"

#: The params keys a fast-path call may carry; any other key is the SDK's to validate.
_PLAIN_KEYS: Final = frozenset({"name", "arguments"})
#: ... and a 2026-era call, whose `_meta` may hold the envelope's keys and nothing else (a progress
#: token, say, is the SDK's).
_MODERN_KEYS: Final = _PLAIN_KEYS | {"_meta"}
_ENVELOPE_KEYS: Final = frozenset({PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY})


def wire_result(
    envelope: dict[str, Any], output: Output | None = None, server_info: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`adapter.result(envelope, output)` as the SDK writes it at the `WIRE_VERSIONS` — or, given the
    server's `server_info` stamp, at the `MODERN_WIRE_VERSIONS`.

    Its keys in the surface model's field order (`content`, `isError`, `structuredContent`; in a
    text block `text` before `type`), so the JSON-RPC line is byte for byte the SDK's. The
    envelope goes out as is: it is JSON-native (built from strings, numbers, lists and dicts),
    which is what the SDK's dump-and-validate would have turned it into.
    """
    output = output or Output()
    wire: dict[str, Any] = {
        "content": [{"text": output.text_of(envelope), "type": "text"}],
        "isError": envelope["state"] == "rejected",
    }
    if server_info is not None:
        wire["resultType"] = "complete"
    if output.structured:
        wire["structuredContent"] = envelope
    if server_info is not None:
        wire["_meta"] = {SERVER_INFO_META_KEY: server_info}
    return wire


def _initialize_accepted(ctx: ServerRequestContext[Any, Any]) -> bool:
    """The SDK runner's own gate for requests before the handshake, read where it lives.

    `ServerRunner` asks `connection.initialize_accepted`; a middleware sees the connection only
    behind the session (`ServerSession._connection`, private). Should the SDK move it, this says
    False and every call takes the SDK's path: slower, never different.
    """
    connection = getattr(ctx.session, "_connection", None)
    return getattr(connection, "initialize_accepted", False) is True


class FastToolCalls:
    """The `ServerMiddleware` answering plain calls of kaeru's own tools (see the module doc)."""

    def __init__(
        self,
        registry: ToolRegistry,
        versions: frozenset[str] = WIRE_VERSIONS | MODERN_WIRE_VERSIONS,
        server_info: Callable[[], dict[str, Any]] | None = None,
    ):
        self.registry = registry
        #: The allow-list; tests narrow it to check that an unlisted version goes to the SDK.
        self.versions = versions
        #: The server's identity as the SDK stamps it on a 2026-era result (a fresh dict a call);
        #: without it those calls go to the SDK.
        self.server_info = server_info
        #: Calls this middleware answered itself (the tests check the fast path is really taken).
        self.answered = 0

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        version = ctx.protocol_version
        if ctx.method != "tools/call" or ctx.request_id is None or version not in self.versions:
            return await call_next(ctx)
        params = ctx.params
        modern = version in MODERN_WIRE_VERSIONS
        if not isinstance(params, dict) or not params.keys() <= (_MODERN_KEYS if modern else _PLAIN_KEYS):
            return await call_next(ctx)
        if modern and not self._plain_envelope(version, params):
            return await call_next(ctx)
        name = params.get("name")
        arguments = params.get("arguments")
        if (
            isinstance(name, str)
            and self.registry.has(name)
            and arguments is not None
            and not isinstance(arguments, dict)
            and _initialize_accepted(ctx)
        ):
            # The SDK answered "Invalid request parameters" with no word of which (a model that sent
            # its arguments as a JSON string could not tell what to fix).
            envelope = self.registry.rejected(name, _not_an_object(arguments))
            self.answered += 1
            return wire_result(
                envelope, self.registry.output, self.server_info() if modern and self.server_info else None
            )
        if (
            not isinstance(name, str)
            or not self.registry.has(name)
            or ("arguments" in params and not isinstance(arguments, dict))
            or not _initialize_accepted(ctx)
        ):
            return await call_next(ctx)
        envelope = await self.registry.envelope(name, arguments)
        self.answered += 1
        return wire_result(envelope, self.registry.output, self.server_info() if modern and self.server_info else None)

    def _plain_envelope(self, version: str, params: dict[str, Any]) -> bool:
        """A 2026-era call the SDK would serve as a plain one: the server's identity is known, `_meta`
        holds only the envelope's keys, and the params pass the SDK's own check of the version's
        `tools/call` (the one its pipeline runs first: an envelope it refuses is refused by it)."""
        meta = params.get("_meta")
        if self.server_info is None or not isinstance(meta, dict) or not meta.keys() <= _ENVELOPE_KEYS:
            return False
        try:
            sdk_methods.validate_client_request("tools/call", version, params)
        except Exception:  # KeyError, ValueError, ValidationError: the SDK answers with its error
            return False
        return True


def _not_an_object(arguments: object) -> InvalidArgument:
    """`arguments` that are no JSON object, refused naming what they are (a string holding an
    object's JSON: send the object itself)."""
    kind = {str: "a string", list: "a list", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(arguments), type(arguments).__name__
    )
    held = ""
    if isinstance(arguments, str):
        try:
            held = (
                " holding JSON: send the object itself, not its text" if isinstance(json.loads(arguments), dict) else ""
            )
        except ValueError:
            held = ""
    return InvalidArgument(
        f"arguments must be a JSON object of the tool's arguments, not {kind}{held}", field="arguments"
    )
