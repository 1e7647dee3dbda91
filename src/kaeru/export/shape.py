"""What each amg record must hold for an import to write it (docs/amg.md): its fields, their types,
the values an enumerated field takes, and timestamps in the one canonical form.

An archive is screened whole before anything of it is written (decision 15.N1), but screening
checked limits and secrets only: a record with a field missing, null or of the wrong type passed,
and failed when it was written — an `internal` fault (a `KeyError`, a `NOT NULL` constraint), and
past the first chunk a `rejected` import that had already written the chunks before it. Checked
here in the same first pass, such a record is refused like any other, naming its line and field.
So is a record kaeru never writes and would misread (an id no call can name, a weight outside
0–1, an `audit_event` node, a live node in no initiative); what kaeru writes passes, however unusual:
a `created_at` after `recorded_at` (a note's `occurred_at` may lie ahead), a slot held by a node
the archive lacks (an export of some initiatives, the holder in another).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from enum import StrEnum
from typing import Any

from kaeru.domain.model import EdgeType, Layer, NodeType, Tier, Visibility
from kaeru.domain.timefmt import parse_ts

#: What is wrong with a value, or None when it is right.
Check = Callable[[Any], str | None]

#: `timefmt.fmt`'s form: every timestamp a vault stores and an export writes.
_MOMENT = re.compile(r"\d{1,4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")  # years before 1000 unpadded until 216


def text(value: Any) -> str | None:
    return None if isinstance(value, str) else f"must be a string, not {_kind(value)}"


def moment(value: Any) -> str | None:
    """The canonical form (fixed width: text order is time order), naming a real moment (`parse_ts`:
    what every read of it does)."""
    if isinstance(value, str) and _MOMENT.fullmatch(value):
        try:
            parse_ts(value)
            return None
        except ValueError:
            pass
    return f"must be a timestamp like 2026-01-31T09:00:00.000000Z, not {_shown(value)}"


#: A node id as kaeru writes it (`domain.ids.uuid7`, `str(uuid.UUID)`): lower case, hyphenated. Any
#: other is read as a name wherever a node is named, so no call could reach that node by its id.
_NODE_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def node_id(value: Any) -> str | None:
    if not isinstance(value, str) or _NODE_ID.fullmatch(value):
        return text(value)
    return f"must be a node id (a UUID in lower case, as 01a24e80-0000-7000-8000-000000000000), not {_shown(value)}"


def weight(value: Any) -> str | None:
    """What `link` accepts (`WriteContext.add_edge`): a finite number from 0 to 1. NaN passed as a
    number and broke the write on SQLite (`NOT NULL`) after earlier chunks were committed, and on
    PostgreSQL was stored and exported as `NaN`, which no import could read back."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and 0 <= value <= 1
    return None if ok else f"must be a number from 0 to 1, as every edge's weight is, not {_shown(value)}"


def stored_type(value: Any) -> str | None:
    """A node type a vault stores: `audit_event` is one only reads make (`trail` shows audit records
    as such nodes); no write makes one, and searches and counts leave the type out."""
    if value == NodeType.AUDIT_EVENT.value:
        return "must not be audit_event: that is how reads show audit records, which an archive holds as its own kind"
    return one_of(NodeType)(value)


def whole(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return None if ok else f"must be a whole number, not {_shown(value)}"


def flag(value: Any) -> str | None:
    return None if isinstance(value, bool) or value in (0, 1) else f"must be true or false, not {_shown(value)}"


def mapping(value: Any) -> str | None:
    return None if isinstance(value, dict) else f"must be an object, not {_kind(value)}"


def texts(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return None
    return f"must be a list of strings, not {_shown(value)}"


def listing(value: Any) -> str | None:
    return None if isinstance(value, list) else f"must be a list, not {_kind(value)}"


def one_of(kind: type[StrEnum]) -> Check:
    allowed = [member.value for member in kind]

    def check(value: Any) -> str | None:
        return None if value in allowed else f"must be one of {', '.join(allowed)}, not {_shown(value)}"

    return check


def optional(check: Check) -> Check:
    def maybe(value: Any) -> str | None:
        return None if value is None else check(value)

    return maybe


def _ended_pairs(value: Any) -> str | None:
    pairs = isinstance(value, list) and all(
        isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and moment(p[1]) is None for p in value
    )
    return None if pairs else "must be a list of [name, ended_at] pairs"


def _changes(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(change, dict) for change in value):
        return None
    return f"must be a list of objects, not {_shown(value)}"


#: Per kind: the fields every record must have, then those it may leave out (or null where the
#: check allows it). What the writer reads with `record[...]` is required; `record.get(...)` optional.
REQUIRED: dict[str, dict[str, Check]] = {
    "node": {
        "id": node_id,
        "rev_no": whole,
        "revision": text,
        "node_type": stored_type,
        "tier": one_of(Tier),
        "name": text,
        "body": optional(text),
        "description": optional(text),
        "tags": texts,
        "layer": one_of(Layer),
        "visibility": one_of(Visibility),
        "status": optional(text),
        "properties": mapping,
        "initiatives": texts,
        "created_at": moment,
        "recorded_at": moment,
        "retracted": flag,
        "pinned": flag,
    },
    "edge": {
        "src": node_id,
        "dst": node_id,
        "edge_type": one_of(EdgeType),
        "weight": weight,
        "rev_no": whole,
        "properties": mapping,
        "created_at": moment,
        "recorded_at": moment,
        "retracted": flag,
    },
    "slot": {"slot": text, "node_id": optional(node_id), "rev_no": whole, "revision": text, "updated_at": moment},
    "audit": {
        "at": moment,
        "operation": text,
        "actor": text,
        "request_id": optional(text),
        "affected": texts,
        "changes": _changes,
    },
}
OPTIONAL: dict[str, dict[str, Check]] = {
    "node": {"request_id": optional(text), "actor": optional(text), "ended_initiatives": _ended_pairs},
    "edge": {"request_id": optional(text), "actor": optional(text)},
    "slot": {"initiative": optional(text), "initiative_ended_at": optional(moment)},
    "audit": {"initiative": optional(text), "initiative_ended_at": optional(moment)},
}
_LIVE_INITIATIVE: dict[str, Check] = {"name": text, "created_at": moment, "last_activity": moment}
_ENDED_INITIATIVE: dict[str, Check] = {"name": text, "ended_at": moment}
_INITIATIVE_OPTIONAL: dict[str, Check] = {"properties": optional(mapping), "names": optional(listing)}
_SPAN: dict[str, Check] = {"name": text, "from": moment}


def problems(kind: str, record: dict[str, Any]) -> list[tuple[str, str]]:
    """Each `(field, what is wrong)` of `record`, a record of `kind`; empty when it can be written."""
    if kind == "initiative":
        ended = record.get("ended_at") is not None
        required = _ENDED_INITIATIVE if ended else _LIVE_INITIATIVE
        allowed = {**_INITIATIVE_OPTIONAL, "created_at": optional(moment)} if ended else _INITIATIVE_OPTIONAL
        found = _check(record, required, allowed)
        names = record.get("names")
        for i, span in enumerate(names if isinstance(names, list) else []):
            if not isinstance(span, dict):
                found.append((f"names[{i}]", "must be an object"))
                continue
            found += [(f"names[{i}].{f}", why) for f, why in _check(span, _SPAN, {"to": optional(moment)})]
        return found
    found = _check(record, REQUIRED[kind], OPTIONAL.get(kind, {}))
    # Only an initiative's delete leaves a node in none, and it forgets the node (retracted) then.
    live = kind == "node" and not found and not record["retracted"]
    if live and not (record["initiatives"] or record.get("ended_initiatives")):
        found.append(("initiatives", "must name an initiative: a node revision not retracted belongs to one"))
    return found


def _check(
    record: dict[str, Any], required: dict[str, Check], optional_fields: dict[str, Check]
) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for name, check in required.items():
        if name not in record:
            found.append((name, "is missing"))
        elif (why := check(record[name])) is not None:
            found.append((name, why))
    for name, check in optional_fields.items():
        if name in record and (why := check(record[name])) is not None:
            found.append((name, why))
    return found


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."
