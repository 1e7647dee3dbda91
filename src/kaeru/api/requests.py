"""The one validation of a tool's arguments: the input schema once, then the request model.

The MCP adapter and the CLI both come through here, so a call is accepted or refused the same way
whichever door it came in by. The compiled (Rust) validator answers "valid?"; only arguments it
refuses go through `jsonschema`, whose error tree names the field (the words of the refusal are
`request_messages`'). Accepted arguments become the
tool's model with `model_construct`: the schema has already checked them, and validating them again
in pydantic would double the cost (bench/validation.py, decision 14.T2). Not coercing has one gap the
schema leaves open: JSON Schema counts `2.0` an integer, so a whole number sent as a float is made an
`int` wherever the schema says `integer` (`_Integers`), or it reached slicing as a float.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from kaeru.errors import InvalidArgument

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

    from kaeru.api.request_names import Meanings
    from kaeru.service.requests import Request


class RequestParser:
    """Arguments → the tool's request model, or the `invalid_argument` naming the field.

    Each validator is built on first use: the compiled one at the first call, the explaining one
    (and the `jsonschema` import) at the first refusal (decision 16.O1)."""

    def __init__(self, operation: str, schema: dict[str, Any]):
        from kaeru.service.requests import REQUESTS

        self.operation = operation
        self.schema = schema
        self.model = REQUESTS[operation]
        self._fast: Any = None
        self._explainer: Draft202012Validator | None = None
        #: What the words a refused call sends most likely mean, read at the first refusal.
        self._meanings: Meanings | None = None
        #: Where the schema takes an integer (None: nowhere): a walk of the schema, no validator built.
        self._integers = _integers(schema)

    def problem(self, arguments: dict[str, Any]) -> InvalidArgument | None:
        """The refusal of `arguments` by the input schema, or None when they are valid."""
        if self._fast is None:
            import jsonschema_rs

            self._fast = jsonschema_rs.validator_for(self.schema, validate_formats=True)
        if self._fast.is_valid(arguments):
            return None
        if self._explainer is None:
            from jsonschema import Draft202012Validator

            self._explainer = Draft202012Validator(self.schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        errors = list(self._explainer.iter_errors(arguments))
        if not errors:
            return None
        from kaeru.api.request_messages import refusal
        from kaeru.api.request_names import Meanings

        if self._meanings is None:
            self._meanings = Meanings.load()
        return refusal(errors, self.operation, self.schema, self._meanings)

    def parse(self, arguments: dict[str, Any]) -> Request:
        """The model of `arguments`; raises the schema's `invalid_argument` when they are refused."""
        if (refusal := self.problem(arguments)) is not None:
            raise refusal
        if self._integers is not None:
            arguments = self._integers.whole(arguments)
        if (misapplied := self.model.misapplied(arguments)) is not None:
            raise misapplied
        return self.model.trusted(arguments)


@dataclass(slots=True)
class _Integers:
    """The positions of a tool's arguments the schema types `integer`: `here` this value, `fields`
    an object's named fields, `each` a list's items or an object's other fields. Derived from the
    schema (`_integers`), so a field added to a tool cannot be left out."""

    here: bool = False
    fields: dict[str, _Integers] = field(default_factory=dict)
    each: _Integers | None = None
    #: `fields` as pairs (iterated on every call: a tuple, not a dict's items).
    named: tuple[tuple[str, _Integers], ...] = ()

    def whole(self, value: Any) -> Any:
        """`value` with each whole float at an integer position an `int`: `value` itself when there
        is none (the usual call: a look-up and a type test per integer field), else a copy along the
        changed path."""
        kind = type(value)
        if kind is float:
            return int(value) if self.here and value.is_integer() else value
        if kind is list and self.each is not None:
            made_items = [self.each.whole(item) for item in value]
            return made_items if any(a is not b for a, b in zip(made_items, value, strict=True)) else value
        if kind is not dict:
            return value
        changed: dict[str, Any] | None = None
        rest = self.each
        for name, inner in self.named if rest is None else ((n, self.fields.get(n, rest)) for n in value):
            sent = value.get(name)
            if type(sent) in (float, dict, list) and (made := inner.whole(sent)) is not sent:
                changed = changed if changed is not None else dict(value)
                changed[name] = made
        return changed if changed is not None else value

    def needed(self) -> _Integers | None:
        """This position with the branches leading to no integer cut, or None when none is left."""
        self.fields = {name: kept for name, inner in self.fields.items() if (kept := inner.needed()) is not None}
        self.each = self.each.needed() if self.each is not None else None
        self.named = tuple(self.fields.items())
        return self if self.here or self.fields or self.each is not None else None


def _integers(schema: dict[str, Any]) -> _Integers | None:
    """Where `schema` (a tool's input schema) takes an integer; None when it takes none."""
    found = _Integers()
    _gather(schema, schema.get("$defs") or {}, found, frozenset())
    return found.needed()


def _gather(schema: Any, defs: dict[str, Any], into: _Integers, seen: frozenset[str]) -> None:
    """Mark in `into` where `schema` takes an integer: every subschema a value can meet (a `$ref`,
    each branch of `allOf`/`anyOf`/`oneOf`, `then`/`else`), since marking one the value does not
    match is harmless: only a whole float is changed, and where it passed the schema."""
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and ref not in seen:
        _gather(defs.get(ref.rsplit("/", 1)[1]), defs, into, seen | {ref})
    kind = schema.get("type")
    into.here = into.here or kind == "integer" or (isinstance(kind, list) and "integer" in kind)
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(key) or ():
            _gather(branch, defs, into, seen)
    for key in ("then", "else"):
        _gather(schema.get(key), defs, into, seen)
    for name, inner in (schema.get("properties") or {}).items():
        _gather(inner, defs, into.fields.setdefault(name, _Integers()), seen)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            into.each = into.each or _Integers()
            _gather(schema[key], defs, into.each, seen)


@cache
def parser_for(operation: str) -> RequestParser:
    """The parser of `operation` over the schema it serves (one per tool, for the CLI)."""
    from kaeru.api.schemas import input_for

    return RequestParser(operation, input_for(operation))


def parse(operation: str, arguments: dict[str, Any]) -> Request:
    """`arguments` of tool `operation` as its request model, validated as a tool call is."""
    return parser_for(operation).parse(arguments)
