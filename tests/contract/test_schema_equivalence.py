"""The served schemas of `search`, `claim` and `revise` accept exactly what the published contract accepts.

We serve the contract with a description on every parameter and with the non-standard formats
`uint`/`uint32` written as bounds (decision 13.C1). Two proofs that nothing else changed:

- structurally: with descriptions and titles dropped and those formats normalised, the served
  schemas equal the vendored originals key for key (the inputs once made lean by `lean_input`,
  whose rewrites only remove repetition: decision 18.L1), but for the output schemas' two portable
  spellings (`outputs.portable`): no `$schema` (MCP's default dialect is the contract's 2020-12) and
  `{}` where the contract says `true`, both naming the same schema;
- behaviourally: documents generated from the contract (valid ones, and valid ones mutated at a
  random place) and arbitrary JSON get the same verdict from the contract's validator and from
  every validator that judges the served schema — `jsonschema` with format assertion and the
  compiled `jsonschema-rs` the server uses, for inputs and output envelopes alike; and a draft-07
  validator, which is how a client's plain AJV reads a schema that names no dialect.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft7Validator, Draft202012Validator

from kaeru.api.outputs import lean_output_for
from kaeru.api.schemas import CONTRACT_TOOLS, input_for, lean_input, output_for
from tests.jsonschema_memo import install

install()  # each property's strategy built once: the same examples, sooner

CONTRACT = Path(__file__).resolve().parents[2] / "contract" / "published"
SCHEMAS = [f"{tool}.{direction}" for tool in CONTRACT_TOOLS for direction in ("input", "output")]
INPUTS = [name for name in SCHEMAS if name.endswith(".input")]
OUTPUTS = [name for name in SCHEMAS if name.endswith(".output")]
UINT32_MAX = 4294967295
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
#: Where the contract's output schemas say `true` (any value): `tools/list` says `{}`, which accepts
#: the same, where portability checkers (the MCP Inspector's `--strict`) want a schema object.
_ANY_VALUE = [("$defs", "Change", "properties", p) for p in ("after", "before")]
_ANY_VALUE += [("$defs", "Continuation", "properties", "next_arguments")]
TRUE_SUBSCHEMAS = {
    "search.output": [*_ANY_VALUE, ("$defs", "NodeData", "properties", "properties")],
    "claim.output": _ANY_VALUE,
    "revise.output": _ANY_VALUE,
}
MISSING = "(missing)"

#: Keywords whose value maps names to subschemas (their keys are names, not keywords).
_NAMED = ("properties", "patternProperties", "$defs", "dependentSchemas")
#: Annotations that never change a verdict (a property may be *named* like one: see `_NAMED`).
_ANNOTATIONS = ("description", "title")


def published(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONTRACT / f"{name}.json").read_text())
    return loaded


def served(name: str) -> dict[str, Any]:
    """What `tools/list` declares (and, for inputs, what every call is validated by)."""
    tool, direction = name.split(".")
    if direction == "input":
        return input_for(tool)
    return lean_output_for(tool, "read" if tool == "search" else "mutation")


def full_output(name: str) -> dict[str, Any]:
    """The output schema programs and the tests hold answers to (`output_for`)."""
    tool = name.split(".")[0]
    return output_for(tool, "read" if tool == "search" else "mutation")


def normalised(schema: Any) -> Any:
    """Drop descriptions and titles; `format: uint` is `minimum: 0`, `uint32` also `maximum: 2**32-1`."""
    if isinstance(schema, list):
        return [normalised(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key in _NAMED and isinstance(value, dict):
            out[key] = {name: normalised(sub) for name, sub in value.items()}
        else:
            out[key] = normalised(value)
    fmt = out.get("format")
    if fmt in ("uint", "uint32"):
        del out["format"]
        out["minimum"] = max(out.get("minimum", 0), 0)
        if fmt == "uint32":
            out["maximum"] = min(out.get("maximum", UINT32_MAX), UINT32_MAX)
    return out


def differences(a: Any, b: Any, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], Any, Any]]:
    """Every place where `a` and `b` differ: (path, a's value, b's value); `True` differs from `1`."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b)):
            found += differences(a.get(key, MISSING), b.get(key, MISSING), (*path, key))
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for index, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, (*path, index))]
    return [] if type(a) is type(b) and a == b else [(path, a, b)]


@pytest.mark.parametrize("name", SCHEMAS)
def test_served_schema_is_the_contract_up_to_descriptions_and_formats(name: str) -> None:
    """Inputs: equal. Outputs: equal but for the two portable spellings, each naming the same schema."""
    contract = published(name)
    if name.endswith(".input"):
        contract = lean_input(contract)
    expected = []
    if name.endswith(".output"):
        expected = [(("$schema",), DRAFT_2020_12, MISSING)] + [(path, True, {}) for path in TRUE_SUBSCHEMAS[name]]
    assert sorted(differences(normalised(contract), normalised(served(name))), key=repr) == sorted(expected, key=repr)


@pytest.mark.parametrize("name", OUTPUTS)
def test_the_full_output_schema_is_the_contract_up_to_descriptions_and_formats(name: str) -> None:
    """`output_for`, what answers are held to, keeps the contract's own spelling."""
    assert normalised(full_output(name)) == normalised(published(name))


def test_the_lean_search_schema_says_text_or_filters_once() -> None:
    """The contract's search repeats all its properties in both branches of "text or filters"."""
    lean = input_for("search")
    assert lean["anyOf"] == [{"required": ["text"]}, {"required": ["filters"]}]
    assert "$schema" not in lean and '"required": []' not in json.dumps(lean)
    assert json.dumps(lean).count('"budget_chars"') == 1


@pytest.mark.parametrize("name", SCHEMAS)
def test_served_schema_declares_no_unknown_format(name: str) -> None:
    """Standard validators (and the MCP Inspector) warn on every call about a format they do not know."""
    text = json.dumps(served(name))
    assert '"format": "uint' not in text


def test_normalising_keeps_a_property_named_like_an_annotation() -> None:
    """`Patch.description` and `Artifact.format` are properties: normalising must not drop them."""
    patch = normalised(served("revise.input"))["$defs"]["Patch"]["properties"]
    assert "description" in patch and patch["description"] == {"type": "string"}
    artifact = normalised(served("claim.output"))["$defs"]["Artifact"]["properties"]
    assert artifact["format"] == {"$ref": "#/$defs/ArchiveFormat"}


# --- behaviour: the same verdict on generated documents -------------------------------------------

#: Values that probe the bounds a `uint`/`uint32` format or a minimum/maximum could move.
_EDGES = st.sampled_from([-(2**63), -1, 0, 1, 50, 51, 511, 512, 64000, 64001, UINT32_MAX, UINT32_MAX + 1, 2**64])
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    _EDGES,
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", " ", "x", "2026-02-30", "2026-11-30", "20261130", "open", "warm", "handoff", "Bad Slot"]),
    st.text(max_size=8),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=6) | st.sampled_from(["id", "node"]), inner, max_size=3),
    ),
    max_leaves=8,
)


def _paths(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(document, dict):
        for key, value in document.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found += _paths(value, (*prefix, index))
    return found


_BOUND_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength")
_BOUND_KEYWORDS += ("minItems", "maxItems", "minProperties", "maxProperties")


def _bounds(schema: Any) -> set[int]:
    """Every number a bound keyword of `schema` names, and its neighbours: where verdicts flip."""
    found: set[int] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in _BOUND_KEYWORDS and isinstance(value, int):
                found |= {value - 1, value, value + 1}
            found |= _bounds(value)
    elif isinstance(schema, list):
        for item in schema:
            found |= _bounds(item)
    return found


def _near_bounds(schema: dict[str, Any]) -> tuple[list[int], list[int]]:
    """Numbers at the schema's bounds (and the uint32 edge), and the lengths among them."""
    numbers = sorted(_bounds(normalised(schema)) | {-1, 0, UINT32_MAX, UINT32_MAX + 1})
    return numbers, [n for n in numbers if 0 <= n <= 70000]


def _at_bound(value: Any, near: tuple[list[int], list[int]]) -> list[Any]:
    """Values like `value` (same JSON type) at every bound: an integer, a string or an array of that length."""
    numbers, lengths = near
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return list(numbers)
    if isinstance(value, str):
        return ["a" * n for n in lengths]
    if isinstance(value, list):
        return [[f"i{i}" for i in range(n)] for n in lengths if n <= 300]
    return []


def _place(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    copied = json.loads(json.dumps(document))
    if not path:
        return value
    parent = copied
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return copied


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        document = document[step]
    return document


@st.composite
def _mutated(draw: st.DrawFn, base: st.SearchStrategy[Any], near: tuple[list[int], list[int]]) -> Any:
    """A valid document changed at one place: a value moved to a bound, replaced, dropped, or a key added."""
    document = json.loads(json.dumps(draw(base)))
    action = draw(st.sampled_from(["bound", "bound", "replace", "drop", "add"]))
    if action == "bound":
        choices = [(path, v) for path in _paths(document) for v in _at_bound(_at(document, path), near)]
        if choices:
            path, value = draw(st.sampled_from(choices))
            return _place(document, path, value)
    path = draw(st.sampled_from(_paths(document)))
    if not path:
        return draw(_JSON)
    parent = _at(document, path[:-1])
    if action == "drop":
        del parent[path[-1]]
    elif action == "add" and isinstance(parent, dict):
        parent[draw(st.text(min_size=1, max_size=12))] = draw(_JSON)
    else:
        parent[path[-1]] = draw(_JSON)
    return document


class Judges:
    """Every validator that judges a served schema, against the contract's own."""

    def __init__(self, contract: dict[str, Any], ours: dict[str, Any]) -> None:
        checker = Draft202012Validator.FORMAT_CHECKER
        self.contract = Draft202012Validator(contract, format_checker=checker)
        self.contract_plain = Draft202012Validator(contract)
        self.served = Draft202012Validator(ours, format_checker=checker)
        self.served_plain = Draft202012Validator(ours)
        self.served_fast = jsonschema_rs.validator_for(ours, validate_formats=True)
        # A schema naming no dialect, read as draft-07 (a plain `new Ajv()` does): no keyword here
        # means something else there, and no `$ref` has a sibling but a description.
        self.served_draft7 = Draft7Validator(ours) if "$schema" not in ours else None

    def check(self, document: Any) -> bool:
        verdict = self.contract.is_valid(document)
        assert self.served.is_valid(document) == verdict, document
        assert self.served_fast.is_valid(document) == verdict, document
        # Without format assertion (how most clients validate outputs) the two agree as well.
        assert self.served_plain.is_valid(document) == self.contract_plain.is_valid(document), document
        if self.served_draft7 is not None:
            assert self.served_draft7.is_valid(document) == self.contract_plain.is_valid(document), document
        return verdict


def _def(schema: dict[str, Any], name: str) -> dict[str, Any]:
    dialect = {"$schema": schema["$schema"]} if "$schema" in schema else {}
    return {**dialect, "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}


_JUDGES = {name: Judges(published(name), served(name)) for name in SCHEMAS}
#: Every `$def` of the envelopes (search's is a superset of claim's and revise's, which are equal to
#: it where shared: the structural test above checks that). `MutationData` is too slow to generate
#: whole; its parts are generated here, and whole envelopes are mutated below.
OUTPUT_DEFS = sorted(set(published("search.output")["$defs"]) - {"MutationData"})
_SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)


@pytest.mark.parametrize("name", INPUTS)
def test_valid_arguments_of_the_contract_are_valid_when_served(name: str) -> None:
    judges = _JUDGES[name]

    @_SETTINGS
    @given(from_schema(published(name)))
    def check(document: Any) -> None:
        assert judges.check(document)

    check()


@pytest.mark.parametrize("name", INPUTS)
def test_mutated_arguments_get_the_same_verdict(name: str) -> None:
    judges = _JUDGES[name]
    verdicts: set[bool] = set()

    @_SETTINGS
    @given(_mutated(from_schema(published(name)), _near_bounds(published(name))))
    def check(document: Any) -> None:
        verdicts.add(judges.check(document))

    check()
    assert verdicts == {True, False}, "the mutations should reach both verdicts"


@pytest.mark.parametrize("name", SCHEMAS)
def test_arbitrary_json_gets_the_same_verdict(name: str) -> None:
    judges = _JUDGES[name]

    @_SETTINGS
    @given(st.dictionaries(st.sampled_from(sorted(published(name)["properties"])), _JSON, max_size=6))
    def check(document: Any) -> None:
        judges.check(document)

    check()


@pytest.mark.parametrize("definition", OUTPUT_DEFS)
def test_every_part_of_the_envelope_gets_the_same_verdict(definition: str) -> None:
    """Generated from the contract: the valid part as is, and the part mutated at one place."""
    contract = _def(published("search.output"), definition)
    judges = Judges(contract, _def(served("search.output"), definition))
    generated = from_schema(contract)

    @settings(_SETTINGS, max_examples=40)
    @given(generated, _mutated(generated, _near_bounds(contract)))
    def check(valid: Any, mutated: Any) -> None:
        assert judges.check(valid)
        judges.check(mutated)

    check()


@pytest.mark.parametrize("name", OUTPUTS)
def test_mutated_envelopes_get_the_same_verdict(name: str) -> None:
    """Whole envelopes: every labelled valid envelope of every tool, mutated at one to three places."""
    judges = _JUDGES[name]
    bases = [json.loads(p.read_text()) for p in sorted((CONTRACT / "examples").glob("*.output.valid.*.json"))]
    verdicts: set[bool] = set()

    def mutated_times(times: int) -> st.SearchStrategy[Any]:
        strategy: st.SearchStrategy[Any] = st.sampled_from(bases)
        for _ in range(times):
            strategy = _mutated(strategy, _near_bounds(published(name)))
        return strategy

    mutated = st.one_of(mutated_times(1), mutated_times(2), mutated_times(3))

    @settings(_SETTINGS, max_examples=300)
    @given(mutated)
    def check(document: Any) -> None:
        verdicts.add(judges.check(document))

    check()
    assert verdicts == {True, False}, "the mutations should reach both verdicts"


@pytest.mark.parametrize("name", SCHEMAS)
def test_the_labelled_examples_get_the_same_verdict(name: str) -> None:
    examples = sorted((CONTRACT / "examples").glob(f"{name}.*.json"))
    assert examples
    for path in examples:
        assert _JUDGES[name].check(json.loads(path.read_text())) == (".valid." in path.name), path.name


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_bound_at_every_place_of_the_labelled_documents_gets_the_same_verdict(name: str) -> None:
    """Exhaustive where the formats and bounds live: each integer, string and array of each valid
    labelled document (of any tool, the envelopes of all three), set to each bound of the schema."""
    direction = name.split(".")[1]
    near = _near_bounds(published(name))
    verdicts: set[bool] = set()
    for path in sorted((CONTRACT / "examples").glob(f"*.{direction}.valid.*.json")):
        if path.name.startswith("remem-"):
            continue
        document = json.loads(path.read_text())
        for place in _paths(document):
            for value in _at_bound(_at(document, place), near):
                verdicts.add(_JUDGES[name].check(_place(document, place, value)))
    assert verdicts == {True, False}
