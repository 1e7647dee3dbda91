"""A trail's pages read in SQL (decision 105): one page of a node's history or of its live links,
and their counts, without reading the rest of the trail. Written once for both engines.

A history is the node's revisions and the revisions of every edge touching it, in the order `trail`
has always shown them: by time; at one moment the node's revisions (by number) before its edge
events (by key, then number). Its page starts past the place of the last entry shown (the cursor's
keyset; a cursor without one: past as many entries as it served, by OFFSET — a history only grows at
its end); a node's live links are paged by key (source, target, type), the cursor's keyset too.
For a token limited to some initiatives, the edge events whose other end it may not see and the
revisions written while the node was in none of them are left out in the same SQL, before paging:
its page reads a page, not the node's whole log (decision 374).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from kaeru.domain.model import Edge, EdgeType
from kaeru.storage.records import EdgeMark, HistoryItem, HistoryPlace, RevisionEntry
from kaeru.storage.sql import rows
from kaeru.storage.sql.db import Part
from kaeru.storage.sql.edges import type_literals
from kaeru.storage.sql.rows import EDGE_COLS, NODE_COLS, prefixed

#: The place of a history entry (`h` is the page): by time, revisions (group 0, key '') first.
_ORDER = "at, grp, src, dst, edge_type, rev_no"
#: The same, backwards (the newest entry first), by position: a source's joined tables have
#: columns of those names too.
_BACKWARDS = "1 DESC, 2 DESC, 3 DESC, 4 DESC, 5 DESC, 7 DESC"
#: A revision entry's revision before it (the page's `h`; its first parameter the node's id).
_PREVIOUS = (
    "CASE WHEN h.grp = 0 THEN (SELECT max(p.rev_no) FROM nodes n JOIN past_revisions p "
    "ON p.node_seq = n.seq WHERE n.id = ? AND p.rev_no < h.rev_no) END"
)
_EDGE_E = prefixed(EDGE_COLS, "e")
#: A revision's blank edge columns typed as an edge's: a source read on its own (`history_tail`)
#: gives PostgreSQL's union no other branch to take an untyped NULL's type from.
_NO_WEIGHT, _NO_FLAG = "CAST(NULL AS DOUBLE PRECISION)", "CAST(NULL AS BOOLEAN)"
_REVISION = prefixed(NODE_COLS, "r") + ", r.request_id, r.actor"


#: Past a place: `recorded_at >= ?` first, so each source is read from its index from there on.
_PAST = "{t} >= ? AND ({t} > ? OR ({g}, {k}) > (?, ?, ?, ?, ?))"


class TrailQueries(Part):
    def _seen(self, column: str, granted: Sequence[int] | None) -> tuple[str, list[Any]]:
        """`column` names a node in one of the `granted` initiatives (none: every node is seen)."""
        if granted is None:
            return "", []
        inside, params = self._d.overlaps("o.initiatives", granted)
        return f" AND EXISTS (SELECT 1 FROM nodes o WHERE o.id = {column} AND {inside})", params

    def _history_parts(
        self,
        node_id: str,
        granted: Sequence[int] | None,
        after: HistoryPlace | None = None,
        until: str | None = None,
    ) -> list[tuple[str, list[Any]]]:
        """The four sources of a history (edges out, edges in, past and current revisions) with the
        columns of `_ORDER`, each from past `after` and recorded no later than `until` when given:
        an edge event's other end outside `granted` is left out, and so is a revision of the node
        that was in none of them (its own memberships decide, as `read … at` its time does)."""
        out, out_params = self._seen("e.dst", granted)
        into, in_params = self._seen("e.src", granted)
        was, was_params = self._was_in("r.initiatives", granted)
        now, now_params = self._was_in("c.initiatives", granted)
        past: list[str] = ["", "", ""]
        more: list[Any] = []
        sources = (
            ("e.recorded_at", 1, "e.src, e.dst, e.edge_type, e.rev_no"),
            ("r.recorded_at", 0, "'', '', '', r.rev_no"),
            ("recorded_at", 0, "'', '', '', rev_no"),
        )
        if after is not None:
            at, _, *rest = after
            more = [at, at, after[1], *rest]
            past = [" AND " + _PAST.format(t=t, g=g, k=k) for t, g, k in sources]
        if until is not None:
            more.append(until)
            past = [f"{p} AND {t} <= ?" for p, (t, _, _) in zip(past, sources, strict=True)]
        edge = f"SELECT e.recorded_at AS at, 1 AS grp, {_EDGE_E} FROM edge_revisions e WHERE "
        blank = "'' AS src, '' AS dst, '' AS edge_type"
        return [
            (f"{edge}e.src = ?{out}{past[0]}", [node_id, *out_params, *more]),
            (f"{edge}e.dst = ? AND e.src <> ?{into}{past[0]}", [node_id, node_id, *in_params, *more]),
            (
                f"SELECT r.recorded_at AS at, 0 AS grp, {blank}, {_NO_WEIGHT}, r.rev_no, NULL, NULL, NULL, {_NO_FLAG} "
                f"FROM nodes n JOIN past_revisions r ON r.node_seq = n.seq WHERE n.id = ?{was}{past[1]}",
                [node_id, *was_params, *more],
            ),
            (
                f"SELECT recorded_at AS at, 0 AS grp, {blank}, {_NO_WEIGHT}, rev_no, NULL, NULL, NULL, {_NO_FLAG} "
                f"FROM nodes c WHERE c.id = ?{now}{past[2]}",
                [node_id, *now_params, *more],
            ),
        ]

    def _was_in(self, column: str, granted: Sequence[int] | None) -> tuple[str, list[Any]]:
        """A revision's own memberships (`column`) hold one of the `granted` initiatives (none: any does)."""
        if granted is None:
            return "", []
        inside, params = self._d.overlaps(column, granted)
        return f" AND {inside}", params

    def revision_before(self, node_id: str, rev_no: int, granted: Sequence[int] | None) -> int | None:
        """The number of the node's latest revision before `rev_no` that was in one of `granted`
        (None: any), or None: what a history page's first revision is compared with when the ones
        between are not shown. Read backwards by the key, so it stops at the first such revision."""
        was, params = self._was_in("r.initiatives", granted)
        row = self._db.one(
            "SELECT r.rev_no FROM nodes n JOIN past_revisions r ON r.node_seq = n.seq "
            f"WHERE n.id = ? AND r.rev_no < ?{was} ORDER BY r.rev_no DESC LIMIT 1",
            [node_id, int(rev_no), *params],
        )
        return int(row[0]) if row else None

    def history_count(self, node_id: str, granted: Sequence[int] | None) -> int:
        """How many entries the node's history has (edge events and revisions outside `granted` not counted)."""
        parts = self._history_parts(node_id, granted)
        sql = " + ".join(f"(SELECT count(*) FROM ({sql}) c{i})" for i, (sql, _) in enumerate(parts))
        row = self._db.one(f"SELECT {sql}", [p for _, params in parts for p in params])
        return int(row[0]) if row else 0

    def history_page(
        self, node_id: str, after: HistoryPlace | None, offset: int, limit: int, granted: Sequence[int] | None
    ) -> list[HistoryItem]:
        """`limit` entries of the node's history past the place `after` (a cursor's keyset: each
        source read from its index from there on, so a page deep in the history costs what the first
        does) or, without one, past the first `offset` (a cursor made before places were kept); edge
        events and revisions outside `granted` are left out before paging. Each entry comes with what
        its action depends on: the revision before it (shown or not)."""
        skip = 0 if after else int(offset)
        until = self._history_bound(node_id, granted, after, skip + int(limit))
        parts = self._history_parts(node_id, granted, after, until)
        union = " UNION ALL ".join(sql for sql, _ in parts)
        sql = f"SELECT h.*, {_PREVIOUS} FROM ({union} ORDER BY {_ORDER} LIMIT ? OFFSET ?) h ORDER BY {_ORDER}"
        params = [node_id, *(p for _, more in parts for p in more), int(limit), skip]
        return self._items(node_id, self._db.rows(sql, params))

    def history_tail(self, node_id: str, limit: int, granted: Sequence[int] | None) -> list[HistoryItem]:
        """The node's last `limit` history entries (its newest page), in the history's order, as
        `history_page` gives them: each source read backwards from its index (by node, then time),
        so the newest page costs a page however long the history (it was reached by walking every
        page from the first)."""
        parts = self._history_parts(node_id, granted)
        newest = " UNION ALL ".join(
            f"SELECT * FROM ({sql} ORDER BY {_BACKWARDS} LIMIT ?) s{i}" for i, (sql, _) in enumerate(parts)
        )
        sql = f"SELECT h.*, {_PREVIOUS} FROM ({newest} ORDER BY {_BACKWARDS} LIMIT ?) h ORDER BY {_ORDER}"
        params = [node_id, *(p for _, more in parts for p in (*more, int(limit))), int(limit)]
        return self._items(node_id, self._db.rows(sql, params))

    def _items(self, node_id: str, found: Sequence[Sequence[Any]]) -> list[HistoryItem]:
        """History rows (`_ORDER`'s columns, an edge's, the revision before) as items, each edge
        event with whether its edge's revision before it was retracted."""
        edges = [rows.edge(row[2:11]) for row in found if row[1] == 1]
        before = self._before(node_id, edges)
        items: list[HistoryItem] = []
        for row in found:
            place = (row[0], row[1], row[2], row[3], row[4], row[6])
            if row[1] == 0:
                items.append(HistoryItem(place, rev_no=row[6], previous_rev=row[11]))
            else:
                edge = rows.edge(row[2:11])
                items.append(HistoryItem(place, edge=edge, previous_retracted=before.get((*edge.key, edge.rev_no))))
        return items

    def _before(self, node_id: str, edges: list[Edge]) -> dict[tuple[str, str, str, int], bool]:
        """For each edge revision, whether the edge's revision before it (in time, then number — the
        history's order) was retracted; none before: absent."""
        out: dict[tuple[str, str, str, int], bool] = {}
        for key, revisions in self.edge_revisions_of(node_id, edges).items():
            for before, revision in pairwise(revisions):
                out[(*key, revision.rev_no)] = before.retracted
        return out

    def edge_revisions_of(self, node_id: str, edges: Sequence[Edge]) -> dict[tuple[str, str, str], list[EdgeMark]]:
        """Every revision of these edges (each touching `node_id`), by key, in the history's order
        (time, then number), each with who made it. Read by the edges' whole keys (a list of
        source, target and type joined to the revisions): no condition names the node alone, so
        every plan looks each edge up by its source — the node at one end and the other ends listed
        let a prepared statement's generic plan take the index by target and time, and read all
        of a hub's revisions for each page."""
        found: dict[tuple[str, str, str], dict[int, EdgeMark]] = {}
        keys = sorted({e.key for e in edges if node_id in (e.src, e.dst)})
        for part in self._d.chunks(keys):
            listed = ", ".join("(?, ?, ?)" for _ in part)
            for src, dst, edge_type, rev_no, at, retracted, actor, request_id in self._db.rows(
                f"WITH k(src, dst, edge_type) AS (VALUES {listed}) "
                "SELECT r.src, r.dst, r.edge_type, r.rev_no, r.recorded_at, r.retracted, r.actor, r.request_id "
                "FROM k JOIN edge_revisions r ON r.src = k.src AND r.dst = k.dst AND r.edge_type = k.edge_type",
                [value for key in part for value in key],
            ):
                mark = EdgeMark(at, rev_no, bool(retracted), actor, request_id)
                found.setdefault((src, dst, edge_type), {})[rev_no] = mark
        return {key: sorted(marks.values(), key=lambda m: (m.at, m.rev_no)) for key, marks in found.items()}

    def _history_bound(
        self, node_id: str, granted: Sequence[int] | None, after: HistoryPlace | None, wanted: int
    ) -> str | None:
        """The time of the `wanted`-th entry past `after` (None: there are fewer): the page lies at
        or before it. Each source gives its first `wanted` times from its index (by node, then
        time), so the page's query then reads about a page from each, not the rest of the history
        (an engine that sorts a source whole before its LIMIT would sort it all)."""
        parts = self._history_parts(node_id, granted, after)
        firsts = " UNION ALL ".join(
            f"SELECT at FROM ({sql} ORDER BY 1 LIMIT ?) s{i}" for i, (sql, _) in enumerate(parts)
        )
        params = [p for _, more in parts for p in (*more, wanted)]
        row = self._db.one(f"SELECT at FROM ({firsts}) b ORDER BY at LIMIT 1 OFFSET ?", [*params, wanted - 1])
        return str(row[0]) if row else None

    def revisions(self, node_id: str, rev_nos: Sequence[int]) -> dict[int, RevisionEntry]:
        """These revisions of the node, by number, with their request ids and actors."""
        out: dict[int, RevisionEntry] = {}
        for part in self._d.chunks(rev_nos):
            where, params = self._d.in_("r.rev_no", part, "integer")
            found = self._db.rows(
                f"SELECT r.node_seq, n.id, {_REVISION} FROM nodes n JOIN past_revisions r ON r.node_seq = n.seq "
                f"WHERE n.id = ? AND {where} UNION ALL SELECT r.seq, r.id, {_REVISION} FROM nodes r "
                f"WHERE r.id = ? AND {where}",
                [node_id, *params, node_id, *params],
            )
            for row in found:
                entry = RevisionEntry(self._d.node(row[0], row[1], row[2:-2]), row[-2], row[-1])
                out[entry.node.rev_no] = entry
        return out

    def _links(
        self, node_id: str, types: Sequence[EdgeType] | None, granted: Sequence[int] | None
    ) -> tuple[str, list[Any]]:
        """The node's live links to live nodes (of `types`; to nodes in `granted`), as one query."""
        kinds = f" AND e.edge_type IN ({type_literals(types)})" if types is not None else ""
        no = self._d.false
        branches, params = [], []
        for end, other, extra in (("src", "dst", ""), ("dst", "src", " AND e.src <> ?")):
            seen, more = ("", []) if granted is None else self._d.overlaps("o.initiatives", granted)
            branches.append(
                f"SELECT {_EDGE_E} FROM edges e JOIN nodes o ON o.id = e.{other} WHERE e.{end} = ?{extra} "
                f"AND e.retracted = {no} AND o.retracted = {no}{kinds}{' AND ' + seen if seen else ''}"
            )
            params += [node_id, *([node_id] if extra else []), *more]
        return " UNION ALL ".join(branches), params

    def links_page(
        self,
        node_id: str,
        types: Sequence[EdgeType] | None,
        after: tuple[str, str, str] | None,
        limit: int,
        granted: Sequence[int] | None,
    ) -> tuple[list[Edge], int]:
        """`limit` of the node's live links to live nodes whose key (source, target, type) sorts after
        `after`, by key; and how many such links there are in all (counted only when the page is full).

        The keys come first, a batch at a time in key order (no other end read for them); only the
        links of a batch are then read and their other ends checked, until the page is full. The count reads
        them all (no index orders a node's inbound links by source, or holds whether they are live)."""
        kinds = f" AND edge_type IN ({type_literals(types)})" if types is not None else ""
        past = " AND (src, dst, edge_type) > (?, ?, ?)"
        keys = (
            f"SELECT src, dst, edge_type FROM edges WHERE src = ?{kinds}{past} UNION ALL "
            f"SELECT src, dst, edge_type FROM edges WHERE dst = ? AND src <> ?{kinds}{past} ORDER BY 1, 2, 3 LIMIT ?"
        )
        batch = limit + 16
        page: list[Edge] = []
        last = after or ("", "", "")
        while len(page) < limit:
            found = [
                (str(r[0]), str(r[1]), str(r[2]))
                for r in self._db.rows(keys, [node_id, *last, node_id, node_id, *last, batch])
            ]
            if not found:
                break
            live = self._live_links(node_id, found, granted)
            page += [live[k] for k in found if k in live][: limit - len(page)]
            if len(found) < batch:
                break
            last = found[-1]
        count = len(page)
        if count == limit:  # a full page: more may follow
            links, params = self._links(node_id, types, granted)
            where, more = ("", []) if after is None else ("WHERE (src, dst, edge_type) > (?, ?, ?) ", list(after))
            row = self._db.one(f"SELECT count(*) FROM ({links}) l {where}", [*params, *more])
            count = int(row[0]) if row else 0
        return page, count

    def _live_links(
        self, node_id: str, keys: list[tuple[str, str, str]], granted: Sequence[int] | None
    ) -> dict[tuple[str, str, str], Edge]:
        """Of the node's links `keys`, the live ones to live nodes (in `granted`), by key."""
        no = self._d.false
        seen, inside = ("", []) if granted is None else self._d.overlaps("o.initiatives", granted)
        out: dict[tuple[str, str, str], Edge] = {}
        for end, other, mine in (("src", "dst", 0), ("dst", "src", 1)):
            # (a link from the node to itself is an outbound one)
            others = [k[1 - mine] for k in keys if k[mine] == node_id and (not mine or k[0] != node_id)]
            for part in self._d.chunks(others):
                where, params = self._d.in_(f"e.{other}", part, "text")
                for row in self._db.rows(
                    f"SELECT {_EDGE_E} FROM edges e JOIN nodes o ON o.id = e.{other} WHERE e.{end} = ? AND {where} "
                    f"AND e.retracted = {no} AND o.retracted = {no}{' AND ' + seen if seen else ''}",
                    [node_id, *params, *inside],
                ):
                    edge = rows.edge(row)
                    out[edge.key] = edge
        wanted = set(keys)
        return {k: e for k, e in out.items() if k in wanted}
