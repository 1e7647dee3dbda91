"""The scenario driver: calls tools through an MCP client, checks every answer, records every call.

A scenario is a small async function over a `Driver`. The driver sends each call through a real SDK
client (in process, or to a `kaeru serve` subprocess over stdio or HTTP), validates the envelope
against the output schema the server declared in `tools/list`, and records the call — the arguments
actually sent are what the coverage test counts. After every step that may change the vault it
runs the runner's `after_step` hook (the in-process runner's amg round-trip check).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

READ_ONLY = frozenset({"search", "read", "trail", "current_state", "recall", "initiatives", "timeline", "reflect"})


@dataclass(frozen=True)
class Call:
    """One tool call a scenario sent, and what came back."""

    scenario: str
    step: str
    tool: str
    args: dict[str, Any]
    envelope: dict[str, Any]


@dataclass
class Recorder:
    """Every call of a run, in order."""

    calls: list[Call] = field(default_factory=list)


class StepFailed(AssertionError):
    """A step's answer broke its promise; names the scenario, step, tool and arguments."""


class Driver:
    """Sends a scenario's calls, validates and records them."""

    def __init__(
        self,
        client: Any,
        output_schemas: dict[str, dict[str, Any]],
        recorder: Recorder,
        scenario: str,
        after_step: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.client = client
        self.validators = {name: Draft202012Validator(schema) for name, schema in output_schemas.items()}
        self.recorder = recorder
        self.scenario = scenario
        self.after_step = after_step

    async def call(self, step: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Call `tool`; the envelope must validate against its declared output schema."""
        result = await self.client.call_tool(tool, args)
        envelope = result.structured_content
        self.recorder.calls.append(
            Call(self.scenario, step, tool, args, envelope if isinstance(envelope, dict) else {})
        )
        if not isinstance(envelope, dict):
            raise StepFailed(f"[{self.scenario}/{step}] {tool} answered without structured content: {result!r}")
        problems = list(self.validators[tool].iter_errors(envelope))
        if problems:
            raise StepFailed(
                f"[{self.scenario}/{step}] {tool} {args} answered outside its output schema: {problems[0].message}"
            )
        if self.after_step is not None and tool not in READ_ONLY:
            await self.after_step(f"{self.scenario}/{step}")
        return envelope

    async def ok(self, step: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """A call that must not be rejected."""
        envelope = await self.call(step, tool, args)
        if envelope["state"] == "rejected":
            raise StepFailed(f"[{self.scenario}/{step}] {tool} {args} was rejected: {envelope['issues']}")
        return envelope

    async def rejected(self, step: str, tool: str, args: dict[str, Any], code: str) -> dict[str, Any]:
        """A call that must be rejected with `code` (the first issue's code)."""
        envelope = await self.call(step, tool, args)
        codes = [issue["code"] for issue in envelope.get("issues", [])]
        if envelope["state"] != "rejected" or code not in codes:
            raise StepFailed(f"[{self.scenario}/{step}] {tool} {args}: expected rejection {code}, got {envelope}")
        return envelope

    def check(self, step: str, condition: bool, message: str) -> None:
        """A promise about the vault's state, checked after a step."""
        if not condition:
            raise StepFailed(f"[{self.scenario}/{step}] {message}")
