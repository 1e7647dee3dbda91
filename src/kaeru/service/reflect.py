"""`reflect`: the maintenance work-list of an initiative, each item with the exact call that fixes it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import EdgeType, NodeType, Tier
from kaeru.domain.similar import suggest
from kaeru.domain.timefmt import fmt
from kaeru.errors import UnknownInitiative
from kaeru.service import grants, tasks
from kaeru.service.graph import strongest_path
from kaeru.service.mutation import normalise_initiative
from kaeru.service.outcomes import Coverage, Omission
from kaeru.service.runtime import Runtime
from kaeru.storage.base import SearchQuery, Session

if TYPE_CHECKING:
    from kaeru.service.requests import ReflectRequest

SETTLE_AGE = timedelta(days=14)
LIMIT = 25
#: How many orphans and dangling edges are read, so that what is past LIMIT is counted exactly.
SCAN = 5000


@dataclass
class ReflectItem:
    kind: str
    message: str
    node: str | None = None
    name: str | None = None
    fix: dict[str, Any] | None = None


@dataclass
class ReflectOutcome:
    initiative: str
    items: list[ReflectItem]
    counts: dict[str, int]
    coverage: Coverage
    issues: list[Any] = field(default_factory=list)


def reflect(rt: Runtime, request: ReflectRequest) -> ReflectOutcome:
    name = normalise_initiative(request.initiative)
    now = rt.now()
    today = rt.today()
    items: list[ReflectItem] = []
    counts: dict[str, int] = {}

    def add(
        kind: str, message: str, fix: dict[str, Any] | None, node_id: str | None = None, node_name: str | None = None
    ) -> None:
        counts[kind] = counts.get(kind, 0) + 1
        if counts[kind] <= LIMIT:
            items.append(ReflectItem(kind, message, node_id, node_name, fix))

    with rt.store.read() as session:
        scope = session.initiative_by_name(name)
        if scope is None:
            raise UnknownInitiative(f"no initiative named {name!r}", field="initiative")
        base = {"initiative": scope.name}
        # Oldest first; only the nodes shown are read (decision 16.R2). Saved chains are never
        # orphans; hygiene's own episodes are left out of the list and the count, tested on the
        # orphans' own rows (80).
        orphan_ids = session.orphans([scope.id], SCAN, unless=((NodeType.EPISODE.value,), "kind:hygiene"))
        nodes = session.nodes_by_ids(orphan_ids[:LIMIT])
        for node in (nodes[i] for i in orphan_ids[:LIMIT] if i in nodes):
            add(
                "orphan",
                f"{node.name!r} is linked to nothing: link it to what it is about, or forget it",
                {
                    "tool": "link",
                    "arguments": {
                        **base,
                        "from": node.id,
                        "to": "<related node>",
                        "edge_type": "refers_to",
                        "weight": 0.5,
                    },
                },
                node.id,
                node.name,
            )
        if len(orphan_ids) > LIMIT:
            counts["orphan"] = counts.get("orphan", 0) + len(orphan_ids) - LIMIT
        doubted = session.inbound([scope.id], [EdgeType.CONTRADICTS.value])
        for target_id, edges in doubted.items():
            target = session.get_node(target_id)
            if target is None:
                continue
            add(
                "open_review",
                f"{target.name!r} is under review ({len(edges)} doubt(s)): resolve and close it",
                {
                    "tool": "review",
                    "arguments": {
                        **base,
                        "action": "close",
                        "target": target_id,
                    },
                },
                target_id,
                target.name,
            )
        cols = tasks.columns(session, scope)
        terminal = tasks.terminal_key(cols)
        rows, _, _ = session.search(
            SearchQuery(
                initiative_ids=[scope.id],
                types=[NodeType.TASK.value],
                statuses=[c["key"] for c in cols if c["key"] != terminal],
                window=5000,
            )
        )
        for task in session.nodes_by_ids([r.id for r in rows]).values():
            due = task.properties.get("due")
            if due and date.fromisoformat(due) < today:
                add(
                    "overdue_task",
                    f"task {task.name!r} was due {due}: finish it or move its due date",
                    {"tool": "task_update", "arguments": {**base, "task": task.id, "status": terminal}},
                    task.id,
                    task.name,
                )
        rows, _, _ = session.search(SearchQuery(initiative_ids=[scope.id], types=[NodeType.CHAIN.value], window=500))
        for chain in session.nodes_by_ids([r.id for r in rows]).values():
            members = chain.properties.get("chain", {}).get("members") or []
            if len(members) < 2:
                continue
            found = strongest_path(session, members[0], members[-1], {scope.id})
            if found is None:  # no path left: saving it again would be refused (decision 310)
                add(
                    "stale_chain",
                    f"chain {chain.name!r} has no path any more: forget it (or link its nodes again and save it)",
                    {"tool": "forget", "arguments": {**base, "node": chain.id, "reason": "its path no longer exists"}},
                    chain.id,
                    chain.name,
                )
            elif found[0] != members:
                add(
                    "stale_chain",
                    f"chain {chain.name!r} no longer matches the strongest path: save it again",
                    {"tool": "link", "arguments": {**base, "action": "chain", "from": members[0], "to": members[-1]}},
                    chain.id,
                    chain.name,
                )
        unfinished = {t.value for t in (NodeType.TASK, NodeType.CHAIN, NodeType.BOARD, NodeType.HYPOTHESIS)}
        # Canonical timestamps are fixed width: text order is time order (`timefmt.fmt`).
        settled_before = fmt(now - SETTLE_AGE)
        # Newest first, read as heads (id, name, type, layer, pin, time, tags), not whole nodes (16.R2);
        # only the old, finished, unpinned ones are asked whether anything refers to them (80).
        settled = [
            (node_id, node_name, layer)
            for node_id, node_name, node_type, layer, pinned, recorded_at, tags in session.member_heads(
                scope.id, Tier.OPERATIONAL.value, SCAN
            )
            if node_type not in unfinished
            and "kind:hygiene" not in tags
            and not pinned
            and recorded_at <= settled_before
        ]
        referred = session.linked(
            [node_id for node_id, _, _ in settled],
            [e.value for e in EdgeType if e not in (EdgeType.SUPERSEDES, EdgeType.CONTRADICTS, EdgeType.FALSIFIES)],
        )
        for node_id, node_name, layer in settled:
            if node_id in referred:
                add(
                    "settle_candidate",
                    f"{node_name!r} is settled knowledge others rely on: settle it into the archive",
                    {"tool": "evolve", "arguments": {**base, "mode": "settle", "source": node_id}},
                    node_id,
                    node_name,
                )
            elif layer in ("core", "hot", "warm"):
                add(
                    "archivable",
                    f"{node_name!r} is old and nothing refers to it: move it out of context",
                    {"tool": "layer", "arguments": {**base, "nodes": [node_id], "layer": "cold"}},
                    node_id,
                    node_name,
                )
        for edge in session.dangling_edges([scope.id], SCAN):
            if edge.edge_type == EdgeType.CONSOLIDATED_TO:
                continue  # a settle's record: its source is retracted on purpose (decision 310)
            add(
                "dangling_reference",
                f"{edge.edge_type.value} edge {edge.src} → {edge.dst} points at a forgotten node",
                {
                    "tool": "link",
                    "arguments": {
                        **base,
                        "action": "remove",
                        "from": {"id": edge.src},
                        "to": {"id": edge.dst},
                        "edge_type": edge.edge_type.value,
                    },
                },
            )
        others = grants.visible_names(i.name for i in session.all_initiatives() if i.id != scope.id)
        for close in suggest(scope.name, others):
            add(
                "near_duplicate_initiative",
                f"{close!r} looks like the same project as {scope.name!r}: merge them",
                {"tool": "initiative", "arguments": {"initiative": close, "action": "merge", "to": scope.name}},
            )
        items[:] = _granted_items(session, items)
    coverage = Coverage(initiatives=[scope.name])
    for kind, count in counts.items():
        if count > LIMIT:
            coverage.complete = False
            coverage.omitted.append(Omission(kind, count - LIMIT, "limit"))
    return ReflectOutcome(scope.name, items, counts, coverage)


def _granted_items(session: Session, items: list[ReflectItem]) -> list[ReflectItem]:
    """The items a token limited to some initiatives may see: none naming a node outside them (decision 15.K2)."""
    if grants.granted_ids(session) is None:
        return items
    mentioned = [grants.mentioned_ids([it.message, it.node, it.fix]) for it in items]
    visible = grants.visible_ids(session, {n for ids in mentioned for n in ids})
    return [it for it, ids in zip(items, mentioned, strict=True) if ids <= visible]
