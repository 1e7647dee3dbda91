"""The one adapter between MCP tool calls and the service.

A tool call is: validate the arguments against the tool's declared input schema → one service
call in a worker thread → an envelope. Every failure — schema violation, `KaeruError`, or an
unexpected exception — becomes a `rejected` envelope that validates against the tool's output
schema, returned with `isError: true`. Nothing here raises to the SDK.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
import pydantic_core

from kaeru.domain.text import lone_surrogate, refusal_of_lone_surrogate
from kaeru.errors import Internal, InvalidArgument, KaeruError

if TYPE_CHECKING:
    # Imported where first used: `kaeru serve` answers `initialize` before the service layer, the
    # schemas or jsonschema are loaded (decision 16.O1).
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

    from kaeru.service import Service

log = logging.getLogger("kaeru.mcp")

Handler = Callable[["Service", dict[str, Any]], dict[str, Any]]


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
    _validator: Draft202012Validator | None = None
    _fast: Any = None

    # Nothing is built when a tool is registered: `kaeru serve` answers `initialize` before any
    # schema exists. The schemas are built on first use (`tools/list`, or a call) and each tool's
    # validators on its first call (decision 16.O1).
    @cached_property
    def input_schema(self) -> dict[str, Any]:
        from kaeru.api.schemas import input_for

        return input_for(self.name)

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        from kaeru.api.schemas import output_for

        return output_for(self.name, self.kind)

    def schema_error(self, arguments: dict[str, Any]) -> InvalidArgument | None:
        """The refusal of `arguments` by the input schema, or None when they are valid.

        The compiled (Rust) validator answers "valid?" in microseconds; only arguments it refuses
        go through `jsonschema`, whose error tree names the field. Either refusing sends a call down
        the slow path, so the two never disagree in what is accepted. Each is built on first use: the
        compiled one at the tool's first call, the other (and the `jsonschema` import) at its first
        refusal.
        """
        if self._fast is None:
            import jsonschema_rs

            self._fast = jsonschema_rs.validator_for(self.input_schema, validate_formats=True)
        if self._fast.is_valid(arguments):
            return None
        if self._validator is None:
            from jsonschema import Draft202012Validator

            self._validator = Draft202012Validator(
                self.input_schema, format_checker=Draft202012Validator.FORMAT_CHECKER
            )
        errors = list(self._validator.iter_errors(arguments))
        if not errors:
            return None
        from jsonschema.exceptions import best_match

        error = best_match(errors)
        return InvalidArgument(_message(error), field=_field(error))

    def as_tool(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=types.ToolAnnotations(
                title=self.title,
                read_only_hint=self.read_only,
                destructive_hint=self.destructive if not self.read_only else None,
                idempotent_hint=self.idempotent,
                open_world_hint=False,
            ),
        )


def _leaves(error: ValidationError) -> list[ValidationError]:
    """The concrete failures under an anyOf/allOf (a oneOf stays whole: it names one value's shapes)."""
    if error.validator in ("anyOf", "allOf") and error.context:
        out: list[ValidationError] = []
        for sub in error.context:
            out.extend(_leaves(sub))
        return out
    return [error]


def _pick(error: ValidationError) -> ValidationError:
    """The most useful failure to report: the deepest one, a wrong value before a missing branch key."""
    candidates = _leaves(error)
    return min(candidates, key=lambda e: (-len(e.absolute_path), e.validator == "required"))


def _field(error: ValidationError) -> str | None:
    leaf = _pick(error)
    parts = [str(p) for p in leaf.absolute_path]
    quoted = leaf.message.split("'")[1::2]
    if leaf.validator in ("required", "additionalProperties") and quoted:
        parts.append(quoted[0])
    return ".".join(parts) or None


def _message(error: ValidationError) -> str:
    leaf = _pick(error)
    where = ".".join(str(p) for p in leaf.absolute_path) or "arguments"
    if leaf.validator == "required" and error.validator == "anyOf":
        missing = sorted({q for e in _leaves(error) if e.validator == "required" for q in e.message.split("'")[1::2]})
        return f"{where}: needs at least one of {', '.join(missing)}"
    if leaf.validator == "oneOf":
        return f"{where}: {leaf.message[:300]} — it must match exactly one accepted shape (see the input schema)"
    return f"{where}: {leaf.message[:500]}"


def envelope_text(envelope: dict[str, Any]) -> str:
    """The envelope as compact JSON, for clients that read only text: by pydantic-core's serialiser
    (~15 µs for a page of hits; `json.dumps` took ~65)."""
    return pydantic_core.to_json(envelope).decode()


def result(envelope: dict[str, Any]) -> types.CallToolResult:
    """The tool result: the envelope as structured content and, for clients that read only text,
    as compact JSON. Built without pydantic validation: both parts are ours and already
    JSON-ready, and the SDK serialises the model as usual."""
    text = types.TextContent.model_construct(type="text", text=envelope_text(envelope))
    return types.CallToolResult.model_construct(
        content=[text],
        structured_content=envelope,
        is_error=envelope["state"] == "rejected",
    )


class ToolRegistry:
    """The tools a server exposes, and the dispatch of a call to one of them.

    Built either over a service, or with `load`: a function that opens the service and registers
    the tools, run on first need (listing, a call, `service`). `kaeru serve` passes `load`, so that
    `initialize` is answered before the service layer and the tools exist (decision 16.O1).
    """

    def __init__(self, service: Service | None = None, *, load: Callable[[ToolRegistry], Service] | None = None):
        if (service is None) == (load is None):
            raise ValueError("ToolRegistry needs a service or a loader, not both")
        self._service = service
        self._load = load
        self._specs: dict[str, ToolSpec] = {}
        #: Run tool calls one at a time, in the order they arrived, each in a worker thread (stdio:
        #: one client whose calls are applied in the order sent). Off the event loop either way, so
        #: a slow call — a long import, a model load — never stops the connection answering `ping`
        #: (decision 15.P1); HTTP serves concurrent clients and runs calls side by side.
        self.serial = False
        self._limiter: anyio.CapacityLimiter | None = None
        #: Tool calls asked and not yet answered by `envelope` (queued or running).
        self.running = 0
        #: Called once the loader has run: the server freezes what it built (decision 66).
        self.settle: Callable[[], None] | None = None

    def _loaded(self) -> None:
        if self._load is None:
            return
        self._service = self._load(self)
        for spec in self._specs.values():  # what `tools/list` answers, built with the rest
            spec.input_schema, spec.output_schema  # noqa: B018
        self._load = None
        if self.settle is not None:
            self.settle()

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
        assert self._service is not None
        return self._service

    def add(self, spec: ToolSpec) -> None:
        if spec.name in self._specs:
            raise ValueError(f"tool {spec.name} registered twice")
        self._specs[spec.name] = spec

    def list_tools(self) -> list[types.Tool]:
        return [spec.as_tool() for spec in self.specs.values()]

    def run(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Synchronous dispatch (worker thread): always returns an envelope."""
        spec = self.specs[name]
        args = arguments if isinstance(arguments, dict) else {}
        request_id = args.get("request_id") if isinstance(args.get("request_id"), str) else None
        # Lone surrogates first: the compiled validator cannot encode them (it raised
        # UnicodeEncodeError on an enum value holding one, which reached the SDK as a protocol error).
        if (refusal := refusal_of_lone_surrogate(args)) is not None:
            return _rejected(spec, refusal, _key(request_id))
        problem = spec.schema_error(args)
        if problem is not None:
            return _rejected(spec, problem, request_id)
        try:
            return spec.handler(self.service, args)
        except KaeruError as error:
            return _rejected(spec, error, request_id)
        except Exception as exc:  # the single catch-all: answer `internal`, never crash the session
            log.exception("tool %s failed", name)
            fault = Internal(f"unexpected server fault ({type(exc).__name__}); nothing was applied")
            return _rejected(spec, fault, request_id)

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

    async def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        if name not in self.specs:
            known = ", ".join(sorted(self.specs))
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"unknown tool {name!r}; tools: {known}")],
                is_error=True,
            )
        return result(await self.envelope(name, arguments))


def _rejected(spec: ToolSpec, error: KaeruError, request_id: str | None) -> dict[str, Any]:
    from kaeru.api import envelope as env

    return env.rejected_envelope(spec.name, spec.kind, error, request_id)


def _key(request_id: str | None) -> str | None:
    """`request_id` as it may be echoed: None when it holds a lone surrogate itself (not Unicode text)."""
    return None if request_id is None or lone_surrogate(request_id) else request_id


def mutation(operation: str) -> Handler:
    """A handler for a mutating service method named like the tool."""
    from kaeru.api import envelope as env

    def handle(service: Service, args: dict[str, Any]) -> dict[str, Any]:
        method = getattr(service, operation)
        outcome, replayed = method(args)
        return env.mutation_envelope(operation, outcome, replayed=replayed, request_id=args.get("request_id"))

    return handle


def reader(operation: str) -> Handler:
    """A handler for a read service method named like the tool."""
    from kaeru.api import envelope as env

    def handle(service: Service, args: dict[str, Any]) -> dict[str, Any]:
        return env.read_envelope(operation, getattr(service, operation)(args))

    return handle
