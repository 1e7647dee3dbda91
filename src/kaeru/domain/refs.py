"""NodeRef parsing: a string (id or exact name), `{id}`, or `{initiative, name}` (SPEC §2.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kaeru.domain.ids import looks_like_uuid
from kaeru.domain.naming import canonical


@dataclass(frozen=True, slots=True)
class NodeRef:
    """A parsed reference. `id` set: by id. Otherwise by exact `name`, in `initiative` or the call's."""

    id: str | None = None
    name: str | None = None
    initiative: str | None = None
    #: True when the reference was a bare string: it may be an id or a name.
    bare: bool = False


def parse_ref(raw: Any) -> NodeRef:
    """Parse a schema-valid NodeRef value.

    Raises:
        ValueError: the value is not a NodeRef.
    """
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            raise ValueError("a node reference must not be empty")
        return NodeRef(id=text if looks_like_uuid(text) else None, name=canonical(text), bare=True)
    if isinstance(raw, dict):
        if set(raw) == {"id"} and isinstance(raw["id"], str) and raw["id"].strip():
            return NodeRef(id=raw["id"].strip())
        if set(raw) == {"name", "initiative"}:
            name, initiative = raw["name"], raw["initiative"]
            if isinstance(name, str) and isinstance(initiative, str) and name and initiative.strip():
                # Names are stored in NFC (decision 184): asked for in any form, found.
                return NodeRef(name=canonical(name), initiative=canonical(initiative))
    raise ValueError("a node reference is a string, {id} or {initiative, name}")
