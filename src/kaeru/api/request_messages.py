"""The words of a refused call: which field, what is wrong with it, and what would be right.

`requests.py` decides whether a call is valid; this module only explains a refusal it has made,
from `jsonschema`'s error tree. A model reads the message and makes the next call from it, so a
message names every field that shares the mistake, says values as JSON (what the call is written
in, not Python's `None`/`True`), and offers what the value most likely meant.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from kaeru.api.request_names import Meanings, meant, resolved, swapped
from kaeru.domain.spelling import did_you_mean
from kaeru.errors import InvalidArgument

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError


def refusal(
    errors: list[ValidationError], operation: str, schema: dict[str, Any], meanings: Meanings
) -> InvalidArgument:
    """The one `invalid_argument` a refused call gets, from every error the schema found."""
    from jsonschema.exceptions import best_match

    if (nulls := _nulls(errors, schema)) is not None:
        return nulls
    if (other := meanings.other_tool(errors, operation)) is not None:
        return other
    if (named := swapped(errors, operation, schema)) is not None:
        return named
    error = best_match(errors)
    said = _message(error, schema.get("$defs") or {}, meanings)
    return InvalidArgument(said + _elsewhere(errors, _pick(error)), field=_field(error))


def _nulls(errors: list[ValidationError], schema: dict[str, Any]) -> InvalidArgument | None:
    """Every argument or field sent as null that may not be, at any depth, in one refusal that says
    what to do: "tags: None is not of type 'array'" named Python's None and one field a call, and
    clients in a strict function-calling mode send null for every argument or field they do not use
    (decision 388), inside `options`, `filters` or `patch` as at the top."""
    from jsonschema import Draft202012Validator

    defs = schema.get("$defs") or {}
    found = {tuple(e.absolute_path) for top in errors for e in _every(top) if e.instance is None and e.absolute_path}
    required: list[str] = []
    optional: list[str] = []
    items: list[str] = []  # a list's item has no default to fall back on: it is removed, not left out
    for path in sorted(found, key=lambda p: [str(s) for s in p]):
        places = _places(schema, list(path), defs, required=False)
        if not places or any(Draft202012Validator({**s, "$defs": defs}).is_valid(None) for s, _ in places):
            continue  # a null some shape takes (`due: null` clears a due date) is not the mistake
        name = ".".join(str(p) for p in path)
        (items if isinstance(path[-1], int) else required if any(r for _, r in places) else optional).append(name)
    sent_null = sorted([*required, *optional, *items])
    if not sent_null:
        return None
    said = []
    if required:
        said.append(f"give {', '.join(required)}: {'it is' if len(required) == 1 else 'they are'} required")
    if optional:
        what = "an argument" if all("." not in n for n in optional) else "a field"
        said.append(f"leave {', '.join(optional)} out ({what} not given takes its default)")
    if items:
        said.append(f"remove the null {'item' if len(items) == 1 else 'items'} {', '.join(items)} from the list")
    return InvalidArgument(
        f"arguments: null is not a value of {', '.join(sent_null)}: {'; '.join(said)}", field=sent_null[0]
    )


def _every(error: ValidationError) -> list[ValidationError]:
    """`error` and every failure under it (the branches of an anyOf/oneOf too)."""
    out = [error]
    for sub in error.context or ():
        out.extend(_every(sub))
    return out


def _places(spec: Any, path: list[Any], defs: dict[str, Any], *, required: bool) -> list[tuple[dict[str, Any], bool]]:
    """The subschemas a value at `path` may meet (through `$ref` and each branch), each with whether
    its object requires it."""
    spec = resolved(spec, defs)
    if not isinstance(spec, dict):
        return []
    if not path:
        return [(spec, required)]
    step, rest = path[0], path[1:]
    out: list[tuple[dict[str, Any], bool]] = []
    for shape in [spec, *(b for key in ("anyOf", "oneOf", "allOf") for b in spec.get(key) or ())]:
        shape = resolved(shape, defs)
        if not isinstance(shape, dict):
            continue
        if isinstance(step, int):
            if isinstance(shape.get("items"), dict):
                out += _places(shape["items"], rest, defs, required=False)
        elif step in (shape.get("properties") or {}):
            out += _places(shape["properties"][step], rest, defs, required=step in (shape.get("required") or ()))
        elif isinstance(shape.get("additionalProperties"), dict):
            out += _places(shape["additionalProperties"], rest, defs, required=False)
    return out


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
    `slot` or `node`; `evidence`: `{node}` or `{method}`), for a call that gives none or several, or
    no object at all: the schema's words were "… is not valid under any of the given schemas", with
    no field named."""
    branches = leaf.validator_value
    if not isinstance(branches, list):
        return None
    names = [b["required"][0] for b in branches if isinstance(b, dict) and len(b.get("required") or ()) == 1]
    if len(names) != len(branches) or len(branches) < 2:
        return None
    where = ".".join(str(p) for p in leaf.absolute_path)
    if not isinstance(leaf.instance, dict):
        # `evidence: "the logs"`: one of the objects, with the value sent where it fits.
        value = json.dumps(leaf.instance, ensure_ascii=False) if isinstance(leaf.instance, str) else "…"
        shapes = " or ".join(f'{{"{n}": {value}}}' for n in names)
        return where, f"{where or 'arguments'}: {shown(leaf.instance)} is not an object: send {shapes}"
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
        return alternatives[0] or None
    parts = [str(p) for p in leaf.absolute_path]
    quoted = leaf.message.split("'")[1::2]
    if leaf.validator in ("required", "additionalProperties") and quoted:
        parts.append(quoted[0])
    return ".".join(parts) or None


def shown(value: Any) -> str:
    """A value sent, as the message says it: a text as before (`'todo'`), anything else as JSON
    (`true`, `null`, `["pump", "hum"]`), not Python's `True`, `None`, `['pump', 'hum']`."""
    return repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _words(leaf: ValidationError) -> str:
    """`jsonschema`'s message with the value it echoes first said as JSON (`shown`)."""
    said, echoed = leaf.message, repr(leaf.instance)
    if not isinstance(leaf.instance, str) and said.startswith(echoed):
        return shown(leaf.instance) + said[len(echoed) :]
    return said


def _message(error: ValidationError, defs: dict[str, Any], meanings: Meanings) -> str:
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
                f"{where}: {_cut(shown(leaf.instance), 80)} is not a node reference: give its id or exact name as a "
                'string, {"id": …}, or {"name": …, "initiative": …}'
            )
        return f"{where}: {_cut(_words(leaf), 300)} — it must match exactly one accepted shape (see the input schema)"
    if leaf.validator == "additionalProperties" and isinstance(leaf.schema, dict):
        sent = leaf.instance if isinstance(leaf.instance, dict) else {}
        return f"{where}: {_cut(leaf.message, 500)}{meant(leaf.message.split(chr(39))[1::2], leaf.schema, sent, defs)}"
    if leaf.validator == "type" and (typed := _typed(leaf, where)) is not None:
        return typed
    if leaf.validator == "enum" and isinstance(leaf.instance, str) and isinstance(leaf.validator_value, list):
        allowed = [str(v) for v in leaf.validator_value]
        name = next((str(p) for p in reversed(leaf.absolute_path) if isinstance(p, str)), "")
        if leaf.absolute_path and isinstance(leaf.absolute_path[-1], int):
            name = name.removesuffix("s")  # a list's items read the table of one (`edge_types`: `edge_type`)
        hint = meanings.of_value(name, leaf.instance, allowed) or _as_kind(leaf.instance, allowed, where, meanings)
        if hint is None:
            hint = _enum_hint(leaf.instance, allowed, filtering="types" in where)
        if not hint and set(allowed) <= set(meanings.edges):
            # No edge type fits by meaning or spelling: the types with what each means, not bare names.
            types = "; ".join(f"{t} ({meanings.edges[t]})" for t in allowed)
            return f"{where}: {_cut(repr(leaf.instance), 80)} is not an edge type, and none is close: {types}"
        return f"{where}: {_cut(leaf.message, 500)}{hint}"
    if leaf.validator == "pattern" and isinstance(leaf.instance, str) and (named := _key_rule(leaf, where)):
        return named
    if leaf.validator == "format" and leaf.validator_value == "date" and isinstance(leaf.instance, str):
        # "'3d' is not a 'date'" named neither the form nor, for 2026-02-30, the part (decision 391).
        from kaeru.domain.timefmt import off_calendar

        why = off_calendar(leaf.instance) or " (a day is written YYYY-MM-DD)"
        return f"{where}: {_cut(repr(leaf.instance), 80)} is not a date{why}: give one such as 2026-03-03"
    bound = _BOUNDS.get(str(leaf.validator))
    if bound is not None and isinstance(leaf.instance, str | list):
        limit, given = leaf.validator_value, len(leaf.instance)
        if bound[0] == "is too short" and limit == 1:
            kinds = leaf.schema.get("type") if isinstance(leaf.schema, dict) else None
            clears = (
                "; to clear it send null (JSON null, not a text)" if isinstance(kinds, list) and "null" in kinds else ""
            )
            return f"{where}: should be non-empty{clears}"
        return f"{where}: {bound[0]}: {bound[1]} {limit} {bound[2]} ({given} given)"
    return f"{where}: {_cut(_words(leaf), 500)}"


#: A JSON type as the fix says it.
_KINDS = {
    "integer": "a number",
    "number": "a number",
    "boolean": "a boolean",
    "array": "the list",
    "object": "the object",
}


def _typed(leaf: ValidationError, where: str) -> str | None:
    """A value of the wrong JSON type said with the value it should have been: a number, boolean,
    list or object sent as its text (`"5"`, `"true"`, `'["a","b"]'`) was told only "is not of type";
    the message keeps those words, which the CLI reads for its own `:=` hint (cli/call.py)."""
    value = leaf.instance
    # A type that may also be null (`["integer", "null"]`) is said as the type it is not null as.
    kinds = leaf.validator_value if isinstance(leaf.validator_value, list) else [leaf.validator_value]
    wanted = next((k for k in kinds if isinstance(k, str) and k != "null"), None)
    fields = list((leaf.schema.get("properties") or {}) if isinstance(leaf.schema, dict) else {})
    if wanted == "object" and isinstance(value, str) and fields and not value.lstrip().startswith("{"):
        # `patch: "…"` (a text for an object of fields) was told only "is not of type 'object'".
        field = "body" if "body" in fields else fields[0]
        return f"{where}: {_cut(repr(value), 80)} is not an object: name the fields, e.g. {where}: {{{field!r}: …}}"
    said = f"{where}: {_cut(_words(leaf), 300)}"
    if not isinstance(value, str) or wanted not in _KINDS:
        return said
    from jsonschema import Draft202012Validator

    try:
        decoded = json.loads(value.strip() if value.strip() not in ("True", "False") else value.strip().lower())
    except ValueError:
        decoded = None
    if isinstance(decoded, float) and not math.isfinite(decoded):
        # `"NaN"` and `"1e400"` decode to numbers JSON cannot write: "send NaN" asked for one.
        return f"{said}: JSON has no NaN or infinity: send a finite number"
    if decoded is not None and Draft202012Validator({"type": wanted}).is_valid(decoded):
        if wanted in ("array", "object"):
            return f"{said}: send {_KINDS[wanted]} itself, not its JSON text"
        return f"{said}: send {json.dumps(decoded)} ({_KINDS[wanted]}), not {json.dumps(value)}"
    if wanted == "array" and value.strip():
        items = [part.strip() for part in value.split(",") if part.strip()] if "," in value else [value]
        return f"{said}: send a list, e.g. {_cut(json.dumps(items, ensure_ascii=False), 120)}"
    return said


def _as_kind(value: str, allowed: list[str], where: str, meanings: Meanings) -> str | None:
    """Where a node type is asked, a note kind named by its meaning: `filters.types: ["preference"]`
    was offered 'reference' by spelling, where the user's preference is a rule, kept as a tag."""
    from kaeru.domain.model import NoteKind

    if "episode" not in allowed:
        return None
    meant = meanings.meaning("kind", value, [k.value for k in NoteKind])
    if meant is None or "to" not in meant:
        return None
    said = _enum_hint(meant["to"], allowed, filtering="types" in where)
    return f"; {value!r} most likely means {meant['to']!r}{said}"


def _key_rule(leaf: ValidationError, where: str) -> str | None:
    """A slot name or column key refused by its pattern, said as the rule in words and the name
    normalised: "'Handoff' does not match '^[a-z]…'" left the model to read the regular expression."""
    import re

    pattern, sent = str(leaf.validator_value), leaf.instance
    if not pattern.startswith("^[a-z][a-z0-9_-]") or not isinstance(sent, str):
        return None
    words = re.sub(r"[^a-z0-9_-]+", "-", sent.strip().lower()).strip("-_")
    normal = re.sub(r"^[^a-z]+", "", words)
    offer = f": did you mean {normal!r}?" if normal and re.fullmatch(pattern, normal) else ""
    rule = "a lower-case letter first, then lower-case letters, digits, _ or - (no spaces)"
    return f"{where}: {_cut(repr(sent), 80)} does not match the rule of the name: {rule}{offer}"


def _is_node_ref(schema: Any) -> bool:
    """Whether `schema` is the contract's NodeRef: a string, `{id}`, or `{name, initiative}`."""
    shapes = schema.get("oneOf") if isinstance(schema, dict) else None
    required = [tuple(s.get("required") or ()) for s in shapes or [] if isinstance(s, dict)]
    return ("id",) in required and ("name", "initiative") in required


def _enum_hint(value: str, allowed: list[str], *, filtering: bool) -> str:
    """What a value outside an enum most likely meant (decision 389): a note kind where a node type
    is asked (`decision` is kept as the tag `kind:decision`), `supersede` as a link action, or a
    close spelling (`in_progress`, `refers-to`, `Open`)."""
    from kaeru.domain.model import NoteKind

    if value in {k.value for k in NoteKind} and "episode" in allowed:
        said = f"; {value!r} is a note kind (`note`'s `kind`), kept as the tag 'kind:{value}'"
        return said + (f": filter by tags ['kind:{value}'] to find such notes" if filtering else ", not a node type")
    if value in ("supersede", "supersedes", "replace") and "reweight" in allowed:
        return "; to replace a node use `evolve` with mode supersede; to link two, action add with edge_type supersedes"
    return did_you_mean(value, allowed)


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
