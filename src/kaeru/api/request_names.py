"""What a refused call most likely meant by a name or a value: an argument sent under another
name, at the wrong level, or meant for another tool, and an enum's value by its meaning.

Split from `requests.py` (the validation itself) so the words of a refusal can grow without the
validator: what a word most likely means is kept as data (`meanings.toml`), beside the spelling.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kaeru.domain.spelling import CLOSE
from kaeru.errors import InvalidArgument

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError


@dataclass(frozen=True, slots=True)
class Meanings:
    """`meanings.toml`, read once per parser at its first refusal (decision 16.O1 keeps the happy
    path free of what only a refusal needs)."""

    #: field → value sent → {"to": an enum value, or "tool": a tool; "why": what it means}.
    values: dict[str, dict[str, dict[str, str]]]
    #: edge type → what it means (SPEC §1.2).
    edges: dict[str, str]
    #: {"tool", "sent", "say"}: an argument of another tool, in order of precedence.
    elsewhere: list[dict[str, str]]

    @classmethod
    def load(cls) -> Meanings:
        import tomllib
        from importlib import resources

        data = tomllib.loads(resources.files("kaeru.api").joinpath("meanings.toml").read_text(encoding="utf-8"))
        return cls(values=data["values"], edges=data["edges"], elsewhere=data["elsewhere"])

    def of_value(self, field: str, value: str, allowed: list[str]) -> str | None:
        """What `value` sent for enum `field` means, as the end of the refusal; None when unknown.
        A table speaks only for the enum it was written for, one holding some of its `to` values:
        trail's `kind` {history, path, …} was pointed to `task` for `kind: "task"`. A meaning that
        names a value is offered only where the enum has it."""
        meant = self.meaning(field, value, allowed)
        if meant is None:
            return None
        if "tool" in meant:
            return f"; {meant['why']}"
        if meant["to"] not in allowed:
            return None
        return f"; did you mean {meant['to']!r}? — {meant['why']}"

    def meaning(self, field: str, value: str, allowed: list[str]) -> dict[str, str] | None:
        """The entry of `value` in the first table of `field` written for this enum: `initial_status`
        reads its own (a new claim not known yet is `open`) before that of `status`."""
        key = value.strip().lower().replace("-", "_").replace(" ", "_")
        for name in dict.fromkeys((field, field.removeprefix("initial_"))):
            table = self.values.get(name) or {}
            if any(m.get("to") in allowed for m in table.values()) and (meant := table.get(key)) is not None:
                return meant
        return None

    def other_tool(self, errors: list[ValidationError], operation: str) -> InvalidArgument | None:
        """The refusal of an argument this tool does not take and another does, naming that tool:
        `task {task, status: done}` was offered `text`, and following it made a second, done task."""
        sent: dict[str, str] = {}
        for error in errors:
            if error.validator == "additionalProperties":
                prefix = ".".join(str(p) for p in error.absolute_path)
                for name in error.message.split("'")[1::2]:
                    sent[f"{prefix}.{name}" if prefix else name] = prefix or "arguments"
        for entry in self.elsewhere:
            if entry["tool"] == operation and entry["sent"] in sent:
                name = entry["sent"].rsplit(".", 1)[-1]
                return InvalidArgument(
                    f"{sent[entry['sent']]}: {name!r} is not an argument of {operation}: {entry['say']}",
                    field=entry["sent"],
                )
        return None


def resolved(spec: Any, defs: dict[str, Any]) -> Any:
    """`spec` with a `$ref` to the schema's `$defs` followed (the contract's shapes are named)."""
    ref = spec.get("$ref") if isinstance(spec, dict) else None
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return defs.get(ref.rsplit("/", 1)[1]) or {}
    return spec


def swapped(errors: list[ValidationError], operation: str, schema: dict[str, Any]) -> InvalidArgument | None:
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
            f"arguments: {sent!r} is not an argument of {operation}{meant([sent], schema, given)}{lacking}",
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
    spec = resolved((schema.get("properties") or {}).get(wanted) or {}, schema.get("$defs") or {})
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
        or difflib.SequenceMatcher(None, sent.lower(), wanted).ratio() >= CLOSE
        or ("enum" in spec and not elsewhere)  # the tool's verb (`mode`, `action`), whatever it was sent as
        or Draft202012Validator({**spec, "$defs": schema.get("$defs") or {}}).is_valid(value)
    )


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


def meant(
    unexpected: list[str], schema: dict[str, Any], given: dict[str, Any], defs: dict[str, Any] | None = None
) -> str:
    """A name the schema does take, for a name it does not: the object argument that has it as a
    field (`tags` sent to `search` belongs in `filters`), else a known synonym (`type` → `kind` or
    `edge_type`), else a close spelling (`initiative` where a tool reads several scopes, the list
    `initiatives`). Never one the call already sends: `mode` next to `node` was answered "did you
    mean 'node'?"."""
    import difflib

    if (home := _homes(unexpected, schema, given, schema.get("$defs") or defs or {})) is not None:
        return home
    known = [name for name in schema.get("properties") or {} if name not in given]
    for name in unexpected:
        synonyms = [m for m in _SYNONYMS.get(name.lower(), ()) if m in known]
        close = synonyms[:1] or difflib.get_close_matches(name, known, n=1, cutoff=CLOSE)
        if close:
            plural = close[0] == f"{name}s" and (schema["properties"][close[0]] or {}).get("type") == "array"
            return f"; did you mean {close[0]!r}" + (f" (a list: {close[0]}: [...])" if plural else "") + "?"
    return ""


def _homes(unexpected: list[str], schema: dict[str, Any], given: dict[str, Any], defs: dict[str, Any]) -> str | None:
    """Where the names sent at this level belong one level down: `layer` and `slot` sent to `note`
    are fields of its `options`, `tags` and `types` sent to `search` of its `filters` (the call
    stays refused: the contract has one place for each)."""
    homes: dict[str, list[str]] = {}
    for home, spec in (schema.get("properties") or {}).items():
        spec = resolved(spec, defs)
        shapes = [spec, *(resolved(s, defs) for s in spec.get("anyOf") or ())] if isinstance(spec, dict) else []
        fields = {f for s in shapes if isinstance(s, dict) for f in s.get("properties") or {}}
        for name in unexpected:
            if name in fields and not any(name in found for found in homes.values()):
                homes.setdefault(home, []).append(name)
    if not homes:
        return None
    said = []
    for home, names in homes.items():
        inner = ", ".join(f"{json.dumps(n)}: {_cut_json(given.get(n))}" for n in names)
        which = "it belongs" if len(names) == 1 else "they belong"
        said.append(f"{', '.join(names)}: {which} inside {home}: {json.dumps(home)}: {{{inner}}}")
    return "; " + "; ".join(said)


def _cut_json(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else "…"
