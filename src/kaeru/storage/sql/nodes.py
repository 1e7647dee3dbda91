"""Reading nodes now and as they were, and the membership half of writing one: written once for
both engines. A node's current revision lives in `nodes` only (with its request id and actor), the
revisions it moved past in `past_revisions` (SQLite migration 010, PostgreSQL 011)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from kaeru.domain.model import Node
from kaeru.domain.naming import forms
from kaeru.storage.records import RevisionEntry
from kaeru.storage.sql.db import Part
from kaeru.storage.sql.rows import NODE_COLS, parse_json, prefixed

_NODE = f"SELECT seq, id, {NODE_COLS} FROM nodes"
_BY_ID = f"{_NODE} WHERE id = ?"
#: A revision's columns from `past_revisions r` and from `nodes n` (the current one), with its
#: request id and actor.
_REV_R = prefixed(NODE_COLS, "r") + ", r.request_id, r.actor"
_REV_N = prefixed(NODE_COLS, "n") + ", n.request_id, n.actor"
_PAST = f"SELECT r.node_seq, n.id, {_REV_R} FROM nodes n JOIN past_revisions r ON r.node_seq = n.seq"


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
        """`nodes_by_ids` for nodes whose storage sequence numbers are known (`SearchRow.seq`): the
        primary key, so one lookup per node instead of two. Keyed by id."""
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
        # `name` in NFC, or the decomposed form an older kaeru stored (decision 184).
        spelled = forms(name)
        sql = f"{_NODE} n WHERE name IN ({', '.join('?' for _ in spelled)}) AND retracted = {self._d.false}"
        params: list[Any] = list(spelled)
        if initiative_ids is not None:
            scope, more = self._member_of(initiative_ids)
            sql, params = f"{sql} AND {scope}", [*params, *more]
        found = self._db.rows(f"{sql} ORDER BY recorded_at DESC, seq DESC", params)
        return [self._d.node(r[0], r[1], r[2:]) for r in found]

    def live_nodes_suffixed(self, base: str, initiative_ids: Sequence[int], limit: int) -> list[Node]:
        """Live nodes of the initiatives whose name is `base`, a `-` and six characters — an
        auto-name's id suffix (decision 12): a range of the live-name index (`.` is the character
        after `-`)."""
        scope, more = self._member_of(initiative_ids)
        sql = f"{_NODE} n WHERE name >= ? AND name < ? AND length(name) = ? AND retracted = {self._d.false} AND {scope}"
        params = [f"{base}-", f"{base}.", len(base) + 7, *more, int(limit)]
        found = self._db.rows(f"{sql} ORDER BY name, seq LIMIT ?", params)
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

    def forgotten_marked(self, initiative_id: int, mark: str, fmt: str) -> dict[str, str]:
        """The nodes forgotten while in `initiative_id` whose property `mark` is an object with
        `format` = `fmt` and a text `key` (what an import wrote): key → node id. A forgotten node
        leaves `memberships`, but its current row keeps the initiatives it was in, and the forgotten
        rows are the partial index `nodes_forgotten`: no past revision is read. The mark's name
        narrows the scan; the exact test runs here, as `nodes_with_property`'s does."""
        scope, params = self._d.overlaps("n.initiatives", [initiative_id])
        found = self._db.rows(
            f"SELECT n.id, n.properties FROM nodes n WHERE n.retracted = {self._d.true} AND {scope} "
            "AND n.properties LIKE ? ESCAPE '\\'",  # unordered: SQLite then reads the partial index
            [*params, f"%{_like(json.dumps(mark))}%"],
        )
        out: dict[str, str] = {}
        for node_id, properties in found:
            value = parse_json(properties).get(mark)
            if isinstance(value, dict) and value.get("format") == fmt and isinstance(value.get("key"), str):
                out[value["key"]] = node_id
        return out

    def live_node_batch(self, after_seq: int, limit: int) -> list[Node]:
        """Live nodes (not audit) with seq > after_seq, in seq order: for reindexing."""
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
        (its tier and layer, `sections.facet`), which was `old_facet` in the rows it keeps. The facet
        is part of the table's key (migration 022 on SQLite, 018 on PostgreSQL), so an audit event's
        rows carry '' (None here; stored as the dialect's `facet_key`)."""
        if gone := sorted(old - new):
            where, params = self._d.in_("initiative_id", gone)
            self._db.run(f"DELETE FROM memberships WHERE node_seq = ? AND {where}", [seq, *params])
        if facet != old_facet and (old & new):
            self._db.run("UPDATE memberships SET facet = ? WHERE node_seq = ?", (self._d.facet_key(facet), seq))
        for added in sorted(new - old):
            self._db.send(
                "INSERT INTO memberships (initiative_id, node_seq, facet) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                (added, seq, self._d.facet_key(facet)),
            )

    # --- revisions ------------------------------------------------------------------------------
    def _entry(self, row: tuple[Any, ...]) -> RevisionEntry:
        return RevisionEntry(self._d.node(row[0], row[1], row[2:-2]), row[-2], row[-1])

    def node_at(self, node_id: str, moment: str) -> Node | None:
        # The current revision has the highest rev_no; recorded_at grows with rev_no.
        row = self._db.one(
            f"SELECT n.seq, n.id, {_REV_N} FROM nodes n WHERE n.id = ? AND n.recorded_at <= ? UNION ALL "
            f"SELECT * FROM ({_PAST} WHERE n.id = ? AND r.recorded_at <= ? ORDER BY r.rev_no DESC LIMIT 1) p "
            "ORDER BY rev_no DESC LIMIT 1",
            (node_id, moment, node_id, moment),
        )
        return self._entry(row).node if row else None

    def revision_log(self, node_id: str) -> list[RevisionEntry]:
        """Every revision of a node, oldest first, with its request_id and actor."""
        found = self._db.rows(
            f"{_PAST} WHERE n.id = ? UNION ALL SELECT n.seq, n.id, {_REV_N} FROM nodes n WHERE n.id = ? "
            "ORDER BY rev_no",
            (node_id, node_id),
        )
        return [self._entry(r) for r in found]

    def revision_of(self, node_id: str, rev_no: int) -> str | None:
        """The revision token of the node's revision `rev_no`, None when the vault has no such revision:
        an import tells a record it holds from another vault's revision of that number (decision 315).
        The node's `seq` is a scalar subquery, found once: as a join, a plan made before PostgreSQL
        had statistics read the whole of `nodes` for each past revision of that number (an import)."""
        row = self._db.one(
            "SELECT n.revision FROM nodes n WHERE n.id = ? AND n.rev_no = ? UNION ALL "
            "SELECT r.revision FROM past_revisions r WHERE r.node_seq = (SELECT seq FROM nodes WHERE id = ?) "
            "AND r.rev_no = ?",
            (node_id, rev_no, node_id, rev_no),
        )
        return str(row[0]) if row is not None else None

    def has_revision(self, node_id: str, rev_no: int) -> bool:
        sql = (
            "SELECT 1 FROM nodes n WHERE n.id = ? AND (n.rev_no = ? OR EXISTS (SELECT 1 FROM past_revisions r "
            "WHERE r.node_seq = n.seq AND r.rev_no = ?))"
        )
        return self._db.one(sql, (node_id, rev_no, rev_no)) is not None

    def _live_at(self, node_ids: Sequence[str], moment: str) -> set[str]:
        live: set[str] = set()
        for part in self._d.chunks(node_ids):
            # The revision in force at `moment`: the current one if recorded by then, else the latest
            # past one recorded by then (none: the node did not exist yet).
            where, params = self._d.in_("n.id", part, "text")
            found = self._db.rows(
                f"SELECT n.id FROM nodes n WHERE {where} AND CASE WHEN n.recorded_at <= ? THEN n.retracted "
                "ELSE (SELECT r.retracted FROM past_revisions r WHERE r.node_seq = n.seq AND r.recorded_at <= ? "
                f"ORDER BY r.rev_no DESC LIMIT 1) END = {self._d.false}",
                [*params, moment, moment],
            )
            live.update(r[0] for r in found)
        return live

    def export_revisions(self, initiative_ids: Sequence[int] | None) -> Iterator[RevisionEntry]:
        """Every node revision (of nodes in these initiatives, or all), by (node's first record, rev_no)."""
        where, params = "1 = 1", []
        if initiative_ids is not None:
            # Every node that ever belonged to one of these initiatives, with its whole history.
            now, now_params = self._d.overlaps("n.initiatives", initiative_ids)
            past, past_params = self._d.overlaps("x.initiatives", initiative_ids)
            where = f"({now} OR EXISTS (SELECT 1 FROM past_revisions x WHERE x.node_seq = n.seq AND {past}))"
            params = [*now_params, *past_params]
        # Nodes in the order the vault recorded them (an import reproduces it), each node's revisions
        # in rev_no order.
        sql = (
            f"SELECT n.seq AS node_order, r.node_seq, n.id, {_REV_R} FROM nodes n "
            f"JOIN past_revisions r ON r.node_seq = n.seq WHERE {where} "
            f"UNION ALL SELECT n.seq, n.seq, n.id, {_REV_N} FROM nodes n WHERE {where} "
            "ORDER BY node_order, rev_no"
        )
        for row in self._db.stream(sql, [*params, *params]):
            yield self._entry(row[1:])
