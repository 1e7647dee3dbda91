"""What orders a list of open tasks, read without the tasks: `recall`'s tasks channel orders every
open task of the searched boards (`service.worklist.open_tasks`) and shows a hundred of them.

It decoded each of those tasks whole — name, body, tags, every property — to read four fields:
its status, its due day, its initiatives and its sequence number. Here those four are read from
`nodes` by the primary key and nothing else is decoded (the properties only of a row that has a
due day); the few tasks shown are loaded afterwards."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from kaeru.storage.sql.db import Part
from kaeru.storage.sql.rows import json_object, parse_json

#: A due day in a node's stored properties (`rows.sorted_json` writes keys literally).
_DUE = '"due"'


class TaskFacts(NamedTuple):
    """A task's place in a list of open work: what `Node` holds under the same names, and `due` as
    its properties hold it (None without one)."""

    id: str
    seq: int
    status: str | None
    due: Any
    initiatives: tuple[int, ...]


class TaskFactQueries(Part):
    def task_facts(self, seqs: Sequence[int]) -> dict[int, TaskFacts]:
        """The current nodes whose sequence numbers are `seqs` (`SearchRow.seq`), by sequence
        number: as `nodes_by_seqs` would decode them, reduced to `TaskFacts`."""
        out: dict[int, TaskFacts] = {}
        shared: dict[str, tuple[int, ...]] = {}  # the few initiative lists thousands of rows share
        for part in self._d.chunks(seqs):
            where, params = self._d.in_("seq", part)
            sql = f"SELECT seq, id, status, properties, initiatives FROM nodes WHERE {where}"
            for seq, node_id, status, properties, initiatives in self._db.rows(sql, params):
                due = json_object(properties).get("due") if _DUE in properties else None
                if isinstance(initiatives, str):  # JSON text (SQLite); an array on PostgreSQL
                    listed = shared.get(initiatives)
                    if listed is None:
                        listed = shared[initiatives] = tuple(parse_json(initiatives))
                else:
                    listed = tuple(initiatives)
                out[seq] = TaskFacts(node_id, seq, status, due, listed)
        return out
