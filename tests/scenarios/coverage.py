"""Coverage derived from the tools' input schemas: which enum values exist, and which were sent.

An enum slot is a place in a tool's arguments where the input schema allows a fixed set of values,
at any depth (`filters.layers[]`, `options.layer`, `patch.constraint_state`...). It is found by
walking `properties`, `items`, `$ref`, `oneOf`/`anyOf`/`allOf` (not the `if`/`then` conditions,
whose enums only restate a property's values). A value is covered when a recorded call's arguments
hold it at that slot.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from jsonschema import Draft202012Validator

from tests.scenarios.driver import Call

Path = tuple[str, ...]
Slot = tuple[str, str, str]  # (tool, dotted path, value)


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target: dict[str, Any] = root.get("$defs", {})[ref.split("/")[-1]]
        return target
    return node


def _walk(node: Any, root: dict[str, Any], path: Path, out: dict[Path, list[Any]], depth: int = 0) -> None:
    if not isinstance(node, dict) or depth > 32:
        return
    node = _resolve(node, root)
    if "enum" in node:
        values = out.setdefault(path, [])
        values.extend(v for v in node["enum"] if v not in values)
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in node.get(key, []):
            _walk(branch, root, path, out, depth + 1)
    for name, child in node.get("properties", {}).items():
        _walk(child, root, (*path, name), out, depth + 1)
    if isinstance(node.get("items"), dict):
        _walk(node["items"], root, (*path, "[]"), out, depth + 1)


def _forms(node: Any, root: dict[str, Any], path: Path, out: dict[Path, tuple[str, list[Any]]], depth: int = 0) -> None:
    if not isinstance(node, dict) or depth > 32:
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.split("/")[-1]
        node = root.get("$defs", {})[name]
        if "oneOf" in node:
            out[path] = (name, node["oneOf"])
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in node.get(key, []):
            _forms(branch, root, path, out, depth + 1)
    for name, child in node.get("properties", {}).items():
        _forms(child, root, (*path, name), out, depth + 1)
    if isinstance(node.get("items"), dict):
        _forms(node["items"], root, (*path, "[]"), out, depth + 1)


def form_label(branch: dict[str, Any]) -> str:
    """`string`, or the branch's required keys: `{id}`, `{initiative,name}`, `{method}`..."""
    if branch.get("type") == "string":
        return "string"
    return "{" + ",".join(sorted(branch.get("required", []))) + "}"


def form_sites(schema: dict[str, Any]) -> dict[Path, tuple[str, list[Any]]]:
    """Every place a `oneOf` definition (NodeRef, Evidence) is used: path → (definition, branches)."""
    out: dict[Path, tuple[str, list[Any]]] = {}
    _forms(schema, schema, (), out)
    return out


def required_forms(input_schemas: dict[str, dict[str, Any]]) -> set[Slot]:
    """Every (tool, definition, form) the scenarios must send: each tool sends each form of each
    reference-like definition it accepts (somewhere in its arguments)."""
    return {
        (tool, name, form_label(branch))
        for tool, schema in input_schemas.items()
        for name, branches in form_sites(schema).values()
        for branch in branches
    }


def forms_sent(input_schemas: dict[str, dict[str, Any]], calls: Iterable[Call]) -> dict[Slot, list[str]]:
    """(tool, definition, form) → the steps that sent a value in that form, in call order."""
    validators: dict[tuple[str, Path], list[tuple[str, Draft202012Validator]]] = {}
    for tool, schema in input_schemas.items():
        for path, (_name, branches) in form_sites(schema).items():
            defs = schema.get("$defs", {})
            validators[(tool, path)] = [(form_label(b), Draft202012Validator({"$defs": defs, **b})) for b in branches]
    sent: dict[Slot, list[str]] = {}
    for call in calls:
        for (tool, path), forms in validators.items():
            if tool != call.tool:
                continue
            name = form_sites(input_schemas[tool])[path][0]
            for value in values_at(call.args, path):
                for label, validator in forms:
                    if validator.is_valid(value):
                        steps = sent.setdefault((tool, name, label), [])
                        step = f"{call.scenario}/{call.step}"
                        if step not in steps:
                            steps.append(step)
    return sent


def enum_slots(schema: dict[str, Any]) -> dict[Path, list[Any]]:
    """Every enum slot of one input schema: path → allowed values."""
    out: dict[Path, list[Any]] = {}
    _walk(schema, schema, (), out)
    return out


def values_at(args: Any, path: Path) -> Iterator[Any]:
    """The values an argument object holds at `path` (`[]` steps into every list item)."""
    if not path:
        yield args
        return
    head, rest = path[0], path[1:]
    if head == "[]":
        if isinstance(args, list):
            for item in args:
                yield from values_at(item, rest)
    elif isinstance(args, dict) and head in args:
        yield from values_at(args[head], rest)


def dotted(path: Path) -> str:
    return ".".join(path).replace(".[]", "[]")


def required(input_schemas: dict[str, dict[str, Any]]) -> set[Slot]:
    """Every (tool, slot, value) the scenarios must send."""
    return {
        (tool, dotted(path), str(value))
        for tool, schema in input_schemas.items()
        for path, values in enum_slots(schema).items()
        for value in values
    }


def covering_steps(input_schemas: dict[str, dict[str, Any]], calls: Iterable[Call]) -> dict[Slot, list[str]]:
    """(tool, slot, value) → the steps whose arguments sent it (`scenario/step`), in call order."""
    slots = {tool: enum_slots(schema) for tool, schema in input_schemas.items()}
    covered: dict[Slot, list[str]] = {}
    for call in calls:
        for path, allowed in slots.get(call.tool, {}).items():
            for value in values_at(call.args, path):
                if value in allowed:
                    steps = covered.setdefault((call.tool, dotted(path), str(value)), [])
                    label = f"{call.scenario}/{call.step}"
                    if label not in steps:
                        steps.append(label)
    return covered


def uncovered(input_schemas: dict[str, dict[str, Any]], calls: Iterable[Call]) -> list[Slot]:
    covered = covering_steps(input_schemas, calls)
    return sorted(required(input_schemas) - set(covered))


def report(input_schemas: dict[str, dict[str, Any]], calls: list[Call], scenarios: list[tuple[str, str]]) -> str:
    """The markdown report: every tool × enum slot × value, with the steps that send it.

    `scenarios` is [(name, known defect or "")] in run order.
    """
    covered = covering_steps(input_schemas, calls)
    called = {call.tool for call in calls}
    lines = [
        "# Scenario coverage",
        "",
        "Generated by `scripts/gen_scenario_report.py` from the calls the scenario suite (`tests/scenarios/`)",
        "actually sends — do not edit by hand. For every tool: every value of every enum in its input schema",
        "(at any depth: `filters`, `options`, `patch`...) and the scenario steps (`scenario/step`) whose",
        "arguments carry it. `tests/scenarios/test_coverage.py` fails when a value has no step, and when this",
        "file is not what the generator writes.",
        "",
        f"Tools called: {len(called & set(input_schemas))} of {len(input_schemas)}. "
        f"Enum values covered: {len(set(covered) & required(input_schemas))} of {len(required(input_schemas))}.",
        "",
        "## Scenarios",
        "",
        "| scenario | known defect (strict xfail until fixed) |",
        "|---|---|",
    ]
    lines += [f"| `{name}` | {defect} |" for name, defect in scenarios]
    lines.append("")
    forms = forms_sent(input_schemas, calls)
    lines += [
        "## Reference forms",
        "",
        "Every tool sends every form of each `oneOf` definition it accepts (a node by name string, `{id}` or",
        "`{initiative,name}`; evidence by `{node}` or `{method}`), somewhere in its arguments.",
        "",
        "| tool | definition | form | steps |",
        "|---|---|---|---|",
    ]
    for tool, name, label in sorted(required_forms(input_schemas)):
        steps = forms.get((tool, name, label), [])
        shown = ", ".join(f"`{s}`" for s in steps[:3]) + (f" (+{len(steps) - 3} more)" if len(steps) > 3 else "")
        lines.append(f"| `{tool}` | {name} | `{label}` | {shown or '**NOT COVERED**'} |")
    lines.append("")
    for tool in sorted(input_schemas):
        steps_of_tool = sorted({f"{c.scenario}/{c.step}" for c in calls if c.tool == tool})
        lines.append(f"## `{tool}`")
        lines.append("")
        lines.append(f"Called by {len(steps_of_tool)} steps.")
        lines.append("")
        slots = enum_slots(input_schemas[tool])
        if not slots:
            lines.append("No enum in its input schema.")
            lines.append("")
            continue
        lines.append("| argument | value | steps |")
        lines.append("|---|---|---|")
        for path, values in sorted(slots.items(), key=lambda item: dotted(item[0])):
            for value in values:
                steps = covered.get((tool, dotted(path), str(value)), [])
                shown = ", ".join(f"`{s}`" for s in steps[:4]) + (
                    f" (+{len(steps) - 4} more)" if len(steps) > 4 else ""
                )
                lines.append(f"| `{dotted(path)}` | `{value}` | {shown or '**NOT COVERED**'} |")
        lines.append("")
    return "\n".join(lines)
