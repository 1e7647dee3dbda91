"""The published contract: every labelled example behaves as labelled when sent to the server.

Valid inputs are never rejected as `invalid_argument` (they may be `not_found`: they name nodes
that do not exist in a fresh vault); invalid inputs are rejected with `invalid_argument` naming
the offending field. Every response validates against the contract's output schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

#: The published contract, vendored unmodified in the repository (contract/README.md).
CONTRACT = Path(__file__).resolve().parents[2] / "contract" / "published"
EXAMPLES = sorted((CONTRACT / "examples").glob("*.json"))
#: Missing data must fail the run, never skip it: an empty parameter list would skip silently.
if len(EXAMPLES) != 64:
    raise RuntimeError(f"the vendored contract examples are missing: {len(EXAMPLES)} of 64 in {CONTRACT}")

#: For each invalid input, the field(s) the rejection must name (from the README's reasons).
EXPECTED_FIELDS: dict[str, tuple[str, ...]] = {
    "claim.input.invalid.1.json": ("evidence",),
    "claim.input.invalid.2.json": ("options.slot", "options.expected_slot_revision", "options"),
    "claim.input.invalid.3.json": ("initiative",),
    "claim.input.invalid.4.json": ("verdict",),
    "claim.input.invalid.5.json": ("initial_status",),
    "claim.input.invalid.6.json": ("evidence",),
    "claim.input.invalid.7.json": ("options.slot",),
    "claim.input.invalid.8.json": ("text",),
    "claim.input.invalid.9.json": ("about",),
    "revise.input.invalid.1.json": ("patch",),
    "revise.input.invalid.2.json": ("patch.reminder",),
    "revise.input.invalid.3.json": ("node",),
    "revise.input.invalid.4.json": ("patch.tier",),
    "revise.input.invalid.5.json": ("patch.reminder.window_days",),
    "revise.input.invalid.6.json": ("patch.applicability",),
    "revise.input.invalid.7.json": ("rename",),
    "revise.input.invalid.8.json": ("patch.constraint_state",),
    "search.input.invalid.1.json": ("text", "filters"),
    "search.input.invalid.2.json": ("limit",),
    "search.input.invalid.3.json": ("budget_chars",),
    "search.input.invalid.4.json": ("query",),
    "search.input.invalid.5.json": ("initiative",),
    "search.input.invalid.6.json": ("filters",),
    "search.input.invalid.7.json": ("limit",),
    "search.input.invalid.8.json": ("initiatives",),
    "search.input.invalid.9.json": ("filters.layers",),
}


def _examples(kind: str, direction: str) -> list[Path]:
    tools = ("search", "claim", "revise")
    return [p for p in EXAMPLES if p.name.split(".")[0] in tools and f".{direction}.{kind}." in p.name]


def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((CONTRACT / f"{name}.json").read_text()))


async def _call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    envelope = result.structured_content
    assert isinstance(envelope, dict), "every answer carries the envelope as structured content"
    assert result.is_error == (envelope["state"] == "rejected")
    errors = sorted(_validator(f"{tool}.output").iter_errors(envelope), key=str)
    assert not errors, f"{tool} response violates the contract: {errors[0].message}"
    return envelope


@pytest.mark.anyio
@pytest.mark.parametrize("path", _examples("valid", "input"), ids=lambda p: p.name)
async def test_valid_input_is_never_rejected_as_invalid(client: Client, path: Path) -> None:
    tool = path.name.split(".")[0]
    envelope = await _call(client, tool, json.loads(path.read_text()))
    codes = {issue["code"] for issue in envelope["issues"]}
    assert "invalid_argument" not in codes or envelope["state"] != "rejected", envelope["issues"]
    assert "internal" not in codes


@pytest.mark.anyio
@pytest.mark.parametrize("path", _examples("invalid", "input"), ids=lambda p: p.name)
async def test_invalid_input_is_rejected_naming_the_field(client: Client, path: Path) -> None:
    tool = path.name.split(".")[0]
    envelope = await _call(client, tool, json.loads(path.read_text()))
    assert envelope["state"] == "rejected"
    (issue,) = envelope["issues"]
    assert issue["code"] == "invalid_argument" and issue["retryable"] is False
    expected = EXPECTED_FIELDS[path.name]
    assert issue["field"] is not None and issue["field"].startswith(expected), (issue, expected)


@pytest.mark.parametrize("path", [p for p in EXAMPLES if ".output." in p.name], ids=lambda p: p.name)
def test_declared_output_schema_accepts_exactly_the_labelled_envelopes(path: Path) -> None:
    """The schema `tools/list` declares, and the full one answers are held to, alike."""
    from kaeru.api.outputs import lean_output_for
    from kaeru.api.schemas import output_for

    tool = path.name.split(".")[0]
    kind = "read" if tool == "search" else "mutation"
    for schema in (lean_output_for(tool, kind), output_for(tool, kind)):
        valid = not list(Draft202012Validator(schema).iter_errors(json.loads(path.read_text())))
        assert valid == (".valid." in path.name)


#: Arguments beyond the labelled examples that probe formats, bounds and types.
PROBES: list[dict[str, Any]] = [
    {"initiatives": ["p"], "text": "x", "limit": 0},
    {"initiatives": ["p"], "text": "x", "limit": 1.5},
    {"initiatives": ["p"], "text": "x", "limit": True},
    {"initiatives": [], "text": "x"},
    {"initiatives": ["p"], "filters": {}},
    {"initiatives": ["p"], "filters": {"created_after": "2026-02-30"}},
    {"initiatives": ["p"], "filters": {"created_after": "2026-11-30"}},
    {"initiatives": ["p"], "filters": {"created_after": "20261130"}},
    {"initiatives": ["p"], "text": None},
    {"initiative": "p", "node": "x", "patch": {"reminder": {"due": "2026-13-01"}}},
    {"initiative": "p", "text": "t", "evidence": [{"method": ""}]},
]


@pytest.mark.parametrize("tool", ["search", "claim", "revise", "note", "read", "recall", "link", "context"])
def test_fast_validator_accepts_exactly_what_jsonschema_accepts(tool: str) -> None:
    """The compiled fast path must never let through arguments the full validator refuses."""
    from kaeru.mcp.adapter import ToolSpec

    spec = ToolSpec(name=tool, title=tool, description="", kind="read", handler=lambda s, a: {})
    candidates = [json.loads(p.read_text()) for p in EXAMPLES if p.name.split(".")[1] == "input"] + PROBES
    for args in candidates:
        slow = Draft202012Validator(spec.input_schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        assert (spec.parser.problem(args) is None) == slow.is_valid(args), (tool, args)
