"""An archive holds what its header counts, or none of it is imported.

An amg archive is written whole or not at all (decision 166), but a file can still be cut short on
its way: `head -n`, a copy that stopped, a transfer that lost its end, a pipe whose writer died. Cut
at a line boundary, every line left was a well-formed record, so an import wrote the first records
and answered `applied` — a vault holding part of a memory, said to hold all of it (decision 210:
an archive cut short is not the answer). The header counts every kind of record it is followed by,
so the first pass of an import counts them too and refuses an archive that holds fewer, or more,
than its header says, before anything of it is written.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kaeru.errors import InvalidArgument
from kaeru.export import shape

#: The header's count of each kind of record, in the order the archive holds them, with what a
#: person calls one and several of them.
LABELS: dict[str, tuple[str, str]] = {
    "initiatives": ("initiative", "initiatives"),
    "ended_initiatives": ("ended initiative", "ended initiatives"),
    "node_revisions": ("node revision", "node revisions"),
    "edge_revisions": ("edge revision", "edge revisions"),
    "slot_revisions": ("slot revision", "slot revisions"),
    "audit": ("audit record", "audit records"),
}

_COUNTED = {"node": "node_revisions", "edge": "edge_revisions", "slot": "slot_revisions", "audit": "audit"}


def counted_as(kind: str, record: dict[str, Any]) -> str:
    """The header count `record` (of `kind`) is one of: an initiative merged away or deleted is
    counted apart from the live ones."""
    if kind == "initiative":
        return "ended_initiatives" if record.get("ended_at") is not None else "initiatives"
    return _COUNTED[kind]


def label(key: str, count: int) -> str:
    """`count` records of the header count `key`, in words (`1 node revision`, `5 audit records`)."""
    one, several = LABELS.get(key, (key, key))
    return f"{count} {one if count == 1 else several}"


class Tally:
    """The records of an archive counted as they are read, to be held against its header."""

    def __init__(self) -> None:
        self.found: Counter[str] = Counter()

    def add(self, kind: str, record: dict[str, Any]) -> None:
        self.found[counted_as(kind, record)] += 1

    def check(self, header: dict[str, Any], shown: str) -> None:
        """Refuse the archive `shown` (its path, as the user knows it) when its records are not
        what `header` counts. A header without `counts` (one written by hand) is not checked; a
        count it leaves out (a version 1 archive has no `ended_initiatives`) is not either.

        Raises:
            InvalidArgument: on `path`, naming each kind of record missing or in excess.
        """
        expected = header.get("counts")
        if expected is None:
            return
        if not isinstance(expected, dict):
            raise InvalidArgument(f"the archive {shown} has a damaged header: counts must be an object", field="path")
        short, extra = [], []
        for key in LABELS:
            if key not in expected:
                continue
            if (wrong := shape.whole(expected[key])) is not None:
                raise InvalidArgument(f"the archive {shown} has a damaged header: counts.{key} {wrong}", field="path")
            want, have = expected[key], self.found[key]
            if have < want:
                short.append(f"{have} of its {label(key, want)}")
            elif have > want:
                extra.append(f"{label(key, have)} where its header counts {want}")
        if short or extra:
            raise InvalidArgument(_refusal(shown, short, extra), field="path")


def _refusal(shown: str, short: list[str], extra: list[str]) -> str:
    """Why the archive is refused: what it lacks (cut short?) and what it holds beyond its header."""
    said = f"the archive {shown} does not hold what its header counts, so nothing of it was imported: it holds"
    if short:
        said += f" {joined(short)}: cut short? Export it again, or copy it whole"
    if extra:
        said += f"{'; and it holds' if short else ''} {joined(extra)}: records were added after it was written"
    return said


def joined(parts: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
