"""The graph views (inbound links, orphans, dangling edges, the timeline): written once for both engines."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from kaeru.domain.model import Edge, EdgeType
from kaeru.storage.sql import db as sqldb
from kaeru.storage.sql import rows
from kaeru.storage.sql.db import Part
from kaeru.storage.sql.edges import type_literals
from kaeru.storage.sql.rows import EDGE_COLS, prefixed

_E_EDGE = prefixed(EDGE_COLS, "e")
SHOWN = "n.node_type NOT IN ('audit_event', 'board')"
#: What `timeline` is asked: since, until, pivot (created_at, seq), before, after.
Asked = tuple[str | None, str | None, tuple[str, int] | None, int, int]
#: Nodes that are no orphans for lack of edges: audit events, boards, and saved chains (a chain's
#: members are in its properties; linking it "to what it is about" fixes nothing — decision 80).
_LINKABLE = "n.node_type NOT IN ('audit_event', 'board', 'chain')"
_EDGE_TYPES = frozenset(e.value for e in EdgeType)


class GraphQueries(Part):
    def inbound(self, initiative_ids: Sequence[int], edge_types: Sequence[str]) -> dict[str, list[Edge]]:
        """Live edges of `edge_types` from live sources into live members, by target id."""
        scope, params = self._member_of(initiative_ids, "t")
        # The types as literals (they are `EdgeType` values): a partial index on one type (PostgreSQL's
        # `edges_contradicts`, decision 16.P1) serves only a query that names it in its text.
        kinds, more = (
            (f"e.edge_type IN ({type_literals(edge_types)})", [])
            if edge_types and all(t in _EDGE_TYPES for t in edge_types)
            else self._d.in_("e.edge_type", edge_types, "text")
        )
        no = self._d.false
        out: dict[str, list[Edge]] = {}
        for row in self._db.rows(
            f"SELECT {_E_EDGE} FROM edges e JOIN nodes t ON t.id = e.dst JOIN nodes s ON s.id = e.src "
            f"WHERE e.retracted = {no} AND {kinds} AND t.retracted = {no} AND s.retracted = {no} AND {scope} "
            "ORDER BY e.dst, e.src, e.edge_type",
            [*more, *params],
        ):
            edge = rows.edge(row)
            out.setdefault(edge.dst, []).append(edge)
        return out

    def linked(self, node_ids: Sequence[str], edge_types: Sequence[str]) -> set[str]:
        """Which of `node_ids` a live edge of `edge_types` from a live source points at: `inbound`'s
        question for nodes already known to be live members, asked of them alone (each a probe of
        the target index) instead of reading every such edge of the initiative (decision 80)."""
        return set(self.inbound_counts(node_ids, edge_types))

    def inbound_counts(self, node_ids: Sequence[str], edge_types: Sequence[str]) -> dict[str, int]:
        """How many live edges of `edge_types` from live sources point at each of `node_ids` (those
        with none are left out): `inbound`'s counts for nodes already known to be live members."""
        d = self._d
        counts: dict[str, int] = {}
        if not any(t in _EDGE_TYPES for t in edge_types):
            return counts
        kinds = f"e.edge_type IN ({type_literals(edge_types)})"
        for chunk in d.chunks(node_ids):
            targets, params = d.in_("e.dst", chunk, "text")
            counts.update(
                (r[0], int(r[1]))
                for r in self._db.rows(
                    f"SELECT e.dst, count(*) FROM edges e JOIN nodes s ON s.id = e.src WHERE {targets} "
                    f"AND e.retracted = {d.false} AND {kinds} AND s.retracted = {d.false} GROUP BY e.dst",
                    params,
                )
            )
        return counts

    def orphans(
        self,
        initiative_ids: Sequence[int],
        limit: int,
        *,
        unless: tuple[Sequence[str], str | Sequence[str]] | None = None,
        layers: Sequence[str] | None = None,
    ) -> list[str]:
        """Live member nodes (not audit events, boards or saved chains) with no live edge at all, oldest first; with
        `unless` = (types, tags), not the nodes of those types that carry one of `tags` (a tag or
        several: `reflect` leaves hygiene's own episodes and decisions out, tested on the orphans'
        rows, which the query reads anyway, not by a search of every episode first — decision 80); with
        `layers`, only the nodes in one of them (`nodes_head` covers the layer, as it does the type)."""
        scope, params = self._members_listed(initiative_ids)
        no = self._d.false
        placed = ""
        layer_params: list[Any] = []
        if layers is not None:
            placed, layer_params = self._d.in_("n.layer", list(layers) or [""], "text")
            placed = f" AND {placed}"
        skip, more = "", []
        types, tags = unless or ((), ())
        if types and tags:
            kinds, kind_params = self._d.in_("n.node_type", list(types), "text")
            column = "h.tags" if self._d.tags_by_key else "n.tags"
            tests = [self._d.has_tag(column, tag) for tag in ([tags] if isinstance(tags, str) else tags)]
            tagged = "(" + " OR ".join(test for test, _ in tests) + ")"
            tag_params = [p for _, test_params in tests for p in test_params]
            if self._d.tags_by_key:  # the row is read only for an orphan of those types (`tags_by_key`)
                tagged = f"EXISTS (SELECT 1 FROM nodes h WHERE h.seq = n.seq AND {tagged})"
            skip = f" AND NOT ({kinds} AND {tagged})"
            more = [*kind_params, *tag_params]
        # The tag test last: written after the edge tests, it runs only on the rows they let through.
        found = self._db.rows(
            f"SELECT n.id FROM nodes n WHERE n.retracted = {no} AND {_LINKABLE}{placed} AND {scope} "
            f"AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.retracted = {no} AND e.src = n.id) "
            f"AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.retracted = {no} AND e.dst = n.id){skip} "
            "ORDER BY n.seq LIMIT ?",
            [*layer_params, *params, *more, int(limit)],
        )
        return [r[0] for r in found]

    def dangling_edges(self, initiative_ids: Sequence[int], limit: int) -> list[Edge]:
        """Live edges touching a live member whose other endpoint is retracted."""
        scope, params = self._member_of(initiative_ids, "a")
        d = self._d
        # From the forgotten nodes (the partial index `nodes_forgotten`, usually few) to their live
        # edges, not from every edge to both of its endpoints' rows (decision 16.R2).
        arm = f"b.retracted = {d.true} AND e.retracted = {d.false} AND a.retracted = {d.false} AND {scope}"
        found = self._db.rows(
            f"SELECT {_E_EDGE} FROM {d.forgotten_source} ON e.dst = b.id JOIN nodes a ON a.id = e.src "
            f"WHERE {arm} UNION SELECT {_E_EDGE} FROM {d.forgotten_source} ON e.src = b.id "
            f"JOIN nodes a ON a.id = e.dst "
            f"WHERE {arm} ORDER BY 1, 2, 3 LIMIT ?",
            [*params, *params, int(limit)],
        )
        return [rows.edge(r) for r in found]

    def timeline(
        self,
        initiative_ids: Sequence[int],
        *,
        since: str | None,
        until: str | None,
        pivot: tuple[str, int] | None,
        before: int,
        after: int,
    ) -> list[str]:
        """Live member ids ordered by (created_at, seq): `before` items preceding and `after` items from
        `pivot` (a (created_at, seq) position), or everything in [since, until] up to `after` items.

        A scope of at most `FEW_MEMBERS` members is read whole and the answer taken from it
        (decision 145); a larger one is walked in time order (`_walked`)."""
        members = self._few_members(initiative_ids)
        if members is not None:
            return _placed(members, (since, until, pivot, before, after))
        return self._walked(initiative_ids, (since, until, pivot, before, after))

    def timelines(
        self, initiative_ids: Sequence[int], pivots: Sequence[tuple[tuple[str, int], int, int]]
    ) -> list[list[str]]:
        """`timeline(…, pivot=p, before=b, after=a)` for each `(p, b, a)` of `pivots`: `recall`'s
        temporal channel asks around all its seeds at once (decision 143): a small scope read once,
        a larger one walked — one walk a pivot here, one statement on PostgreSQL (`_walk_timelines`)."""
        if not pivots:
            return []
        members = self._few_members(initiative_ids)
        if members is not None:
            return [_placed(members, (None, None, p, b, a)) for p, b, a in pivots]
        return self._walk_timelines(initiative_ids, pivots)

    def _few_members(self, initiative_ids: Sequence[int]) -> list[tuple[str, int, str]] | None:
        """The scope's live, shown members as (created_at, seq, id) in that order, or None past
        `FEW_MEMBERS` memberships (an audit event's, facet '', aside).

        A walk in time order passes every node of the vault until it has found enough members: for
        a project that others were written past, around its newest notes that was every node
        written since (decision 145). Reading the members costs what the project holds instead,
        whatever the rest of the vault holds. A read
        snapshot tells a large scope by a count that stops past `FEW_MEMBERS` (`_few`) and
        walks it without reading those rows first."""
        if self._read_only and not self._few(initiative_ids, sqldb.FEW_MEMBERS):
            return None
        where, params = self._d.in_("m.initiative_id", initiative_ids)
        found = self._db.rows(
            "SELECT n.created_at, n.seq, n.id, n.retracted, n.node_type FROM memberships m JOIN nodes n "
            f"ON n.seq = m.node_seq WHERE {where} AND {self._d.any_facet} LIMIT {sqldb.FEW_MEMBERS + 1}",
            params,
        )
        if len(found) > sqldb.FEW_MEMBERS:
            return None
        hidden = ("audit_event", "board")
        # Sorted as the walk's ORDER BY (created_at, seq): text timestamps compare as the engines' C
        # collation does; a node in two initiatives of the scope once.
        return sorted({(str(r[0]), int(r[1]), str(r[2])) for r in found if not r[3] and r[4] not in hidden})

    def _walked(self, initiative_ids: Sequence[int], asked: Asked) -> list[str]:
        """`timeline` (`asked`: its since, until, pivot, before, after) by walking the scope's nodes in
        (created_at, seq) order through `nodes_created`."""
        since, until, pivot, before, after = asked
        scope, params = self._member_of(initiative_ids)
        base = f"FROM nodes n WHERE n.retracted = {self._d.false} AND {SHOWN} AND {scope}"
        window: list[Any] = []
        if since:
            base += " AND n.created_at >= ?"
            window.append(since)
        if until:
            base += " AND n.created_at <= ?"
            window.append(until)
        if pivot is None:
            found = self._db.rows(f"SELECT n.id {base} ORDER BY n.created_at, n.seq LIMIT ?", [*params, *window, after])
            return [r[0] for r in found]
        earlier = self._db.rows(
            f"SELECT n.id {base} AND (n.created_at, n.seq) < (?, ?) ORDER BY n.created_at DESC, n.seq DESC LIMIT ?",
            [*params, *window, *pivot, int(before)],
        )
        later = self._db.rows(
            f"SELECT n.id {base} AND (n.created_at, n.seq) >= (?, ?) ORDER BY n.created_at, n.seq LIMIT ?",
            [*params, *window, *pivot, int(after) + 1],
        )
        return [r[0] for r in reversed(earlier)] + [r[0] for r in later]

    def _walk_timelines(
        self, initiative_ids: Sequence[int], pivots: Sequence[tuple[tuple[str, int], int, int]]
    ) -> list[list[str]]:
        """`timelines` by walking: one walk a pivot (SQLite's small statements are cached and cheap in
        process); PostgreSQL asks in one statement (decision 143)."""
        return [self._walked(initiative_ids, (None, None, p, b, a)) for p, b, a in pivots]


def _placed(members: list[tuple[str, int, str]], asked: Asked) -> list[str]:
    """`timeline`'s answer (`asked`) taken from the scope's members in (created_at, seq) order."""
    since, until, pivot, before, after = asked
    window = members
    if since or until:
        window = [m for m in members if (not since or m[0] >= since) and (not until or m[0] <= until)]
    if pivot is None:
        return [m[2] for m in window[: max(0, int(after))]]
    at = bisect.bisect_left([(m[0], m[1]) for m in window], pivot)
    return [m[2] for m in window[max(0, at - int(before)) : at + int(after) + 1]]
