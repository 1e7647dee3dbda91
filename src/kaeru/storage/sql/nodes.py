"""Reading current nodes, and the membership half of writing one: written once for both engines.

Where a node's revisions live differs (SQLite keeps the current one in `nodes` only, migration 010;
PostgreSQL keeps every revision in `node_revisions`), so `put_node` and the history reads are the
engines' own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kaeru.domain.model import Node
from kaeru.storage.sql.db import Part
from kaeru.storage.sql.rows import NODE_COLS

_NODE = f"SELECT seq, id, {NODE_COLS} FROM nodes"
_BY_ID = f"{_NODE} WHERE id = ?"


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class NodeQueries(Part):
    #: Stored rows a search of this read snapshot already read (seq → `seq, id, NODE_COLS`; id → seq):
    #: `nodes_by_seqs`/`nodes_by_ids` answer them without SQL (decision 64). Empty in a write.
    _stored: dict[int, tuple[Any, ...]]
    _stored_seqs: dict[str, int]

    def get_node(self, node_id: str, *, for_update: bool = False) -> Node | None:
        sql = _BY_ID + self._d.lock(for_update, self._read_only) if for_update else _BY_ID
        row = self._db.one(sql, (node_id,))
        return self._d.node(row[0], row[1], row[2:]) if row else None

    def nodes_by_ids(self, ids: Sequence[str]) -> dict[str, Node]:
        return self._nodes_where("id", "text", ids)

    def nodes_by_seqs(self, seqs: Sequence[int]) -> dict[str, Node]:
        return self._nodes_where("seq", "bigint", seqs)

    def _nodes_where(self, column: str, sql_type: str, keys: Sequence[Any]) -> dict[str, Node]:
        """Current nodes whose `column` (id or seq) is one of `keys`, by id."""
        out: dict[str, Node] = {}
        node = self._d.node
        wanted = list(dict.fromkeys(keys))
        if self._stored:
            seqs = [self._stored_seqs.get(k) for k in wanted] if column == "id" else wanted
            rest = []
            for key, seq in zip(wanted, seqs, strict=True):
                row = self._stored.get(seq) if seq is not None else None
                if row is None:
                    rest.append(key)
                else:
                    out[row[1]] = node(row[0], row[1], row[2:])
            wanted = rest
        for part in self._d.chunks(wanted):
            where, params = self._d.in_(column, part, sql_type)
            for row in self._db.rows(f"{_NODE} WHERE {where}", params):
                out[row[1]] = node(row[0], row[1], row[2:])
        return out

    def live_nodes_named(self, name: str, initiative_ids: Sequence[int] | None) -> list[Node]:
        sql = f"{_NODE} n WHERE name = ? AND retracted = {self._d.false}"
        params: list[Any] = [name]
        if initiative_ids is not None:
            scope, more = self._member_of(initiative_ids)
            sql, params = f"{sql} AND {scope}", [*params, *more]
        found = self._db.rows(f"{sql} ORDER BY recorded_at DESC, seq DESC", params)
        return [self._d.node(r[0], r[1], r[2:]) for r in found]

    def name_candidates(self, wanted: str, initiative_ids: Sequence[int] | None, limit: int) -> list[str]:
        # lower() folds ASCII only on both engines (PostgreSQL's columns are COLLATE "C").
        sql = (
            f"SELECT DISTINCT name FROM nodes n WHERE retracted = {self._d.false} AND node_type <> 'audit_event' "
            "AND (lower(name) LIKE ? ESCAPE '\\' OR lower(name) LIKE ? ESCAPE '\\')"
        )
        params: list[Any] = [f"%{_like(wanted.lower())[:24]}%", f"{_like(wanted.strip()[:3].lower())}%"]
        if initiative_ids is not None:
            scope, more = self._member_of(initiative_ids)
            sql, params = f"{sql} AND {scope}", [*params, *more]
        return [r[0] for r in self._db.rows(f"{sql} ORDER BY name LIMIT ?", [*params, int(limit)])]

    def initiatives_holding_name(self, name: str) -> list[int]:
        found = self._db.rows(
            "SELECT DISTINCT m.initiative_id FROM nodes n JOIN memberships m ON m.node_seq = n.seq "
            f"WHERE n.name = ? AND n.retracted = {self._d.false} ORDER BY m.initiative_id",
            (name,),
        )
        return [r[0] for r in found]

    def live_node_batch(self, after_seq: int, limit: int) -> list[Node]:
        found = self._db.rows(
            f"{_NODE} WHERE seq > ? AND retracted = {self._d.false} AND node_type <> 'audit_event' "
            "ORDER BY seq LIMIT ?",
            (after_seq, int(limit)),
        )
        return [self._d.node(r[0], r[1], r[2:]) for r in found]

    def _move_memberships(
        self, seq: int, old: set[int], new: set[int], facet: str | None = None, old_facet: str | None = None
    ) -> None:
        """A node's memberships go from `old` to `new` initiatives; each carries the node's `facet`
        (its tier and layer, `sections.facet`), which was `old_facet` in the rows it keeps."""
        if gone := sorted(old - new):
            where, params = self._d.in_("initiative_id", gone)
            self._db.run(f"DELETE FROM memberships WHERE node_seq = ? AND {where}", [seq, *params])
        if facet != old_facet and (old & new):
            self._db.run("UPDATE memberships SET facet = ? WHERE node_seq = ?", (facet, seq))
        for added in sorted(new - old):
            self._db.send(
                "INSERT INTO memberships (initiative_id, node_seq, facet) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                (added, seq, facet),
            )
