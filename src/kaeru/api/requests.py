"""The one validation of a tool's arguments: the input schema once, then the request model.

The MCP adapter and the CLI both come through here, so a call is accepted or refused the same way
whichever door it came in by. The compiled (Rust) validator answers "valid?"; only arguments it
refuses go through `jsonschema`, whose error tree names the field. Accepted arguments become the
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
        if (nulls := _nulls(errors, self.schema)) is not None:
            return nulls
        if (swapped := _swapped(errors, self.operation, self.schema)) is not None:
            return swapped
        from jsonschema.exceptions import best_match

        error = best_match(errors)
        return InvalidArgument(_message(error) + _elsewhere(errors, _pick(error)), field=_field(error))

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


def _nulls(errors: list[ValidationError], schema: dict[str, Any]) -> InvalidArgument | None:
    """Every top-level argument sent as null that may not be, in one refusal that says what to do:
    "tags: None is not of type 'array'" named Python's None and one field a call, and clients in a
    strict function-calling mode send null for every argument they do not use (decision 388)."""
    sent_null = sorted({str(e.absolute_path[0]) for e in errors if len(e.absolute_path) == 1 and e.instance is None})
    if not sent_null:
        return None
    required = [n for n in sent_null if n in (schema.get("required") or [])]
    optional = [n for n in sent_null if n not in required]
    said = []
    if required:
        said.append(f"give {', '.join(required)}: {'it is' if len(required) == 1 else 'they are'} required")
    if optional:
        said.append(f"leave {', '.join(optional)} out (an argument not given takes its default)")
    return InvalidArgument(
        f"arguments: null is not a value of {', '.join(sent_null)}: {'; '.join(said)}", field=sent_null[0]
    )


def _swapped(errors: list[ValidationError], operation: str, schema: dict[str, Any]) -> InvalidArgument | None:
    """A required argument missing and another not accepted, both at the top: most often the one
    sent under the other's name (`action` for evolve's `mode`), said as such; None otherwise. One
    of the two alone was reported, and which one depended on the schema's shape (decision 367).

    They are paired only when the missing one is required whatever else the call says (not by an
    action's default) and the name sent could mean it: a known synonym, a close spelling, or the
    tool's verb. Paired by count alone, every unknown argument of `link` without a `weight` was
    answered "did you mean 'weight'?", and following it for `mode: remove` re-weighted the edge."""
    top = [e for e in errors if not e.absolute_path]
    missing = [(e, q) for e in top if e.validator == "required" for q in e.message.split("'")[1::2]]
    unexpected = [q for e in top if e.validator == "additionalProperties" for q in e.message.split("'")[1::2]]
    if len(missing) != 1 or len(unexpected) != 1:
        return None
    (error, wanted), sent = missing[0], unexpected[0]
    known = schema.get("properties") or {}
    given: dict[str, Any] = error.instance if isinstance(error.instance, dict) else {}
    value = given.get(sent)
    required = _required_as_sent(error, schema)
    if not (required and _could_mean(sent, value, wanted, schema)):
        # The argument sent is what the call got wrong; a verb it lacks besides is said too.
        lacking = f" ({wanted!r} is required too)" if required and "enum" in (known.get(wanted) or {}) else ""
        return InvalidArgument(
            f"arguments: {sent!r} is not an argument of {operation}{_meant([sent], schema, set(given))}{lacking}",
            field=sent,
        )
    listed = (known.get(wanted) or {}).get("type") == "array"
    inner = _inside(sent, wanted, schema)
    shape = f" (a list: {wanted}: [...])" if listed else f" ({wanted}: {{{inner!r}: …}})" if inner else ""
    return InvalidArgument(
        f"arguments: {sent!r} is not an argument of {operation} and {wanted!r} is required; "
        f"did you mean {wanted!r}{shape}?",
        field=sent,
    )


def _inside(sent: str, wanted: str, schema: dict[str, Any]) -> str | None:
    """The field of object argument `wanted` that `sent` names (itself or a synonym): revise's
    `body` sent at the top belongs in `patch: {"body": …}`, and `patch: "…"` was the next try."""
    spec = (schema.get("properties") or {}).get(wanted) or {}
    ref = spec.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        spec = (schema.get("$defs") or {}).get(ref.rsplit("/", 1)[1]) or {}
    fields = spec.get("properties") or {}
    return next((f for f in (sent, *_SYNONYMS.get(sent.lower(), ())) if f in fields), None)


def _required_as_sent(error: ValidationError, schema: dict[str, Any]) -> bool:
    """Whether the requirement `error` reports holds for the call as sent: the schema's own, or a
    condition's whose field the call gives (`action: reweight`), not one on an action's default."""
    path = list(error.schema_path)
    if path == ["required"]:
        return True
    if len(path) < 2 or path[-2:] != ["then", "required"]:
        return False
    branch: Any = schema
    for step in path[:-2]:
        branch = branch[step]
    return bool((branch.get("if") or {}).get("required"))


def _could_mean(sent: str, value: Any, wanted: str, schema: dict[str, Any]) -> bool:
    """Whether argument `sent` (given `value`) is plausibly `wanted` under another name: a known
    synonym, a close spelling, the tool's verb, or a value `wanted` would take (`title: "…"` for a
    task's `text`; not `mode: "remove"` for a `weight`)."""
    import difflib

    from jsonschema import Draft202012Validator

    known = schema.get("properties") or {}
    spec = known.get(wanted) or {}
    # A name whose usual meaning is another argument of this tool (`why` → `reason`) is not the verb
    # it lacks (review, session 41): "did you mean 'action'?" for `why` sent a second wrong call.
    elsewhere = any(t in known and t != wanted for t in _SYNONYMS.get(sent.lower(), ()))
    return (
        wanted in _SYNONYMS.get(sent.lower(), ())
        or _inside(sent, wanted, schema) is not None
        or difflib.SequenceMatcher(None, sent.lower(), wanted).ratio() >= _CLOSE
        or ("enum" in spec and not elsewhere)  # the tool's verb (`mode`, `action`), whatever it was sent as
        or Draft202012Validator({**spec, "$defs": schema.get("$defs") or {}}).is_valid(value)
    )


#: How alike two names are to be offered as each other (difflib's ratio).
_CLOSE = 0.75
#: Names models send for the arguments the tools take (lower case → what each may mean, in order
#: of likelihood): spelling alone offered `node` for `mode` and `note`, and nothing for `type`.
_SYNONYMS: dict[str, tuple[str, ...]] = {
    "body": ("text", "new_body", "patch"),
    "content": ("text", "new_body", "patch"),
    "message": ("text",),
    "text": ("body", "new_body", "query"),
    "query": ("text",),
    "q": ("text", "query"),
    "project": ("initiative", "initiatives"),
    "projects": ("initiatives",),
    "workspace": ("initiative", "initiatives"),
    "scope": ("initiative", "initiatives"),
    "id": ("node", "target", "task", "hypothesis"),
    "node_id": ("node", "target", "task", "hypothesis"),
    "nodeid": ("node", "target", "task", "hypothesis"),
    "task_id": ("task", "node"),
    "claim": ("hypothesis",),
    "claim_id": ("hypothesis",),
    "verdict": ("status",),
    "result": ("status",),
    "outcome": ("status",),
    "state": ("status",),
    "column": ("status",),
    "why": ("reason",),
    "rationale": ("reason",),
    "title": ("text", "name"),
    "changes": ("patch",),
    "update": ("patch",),
    "fields": ("patch",),
    "into": ("to",),
    "new_name": ("to",),
    "target": ("to", "node", "source"),
    "destination": ("to",),
    "source": ("from",),
    "role": ("slot",),
    "type": ("kind", "edge_type", "new_type"),
    "relation": ("edge_type",),
    "relationship": ("edge_type",),
    "edge": ("edge_type",),
    "link_type": ("edge_type",),
    "strength": ("weight",),
    "mode": ("action", "kind"),
    "action": ("mode", "kind"),
    "operation": ("action", "mode"),
    "op": ("action", "mode"),
}


def _leaves(error: ValidationError) -> list[ValidationError]:
    """The concrete failures under an anyOf/allOf (a oneOf stays whole: it names one value's shapes)."""
    if error.validator in ("anyOf", "allOf") and error.context:
        out: list[ValidationError] = []
        for sub in error.context:
            out.extend(_leaves(sub))
        return out
    return [error]


#: Other positions of a list named with the same mistake at most (the rest are counted).
_ELSEWHERE_NAMED = 10


def _elsewhere(errors: list[ValidationError], leaf: ValidationError) -> str:
    """Where else in a list argument the reported mistake was made: the same rule of the schema
    failed at the same place but for the list's positions (`columns.0`, `columns.1` beside the
    reported `columns.2`). One position was said a call, and a board sent as three bare strings
    took an agent three refusals to fix."""
    if not any(isinstance(p, int) for p in leaf.absolute_path):
        return ""

    def key(e: ValidationError) -> tuple[Any, ...]:
        shape = tuple("[]" if isinstance(p, int) else p for p in e.absolute_path)
        # A stray or missing property is the mistake it names: `colour` at one column and `wip` at
        # another are two mistakes of one rule. A value's own words (`'todo' is not …`) are not.
        named = tuple(e.message.split("'")[1::2]) if e.validator in ("additionalProperties", "required") else ()
        return e.validator, tuple(e.absolute_schema_path), shape, named

    wanted, others = key(leaf), list[str]()
    for error in errors:
        for found in _leaves(error):
            where = ".".join(str(p) for p in found.absolute_path)
            if key(found) == wanted and found.absolute_path != leaf.absolute_path and where not in others:
                others.append(where)
    if not others:
        return ""
    more = f" and {len(others) - _ELSEWHERE_NAMED} more" if len(others) > _ELSEWHERE_NAMED else ""
    return f" (the same at {', '.join(others[:_ELSEWHERE_NAMED])}{more})"


def _pick(error: ValidationError) -> ValidationError:
    """The most useful failure to report: the deepest one, a wrong value before a missing branch key."""
    candidates = _leaves(error)
    return min(candidates, key=lambda e: (-len(e.absolute_path), e.validator == "required"))


def _alternatives(leaf: ValidationError) -> tuple[str, str] | None:
    """The field and message of arguments that must give exactly one of some fields (`current_state`:
    `slot` or `node`), for a call that gives none or several: the schema's words were "… is not
    valid under any of the given schemas", with no field named."""
    branches = leaf.validator_value
    if not isinstance(branches, list) or not isinstance(leaf.instance, dict):
        return None
    names = [b["required"][0] for b in branches if isinstance(b, dict) and len(b.get("required") or ()) == 1]
    if len(names) != len(branches) or len(branches) < 2:
        return None
    where = ".".join(str(p) for p in leaf.absolute_path)
    prefix = f"{where}." if where else ""
    choice = f"exactly one of {', '.join(names[:-1])} or {names[-1]}"
    given = [n for n in names if n in leaf.instance]
    if not given:
        return prefix + names[0], f"{where or 'arguments'}: give {choice} (neither was sent)"
    nulls = [n for n in given if leaf.instance[n] is None]
    field = (nulls or given)[-1]
    said = f"; {field} is null: leave it out" if nulls else ""
    return prefix + field, f"{where or 'arguments'}: give {choice}, not {' and '.join(given)}{said}"


def _field(error: ValidationError) -> str | None:
    leaf = _pick(error)
    if leaf.validator == "oneOf" and (alternatives := _alternatives(leaf)) is not None:
        return alternatives[0]
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
        if (alternatives := _alternatives(leaf)) is not None:
            return alternatives[1]
        if _is_node_ref(leaf.schema):
            return (
                f"{where}: {_cut(repr(leaf.instance), 80)} is not a node reference: give its id or exact name as a "
                'string, {"id": …}, or {"name": …, "initiative": …}'
            )
        return f"{where}: {_cut(leaf.message, 300)} — it must match exactly one accepted shape (see the input schema)"
    if leaf.validator == "additionalProperties" and isinstance(leaf.schema, dict):
        sent = set(leaf.instance) if isinstance(leaf.instance, dict) else set()
        return f"{where}: {_cut(leaf.message, 500)}{_meant(leaf.message.split(chr(39))[1::2], leaf.schema, sent)}"
    fields = list((leaf.schema.get("properties") or {}) if isinstance(leaf.schema, dict) else {})
    if leaf.validator == "type" and leaf.validator_value == "object" and isinstance(leaf.instance, str) and fields:
        # `patch: "…"` (a text for an object of fields) was told only "is not of type 'object'".
        field = "body" if "body" in fields else fields[0]
        return f"{where}: {_cut(repr(leaf.instance), 80)} is not an object: name the fields, e.g. {where}: {{{field!r}: …}}"
    if leaf.validator == "enum" and isinstance(leaf.instance, str) and isinstance(leaf.validator_value, list):
        hint = _enum_hint(leaf.instance, [str(v) for v in leaf.validator_value], filtering="types" in where)
        return f"{where}: {_cut(leaf.message, 500)}{hint}"
    if leaf.validator == "format" and leaf.validator_value == "date" and isinstance(leaf.instance, str):
        # "'3d' is not a 'date'" named neither the form nor, for 2026-02-30, the part (decision 391).
        from kaeru.domain.timefmt import off_calendar

        why = off_calendar(leaf.instance) or " (a day is written YYYY-MM-DD)"
        return f"{where}: {_cut(repr(leaf.instance), 80)} is not a date{why}: give one such as 2026-03-03"
    bound = _BOUNDS.get(str(leaf.validator))
    if bound is not None and isinstance(leaf.instance, str | list):
        limit, given = leaf.validator_value, len(leaf.instance)
        if bound[0] == "is too short" and limit == 1:
            return f"{where}: should be non-empty"
        return f"{where}: {bound[0]}: {bound[1]} {limit} {bound[2]} ({given} given)"
    return f"{where}: {_cut(leaf.message, 500)}"


def _is_node_ref(schema: Any) -> bool:
    """Whether `schema` is the contract's NodeRef: a string, `{id}`, or `{name, initiative}`."""
    shapes = schema.get("oneOf") if isinstance(schema, dict) else None
    required = [tuple(s.get("required") or ()) for s in shapes or [] if isinstance(s, dict)]
    return ("id",) in required and ("name", "initiative") in required


def _enum_hint(value: str, allowed: list[str], *, filtering: bool) -> str:
    """What a value outside an enum most likely meant (decision 389): a note kind where a node type
    is asked (`decision` is kept as the tag `kind:decision`), `supersede` as a link action, or a
    close spelling (`in_progress`, `refers-to`, `Open`)."""
    import difflib

    from kaeru.domain.model import NoteKind

    if value in {k.value for k in NoteKind} and "episode" in allowed:
        said = f"; {value!r} is a note kind (`note`'s `kind`), kept as the tag 'kind:{value}'"
        return said + (f": filter by tags ['kind:{value}'] to find such notes" if filtering else ", not a node type")
    if value in ("supersede", "supersedes", "replace") and "reweight" in allowed:
        return "; to replace a node use `evolve` with mode supersede; to link two, action add with edge_type supersedes"
    for spelt in dict.fromkeys((value.lower(), value.lower().replace("_", "-"), value.lower().replace("-", "_"))):
        if spelt in allowed:
            return f"; did you mean {spelt!r}?"
    close = difflib.get_close_matches(value.lower(), allowed, n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


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


def _meant(unexpected: list[str], schema: dict[str, Any], sent: set[str]) -> str:
    """A name the schema does take, for a name it does not: a known synonym first (`type` → `kind`
    or `edge_type`), else a close spelling (`initiative` where a tool reads several scopes, the
    list `initiatives`). Never one the call already sends: `mode` next to `node` was answered
    "did you mean 'node'?"."""
    import difflib

    known = [name for name in schema.get("properties") or {} if name not in sent]
    for name in unexpected:
        synonyms = [m for m in _SYNONYMS.get(name.lower(), ()) if m in known]
        close = synonyms[:1] or difflib.get_close_matches(name, known, n=1, cutoff=_CLOSE)
        if close:
            plural = close[0] == f"{name}s" and (schema["properties"][close[0]] or {}).get("type") == "array"
            return f"; did you mean {close[0]!r}" + (f" (a list: {close[0]}: [...])" if plural else "") + "?"
    return ""


def parse(operation: str, arguments: dict[str, Any]) -> Request:
    """`arguments` of tool `operation` as its request model, validated as a tool call is."""
    return parser_for(operation).parse(arguments)
