"""`build_server`: the MCP server over one service, with every tool family registered."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types import methods as sdk_methods
from pydantic import ValidationError

from kaeru import __version__
from kaeru.domain.tool_set import TOOL_NAMES
from kaeru.mcp import prompts, resources
from kaeru.mcp.adapter import Output, ToolRegistry
from kaeru.mcp.fastpath import FastToolCalls

if TYPE_CHECKING:
    from kaeru.config import Settings
    from kaeru.service import Service
    from kaeru.storage.base import Store

INSTRUCTIONS = """kaeru is your persistent memory of record, shared across sessions, agents and machines.

ENTRY: name the project's scope on every call — `initiative`, or `initiatives: [...]` for \
`search`, `recall`, `timeline` and `archive`; use the same spelling each time — a write to a new name \
creates it and warns with did-you-mean suggestions.

START: call `context` with the initiative first: its rules in force, open tasks and hypotheses, \
recent memory (`initiatives` lists the names).

LOOK FIRST: before asking the user or deciding, `search` the initiatives for what is already \
known (literal words; `prefix: true` for word starts). `read` opens one node in full; `read` with \
`at` shows what was true at a past moment.

CAPTURE BY EPISTEMIC STATUS: `note` with kind observation (seen), decision (chosen + why), rule \
(a standing constraint), reference (outside source; verbatim `source` is immutable), idea, jot. \
`claim` for something uncertain, with `evidence` {node} or {method}; a refuted claim reads as \
refuted everywhere.

LINK WHAT YOU CAPTURE: `link_to` with an edge type (refers_to, derived_from, supersedes, causal, …) \
and a weight: 0.9–1 load-bearing, 0.6–0.8 supporting, 0.3–0.5 associative.

CHANGE SAFELY: `revise` patches a node in place (history keeps old values). Pass \
`expected_revision` from your last read to avoid overwriting someone else's change \
(`revision_conflict` → re-read, retry). Pass a `request_id` on every write: retrying with it \
never writes twice.

RESPONSES are envelopes: `state` (ok, applied, unchanged, partial, rejected), `issues` (with \
`field` and `retryable`), `coverage` (what was left out and why), `continuation.next_arguments` \
(the exact next call). Never store secrets: they are rejected."""


def instructions_for(served: Sequence[str] | None) -> str:
    """The server's instructions; where it offers only some tools (`KAERU_TOOLS`, decision 439),
    followed by which, so a model is not sent after a tool named above that it does not have."""
    if served is None:
        return INSTRUCTIONS
    return f"{INSTRUCTIONS}\n\nOFFERED HERE: only {', '.join(f'`{name}`' for name in served)}."


@dataclass
class KaeruServer:
    server: Server[Any]
    registry: ToolRegistry
    #: The vault, opened before serving (an unavailable vault ends `kaeru serve` at once); closed
    #: when serving ends.
    store: Store

    @property
    def service(self) -> Service:
        return self.registry.service


def build_server(
    service: Service | None = None,
    *,
    store: Store | None = None,
    open_service: Callable[[], Service] | None = None,
    settings: Settings | None = None,
) -> KaeruServer:
    """A low-level MCP server exposing the registered tools with their exact JSON Schemas.

    Over `service`; or over `store` with `open_service`, which builds the service on first need — the
    first `tools/list` or call — together with the tools, so that `initialize` is answered before
    the service layer is even imported (`kaeru serve`, decision 16.O1). Either way `tools/list`
    answers the same. The results' text and structured parts follow `settings` (by default the
    service's): `KAERU_TEXT`, `KAERU_STRUCTURED` (decision 18.C1).
    """
    # The tool families are imported when the tools are built, not before `initialize` (16.O1).
    from kaeru.mcp.tools import register_tools

    if settings is None and service is not None:
        settings = service.rt.settings
    output = Output() if settings is None else Output(settings.text, settings.structured, settings.zone())
    served = None if settings is None or settings.tools == TOOL_NAMES else settings.tools
    if service is not None:
        registry = ToolRegistry(service, output=output, served=served)
        register_tools(registry)
        store = service.store
    else:
        if store is None or open_service is None:
            raise ValueError("build_server needs a service, or a store and open_service")
        opener = open_service

        def load(registry: ToolRegistry) -> Service:
            opened = opener()
            register_tools(registry)
            return opened

        registry = ToolRegistry(load=load, output=output, served=served)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        one_page(params)
        return types.ListToolsResult(tools=registry.list_tools())

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        return await registry.call(params.name, params.arguments)

    # Prompts and resources (issue 19): built by the tools' own handlers, so they say what the tools say.
    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        one_page(params)
        return prompts.list_prompts(registry)

    async def get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> types.GetPromptResult:
        return await prompts.get_prompt(registry, params.name, params.arguments)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        one_page(params)
        return await resources.list_resources(registry)

    async def list_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        one_page(params)
        return resources.list_templates()

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await resources.read_resource(registry, params.uri)

    async def complete(ctx: ServerRequestContext[Any], params: types.CompleteRequestParams) -> types.CompleteResult:
        def values(registry: ToolRegistry) -> types.Completion:
            found = prompts.complete(registry, params.ref, params.argument)
            if found is None:
                found = resources.complete(registry, params.ref, params.argument)
            return found if found is not None else types.Completion(values=[])

        return types.CompleteResult(completion=await resources.vault_read(registry, "completion/complete", values))

    server: Server[Any] = Server(
        "kaeru-memory",
        version=__version__,
        title="kaeru memory",
        instructions=instructions_for(served),
        get_tool_input_schema=registry.listed_input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_completion=complete,
    )
    fast = FastToolCalls(registry, server_info=lambda: server.server_info_stamp)
    server.middleware = middleware(server.middleware, fast, tracing=_tracing_configured(), server=server)
    return KaeruServer(server, registry, store)


def one_page(params: types.PaginatedRequestParams | None) -> None:
    """Refuse a list request's cursor: every list is answered whole, in one page with no
    `nextCursor`, so no cursor is one kaeru gave (a bogus one was ignored, and the whole list
    answered again as if it were the next page). The MCP specification: an invalid cursor is -32602.
    An empty cursor is taken as none (a client that sends `""` for "from the start").

    Raises:
        MCPError: `params` carries a cursor.
    """
    if params is not None and params.cursor:
        said = "invalid cursor: this list is answered whole in one page (no nextCursor), so it takes no cursor"
        raise MCPError(INVALID_PARAMS, said, {"field": "params.cursor"})


def middleware(
    sdk: list[ServerMiddleware[Any]], fast: FastToolCalls, *, tracing: bool, server: Server[Any] | None = None
) -> list[ServerMiddleware[Any]]:
    """The server's middleware, outermost first: the SDK's own, then (given the `server`)
    `NamedParams`, which says which field of a request's params was refused, then the `tools/call`
    fast path.

    The SDK wraps every request in an OpenTelemetry span by default; with no tracer provider
    installed the spans go nowhere yet cost time on every call (a real share of the stdio budget), so the
    span middleware is dropped unless `tracing` (decision 44). The fast path goes last — innermost —
    so when spans are kept they still wrap the calls it answers; what it hands on to the SDK is
    refused, when it is, inside `NamedParams`.
    """
    kept = sdk if tracing else [m for m in sdk if type(m).__name__ != "OpenTelemetryMiddleware"]
    return [*kept, fast] if server is None else [*kept, NamedParams(server), fast]


class NamedParams:
    """The `ServerMiddleware` that names the field of a request's params the SDK refused.

    The SDK checks a request's params against its models and answers a failure with `-32602
    "Invalid request parameters"` and empty `data`: an `initialize` whose `clientInfo` lacks its
    `version` was refused so, and the person whose client could not connect had no word of why; so
    was a `prompts/get` argument that is no string, a `resources/read` without `uri`. A refusal
    reaches this middleware as the `ValidationError` it raises (the SDK's documented contract); the
    request's params are then checked again by the same two models the SDK checks them with (its
    surface model of the method at the connection's version, then the handler's params model),
    and the first failure — its field's path and what is wrong with it — becomes the answer's message
    and `data`, under the same code. A request the SDK accepts passes through untouched; an error
    raised anywhere else (the params check out) goes on as it came."""

    def __init__(self, server: Server[Any]):
        self.server = server

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except ValidationError as refused:
            named = _refused_params(self.server, ctx.method, ctx.protocol_version, ctx.params)
            if named is None:
                raise
            field, reason = named
            said = f"Invalid request parameters: {field} {reason}"
            raise MCPError(INVALID_PARAMS, said, {"field": field, "reason": reason}) from refused


def _refused_params(
    server: Server[Any], method: str, version: str, params: Mapping[str, Any] | None
) -> tuple[str, str] | None:
    """The path of the first field the SDK refuses in `params`, and why; None when they pass both
    of the SDK's checks (the error came from elsewhere)."""
    try:
        if method in sdk_methods.SPEC_CLIENT_METHODS:
            sdk_methods.validate_client_request(method, version, params)
        entry = server.get_request_handler(method)
        if entry is not None:
            entry.params_type.model_validate({} if params is None else params, by_name=False)
    except ValidationError as refused:
        errors = [(tuple(e["loc"]), e["type"], e["msg"], e.get("input"), e.get("ctx") or {}) for e in refused.errors()]
        if errors and errors[0][0][:1] != ("params",):  # the handler's model: its paths start at its fields
            errors = [(("params", *loc), *rest) for loc, *rest in errors]
        return first_refusal(errors, {} if params is None else {"params": params})
    except (KeyError, ValueError):  # a method or version the SDK refuses otherwise: its own answer stands
        return None
    return None


#: One of pydantic's errors, as `first_refusal` reads it: where (from the message's top), its type,
#: its message, the value refused and the error's context.
Complaint = tuple[tuple[str | int, ...], str, str, Any, dict[str, Any]]

#: What a field must be, by the type of pydantic's error that says it is not.
_MUST_BE = {
    "string_type": "a string",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "list_type": "an array",
}
#: A union's members as pydantic names the plain ones, as JSON says them.
_FORMS = {"str": "a string", "int": "an integer", "float": "a number", "bool": "a boolean", "list": "an array"}


def first_refusal(errors: Sequence[Complaint], message: Any) -> tuple[str, str] | None:
    """The first refused field of `message` (a JSON-RPC message's `params`, keyed by "params") as
    its path — `params.clientInfo.version`, `params.items[0]` — and what is wrong with it, with how
    many other fields were refused. A value that fits none of a union's forms is said at the union,
    with what each form found (pydantic names a form where a field name goes: it is left out)."""
    if not errors:
        return None
    loc, kind, said, value, ctx = errors[0]
    path, at_union = _path(loc, kind, message)
    if at_union is None:
        reason, counted = _reason(kind, said, value, ctx), 1
    else:
        forms = [e for e in errors if e[0][:at_union] == loc[:at_union]]
        reason, counted = _union_reason(forms, at_union, message), len(forms)
    more = len(errors) - counted
    return path, reason + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def _path(loc: tuple[str | int, ...], kind: str, message: Any) -> tuple[str, int | None]:
    """`loc` as a JSON path into `message`, and the index of its first union form in `loc` (where
    the path stops), or None. A key `message` does not hold is a form's name, unless it is the
    missing field itself."""
    value, path = message, ""
    for i, item in enumerate(loc):
        if isinstance(item, int) and isinstance(value, list) and 0 <= item < len(value):
            path, value = f"{path}[{item}]", value[item]
        elif (
            isinstance(item, str)
            and isinstance(value, dict)
            and (item in value or (i == len(loc) - 1 and kind == "missing"))
        ):
            step = (
                f".{item}" if item.replace("_", "a").isalnum() and not item[:1].isdigit() else f"[{json.dumps(item)}]"
            )
            path, value = (path + step if path else item), value.get(item)
        else:
            return path, i
    return path, None


def _reason(kind: str, said: str, value: Any, ctx: dict[str, Any]) -> str:
    """What pydantic's error of `kind` says of a field, in JSON's words, naming the refused value's
    kind (never the value: it can be long, or a secret)."""
    if kind == "missing":
        return "is required"
    if kind == "literal_error" and "expected" in ctx:
        return f"must be {ctx['expected']}"
    if kind in _MUST_BE:
        return f"must be {_MUST_BE[kind]}, not {_kind_of(value)}"
    return f"is refused: {said}"


def _union_reason(forms: Sequence[Complaint], at: int, message: Any) -> str:
    """Why a value fits none of a union's forms: each form's first complaint, by the form's name."""
    names = list(dict.fromkeys(str(loc[at]) for loc, *_ in forms))
    if all(name in _FORMS for name in names):
        value = forms[0][3]
        return f"must be {' or '.join(_FORMS[name] for name in names)}, not {_kind_of(value)}"
    found = []
    for name in names[:4]:
        loc, kind, said, value, ctx = next(f for f in forms if str(f[0][at]) == name)
        inner, _ = _path(loc[:at] + loc[at + 1 :], kind, message)
        base, _ = _path(loc[:at], kind, message)
        found.append((name, inner[len(base) :].lstrip("."), _reason(kind, said, value, ctx)))
    if all(not where and reason == found[0][2] for _, where, reason in found):
        return found[0][2]  # the value itself is refused alike by every form (no object where one goes)
    return "fits none of its forms: " + "; ".join(
        f"as {name}, {where or 'it'} {reason}" for name, where, reason in found
    )


def _kind_of(value: Any) -> str:
    """A value's JSON kind, as a refusal names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "a number"
    if isinstance(value, float):
        return "a number" if value.is_integer() else "a number with a fractional part"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def _tracing_configured() -> bool:
    """True when an OpenTelemetry SDK tracer provider is installed (e.g. by `opentelemetry-instrument`)."""
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), (trace.ProxyTracerProvider, trace.NoOpTracerProvider))
