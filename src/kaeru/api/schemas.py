"""Every tool's input JSON Schema (Draft 2020-12): the one source of truth for the wire.

`search`, `claim` and `revise` are the published contract (`contract/published/`), shipped in
`schemas/` with a description on every parameter and the non-standard formats `uint`/`uint32`
written as `minimum`/`maximum`; they accept exactly what the contract accepts (decision 13.C1,
tests/contract/test_schema_equivalence.py). The other tools' schemas are generated from their
request models (`kaeru.service.requests`, decision 14.T1), with the contract's `$defs` for the
shapes they share, so a NodeRef or a Layer means the same everywhere. Output schemas: `outputs.py`.

Every input schema is served lean (`lean_input`, decision 18.L1): rewrites that keep every verdict
and only remove repetition — `"required": []`, an `allOf`/`anyOf` member that restates its parent's
properties, and `$schema` (MCP's default dialect is 2020-12, the one every schema here is written in).
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

CONTRACT_TOOLS = ("search", "claim", "revise")
#: Keywords whose value maps names to subschemas (their keys are names, not keywords).
_NAMED = ("properties", "patternProperties", "$defs", "dependentSchemas")
#: What a member restating its parent may say besides `required` (see `_restates`).
_RESTATABLE = frozenset({"type", "properties", "additionalProperties", "required"})
#: A parent with one of these is left as it is: what they accept depends on its other members.
_OPEN_ENDED = frozenset({"patternProperties", "unevaluatedProperties", "unevaluatedItems"})


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
    schema: dict[str, Any] = dict(body)
    if names:
        schema["$defs"] = {name: copy.deepcopy(pool[name]) for name in sorted(names)}
    return schema


def exact_input(operation: str) -> dict[str, Any]:
    """The input schema `operation` validates against, built: the contract's own, or the one
    generated from its model (both lean). What `inputs.json` pins (`scripts/gen_tools_doc.py`)."""
    if operation in CONTRACT_TOOLS:
        return lean_input(contract_schema(f"{operation}.input"))
    return lean_input(generated_input(operation))


@cache
def _pinned_inputs() -> dict[str, Any]:
    """Every tool's `exact_input`, as `scripts/gen_tools_doc.py` wrote it into the package
    (`inputs.json`; `tests/contract/test_tools_snapshot.py` holds it equal to `exact_input`)."""
    text = resources.files("kaeru.api").joinpath("inputs.json").read_text(encoding="utf-8")
    pinned: dict[str, Any] = json.loads(text)
    return pinned


def input_for(operation: str) -> dict[str, Any]:
    """The input schema `operation` serves and validates against (`exact_input`), read from the
    pinned copy: generating a schema from a pydantic model costs a one-shot CLI command more than
    the rest of its work (decision 222). A tool the pin does not know yet is generated."""
    pinned = _pinned_inputs().get(operation)
    return copy.deepcopy(pinned) if pinned is not None else exact_input(operation)


def served_input(operation: str) -> dict[str, Any]:
    """The input schema `tools/list` shows the model (decision 18.M1): the contract's three exactly as
    they validate (`input_for`); the other tools' as a hint (`hint_input`) that accepts at least what
    the exact one accepts. Every call is still validated by the exact schema (`api/requests.py`)."""
    if operation in CONTRACT_TOOLS:
        return input_for(operation)
    return hint_input(input_for(operation))


#: Bounds a model does not need to write a call: the exact schema still enforces them and its refusal
#: names the field and the reason (`uint32`'s 2**31-1 maximum goes too; other ranges stay).
_HINT_DROPPED = frozenset(
    {
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "uniqueItems",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
    }
)
_INT32_MAX = 2**31 - 1
#: A NodeRef as served to the model: its three forms as one type union, described (after the place's
#: own description, unless that already names the forms).
NODE_REF_FORMS = "Id, exact name, {id} or {initiative, name}."
NODE_REF_HINT: dict[str, Any] = {"type": ["string", "object"], "description": NODE_REF_FORMS}
#: Subschemas copied as they are: dropping a bound inside them could make the whole stricter.
_VERBATIM = ("not", "if")


def hint_input(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` as a hint for a model: every `NodeRef` one type union (`NODE_REF_HINT`; the place's
    own description, the forms said after the first), the bounds of `_HINT_DROPPED` left out, and `oneOf` read as `anyOf`.

    Only ever accepts more than `schema` (tests/api/test_served_input.py): a dropped bound only
    widens; a loosened `oneOf` branch could make a value match two branches, so `oneOf` becomes
    `anyOf`; `not` and `if` are copied untouched (loosening them could narrow what passes).
    `type`, `enum`, `const`, `required`, `additionalProperties`, `default`, ranges and every
    description stay."""
    hint: dict[str, Any] = _hint(schema, said=[])
    defs: dict[str, Any] = hint.pop("$defs", {})
    while True:  # a definition used once is written in its place (a `$ref` beside a description only)
        counts = _ref_counts({**hint, "$defs": defs})
        single = [
            name for name, sub in defs.items() if counts.get(name, 0) <= 1 and not _refs(sub) and isinstance(sub, dict)
        ]
        if not single:
            break
        for name in single:
            hint = _inline(hint, name, defs[name])
            defs = {other: _inline(sub, name, defs[name]) for other, sub in defs.items() if other != name}
    if defs:
        hint["$defs"] = defs
    return hint


def _ref_counts(node: Any) -> dict[str, int]:
    """How many times each `$defs` name is referred to in `node`."""
    counts: dict[str, int] = {}
    if isinstance(node, dict):
        items: list[Any] = []
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                name = value.removeprefix("#/$defs/")
                counts[name] = counts.get(name, 0) + 1
            else:
                items.append(value)
    elif isinstance(node, list):
        items = list(node)
    else:
        return counts
    for item in items:
        for name, n in _ref_counts(item).items():
            counts[name] = counts.get(name, 0) + n
    return counts


def _inline(node: Any, name: str, target: dict[str, Any]) -> Any:
    """`node` with every `{"$ref": name}` (beside a description at most) replaced by `target`, the
    place's description first: the same verdicts, as `$ref` beside `description` only refers."""
    if isinstance(node, list):
        return [_inline(item, name, target) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("$ref") == f"#/$defs/{name}" and set(node) <= {"$ref", "description"}:
        placed = copy.deepcopy(target)
        if "description" in node:
            placed = {"description": node["description"], **{k: v for k, v in placed.items() if k != "description"}}
        return placed
    return {
        key: (
            {k: _inline(v, name, target) for k, v in value.items()}
            if key in _NAMED and isinstance(value, dict)
            else _inline(value, name, target)
        )
        for key, value in node.items()
    }


def _hint(node: Any, said: list[bool]) -> Any:
    """`node` as a hint; `said` records that the NodeRef forms were spelled out (once per tool)."""
    if isinstance(node, list):
        return [_hint(item, said) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("$ref") == "#/$defs/NodeRef":
        collapsed = dict(NODE_REF_HINT)
        place = node.get("description")
        if isinstance(place, str) and place:
            named = "{initiative, name}" in place
            collapsed["description"] = place if named or said else f"{place} {NODE_REF_FORMS}"
        if "{initiative, name}" in collapsed["description"]:
            said.append(True)
        return collapsed
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _HINT_DROPPED or (key == "maximum" and value == _INT32_MAX):
            continue
        if key in _VERBATIM:
            out[key] = copy.deepcopy(value)
        elif key in _NAMED and isinstance(value, dict):
            out[key] = {name: _hint(sub, said) for name, sub in value.items()}
        elif key == "oneOf":
            out["anyOf"] = _hint(value, said)
        else:
            out[key] = _hint(value, said)
    return out


def lean_input(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without repetition, accepting exactly what it accepts (decision 18.L1).

    - `"required": []` says nothing;
    - a member of `allOf` that restates its parent (the same `type`, `properties` and
      `additionalProperties`, see `_restates`) adds only its `required`; one of `anyOf` written as
      `allOf: [restatement, {required}]` is just the `required` it adds (the contract's `search`
      repeated all its properties in both branches of "text or filters");
    - a lone `allOf: [{if, then}]` is the parent's own `if`/`then`;
    - `$schema` is left out: an MCP tool schema without one is 2020-12, the dialect of them all.
    """
    lean: dict[str, Any] = _lean(schema)
    lean.pop("$schema", None)
    return lean


def _lean(node: Any) -> Any:
    if isinstance(node, list):
        return [_lean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NAMED and isinstance(value, dict):
            out[key] = {name: _lean(sub) for name, sub in value.items()}
        elif not (key == "required" and value == []):
            out[key] = _lean(value)
    if isinstance(out.get("allOf"), list):
        members = [_added(member, out) for member in out["allOf"]]
        members = [member for member in members if member != {}]
        conditional = {"if", "then", "else"}
        if len(members) == 1 and set(members[0]) <= conditional and not (conditional | _OPEN_ENDED) & set(out):
            out.update(members.pop())
        if members:
            out["allOf"] = members
        else:
            del out["allOf"]
    if isinstance(out.get("anyOf"), list):
        branches = [_branch(branch, out) for branch in out["anyOf"]]
        if all(branch != {} for branch in branches):  # an empty branch would make the anyOf vacuous
            out["anyOf"] = branches
    return out


def _restates(member: Any, parent: dict[str, Any]) -> bool:
    """True when every keyword of `member` but `required` is one of `parent`'s, with the same value:
    then `parent` already checks all of it but the `required` (its `additionalProperties` is judged
    against the same `properties`, and neither has `patternProperties`)."""
    if not isinstance(member, dict) or not set(member) <= _RESTATABLE or _OPEN_ENDED & set(parent):
        return False
    if "additionalProperties" in member and member.get("properties") != parent.get("properties"):
        return False
    return all(parent.get(key) == value for key, value in member.items() if key != "required")


def _added(member: Any, parent: dict[str, Any]) -> Any:
    """An `allOf` member as what it adds to `parent`: only its new `required` when it restates it."""
    if not _restates(member, parent):
        return member
    extra = [name for name in member.get("required", []) if name not in parent.get("required", [])]
    return {"required": extra} if extra else {}


def _branch(branch: Any, parent: dict[str, Any]) -> Any:
    """An `anyOf` branch `{allOf: [restatement, {required}...]}` as the one `required` it adds."""
    if not (isinstance(branch, dict) and set(branch) == {"allOf"}):
        return branch
    members = [_added(member, parent) for member in branch["allOf"]]
    if not all(isinstance(m, dict) and set(m) <= {"required"} for m in members):
        return branch
    extra: list[str] = []
    for member in members:
        extra += [name for name in member.get("required", []) if name not in extra]
    return {"required": extra} if extra else {}


def output_for(operation: str, kind: str) -> dict[str, Any]:
    """The output schema of `operation` (see `outputs.py`)."""
    from kaeru.api.outputs import output_for as build

    return build(operation, kind)
