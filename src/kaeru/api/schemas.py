"""Every tool's input JSON Schema (Draft 2020-12): the one source of truth for the wire.

`search`, `claim` and `revise` are the published contract (`contract/published/`), shipped in
`schemas/` with a description on every parameter and the non-standard formats `uint`/`uint32`
written as `minimum`/`maximum`; they accept exactly what the contract accepts (decision 13.C1,
tests/contract/test_schema_equivalence.py). The other tools' schemas are generated from their
request models (`kaeru.service.requests`, decision 14.T1), with the contract's `$defs` for the
shapes they share, so a NodeRef or a Layer means the same everywhere. Output schemas: `outputs.py`.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

CONTRACT_TOOLS = ("search", "claim", "revise")
_SCHEMA = "https://json-schema.org/draft/2020-12/schema"


@cache
def contract_schema(name: str) -> dict[str, Any]:
    """A served contract schema, e.g. `search.input` or `claim.output` (the contract, described)."""
    text = resources.files("kaeru.api").joinpath("schemas", f"{name}.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _shared_defs() -> dict[str, Any]:
    """Every `$defs` entry of the contract's inputs (one name means one shape in all three)."""
    pool: dict[str, Any] = {}
    for tool in ("search", "revise", "claim"):
        pool.update(contract_schema(f"{tool}.input")["$defs"])
    return pool


def _refs(node: Any) -> set[str]:
    """The `$defs` names `node` refers to (`$ref` or a model's `x-def` placeholder)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                found.add(value.removeprefix("#/$defs/"))
            elif key == "x-def":
                found.add(value)
            else:
                found |= _refs(value)
    elif isinstance(node, list):
        for item in node:
            found |= _refs(item)
    return found


def _resolve(node: Any) -> Any:
    """`x-def` placeholders become `$ref`s into the schema's `$defs`."""
    if isinstance(node, dict):
        return {
            ("$ref" if key == "x-def" else key): (f"#/$defs/{value}" if key == "x-def" else _resolve(value))
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_resolve(item) for item in node]
    return node


def generated_input(operation: str) -> dict[str, Any]:
    """The input schema of a non-contract tool, generated from its request model."""
    from kaeru.service.requests import REQUESTS, wire_schema

    body = _resolve(wire_schema(REQUESTS[operation]))
    pool = _shared_defs()
    names: set[str] = set()
    todo = _refs(body)
    while todo:  # the closure: CaptureOptions refers to Slot and Layer
        name = todo.pop()
        if name not in names:
            names.add(name)
            todo |= _refs(pool[name])
    schema: dict[str, Any] = {"$schema": _SCHEMA, **body}
    if names:
        schema["$defs"] = {name: copy.deepcopy(pool[name]) for name in sorted(names)}
    return schema


def input_for(operation: str) -> dict[str, Any]:
    """The input schema `operation` serves: the contract's own, or the one generated from its model."""
    if operation in CONTRACT_TOOLS:
        return contract_schema(f"{operation}.input")
    return generated_input(operation)


def output_for(operation: str, kind: str) -> dict[str, Any]:
    """The output schema of `operation` (see `outputs.py`)."""
    from kaeru.api.outputs import output_for as build

    return build(operation, kind)
