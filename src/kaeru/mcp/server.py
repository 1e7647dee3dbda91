"""`build_server`: the MCP server over one service, with every tool family registered."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.context import ServerMiddleware, ServerRequestContext
from mcp.server.lowlevel import Server

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
        return types.ListToolsResult(tools=registry.list_tools())

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        return await registry.call(params.name, params.arguments)

    # Prompts and resources (issue 19): built by the tools' own handlers, so they say what the tools say.
    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return prompts.list_prompts(registry)

    async def get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> types.GetPromptResult:
        return await prompts.get_prompt(registry, params.name, params.arguments)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return await resources.list_resources(registry)

    async def list_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return resources.list_templates()

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await resources.read_resource(registry, params.uri)

    async def complete(ctx: ServerRequestContext[Any], params: types.CompleteRequestParams) -> types.CompleteResult:
        def values() -> types.Completion:
            found = prompts.complete(registry, params.ref, params.argument)
            if found is None:
                found = resources.complete(registry, params.ref, params.argument)
            return found if found is not None else types.Completion(values=[])

        return types.CompleteResult(completion=await anyio.to_thread.run_sync(values))

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
    server.middleware = middleware(server.middleware, fast, tracing=_tracing_configured())
    return KaeruServer(server, registry, store)


def middleware(sdk: list[ServerMiddleware[Any]], fast: FastToolCalls, *, tracing: bool) -> list[ServerMiddleware[Any]]:
    """The server's middleware, outermost first: the SDK's own, then the `tools/call` fast path.

    The SDK wraps every request in an OpenTelemetry span by default; with no tracer provider
    installed the spans go nowhere yet cost time on every call (a real share of the stdio budget), so the
    span middleware is dropped unless `tracing` (decision 44). The fast path goes last — innermost —
    so when spans are kept they still wrap the calls it answers.
    """
    kept = sdk if tracing else [m for m in sdk if type(m).__name__ != "OpenTelemetryMiddleware"]
    return [*kept, fast]


def _tracing_configured() -> bool:
    """True when an OpenTelemetry SDK tracer provider is installed (e.g. by `opentelemetry-instrument`)."""
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), (trace.ProxyTracerProvider, trace.NoOpTracerProvider))
