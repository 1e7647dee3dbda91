"""The re-entry sections (`context`): an initiative's newest members of one layer, counted, read
through an index instead of ranking the whole initiative (issue 16, decision 16.R1).

Each membership row carries its node's `facet` — `<tier>:<layer>`, '' for an audit event; on
SQLite a small integer standing for it (`dialect.FACET_CODES`) — kept by `put_node` (migration 014
on SQLite, 006 on PostgreSQL), and the table's key orders an initiative's members by (facet,
node_seq) (migration 022 / 018, decision 16.T1; the index `memberships_facet` before): a section's
newest nodes are the first entries of one key range, and its size is that range counted, with no
row of `nodes` read.
Nodes with a reminder or a hygiene report are found through the partial index `nodes_attention`
(its condition is the dialect's `attention`, repeated verbatim: SQLite uses a partial index only
for a query that repeats its condition).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kaeru.domain.model import Layer, Node, Tier
from kaeru.storage.sql.db import Part, layer_facets
from kaeru.storage.sql.edges import VERDICT_TYPES, type_literals


def facet(node: Node) -> str | None:
    """The membership facet of a live node: its tier and layer (None: an audit event, never shown)."""
    return None if node.node_type.value == "audit_event" else f"{node.tier.value}:{node.layer.value}"


#: Every facet a live node may carry (what `facet` returns), in key order.
ALL_FACETS = sorted(f"{tier.value}:{layer.value}" for tier in Tier for layer in Layer)

#: `newest_current_members` counts the current members of a facet this large, each tested (about a
#: millisecond on SQLite); past it, the stale members older than the rows read are not told apart.
EXACT_MEMBERS = 1000

#: `newest_in_scope` reads at most this many (initiative, facet) ranges (four initiatives).
NEWEST_RANGES = 40

#: The tags `member_heads`' callers test (`reflect`: hygiene's reports, and decisions, which it
#: never offers to archive while current): rows whose tags hold neither skip decoding.
_HYGIENE, _DECISION = "kind:hygiene", "kind:decision"


class SectionQueries(Part):
    def newest_members(self, initiative_id: int, facets: Sequence[str] | None, limit: int) -> tuple[list[str], int]:
        """Ids of the initiative's live members (audit events aside) whose facet is one of `facets`
        (any facet: None), newest (highest seq) first, at most `limit`; and how many there are."""
        found: list[tuple[int, str]] = []
        total = 0
        # Any facet is every facet, each one range of the key newest first (one range over all of
        # them is ordered by facet first: the newest would be sorted out of the whole initiative).
        for wanted in ALL_FACETS if facets is None else list(dict.fromkeys(facets)):
            rows = self._db.rows(
                "SELECT m.node_seq, n.id FROM memberships m JOIN nodes n ON n.seq = m.node_seq "
                "WHERE m.initiative_id = ? AND m.facet = ? ORDER BY m.node_seq DESC LIMIT ?",
                [initiative_id, self._d.facet_key(wanted), int(limit)],
            )
            found.extend((int(r[0]), r[1]) for r in rows)
            if len(rows) < limit:
                total += len(rows)
            else:
                counted, more = self._facet_count([initiative_id], wanted)
                row = self._db.one(f"SELECT {counted}", more)
                total += int(row[0]) if row else 0
        found.sort(key=lambda r: -r[0])
        return [i for _, i in found[:limit]], total

    def newest_current_members(
        self, initiative_id: int, facets: Sequence[str], limit: int, closing: Sequence[str]
    ) -> tuple[list[str], int]:
        """`newest_members` less the nodes that are no longer current, left out in the statement:
        one a live `supersedes` edge from a live member of the initiative points at, and a task in
        one of the `closing` columns. A layer whose newest thousands were superseded facts or closed
        tasks was read and tested in Python and came back empty (decision 465). The total is the
        current members, counted, in a facet of at most `EXACT_MEMBERS`; in a larger one (counting
        it would test every member) the facet's size less the stale members passed over: those
        older than the last row read are not told apart, as a window read in Python never told them."""
        no = self._d.false
        shut, params = self._d.in_("n.status", list(closing) or [""], "text")
        current = (
            f"NOT (n.node_type = 'task' AND n.status IS NOT NULL AND {shut}) AND NOT EXISTS ("
            "SELECT 1 FROM edges e JOIN nodes s ON s.id = e.src "
            f"WHERE e.dst = n.id AND e.edge_type = 'supersedes' AND e.retracted = {no} AND s.retracted = {no} "
            "AND EXISTS (SELECT 1 FROM memberships sm WHERE sm.node_seq = s.seq AND sm.initiative_id = ?))"
        )
        found: list[tuple[int, str]] = []
        total = 0
        for wanted in dict.fromkeys(facets):
            key = self._d.facet_key(wanted)
            rows = self._db.rows(
                "SELECT m.node_seq, n.id FROM memberships m JOIN nodes n ON n.seq = m.node_seq "
                f"WHERE m.initiative_id = ? AND m.facet = ? AND {current} ORDER BY m.node_seq DESC LIMIT ?",
                [initiative_id, key, *params, initiative_id, int(limit)],
            )
            found.extend((int(r[0]), r[1]) for r in rows)
            if len(rows) < limit:
                total += len(rows)
                continue
            counted, more = self._facet_count([initiative_id], wanted)
            size = self._db.one(f"SELECT {counted}", more)
            if size is not None and int(size[0]) <= EXACT_MEMBERS:
                row = self._db.one(
                    "SELECT count(*) FROM memberships m JOIN nodes n ON n.seq = m.node_seq "
                    f"WHERE m.initiative_id = ? AND m.facet = ? AND {current}",
                    [initiative_id, key, *params, initiative_id],
                )
            else:
                row = self._db.one(
                    f"SELECT {counted} - (SELECT count(*) FROM memberships m WHERE m.initiative_id = ? "
                    "AND m.facet = ? AND m.node_seq >= ?) + ?",
                    [*more, initiative_id, key, int(rows[-1][0]), len(rows)],
                )
            total += int(row[0]) if row else 0
        found.sort(key=lambda r: -r[0])
        return [i for _, i in found[:limit]], total

    def newest_in_scope(self, initiative_ids: Sequence[int], limit: int) -> list[str]:
        """Ids of the `limit` newest live members of the initiatives (audit events aside, boards
        included), newest (highest seq) first: what a search without words or filters returns
        (`recall` normalises lengths by them), read from each (initiative, facet) range of the key.
        A search walks the vault's nodes newest first until `limit` of them are members: for a
        project less busy than others, every node written since its own newest (decision 144). Over more than `NEWEST_RANGES` ranges the walk is kept: a
        scope that broad holds most of the newest nodes, and each range is a subquery to plan."""
        scope = list(dict.fromkeys(initiative_ids))
        if not scope or limit <= 0:
            return []
        live = f"n.retracted = {self._d.false} AND n.node_type <> 'audit_event'"
        if len(scope) * len(ALL_FACETS) > NEWEST_RANGES:
            member, more = self._member_of(scope)
            walked = self._db.rows(
                f"SELECT n.id FROM nodes n WHERE {live} AND {member} ORDER BY n.seq DESC LIMIT ?", [*more, int(limit)]
            )
            return [r[0] for r in walked]
        ranges: list[str] = []
        params: list[Any] = []
        for initiative_id in scope:
            for wanted in ALL_FACETS:
                ranges.append(
                    "SELECT * FROM (SELECT m.node_seq FROM memberships m WHERE m.initiative_id = ? AND m.facet = ? "
                    f"ORDER BY m.node_seq DESC LIMIT ?) AS range{len(ranges)}"
                )
                params += [initiative_id, self._d.facet_key(wanted), int(limit)]
        found_ids = self._db.rows(
            f"SELECT n.id FROM nodes n WHERE n.seq IN ({' UNION ALL '.join(ranges)}) AND {live} ORDER BY n.seq DESC LIMIT ?",
            [*params, int(limit)],
        )
        return [r[0] for r in found_ids]

    def attention_ids(self, initiative_ids: Sequence[int]) -> list[str]:
        """Live member nodes that may hold a `reminder` or a `hygiene` property, oldest first (a
        superset: the caller reads their `properties`)."""
        scope, params = self._member_of(initiative_ids)
        found = self._db.rows(f"SELECT n.id FROM nodes n WHERE {self._d.attention} AND {scope} ORDER BY n.seq", params)
        return [r[0] for r in found]

    def member_heads(
        self, initiative_id: int, tier: str, limit: int
    ) -> list[tuple[str, str, str, str, bool, str, list[str]]]:
        """The initiative's newest `limit` live members of `tier` (audit events aside, and those a live
        member supersedes: search's `omit_superseded`), each as `(id, name, node_type, layer, pinned,
        recorded_at, tags)`: what `reflect` sorts them by, without decoding whole nodes. `tags` is
        empty unless the node's tags may hold `kind:hygiene` or `kind:decision`."""
        d = self._d
        scope, params = self._members_listed([initiative_id])
        # Live verdict edges written as the partial index `edges_verdicts` (SQLite) wants them.
        superseded = (
            "EXISTS (SELECT 1 FROM edges e JOIN nodes s ON s.id = e.src JOIN memberships ms ON ms.node_seq = s.seq "
            f"WHERE e.dst = n.id AND {VERDICT_TYPES} AND e.retracted = {d.false} AND e.edge_type = 'supersedes' "
            f"AND s.retracted = {d.false} AND ms.initiative_id = ?)"
        )
        found = self._db.rows(
            f"SELECT n.id, n.name, n.node_type, n.layer, n.pinned, n.recorded_at, n.tags FROM nodes n "
            f"WHERE n.retracted = {d.false} AND n.node_type <> 'audit_event' AND n.tier = ? AND {scope} "
            f"AND NOT {superseded} ORDER BY n.seq DESC LIMIT ?",
            [tier, *params, initiative_id, int(limit)],
        )
        # Tags are decoded only when their text may hold a tag reflect asks about.
        return [
            (
                r[0],
                r[1],
                r[2],
                r[3],
                bool(r[4]),
                r[5],
                d.items_of(r[6]) if _HYGIENE in (t := str(r[6])) or _DECISION in t else [],
            )
            for r in found
        ]

    def hygiene_candidates(
        self, initiative_id: int, older_than: str, supported_by: Sequence[str], promote_at: int
    ) -> list[str]:
        """Ids of the initiative's live, unpinned members (boards aside) one hygiene pass may move:
        a superset of its moves, found through indexes instead of reading every core, hot and warm
        member (decision 84) — every core one; the hot and warm episodes and tasks (the caller
        tells the finished tasks, which cool as journal entries do) last revised before
        `older_than` (stored times are fixed-width text, so text order is time order); and the warm
        ones that at least `promote_at` live edges of `supported_by` point at, sources unchecked
        (the caller counts the live ones: `inbound_counts`). Those are found from the edges,
        grouped on the target index, so their cost follows the vault's edges, not the initiative's
        warm members."""
        d = self._d

        def facets(*layers: str) -> tuple[str, list[Any]]:
            return self._facets_in(layer_facets(layers))

        live = f"n.retracted = {d.false} AND n.pinned = {d.false} AND n.node_type <> 'board'"
        members = f"FROM memberships m JOIN nodes n ON n.seq = m.node_seq WHERE m.initiative_id = ? AND {live}"
        core, core_params = facets("core")
        aging, aging_params = facets("hot", "warm")
        warm, warm_params = facets("warm")
        kinds = type_literals(supported_by)
        linked = (
            f"SELECT e.dst AS dst FROM edges e WHERE e.retracted = {d.false} AND e.edge_type IN ({kinds}) "
            "GROUP BY e.dst HAVING count(*) >= ?"
        )
        found = self._db.rows(
            f"SELECT n.id {members} AND {core} "
            f"UNION SELECT n.id {members} AND {aging} AND n.node_type IN ('episode', 'task') AND n.recorded_at < ? "
            f"UNION SELECT n.id FROM ({linked}) g CROSS JOIN nodes n CROSS JOIN memberships m "
            f"WHERE n.id = g.dst AND m.node_seq = n.seq AND m.initiative_id = ? AND {warm} AND {live}",
            [
                initiative_id, *core_params,
                initiative_id, *aging_params, older_than,
                int(promote_at), initiative_id, *warm_params,
            ],
        )  # fmt: skip
        return sorted(r[0] for r in found)

    def scope_size(self, initiative_ids: Sequence[int]) -> int:
        """How many live members the initiatives hold, audit events and boards aside, a node counted
        once per initiative (the sum of `tier_counts`): counted in the membership index."""
        if not initiative_ids:
            return 0
        where, params = self._d.in_("m.initiative_id", initiative_ids)
        counted, more = self._facet_count(initiative_ids, None)
        row = self._db.one(
            # The boards first (CROSS JOIN): for one initiative SQLite's planner would walk its members.
            f"SELECT {counted} - (SELECT count(*) FROM nodes n CROSS JOIN memberships m WHERE m.node_seq = n.seq "
            f"AND n.node_type = 'board' AND n.retracted = {self._d.false} AND {where})",
            [*more, *params],
        )
        return int(row[0]) if row else 0

    def tier_counts(self, initiative_ids: Sequence[int]) -> dict[int, dict[str, int]]:
        """Live node counts per initiative and tier, audit events and boards aside: the sizes of the
        initiatives' facets (`_facet_sizes`, no row of `nodes` read: at 1M nodes, joining every
        membership to its node took 0.7 s a page of `initiatives`), less the boards, which are few."""
        out: dict[int, dict[str, int]] = {i: {} for i in initiative_ids}
        if not initiative_ids:
            return out
        for initiative_id, facet_key, size in self._facet_sizes(initiative_ids):
            tiers = out[initiative_id]
            tier = facet_key.split(":", 1)[0]
            tiers[tier] = tiers.get(tier, 0) + size
        where, params = self._d.in_("m.initiative_id", initiative_ids)
        # The boards first: left to itself, the planner may start the join from the memberships and
        # walk every member of a large initiative to find its few boards (decision 136).
        for initiative_id, tier, boards in self._db.rows(
            "SELECT m.initiative_id, n.tier, count(*) FROM memberships m JOIN nodes n ON n.seq = m.node_seq "
            f"WHERE m.node_seq IN (SELECT seq FROM nodes WHERE node_type = 'board' AND retracted = {self._d.false}) "
            f"AND {where} GROUP BY m.initiative_id, n.tier",
            params,
        ):
            tiers = out[int(initiative_id)]
            tiers[tier] = tiers.get(tier, 0) - int(boards)
        return {i: {t: n for t, n in sorted(tiers.items()) if n} for i, tiers in out.items()}

    def _facet_sizes(self, initiative_ids: Sequence[int]) -> list[tuple[int, str, int]]:
        """(initiative, facet, members) of every facet the initiatives' live members carry, a node
        counted once per initiative: ranges of the membership key counted. PostgreSQL reads its
        kept counts instead (decision 16.P1)."""
        where, params = self._d.in_("m.initiative_id", initiative_ids)
        found = self._db.rows(
            f"SELECT m.initiative_id, m.facet, count(*) FROM memberships m WHERE {where} AND {self._d.any_facet} "
            "GROUP BY m.initiative_id, m.facet",
            params,
        )
        return [(int(r[0]), self._d.facet_of(r[1]), int(r[2])) for r in found]

    def _facet_count(self, initiative_ids: Sequence[int], wanted: str | None) -> tuple[str, list[Any]]:
        """A scalar sub-query: how many membership rows of the initiatives carry the facet `wanted`
        (any facet: None), a node counted once per initiative; and its parameters. Here the range of
        the membership key counted; PostgreSQL reads its kept counts instead (decision 16.P1)."""
        where, params = self._d.in_("m.initiative_id", initiative_ids)
        cond, more = (self._d.any_facet, []) if wanted is None else ("m.facet = ?", [self._d.facet_key(wanted)])
        return f"(SELECT count(*) FROM memberships m WHERE {where} AND {cond})", [*params, *more]

    def rule_ids(self, initiative_id: int, limit: int, *, with_replaced: bool = False) -> list[str]:
        """Ids of the initiative's live concepts that may carry `kind:rule` (a superset: callers test
        the decoded tags), newest first: through the partial index `nodes_rules`. A rule a live node
        supersedes or falsifies (SPEC 1.2, across initiatives) is no longer in force, so it is left
        out in the statement unless `with_replaced` (`context`, which still keeps it out of its
        other sections): read and dropped after the limit, a chain of revised rules took the places
        of the rules in force, and every reader had to test currentness again."""
        scope, params = self._member_of([initiative_id])
        no = self._d.false
        # Live verdict edges written as the partial index `edges_verdicts` (SQLite) wants them.
        current = (
            ""
            if with_replaced
            else " AND NOT EXISTS (SELECT 1 FROM edges e JOIN nodes s ON s.id = e.src "
            f"WHERE e.dst = n.id AND {VERDICT_TYPES} AND e.retracted = {no} AND s.retracted = {no})"
        )
        found = self._db.rows(
            f"SELECT n.id FROM {self._d.rule_source} WHERE {self._d.rule} AND {scope}{current} "
            "ORDER BY n.seq DESC LIMIT ?",
            [*params, int(limit)],
        )
        return [r[0] for r in found]
