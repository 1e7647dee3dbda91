"""The one adapter between MCP tool calls and the service.

A tool call is: validate the arguments against the tool's declared input schema, once, and build its request
model (`api/requests.py`) → one service call in a worker thread → an envelope. Every failure — schema violation,
`KaeruError`, or an unexpected exception — becomes a `rejected` envelope that validates against the tool's output
schema, returned with `isError: true`. Nothing here raises to the SDK."""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import anyio
import pydantic_core

from kaeru.domain.surrogates import lone_surrogate, refusal_of_unstorable
from kaeru.errors import KaeruError, SemanticUnavailable, Unavailable
from kaeru.mcp.pinned import pinned_listing, result_meta, without_output

if TYPE_CHECKING:
    from datetime import tzinfo

    import mcp_types as types

    # Imported where first used: `kaeru serve` answers `initialize` before the service layer, the
    # schemas or jsonschema are loaded (decision 16.O1).
    from kaeru.api.requests import RequestParser
    from kaeru.service import Service
    from kaeru.service.requests import Request

log = logging.getLogger("kaeru.mcp")
#: How long a warm-up may go on replaying the last process's rankings (decision 270): it holds the
#: copies' lock while it reads one, and a call that needs that lock waits; and the end of a session
#: waits for the step it is in.
WARM_SECONDS = 2.0

#: A tool's body: the service and the tool's own request model (each handler takes its model's type).
Handler = Callable[["Service", Any], dict[str, Any]]


@dataclass
class ToolSpec:
    """A tool as listed and as called: schemas, annotations, description and the service call."""

    name: str
    title: str
    description: str
    kind: str  # env.READ_KIND or env.MUTATION_KIND
    handler: Handler
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False

    # Nothing is built when a tool is registered: `kaeru serve` answers `initialize` before any
    # schema exists. The schemas are built on first use (`tools/list`, or a call) and each tool's
    # validators on its first call (decision 16.O1).
    @cached_property
    def input_schema(self) -> dict[str, Any]:
        """The exact input schema: the one every call is validated by."""
        from kaeru.api.schemas import input_for

        return input_for(self.name)

    @cached_property
    def served_input_schema(self) -> dict[str, Any]:
        """What `tools/list` declares: the exact schema for the published tools, a hint accepting
        at least as much for the others (decision 18.M1)."""
        from kaeru.api.schemas import served_input

        return served_input(self.name)

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        """What `tools/list` declares: the contract's own for the published tools, a lean schema
        for the others (decision 18.C2)."""
        from kaeru.api.outputs import lean_output_for

        return lean_output_for(self.name, self.kind)

    @cached_property
    def parser(self) -> RequestParser:
        """This tool's validation: its input schema, then its request model (`api/requests.py`)."""
        from kaeru.api.requests import RequestParser

        return RequestParser(self.name, self.input_schema)

    @property
    def built(self) -> bool:
        """Whether anything of this tool has been built yet: a schema or its parser (a tool is
        built when first called or listed from the specs, not when another tool is; decision 16.S1)."""
        return not self.__dict__.keys().isdisjoint(_BUILT)

    def as_tool(self, *, structured: bool = True) -> types.Tool:
        import mcp_types as types  # the SDK's types: not needed by `kaeru call` (decision 200)

        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.served_input_schema,
            output_schema=self.output_schema if structured else None,
            annotations=types.ToolAnnotations(
                title=self.title,
                read_only_hint=self.read_only,
                destructive_hint=self.destructive if not self.read_only else None,
                idempotent_hint=self.idempotent,
                open_world_hint=False,
            ),
            _meta=result_meta(self.name),
        )


#: The cached properties of a `ToolSpec`: what `ToolSpec.built` looks for.
_BUILT = frozenset({"input_schema", "served_input_schema", "output_schema", "parser"})


def envelope_text(envelope: dict[str, Any]) -> str:
    """The envelope as compact JSON, for clients that read only text: by pydantic-core's serialiser,
    which is several times faster than `json.dumps` on a page of hits."""
    return pydantic_core.to_json(envelope).decode()


TEXT_MODES = ("compact", "json")


@dataclass(frozen=True)
class Output:
    """How results are shaped (decision 18.C1): the text's form (`KAERU_TEXT`: `compact`, what a model
    needs to act; or `json`, the envelope), whether the envelope also goes out as `structuredContent`
    with the `outputSchema`s listed (`KAERU_STRUCTURED`, on by default; off for clients that hand
    their model the JSON and drop the text), the zone of the text's days (`KAERU_TIMEZONE`)."""

    text: str = "compact"
    structured: bool = True
    zone: tzinfo | None = None

    def text_of(self, envelope: dict[str, Any]) -> str:
        from kaeru.mcp.render import compact

        return envelope_text(envelope) if self.text == "json" else compact(envelope, self.zone)


def result(envelope: dict[str, Any], output: Output | None = None) -> types.CallToolResult:
    """The tool result: the text block (compact text or JSON, `output.text`) and, unless
    `output.structured` is off, the envelope as structured content. Built without pydantic
    validation: both parts are ours and already JSON-ready, and the SDK serialises the model as usual."""
    import mcp_types as types

    output = output or Output()
    text = types.TextContent.model_construct(type="text", text=output.text_of(envelope))
    return types.CallToolResult.model_construct(
        content=[text],
        structured_content=envelope if output.structured else None,
        is_error=envelope["state"] == "rejected",
    )


def _no_service(registry: ToolRegistry) -> Service:
    """The loader of a `catalogue`: it has none to give."""
    raise RuntimeError("a tool catalogue has no service: open the vault to call a tool")


class ToolRegistry:
    """The tools a server exposes, and the dispatch of a call to one of them.

    Built either over a service, or with `load`: a function that opens the service and registers
    the tools, run on first need (a call, `service`), or in a thread of its own started by the first
    `tools/list`, which answers from the pinned listing meanwhile. `kaeru serve` passes `load`, so
    that `initialize` and the first `tools/list` are answered before the service layer and the tools
    exist (decisions 16.O1, 16.O3)."""

    def __init__(
        self,
        service: Service | None = None,
        *,
        load: Callable[[ToolRegistry], Service] | None = None,
        output: Output | None = None,
        served: Sequence[str] | None = None,
    ):
        if (service is None) == (load is None):
            raise ValueError("ToolRegistry needs a service or a loader, not both")
        self._service = service
        self.output = output or Output()
        #: The tools listed and callable by name (`KAERU_TOOLS`, decision 439; None: all of them).
        self.served = None if served is None else frozenset(served)
        self._load = load
        #: Built with a loader: `tools/list` answers the pinned listing, whether the tools exist yet or not.
        self._lazy = load is not None
        self._specs: dict[str, ToolSpec] = {}
        #: Run tool calls one at a time, in the order they arrived, each in a worker thread (stdio:
        #: one client whose calls are applied in the order sent). Off the event loop either way, so
        #: a slow call — a long import, a model load — never stops the connection answering `ping`
        #: (decision 15.P1); HTTP serves concurrent clients and runs calls side by side.
        self.serial = False
        self._limiter: anyio.CapacityLimiter | None = None
        #: Whether a call may start, asked in its worker thread just before it runs: the stdio
        #: transport says no once its client has stopped reading answers, so nothing is applied that
        #: nobody will hear of (a call already running finishes, and its `request_id` replays).
        self.admits: Callable[[], bool] = lambda: True
        #: Tool calls asked and not yet answered by `envelope` (queued or running).
        self.running = 0
        #: Tool calls answered by `envelope` (the heap is settled after the first, decision 16.S1).
        self.answered = 0
        #: Called once the loader has run, and after a call that imported modules: the server
        #: freezes what it built (decisions 66, 267).
        self.settle: Callable[[], None] | None = None
        #: How many modules were loaded when `settle` was last asked for.
        self._settle_asked = 0
        #: Whether the first answered call starts `warm` on a thread of its own (the stdio and HTTP
        #: servers set it; a registry in a test or a script does not).
        self.warms = False
        self._warm: threading.Thread | None = None
        self._warm_stop = threading.Event()
        # The loader runs once, in whichever thread needs the tools first: a call's worker thread,
        # the event loop, or the thread the first `tools/list` starts (decision 16.O3).
        self._load_lock = threading.Lock()
        self._preload: threading.Thread | None = None
        self._pinned: list[dict[str, Any]] | None = None
        #: Each pinned tool's declared input schema by name (`listed_input_schema`).
        self._pinned_inputs: dict[str, dict[str, Any]] | None = None

    @classmethod
    def catalogue(cls, output: Output | None = None) -> ToolRegistry:
        """A registry with no service behind it, for what a tool *is* — name, description, schemas —
        read without a vault (`kaeru tools`): listing and describing a tool opens, creates and
        migrates nothing, and works while the database is down. Calling a tool through it is a
        programming error (`service`)."""
        registry = cls(load=_no_service, output=output)
        registry._load = None  # its specs are what `register_tools` adds; nothing to load
        registry._lazy = False
        return registry

    def _loaded(self) -> None:
        with self._load_lock:
            if self._load is None:
                return
            self._service = self._load(self)
            # No tool's schemas are built here: `tools/list` is answered from the pinned listing, and each
            # tool builds its own schema and validator at its first call (decision 16.S1).
            if self.output.text == "compact":
                import kaeru.mcp.render  # noqa: F401  (loaded with the rest, not on the first call)
            self._load = None
        if self.settle is not None:
            self._settle_asked = len(sys.modules)
            self.settle()

    def preload(self) -> None:
        """Build the service and the tools in a thread of their own, if nothing has yet: started by
        the first `tools/list`, so the first call finds them built or half-way (decision 16.O3)."""
        with self._load_lock:
            if self._load is None or self._preload is not None:
                return
            self._preload = threading.Thread(target=self._preloading, name="kaeru-load", daemon=True)
        self._preload.start()

    def _preloading(self) -> None:
        try:
            self._loaded()
        except Exception:  # the first call runs the loader again and answers its failure
            log.exception("building the tools failed")
            return
        # With the semantic channel on, every write and `recall` embeds: the model is loaded here, after the
        # first `tools/list`, so that the first of those calls does not wait seconds for it (decision 235).
        embedder = self._service.rt.embedder if self._service is not None else None
        warm = getattr(embedder, "warm", None)
        if warm is not None:
            try:
                warm()
            except SemanticUnavailable as exc:  # a broken install, said in one line with its fix
                log.error("%s; recall stays lexical", exc.message)
            except Exception:  # the first embedding loads it again and says what failed
                log.exception("loading the semantic model failed")

    def wait_loaded(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for a preload under way, then for a warm-up under way to end
        (before the store is closed: its read holds a connection)."""
        if self._preload is not None:
            self._preload.join(timeout)
        if self._warm is not None:
            self._warm_stop.set()  # it ends after the step it is in (a copy or the sizes being read)
            self._warm.join()

    @property
    def warming(self) -> bool:
        """Whether the warm-up started after the first answered call is still running."""
        return self._warm is not None and self._warm.is_alive()

    def _warm_once(self) -> None:
        """After the first answered call, `Service.warm` on a thread of its own (decision 269): the agent
        reads that answer and thinks, and its first `recall` finds the read path imported and row sizes read.
        Not at `tools/list`, nor while the vault is upgraded (decision 474): the first call and the upgrade go first."""
        idle = self.warms and self._warm is None and self._load is None
        if not idle or self._service is None or self._service.store.upgrading:
            return
        self._warm = threading.Thread(target=self._warming, name="kaeru-warm", daemon=True)
        self._warm.start()

    def _warming(self) -> None:
        deadline = time.monotonic() + WARM_SECONDS

        def keep_going() -> bool:
            return not self._warm_stop.is_set() and time.monotonic() < deadline

        try:
            import kaeru.api.working  # noqa: F401  (the read tools' answers, imported at their first call)

            self.service.warm(keep_going)
        except Exception:  # the first read does the same work again and reports what fails
            log.exception("warming the read path failed")

    @property
    def loaded(self) -> bool:
        """True once the service and the tools exist (at once for a registry built over a service)."""
        return self._load is None

    @property
    def specs(self) -> dict[str, ToolSpec]:
        if self._load is not None:
            self._loaded()
        return self._specs

    @property
    def service(self) -> Service:
        if self._load is not None:
            self._loaded()
        if self._service is None:
            _no_service(self)
        assert self._service is not None
        return self._service

    def add(self, spec: ToolSpec) -> None:
        if spec.name in self._specs:
            raise ValueError(f"tool {spec.name} registered twice")
        self._specs[spec.name] = spec

    def has(self, name: str) -> bool:
        """Whether `name` is one of this registry's tools, without building them."""
        if not self._offers(name):
            return False
        if self._load is not None and (pinned := self._pinned_listing()) is not None:
            return any(entry["name"] == name for entry in pinned)
        return name in self.specs

    def list_tools(self) -> list[types.Tool]:
        """The tools as listed. A registry with a loader (`kaeru serve`) answers the pinned listing
        (`pinned.LISTING`), before and after the tools are built, and starts the building beside its first
        answer; one built over a service answers from the specs (`built_listing`) — the same answer
        (tests/contract/test_tools_snapshot.py, tests/wire; decisions 16.O3, 16.S1)."""
        import mcp_types as types

        if self._lazy and (pinned := self._pinned_listing()) is not None:
            self.preload()
            keep = [without_output(e) if not self.output.structured else e for e in pinned if self._offers(e["name"])]
            return [types.Tool.model_validate(e) for e in keep]
        return [tool for tool in self.built_listing() if self._offers(tool.name)]

    def listed_input_schema(self, name: str) -> dict[str, Any] | None:
        """The `inputSchema` `tools/list` declares for `name` (None: no such tool), without listing.

        The SDK checks a 2026-07-28 HTTP `tools/call`'s `Mcp-Param-*` headers against the called
        tool's declared schema; given no look-up it ran the whole `tools/list` handler for every
        call and serialised all the tools to find one (decision 161). Answered from
        where `list_tools` answers: the pinned listing in a lazy registry, the specs otherwise."""
        if not self._offers(name):
            return None
        if self._lazy and (pinned := self._pinned_listing()) is not None:
            if self._pinned_inputs is None:
                self._pinned_inputs = {entry["name"]: entry["inputSchema"] for entry in pinned}
            return self._pinned_inputs.get(name)
        spec = self.specs.get(name)
        return spec.served_input_schema if spec is not None else None

    def _offers(self, name: str) -> bool:
        return self.served is None or name in self.served  # all, unless `served` narrows them

    def built_listing(self) -> list[types.Tool]:
        """The tools as their specs build them (every tool's schemas): what the pinned listing is
        generated from and compared with (`scripts/gen_tools_doc.py`)."""
        return [spec.as_tool(structured=self.output.structured) for spec in self.specs.values()]

    def built_tools(self) -> set[str]:
        """The tools whose schemas or parser exist (without building anything)."""
        return {name for name, spec in self._specs.items() if spec.built}

    def _pinned_listing(self) -> list[dict[str, Any]] | None:
        if self._pinned is None:
            self._pinned = pinned_listing()  # None: not shipped, the tools are built instead
        return self._pinned

    def run(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Synchronous dispatch (worker thread): always returns an envelope."""
        spec = self.specs[name]
        args = arguments if isinstance(arguments, dict) else {}
        request_id = args.get("request_id") if isinstance(args.get("request_id"), str) else None
        if not self.admits():
            return _rejected(
                spec, Unavailable("the client stopped reading answers; nothing was applied"), _key(request_id)
            )
        # Lone surrogates first: the compiled validator cannot encode them (it raised
        # UnicodeEncodeError on an enum value holding one, which reached the SDK as a protocol error).
        # Then NUL, which PostgreSQL cannot hold: refused here so both backends answer alike.
        if (refusal := refusal_of_unstorable(args)) is not None:
            return _rejected(spec, refusal, _key(request_id))
        try:
            request = spec.parser.parse(args)
        except KaeruError as error:
            return _rejected(spec, error, request_id)
        try:
            return spec.handler(self.service, request)
        except Exception as exc:  # the single catch-all, never crashing the session: `internal` is logged once
            from kaeru.mcp.faults import answered

            return _rejected(spec, answered(exc, name, request_id, self._service), request_id)

    def rejected(self, name: str, error: KaeruError, request_id: str | None = None) -> dict[str, Any]:
        """The `rejected` envelope of tool `name` for `error` (a call refused before it ran)."""
        return _rejected(self.specs[name], error, request_id)

    async def envelope(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """`run` in a worker thread: one at a time in arrival order when `serial` (stdio), else side
        by side. The event loop stays free to read, answer pings and write other answers meanwhile.
        (A thread cannot be cancelled: a call cancelled while it runs finishes, unanswered.)"""
        limiter = None
        if self.serial:
            # FIFO: calls take the single slot in the order their tasks asked for it, which is the
            # order the transport read them.
            if self._limiter is None:
                self._limiter = anyio.CapacityLimiter(1)
            limiter = self._limiter
        self.running += 1
        try:
            return await anyio.to_thread.run_sync(self.run, name, arguments, limiter=limiter)
        finally:
            self.running -= 1
            self.answered += 1
            self._warm_once()
            self._settle_if_imported()

    def _settle_if_imported(self) -> None:
        """Ask for the heap to be settled again when the call just answered imported modules (a
        first recall, search or export loads its machinery then): once per growth, not per call."""
        if self.settle is None or len(sys.modules) == self._settle_asked:
            return
        self._settle_asked = len(sys.modules)
        self.settle()

    async def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        import mcp_types as types

        if not self.has(name):
            known = ", ".join(sorted(n for n in self.specs if self._offers(n)))
            said = (  # a tool of kaeru's this server does not offer, or no tool at all
                f"tool {name!r} is not served here (KAERU_TOOLS or --tools leaves it out); tools: {known}"
                if name in self.specs
                else f"unknown tool {name!r}; tools: {known}"
            )
            return types.CallToolResult(content=[types.TextContent(type="text", text=said)], is_error=True)
        return result(await self.envelope(name, arguments), self.output)


def _rejected(spec: ToolSpec, error: KaeruError, request_id: str | None) -> dict[str, Any]:
    from kaeru.api import envelope as env

    return env.rejected_envelope(spec.name, spec.kind, error, request_id)


def _key(request_id: str | None) -> str | None:
    """`request_id` as it may be echoed: None when it holds a lone surrogate itself (not Unicode text)."""
    return None if request_id is None or lone_surrogate(request_id) else request_id


def mutation(operation: str) -> Handler:
    """A handler for a mutating service method named like the tool."""
    from kaeru.api import envelope as env

    def handle(service: Service, request: Request) -> dict[str, Any]:
        method = getattr(service, operation)
        outcome, replayed = method(request)
        return env.mutation_envelope(
            operation, outcome, replayed=replayed, request_id=getattr(request, "request_id", None)
        )

    return handle


def reader(operation: str) -> Handler:
    """A handler for a read service method named like the tool."""
    from kaeru.api import envelope as env

    def handle(service: Service, request: Request) -> dict[str, Any]:
        return env.read_envelope(operation, getattr(service, operation)(request))

    return handle
