"""The official MCP `memory` server's file (`@modelcontextprotocol/server-memory`, `memory.jsonl`).

One JSON object a line: `{"type": "entity", "name", "entityType", "observations": [str]}` or
`{"type": "relation", "from", "to", "relationType"}`. An entity becomes an `entity` node named by the
entity, its observations the body (one a line), its type kept as the tag `type:<entityType>` and in
`properties.entity_type`; a relation becomes an edge between the two nodes, typed by
`relations.relation_edge` (the relation's own name kept on the edge as `properties.relations`).

The server keeps two entities of one name when one `create_entities` call names it twice, and adds
later observations to the first: such copies are merged into one node (every observation, in file
order), never one dropped. The server's `read_graph` answer (one JSON document `{"entities": [...],
"relations": [...]}`, which agents often save instead) is read too. A file in which nothing is a
memory record is refused: importing it would "succeed" with nothing in it. A byte-order mark
before the first line (Windows editors) is read past; bytes that are not UTF-8 are read as U+FFFD
and the lines holding them named (`not_utf8`): the rest of such a line is still the memory's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kaeru.domain.model import NodeType
from kaeru.errors import InvalidArgument
from kaeru.export.importers.core import Batch, Item, Link
from kaeru.export.importers.relations import relation_edge
from kaeru.service.outcomes import Issue

FORMAT = "memory-jsonl"


def type_tag(entity_type: str) -> str:
    return "type:" + "-".join(entity_type.split()).lower()[:120]


@dataclass
class _Entity:
    name: str
    origin: str
    types: list[str] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)

    def item(self) -> Item:
        tags = list(dict.fromkeys(type_tag(t) for t in self.types))
        return Item(
            key=self.name,
            name=self.name,
            body="\n".join(self.observations) or self.name,
            node_type=NodeType.ENTITY,
            tags=tags,
            origin=self.origin,
            # The first copy's type: the one the server's later calls act on.
            extra={"entity_type": self.types[0]} if self.types else {},
        )


def _kind(record: Any) -> str | None:
    """`entity`, `relation` or None; a record without `type` (a `read_graph` answer's) by its keys."""
    if not isinstance(record, dict):
        return None
    kind = record.get("type")
    if kind is None and "name" in record and ("observations" in record or "entityType" in record):
        return "entity"
    if kind is None and "from" in record and "to" in record:
        return "relation"
    return kind if isinstance(kind, str) else None


class _Reader:
    def __init__(self) -> None:
        self.batch = Batch(FORMAT)
        self.entities: dict[str, _Entity] = {}

    def record(self, record: Any, origin: str) -> bool:
        """Take one record; False when it is neither an entity nor a relation."""
        kind = _kind(record)
        if kind == "entity" and isinstance(record.get("name"), str) and record["name"].strip():
            self.entity(record, origin)
        elif kind == "relation" and all(isinstance(record.get(k), str) for k in ("from", "to")):
            edge_type, label, backwards = relation_edge(str(record.get("relationType") or ""))
            src, dst = (record["to"], record["from"]) if backwards else (record["from"], record["to"])
            self.batch.links.append(Link(src, dst, edge_type, label, origin))
        else:
            return False
        return True

    def entity(self, record: dict[str, Any], origin: str) -> None:
        name = record["name"]
        entity_type = record.get("entityType")
        observations = [str(o) for o in record.get("observations") or [] if str(o).strip()]
        known = self.entities.get(name)
        if known is None:
            known = self.entities[name] = _Entity(name, origin)
        else:
            self.batch.skipped.append(
                Issue(
                    "duplicate_key",
                    f"{origin}: the entity {name!r} appears again (first at {known.origin}); the copies are "
                    "merged into one node holding every observation of both",
                    "path",
                )
            )
        if isinstance(entity_type, str) and entity_type.strip() and entity_type not in known.types:
            known.types.append(entity_type)
        # Across copies, an observation both hold is kept once (the server's add_observations does the same).
        fresh = observations if not known.observations else [o for o in observations if o not in known.observations]
        known.observations.extend(fresh)

    def done(self) -> Batch:
        self.batch.items = [entity.item() for entity in self.entities.values()]
        return self.batch


def read(lines: Iterable[str]) -> Batch:
    """The records of `lines` (a memory.jsonl, or a `read_graph` answer).

    Raises:
        InvalidArgument: no line (and not the whole text) is a memory record, though some text was
            there: the wrong file. An empty file is an empty memory.
    """
    reader = _Reader()
    text: list[str] = []
    for number, raw in enumerate(lines, 1):
        if number == 1:
            # A byte-order mark: json.loads refuses it ("Unexpected UTF-8 BOM"), losing the first record.
            raw = raw.removeprefix("\ufeff")
        text.append(raw)
        line = raw.strip()
        if not line:
            continue
        origin = f"line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            reader.batch.skipped.append(Issue("line_skipped", f"{origin}: not JSON ({exc.msg})", "path"))
            continue
        if not reader.record(record, origin):
            reader.batch.skipped.append(Issue("line_skipped", f"{origin}: neither an entity nor a relation", "path"))
    skipped = reader.batch.skipped
    dump = _graph_dump("".join(text)) if skipped else None
    if dump is not None:
        return dump
    if reader.entities or reader.batch.links or not skipped:
        return reader.done()
    shown = "; ".join(issue.message for issue in skipped[:3])
    raise InvalidArgument(
        f"no line is a memory-jsonl record: is this the right file? memory-jsonl reads the memory server's "
        f'memory.jsonl, one {{"type": "entity", …}} or {{"type": "relation", …}} object a line; '
        f"{len(skipped)} line(s) here are not ({shown}{'; …' if len(skipped) > 3 else ''})",
        field="path",
    )


def _graph_dump(text: str) -> Batch | None:
    """The whole `text` read as the server's `read_graph` answer; None when it is not one."""
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(whole, dict) and isinstance(whole.get("entities"), list):
        reader = _Reader()
        parts = [("entities", "entity"), ("relations", "relation")]
        for key, kind in parts:
            for i, record in enumerate(whole.get(key) or []):
                if not (isinstance(record, dict) and reader.record({"type": kind, **record}, f"{key}[{i}]")):
                    reader.batch.skipped.append(Issue("line_skipped", f"{key}[{i}]: not one of its {key}", "path"))
        reader.batch.skipped.insert(
            0,
            Issue(
                "read_graph_file",
                "the file is one JSON document with `entities` and `relations` (the memory server's read_graph "
                "answer), not memory.jsonl: read as such",
                "path",
            ),
        )
        return reader.done()
    return None


def read_file(path: Path) -> Batch:
    """`read` of the file at `path`, decoded line by line: a line holding bytes that are not UTF-8
    is read with U+FFFD in their place, and the batch says which lines (`not_utf8`) — decoding the
    whole file with `errors="replace"` changed such text without a word."""
    bad: list[int] = []

    def decoded(raw: Iterable[bytes]) -> Iterator[str]:
        for number, line in enumerate(raw, 1):
            try:
                yield line.decode("utf-8")
            except UnicodeDecodeError:
                bad.append(number)
                yield line.decode("utf-8", errors="replace")

    with path.open("rb") as raw:
        batch = read(decoded(raw))
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (", …" if len(bad) > 10 else "")
        batch.skipped.append(
            Issue(
                "not_utf8",
                f"{len(bad)} line(s) hold bytes that are not UTF-8 (line {shown}): read with U+FFFD (\ufffd) "
                "in their place; the file's text there is not what was imported",
                "path",
            )
        )
    return batch
