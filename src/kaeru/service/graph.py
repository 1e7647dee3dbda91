"""Edges as an agent manages them: `link` add/remove/reweight, and saved chains (strongest paths)."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from kaeru.domain.model import Edge, EdgeType, Layer, Node, NodeType
from kaeru.errors import InvalidArgument, NotFound
from kaeru.service import grants
from kaeru.service.mutation import WriteContext
from kaeru.service.outcomes import Change, Issue
from kaeru.service.supersession import edges_back_to, say_forked
from kaeru.service.views import STEP_ARROW, hidden_in
from kaeru.storage.base import Initiative, SearchQuery, Session

if TYPE_CHECKING:
    from kaeru.service.requests import LinkRequest

MAX_HOPS = 12
#: The property marking an edge an import wrote (`export.importers.reimport.MARK`): one a re-import
#: may remove when its source no longer says it.
IMPORT_MARK = "imported_from"
COST_FLOOR = 0.001
#: Nodes a path search expands at most (each costs a query or two): past that the walk is cut and
#: reported so, however large and dense the graph (decision 15.P6).
MAX_EXPANDED = 2_000


@dataclass
class Walk:
    """What a bounded walk did: how many nodes it expanded, and whether it was cut short (a path it
    returns then is the strongest through the nodes it expanded, not surely the strongest of all)."""

    expanded: int = 0
    cut: bool = False


def strongest_path(
    session: Session,
    start: str,
    goal: str,
    scope: set[int] | None,
    max_hops: int = MAX_HOPS,
    walk: Walk | None = None,
) -> tuple[list[str], list[Edge], float] | None:
    """Dijkstra over live directed edges with cost `1 − weight + 0.001`; nodes outside `scope` are skipped.

    Returns the node ids, the edges and the total cost, or None when `goal` is unreachable within
    `max_hops`. A path found is the strongest: nodes are expanded cheapest first. Past `MAX_EXPANDED`
    expanded nodes the walk stops (`walk.cut` is set) and returns the cheapest path to `goal` through
    the nodes it expanded, or None when none of them had an edge to it: a goal one weak edge away
    was answered "no path" when many stronger edges led elsewhere (decision 413).
    """
    walk = walk if walk is not None else Walk()
    best: dict[str, float] = {start: 0.0}
    queue: list[tuple[float, int, str, list[str], list[Edge]]] = [(0.0, 0, start, [start], [])]
    # The cheapest path to `goal` pushed so far: the answer if the walk is cut before it pops `goal`.
    reached: tuple[list[str], list[Edge], float] | None = None
    while queue:
        cost, hops, here, path, edges = heapq.heappop(queue)
        if here == goal:
            return path, edges, cost
        if cost > best.get(here, float("inf")) or hops >= max_hops:
            continue
        if walk.expanded >= MAX_EXPANDED:
            walk.cut = True
            return reached
        walk.expanded += 1
        outgoing = [e for e in session.live_edges([here]) if e.src == here and e.dst not in path]
        if scope is not None and outgoing:
            nodes = session.nodes_by_ids([e.dst for e in outgoing])
            outgoing = [
                e
                for e in outgoing
                if e.dst in nodes and not nodes[e.dst].retracted and scope & set(nodes[e.dst].initiatives)
            ]
        for edge in outgoing:
            step = cost + (1.0 - edge.weight) + COST_FLOOR
            if step < best.get(edge.dst, float("inf")):
                best[edge.dst] = step
                heapq.heappush(queue, (step, hops + 1, edge.dst, [*path, edge.dst], [*edges, edge]))
                if edge.dst == goal:
                    reached = [*path, edge.dst], [*edges, edge], step
    return None


def said_path(
    session: Session, source: Node, target: Node, scope: Initiative | None, asker: Literal["trail", "chain"]
) -> tuple[list[str], list[Edge], float, list[Issue]]:
    """The strongest path from `source` to `target` in `scope` as `trail kind=path` and `link
    action=chain` (the `asker`) say it, with the warnings it comes with. NotFound when there is none
    within `MAX_HOPS`; NotFound saying the walk was cut (never "no path": one may lie beyond) when it
    was cut before it saw `target`; a path found by a cut walk comes with the issue `path_search_cut`,
    as a stronger one may lie beyond (decision 413). Each says what the agent can do instead."""
    walk = Walk()
    found = strongest_path(session, source.id, target.id, {scope.id} if scope else None, walk=walk)
    where = f" in {scope.name!r}" if scope else ""
    if asker == "chain":
        absent = f"no directed path of live edges from {source.name!r} to {target.name!r} within {MAX_HOPS} hops{where}"
        detour = "chain through a node in between"
    else:
        absent = f"no directed path from {source.name!r} to {target.name!r} within {MAX_HOPS} hops"
        detour = (
            f"ask for the path from {source.name!r} to a node in between, then from that node on to {target.name!r}"
        )
    cut = (
        f"was cut after the {walk.expanded} nodes nearest to {source.name!r} (at most {MAX_EXPANDED} nodes are walked)"
    )
    if found is None and walk.cut:
        raise NotFound(
            f"the search for a directed path of live edges from {source.name!r} to {target.name!r}{where} "
            f"{cut} without reaching {target.name!r}; a path may exist beyond — {detour}",
            field="to",
        )
    if found is None:
        raise NotFound(absent, field="to")
    issues: list[Issue] = []
    if walk.cut:
        said = (
            f"this is the strongest path from {source.name!r} to {target.name!r}{where} through the nodes the "
            f"search walked, but the search {cut} before it could rule out a stronger one beyond — {detour}"
        )
        issues.append(Issue("path_search_cut", said, "to"))
    return *found, issues


def link(ctx: WriteContext, request: LinkRequest) -> None:
    """Add, remove or reweight a typed edge, or save the strongest path as a chain.

    The schema has required edge_type for remove and reweight (add's defaults to `refers_to`, SPEC
    1.2's default edge, decision 312), and weight for add and reweight."""
    action = request.action
    source = ctx.resolve(request.source, "from")
    target = ctx.resolve(request.to, "to")
    if source.id == target.id:
        raise InvalidArgument(f"{'a chain' if action == 'chain' else 'an edge'} needs two different nodes", field="to")
    if action == "chain":
        _chain(ctx, source, target, request)
        return
    edge_type = EdgeType(request.edge_type or EdgeType.REFERS_TO.value)
    current = ctx.session.get_edge(source.id, target.id, edge_type)
    live = current is not None and not current.retracted
    weight = float(request.weight) if request.weight is not None else 0.0
    if action == "add":
        if edge_type == EdgeType.SUPERSEDES:
            _undo_reverse_supersession(ctx, source, target)
        if live and current is not None and current.weight == weight and IMPORT_MARK in current.properties:
            _made_theirs(ctx, current)
        elif live and current is not None and current.weight == weight:
            ctx.outcome.state = "unchanged"
        else:
            ctx.add_edge(source, target, edge_type, weight)
            before = current.weight if live and current is not None else None
            ctx.outcome.changes.append(Change(f"edge.{edge_type.value}", before, weight))
        if edge_type == EdgeType.SUPERSEDES:
            say_forked(ctx, source, target)
        elif edge_type == EdgeType.BLOCKS and not live:  # a new blocks link: does it close a cycle?
            from kaeru.service.blocking import say_cycle  # imported when first needed (16.S1)

            ctx.outcome.issues += say_cycle(ctx.session, source, target)
    elif action == "reweight":
        if not live or current is None:
            raise NotFound(f"no live {edge_type.value} edge from {source.name!r} to {target.name!r}", field="to")
        if current.weight == weight:
            ctx.outcome.state = "unchanged"
        else:
            ctx.add_edge(source, target, edge_type, weight)
            ctx.outcome.changes.append(Change(f"edge.{edge_type.value}", current.weight, weight))
    else:  # remove
        if not live or current is None:
            raise NotFound(f"no live {edge_type.value} edge from {source.name!r} to {target.name!r}", field="to")
        ctx.retract_edge(current)
        ctx.outcome.changes.append(Change(f"edge.{edge_type.value}", current.weight, None))
    ctx.mark_affected(source)
    ctx.mark_affected(target)
    ctx.outcome.primary = ctx.outcome_ref(source)


def _made_theirs(ctx: WriteContext, edge: Edge) -> None:
    """`edge`, one an import wrote, linked by a person with the weight it has: a revision without
    the import's mark, its labels kept. It is theirs now, and a re-import whose source no longer
    says it leaves it (an unchanged answer left the mark, and a later re-import removed the link
    the person had just made). Linked again, it is unchanged."""
    properties = {k: v for k, v in edge.properties.items() if k != IMPORT_MARK}
    recorded = ctx._stamp(edge.recorded_at)
    ctx.put_edge(replace(edge, rev_no=edge.rev_no + 1, recorded_at=recorded, properties=properties))
    ctx.changes_log.append({"edge": list(edge.key), "weight": edge.weight})
    ctx.outcome.changes.append(Change(f"edge.{edge.edge_type.value}.{IMPORT_MARK}", edge.properties[IMPORT_MARK], None))


def _undo_reverse_supersession(ctx: WriteContext, source: Node, target: Node) -> None:
    """`source` supersedes `target` now: the `supersedes` links that made `target` supersede `source`
    (directly or down a chain) are retracted, with a warning naming them, so the newest link decides
    which is current. Kept, each superseded the other and neither read current: `search` found
    neither, `current_state` had none (decision 376; a slot's hand-back does the same, 294). History
    keeps them; a link from a node outside a limited token's grants is left (15.K2)."""
    back = edges_back_to(ctx.session, target.id, source.id)
    hidden = grants.hidden_ids(ctx.session, [e.src for e in back])
    undone = [e for e in back if e.src not in hidden]
    for edge in undone:
        ctx.retract_edge(edge)
    if undone:
        names = ctx.session.nodes_by_ids([e.src for e in undone])
        said = ", ".join(repr(names[e.src].name) if e.src in names else e.src for e in undone)
        ctx.outcome.issues.append(
            Issue(
                "supersession_reversed",
                f"{target.name!r} superseded {source.name!r} through {said}: those supersedes links were retracted, "
                f"so {source.name!r} alone is current (history keeps them)",
                "to",
            )
        )


def _chain(ctx: WriteContext, source: Node, target: Node, request: LinkRequest) -> None:
    members, edges, cost, doubts = said_path(ctx.session, source, target, ctx.initiative, "chain")
    ctx.outcome.issues += doubts
    rows, _, _ = ctx.session.search(
        SearchQuery(initiative_ids=[ctx.initiative.id], types=[NodeType.CHAIN.value], omit_superseded=False)
    )
    existing = ctx.session.nodes_by_ids([r.id for r in rows])
    for chain in existing.values():
        if chain.properties.get("chain", {}).get("members") == members:
            summary = request.summary
            if summary and summary != chain.body:
                updated = ctx.update_node(chain, body=ctx.clean("summary", summary))
                ctx.outcome.changes.append(Change("body", chain.body, updated.body))
                ctx.outcome.primary = ctx.outcome_ref(updated)
                ctx.mark_affected(updated)
            else:
                ctx.outcome.state = "unchanged"
                ctx.outcome.primary = ctx.outcome_ref(chain)
            return
    names = ctx.session.nodes_by_ids(members)
    default = STEP_ARROW.join(names[m].name for m in members)
    saved = {
        "members": members,
        "edges": [[e.src, e.dst, e.edge_type.value, e.weight] for e in edges],
        "cost": round(cost, 6),
    }
    # The same ends saved before along a path no longer the strongest (reflect's `stale_chain`):
    # saving again moves that chain to the path of today, as a new revision of the same node.
    for chain in sorted(existing.values(), key=lambda n: n.seq):
        before = chain.properties.get("chain", {}).get("members") or []
        if len(before) < 2 or (before[0], before[-1]) != (members[0], members[-1]):
            continue
        if doubts:  # a walk cut at its bound cannot tell the saved path weaker: it stays (decision 413)
            kept = f"; the chain {chain.name!r} saved before between these ends is kept as it was"
            ctx.outcome.issues[ctx.outcome.issues.index(doubts[0])] = Issue(
                "path_search_cut", doubts[0].message + kept, doubts[0].field
            )
            ctx.outcome.state = "unchanged"
            ctx.outcome.primary = ctx.outcome_ref(chain)
            return
        fields: dict[str, object] = {"properties": {**chain.properties, "chain": saved}}
        old_names = ctx.session.nodes_by_ids(before)
        old_default = STEP_ARROW.join(old_names[m].name if m in old_names else m for m in before)
        body = (
            ctx.clean("summary", request.summary)
            if request.summary
            else (default if chain.body == old_default else None)
        )
        # The answer names the steps it had as a read shows them: a token limited to some
        # initiatives reads none outside them, by id or by name (decision 15.K2).
        hiding = hidden_in(ctx.session, [chain])
        shown = hiding.node(chain) if hiding is not None else chain
        if body is not None and body != chain.body:
            fields["body"] = body
            ctx.outcome.changes.append(Change("body", shown.body, body))
        ctx.outcome.changes.append(Change("chain.members", shown.properties["chain"].get("members") or [], members))
        updated = ctx.update_node(chain, **fields)
        ctx.outcome.primary = ctx.outcome_ref(updated)
        ctx.mark_affected(updated)
        return
    body = ctx.clean("summary", request.summary) or default
    name = ctx.clean_name("name", request.name) if request.name else None
    chain = ctx.create_node(
        node_type=NodeType.CHAIN,
        body=body,
        name=name or f"chain-{names[members[0]].name[:40]}-to-{names[members[-1]].name[:40]}",
        tags=["kind:chain"],
        layer=Layer.WARM,
        properties={"chain": saved},
    )
    ctx.outcome.primary = ctx.outcome_ref(chain)
