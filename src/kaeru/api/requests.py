"""The one validation of a tool's arguments: the input schema once, then the request model.

The MCP adapter and the CLI both come through here, so a call is accepted or refused the same way
whichever door it came in by. The compiled (Rust) validator answers "valid?"; only arguments it
refuses go through `jsonschema`, whose error tree names the field. Accepted arguments become the
tool's model with `model_construct`: the schema has already checked them, and validating them again
in pydantic would double the cost (bench/validation.py, decision 14.T2).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from kaeru.errors import InvalidArgument

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

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
        if (swapped := _swapped(errors, self.operation, self.schema)) is not None:
            return swapped
        from jsonschema.exceptions import best_match

        error = best_match(errors)
        return InvalidArgument(_message(error), field=_field(error))

    def parse(self, arguments: dict[str, Any]) -> Request:
        """The model of `arguments`; raises the schema's `invalid_argument` when they are refused."""
        if (refusal := self.problem(arguments)) is not None:
            raise refusal
        if (misapplied := self.model.misapplied(arguments)) is not None:
            raise misapplied
        return self.model.trusted(arguments)


@cache
def parser_for(operation: str) -> RequestParser:
    """The parser of `operation` over the schema it serves (one per tool, for the CLI)."""
    from kaeru.api.schemas import input_for

    return RequestParser(operation, input_for(operation))


def _swapped(errors: list[ValidationError], operation: str, schema: dict[str, Any]) -> InvalidArgument | None:
    """A required argument missing and another not accepted, both at the top: most often the one
    sent under the other's name (`action` for evolve's `mode`), said as such; None otherwise. One
    of the two alone was reported, and which one depended on the schema's shape (decision 367)."""
    top = [e for e in errors if not e.absolute_path]
    missing = [q for e in top if e.validator == "required" for q in e.message.split("'")[1::2]]
    unexpected = [q for e in top if e.validator == "additionalProperties" for q in e.message.split("'")[1::2]]
    if len(missing) != 1 or len(unexpected) != 1:
        return None
    wanted, sent = missing[0], unexpected[0]
    listed = ((schema.get("properties") or {}).get(wanted) or {}).get("type") == "array"
    return InvalidArgument(
        f"arguments: {sent!r} is not an argument of {operation} and {wanted!r} is required; "
        f"did you mean {wanted!r}" + (f" (a list: {wanted}: [...])?" if listed else "?"),
        field=sent,
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
        return f"{where}: {_cut(leaf.message, 300)} — it must match exactly one accepted shape (see the input schema)"
    if leaf.validator == "additionalProperties" and isinstance(leaf.schema, dict):
        return f"{where}: {_cut(leaf.message, 500)}{_meant(leaf.message.split(chr(39))[1::2], leaf.schema)}"
    bound = _BOUNDS.get(str(leaf.validator))
    if bound is not None and isinstance(leaf.instance, str | list):
        limit, given = leaf.validator_value, len(leaf.instance)
        if bound[0] == "is too short" and limit == 1:
            return f"{where}: should be non-empty"
        return f"{where}: {bound[0]}: {bound[1]} {limit} {bound[2]} ({given} given)"
    return f"{where}: {_cut(leaf.message, 500)}"


#: A length bound said with its limit: jsonschema's message echoes the value first and says "is too
#: long" last, so cut to fit it lost both the reason and the limit (65 long tags).
_BOUNDS = {
    "maxLength": ("is too long", "at most", "characters"),
    "minLength": ("is too short", "at least", "characters"),
    "maxItems": ("is too long", "at most", "items"),
    "minItems": ("is too short", "at least", "items"),
}


def _cut(message: str, limit: int) -> str:
    """`message` within `limit` characters, its middle left out: the value it echoes comes first and
    the reason last, and a cut from the end kept the value and lost the reason."""
    if len(message) <= limit:
        return message
    keep = (limit - 5) // 2
    return f"{message[:keep]} … {message[-keep:]}"


def _meant(unexpected: list[str], schema: dict[str, Any]) -> str:
    """A close name the schema does take, for a name it does not: `initiative` where a tool reads
    several scopes (`initiatives`, a list) was refused with no word of what it takes."""
    import difflib

    known = list(schema.get("properties") or {})
    for name in unexpected:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        if close:
            plural = close[0] == f"{name}s" and (schema["properties"][close[0]] or {}).get("type") == "array"
            return f"; did you mean {close[0]!r}" + (f" (a list: {close[0]}: [...])" if plural else "") + "?"
    return ""


def parse(operation: str, arguments: dict[str, Any]) -> Request:
    """`arguments` of tool `operation` as its request model, validated as a tool call is."""
    return parser_for(operation).parse(arguments)
