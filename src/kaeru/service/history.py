"""History reads: `trail` (history, provenance, path, neighbours, chain) and `current_state`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import Edge, EdgeType, Node
from kaeru.domain.refs import parse_ref
from kaeru.domain.timefmt import fmt, parse_moment
from kaeru.errors import AmbiguousRef, CursorInvalid, InvalidArgument, NotFound
from kaeru.service import cursors, grants
from kaeru.service.checks import normalise_initiative
from kaeru.service.graph import said_path
from kaeru.service.outcomes import (
    Coverage,
    Issue,
    Omission,
    StateOutcome,
    TrailEntry,
    TrailOutcome,
)
from kaeru.service.resolve import resolve_node, settled_into
from kaeru.service.runtime import Runtime
from kaeru.service.supersession import leading
from kaeru.service.trail_history import history_trail
from kaeru.service.trail_pages import ENTRY_CHARS, SUBJECT_CHARS, bounded_subject, neighbours, paged
from kaeru.service.views import build_views
from kaeru.storage.base import Initiative, Session

if TYPE_CHECKING:
    from kaeru.service.requests import CurrentStateRequest, TrailRequest

MAX_PROVENANCE_DEPTH = 32
#: The provenance walk visits at most this many ancestors (shown within MAX_PROVENANCE_DEPTH, counted
#: past it); when more lie beyond, an omission with reason `window` says so (decision 13.F3).
PROVENANCE_COUNT = 1000
#: current_state shows at most MAX_PREDECESSORS predecessors and walks at most PREDECESSOR_COUNT
#: (the rest counted as `limit`; past the walk's cap, an omission with reason `window`). Each is a
#: whole node in the answer: 32 are ~22 KB of an agent's context, 256 were ~180 KB (decision 151).
MAX_PREDECESSORS = 32
PREDECESSOR_COUNT = 1000


def _provenance(session: Session, node: Node) -> tuple[list[TrailEntry], int, bool]:
    """The ancestors within `MAX_PROVENANCE_DEPTH`; how many lie deeper (counted, not shown); and
    whether the walk stopped at `PROVENANCE_COUNT` ancestors with more left (decision 13.F3).

    Breadth first, one level at a time: one edge query per level (and one node query per level
    while within the shown depth), so a wide graph costs its depth in queries, not its size.
    """
    entries: list[TrailEntry] = []
    seen = {node.id}
    deeper = 0
    frontier = [node.id]
    depth = 0
    capped = False
    while frontier and not capped:
        edges = _derived_from(session, frontier)
        sources: dict[str, Node] = {}
        if depth < MAX_PROVENANCE_DEPTH:
            sources = session.nodes_by_ids(list(dict.fromkeys(e.dst for e in edges if e.dst not in seen)))
        following: list[str] = []
        shown: list[tuple[Node, Edge]] = []
        for edge in edges:
            if edge.dst in seen or (depth < MAX_PROVENANCE_DEPTH and edge.dst not in sources):
                continue
            if len(seen) > PROVENANCE_COUNT:
                capped = True  # more ancestors lie past the walk's cap
                break
            seen.add(edge.dst)
            following.append(edge.dst)
            if depth >= MAX_PROVENANCE_DEPTH:
                deeper += 1
            else:
                shown.append((sources[edge.dst], edge))
        views = build_views(session, [n for n, _ in shown]) if shown else []
        entries += [
            TrailEntry(kind="ancestor", depth=depth + 1, node=view, edge=edge)
            for view, (_, edge) in zip(views, shown, strict=True)
        ]
        frontier = following
        depth += 1
    return entries, deeper, capped


def _derived_from(session: Session, frontier: list[str]) -> list[Edge]:
    """The live `derived_from` edges out of `frontier`, in the frontier's order (each node's by key)."""
    out: dict[str, list[Edge]] = {}
    wanted = set(frontier)
    for edge in session.live_edges(frontier):
        if edge.src in wanted and edge.edge_type == EdgeType.DERIVED_FROM:
            out.setdefault(edge.src, []).append(edge)
    return [e for here in frontier for e in out.get(here, ())]


def trail(rt: Runtime, request: TrailRequest) -> TrailOutcome:
    """How a node came to be: its revisions and edge events, ancestry, paths, neighbours or chain —
    `limit` entries a page (decision 87): a history only grows at its end, so its pages follow by
    position; neighbours page by key (`trail_pages`)."""
    initiative_name = normalise_initiative(request.initiative)
    kind = request.kind
    edge_types = {EdgeType(t) for t in request.edge_types} if request.edge_types else None
    args = request.wire()
    key = cursors.args_key(args)
    with rt.store.read() as session:
        secret = session.vault_secret() if request.cursor else b""
        state = cursors.decode(secret, request.cursor, "trail", key) if request.cursor else None
        served = state.offset if state is not None else 0
        scope = session.initiative_by_name(initiative_name)
        node = _resolve_any(session, request.node, scope, "node")
        # The subject names the node; its body is cut as `read` cuts it by default (a long body was
        # on every page of its trail).
        subject = bounded_subject(build_views(session, [node])[0])
        coverage = Coverage(initiatives=subject.initiatives)
        cost = None
        doubts: list[Issue] = []  # a path's warnings (said_path)
        if kind == "neighbours":
            after = None
            if state is not None:
                if state.position is None:
                    raise CursorInvalid("cursor is malformed", field="cursor")
                src, _, rest_of_key = state.position
                dst, _, edge_type = rest_of_key.partition("\n")
                after = (src, dst, edge_type)
            entries, rest, last = neighbours(session, node, edge_types, after, request.limit)
            return paged(session, args, key, secret, kind, subject, entries, coverage, served, rest, last)
        if kind == "history":  # each link event naming who made it (`trail_history`)
            return history_trail(
                session,
                node,
                state,
                request.limit,
                initiative_name,
                args,
                key,
                secret,
                subject,
                coverage,
                served,
                newest=request.newest,
            )
        if state is not None and state.position is not None:
            raise CursorInvalid("cursor is malformed", field="cursor")
        if kind == "provenance":
            entries, deeper, capped = _provenance(session, node)
            if deeper:
                coverage.omitted.append(Omission("entries", deeper, "limit"))
            if capped:
                # The walk stopped at PROVENANCE_COUNT ancestors: at least one more lies beyond.
                coverage.omitted.append(Omission("entries", 1, "window"))
            if coverage.omitted:
                coverage.complete = False
        elif kind == "path":
            if request.to is None:
                raise InvalidArgument("kind=path needs `to`", field="to")
            goal = resolve_node(session, request.to, scope, "to")
            ids, edges, cost, doubts = said_path(session, node, goal, scope, "trail")
            nodes = session.nodes_by_ids(ids)
            views = build_views(session, [nodes[i] for i in ids])
            entries = [
                TrailEntry(kind="step", depth=i, node=view, edge=edges[i - 1] if i > 0 else None)
                for i, view in enumerate(views)
            ]
        else:
            members = node.properties.get("chain", {}).get("members")
            if not members:
                raise InvalidArgument(f"{node.name!r} is not a saved chain", field="node")
            nodes = session.nodes_by_ids(members)
            present = [nodes[m] for m in members if m in nodes]
            entries = [
                TrailEntry(kind="member", depth=i, node=view) for i, view in enumerate(build_views(session, present))
            ]
            if len(present) < len(members):
                coverage.complete = False
        entries = _granted_entries(session, entries)[served:]
        page, rest = entries[: request.limit], max(0, len(entries) - request.limit)
        outcome = paged(session, args, key, secret, kind, subject, page, coverage, served, rest, None)
    outcome.cost = cost
    outcome.issues += doubts  # a path found by a walk cut short may not be the strongest (decision 413)
    return outcome


def _granted_entries(session: Session, entries: list[TrailEntry]) -> list[TrailEntry]:
    """The entries a token limited to some initiatives may see: none naming a node outside them (decision 15.K2)."""
    if grants.granted_ids(session) is None:
        return entries
    named: set[str] = set()
    for entry in entries:
        if entry.node is not None:
            named.add(entry.node.node.id)
        if entry.edge is not None:
            named.update((entry.edge.src, entry.edge.dst))
    visible = grants.visible_ids(session, named)
    return [
        e
        for e in entries
        if (e.node is None or e.node.node.id in visible)
        and (e.edge is None or (e.edge.src in visible and e.edge.dst in visible))
    ]


def _resolve_any(session: Session, raw: Any, scope: Initiative | None, field: str) -> Node:
    """Like resolve_node, but an id may name a forgotten node (history outlives it)."""
    if (isinstance(raw, dict) and set(raw) == {"id"}) or isinstance(raw, str):
        node_id = raw["id"] if isinstance(raw, dict) else raw
        node = session.get_node(str(node_id).strip())
        if node is not None and grants.node_visible(node, grants.granted_ids(session)):
            return node
    return resolve_node(session, raw, scope, field)


def current_state(rt: Runtime, request: CurrentStateRequest) -> StateOutcome:
    """What holds a slot, or what currently replaces a node (the schema wants exactly one) — now or as
    of a past moment."""
    initiative_name = normalise_initiative(request.initiative)
    moment = None
    if request.as_of is not None:
        try:
            moment = fmt(parse_moment(request.as_of, rt.now(), zone=rt.settings.zone()))
        except ValueError as exc:
            raise InvalidArgument(f"as_of: {exc}", field="as_of") from exc
    with rt.store.read() as session:
        scope = session.initiative_by_name(initiative_name)
        coverage = Coverage(initiatives=[scope.name] if scope else [])
        if scope is None:  # each miss says why, as `read` does (decision 387)
            from kaeru.service.former_names import unknown_hint

            hint = unknown_hint(session, initiative_name)
            said = Issue("unknown_initiative", f"no initiative named {initiative_name!r}{hint}", "initiative")
            return StateOutcome(status="not_found", coverage=coverage, slot=request.slot, issues=[said])
        if request.slot is not None:
            return _granted_state(session, _slot_state(session, scope, request.slot, moment, coverage))
        try:
            node = _past_or_settled(session, request.node, moment) or resolve_node(session, request.node, scope, "node")
        except AmbiguousRef as exc:
            # Refused, as every tool refuses a name several live nodes hold (SPEC 2.3), even when they
            # are one chain of versions: the message marks which is current, for the agent to name it.
            return StateOutcome(
                status="ambiguous",
                coverage=coverage,
                candidates=list(exc.details.get("candidates", [])),
                issues=[Issue("ambiguous_ref", exc.message, "node")],
            )
        except NotFound as exc:  # misspelt (did you mean …), forgotten (when), or unknown
            return StateOutcome(status="not_found", coverage=coverage, issues=[Issue("not_found", exc.message, "node")])
        return _granted_state(session, _node_state(session, node, moment, coverage))


def _past_or_settled(session: Session, raw: Any, moment: str | None) -> Node | None:
    """The node an id names as `current_state` asks it: as of `moment` even if forgotten since (as
    `read … at` finds it), or now through its settles when it was settled (the memory lives on
    under the successor's id); None to resolve `raw` as any reference."""
    try:
        ref = parse_ref(raw)
    except ValueError as exc:
        raise InvalidArgument(str(exc), field="node") from exc
    if not ref.id:
        return None
    found = session.node_at(ref.id, moment) if moment else session.get_node(ref.id)
    if found is None or not grants.node_visible(found, grants.granted_ids(session)):
        return None
    if not found.retracted:
        return found
    return settled_into(session, found) if moment is None else None


def _granted_state(session: Session, state: StateOutcome) -> StateOutcome:
    """What a token limited to some initiatives may see of a state: no node outside them (decision
    15.K2). A holder or successor outside them is left out as if there were none."""
    if grants.granted_ids(session) is None:
        return state
    named = {v.node.id for v in (state.subject, state.current, *state.predecessors) if v is not None}
    named.update(i for e in state.edges for i in (e.src, e.dst))
    visible = grants.visible_ids(session, named)
    state.predecessors = [v for v in state.predecessors if v.node.id in visible]
    state.edges = [e for e in state.edges if e.src in visible and e.dst in visible]
    if state.current is not None and state.current.node.id not in visible:
        state.current = None
        state.status = "no_current"
    return state


def _view_at(session: Session, node_id: str, moment: str | None) -> Any:
    """The view of one node now or as of `moment`; None when it did not exist."""
    return next(iter(_views_at(session, [node_id], moment)), None)


def _views_at(session: Session, node_ids: list[str], moment: str | None, chars: int = SUBJECT_CHARS) -> list[Any]:
    """The views of `node_ids` that exist (now, or as of `moment`), in that order, built together,
    each body cut to `chars` (decision 377: a current_state answered a 1 MB node whole).
    As of a moment, a node whose revision then lay outside a token's grants is left out, as `read …
    at` refuses it: a revision is seen by the memberships it had (decision 15.K2)."""
    if moment:
        granted = grants.granted_ids(session)
        found = {
            i: n
            for i in dict.fromkeys(node_ids)
            if (n := session.node_at(i, moment)) is not None and grants.node_visible(n, granted)
        }
    else:
        found = session.nodes_by_ids(node_ids)
    nodes = [found[i] for i in node_ids if i in found]
    return [bounded_subject(v, chars) for v in build_views(session, nodes, at=moment)] if nodes else []


def _slot_state(session: Session, scope: Initiative, slot: str, moment: str | None, coverage: Coverage) -> StateOutcome:
    history = [s for s in session.slot_history(scope.id, slot) if moment is None or s.updated_at <= moment]
    if not history:
        from kaeru.domain.similar import suggest  # imported when first needed (decision 16.S1)

        close = suggest(slot, sorted({s.slot for s in session.slots_of(scope.id)}))
        said = f"no slot {slot!r} in {scope.name!r}" + (f"; did you mean {close[0]!r}?" if close else "")
        return StateOutcome(status="not_found", coverage=coverage, slot=slot, issues=[Issue("not_found", said, "slot")])
    state = history[-1]
    # Newest first, each once (a dict keeps the order; a list's `in` made this quadratic).
    holders = list(dict.fromkeys(p.node_id for p in reversed(history[:-1]) if p.node_id and p.node_id != state.node_id))
    # A slot is retaken every session (`handoff`): its past holders are shown newest first up to the
    # same cap as a node's predecessors and counted past it, their views built together (decision 150).
    if len(holders) > MAX_PREDECESSORS:
        coverage.omitted.append(Omission("predecessors", len(holders) - MAX_PREDECESSORS, "limit"))
        coverage.complete = False
    predecessors = _views_at(session, holders[:MAX_PREDECESSORS], moment, ENTRY_CHARS)
    current = _view_at(session, state.node_id, moment) if state.node_id else None
    status = "current" if current is not None and current.currentness.value != "retracted" else "no_current"
    edges = []
    if state.node_id:
        live = session.edges_at([state.node_id], moment) if moment else session.live_edges([state.node_id])
        edges = [e for e in live if e.src == state.node_id and e.edge_type == EdgeType.SUPERSEDES and e.dst in holders]
    return StateOutcome(
        status=status,
        coverage=coverage,
        slot=slot,
        slot_revision=state.revision,
        current=current if status == "current" else None,
        predecessors=predecessors,
        edges=edges,
    )


#: The edges that decide what replaces a node: the only ones `current_state` reads.
_VERDICTS = (EdgeType.SUPERSEDES, EdgeType.FALSIFIES)


def _node_state(session: Session, node: Node, moment: str | None, coverage: Coverage) -> StateOutcome:
    subject = _view_at(session, node.id, moment)
    if subject is None:
        return StateOutcome(status="not_found", coverage=coverage)
    walked = None
    if moment is None and grants.granted_ids(session) is None:
        walked = _ahead_read_once(session, subject)
    here, deciding, conflict = walked or _ahead_step_by_step(session, subject, moment)
    if conflict:
        return StateOutcome(status="conflict", coverage=coverage, subject=subject, edges=deciding, candidates=conflict)
    predecessors, beyond, capped = _predecessors(session, here.node.id, moment, deciding)
    if beyond:
        coverage.omitted.append(Omission("predecessors", beyond, "limit"))
    if capped:
        # The walk stopped at PREDECESSOR_COUNT predecessors: at least one more lies beyond.
        coverage.omitted.append(Omission("predecessors", 1, "window"))
    # The walk from an old node to the head crossed every link of the chain: only the links that
    # touch a node in the answer are shown, the rest counted (3,000 of them were 600 KB, decision 151).
    shown = {subject.node.id, here.node.id, *(v.node.id for v in predecessors)}
    linked = [e for e in deciding if e.src in shown or e.dst in shown]
    if len(linked) < len(deciding):
        coverage.omitted.append(Omission("edges", len(deciding) - len(linked), "limit"))
        deciding = linked
    if coverage.omitted:
        coverage.complete = False
    refuting = [
        e
        for e in (session.edges_at([here.node.id], moment) if moment else session.live_edges([here.node.id], _VERDICTS))
        if e.dst == here.node.id and e.edge_type == EdgeType.FALSIFIES
    ]
    deciding += refuting
    status = "current" if here.currentness.value == "current" else "no_current"
    return StateOutcome(
        status=status,
        coverage=coverage,
        subject=subject,
        current=here if status == "current" else None,
        predecessors=predecessors,
        edges=deciding,
    )


def _ahead_step_by_step(session: Session, subject: Any, moment: str | None) -> tuple[Any, list[Edge], list[str]]:
    """From `subject` along its successors to what replaces it (as of `moment`): the last view
    reached, the `supersedes` links crossed, and the candidates when two live successors conflict
    (the walk stops there). Each step reads the next node's view (its successors under a limited
    token, its edges as of `moment`)."""
    deciding: list[Edge] = []
    here = subject
    visited = {here.node.id}
    while here.successors:
        live = [s for s in here.successors if s not in visited]
        if len(live) > 1 and len(live := leading(session, live, moment)) > 1:
            verdicts = (
                session.edges_at([here.node.id], moment) if moment else session.live_edges([here.node.id], _VERDICTS)
            )
            deciding += [e for e in verdicts if e.dst == here.node.id and e.edge_type == EdgeType.SUPERSEDES]
            return here, deciding, live
        if not live:
            break
        edges = session.edges_at([here.node.id], moment) if moment else session.live_edges([here.node.id], _VERDICTS)
        deciding += [
            e for e in edges if e.dst == here.node.id and e.src == live[0] and e.edge_type == EdgeType.SUPERSEDES
        ]
        nxt = _view_at(session, live[0], moment)
        if nxt is None:
            break
        visited.add(nxt.node.id)
        here = nxt
    return here, deciding, []


def _ahead_read_once(session: Session, subject: Any) -> tuple[Any, list[Edge], list[str]] | None:
    """`_ahead_step_by_step` now and for an unlimited caller, from the verdicts ahead of `subject`
    read in one statement (`verdicts_ahead`, decision 156): the same steps, links and stop, one
    view built at the end. None when the node reached cannot be read (the step-by-step walk decides)."""
    against: dict[str, list[Edge]] = {}
    for edge in session.verdicts_ahead(subject.node.id):
        against.setdefault(edge.dst, []).append(edge)
    deciding: list[Edge] = []
    at = subject.node.id
    visited = {at}
    while True:
        links = [e for e in against.get(at, ()) if e.edge_type == EdgeType.SUPERSEDES]
        live = [s for s in sorted({e.src for e in links}) if s not in visited]
        if len(live) > 1 and len(live := leading(session, live, against=against)) > 1:
            verdicts = session.live_edges([at], _VERDICTS)
            deciding += [e for e in verdicts if e.dst == at and e.edge_type == EdgeType.SUPERSEDES]
            return None, deciding, live
        if not live:
            break
        deciding += [e for e in links if e.src == live[0]]
        visited.add(live[0])
        at = live[0]
    here = subject if at == subject.node.id else _view_at(session, at, None)
    return None if here is None else (here, deciding, [])


def _links_behind(session: Session, start: str, moment: str | None) -> Callable[[list[str]], list[Edge]]:
    """The links out of a level of `_predecessors`' walk: as of `moment`, read level by level; now,
    from the links behind `start` read at once as far as the walk can go (`supersedes_behind`,
    decision 157), and read for the level's other nodes (a leaf, or one past that reach) as before."""
    if moment:
        return lambda frontier: session.edges_at(frontier, moment)
    known: dict[str, list[Edge]] = {}
    for edge in session.supersedes_behind(start, PREDECESSOR_COUNT + 1):
        known.setdefault(edge.src, []).append(edge)

    def links(frontier: list[str]) -> list[Edge]:
        missing = [f for f in frontier if f not in known]
        fetched = session.live_edges(missing, _VERDICTS) if missing else []
        return [e for f in frontier for e in known.get(f, ())] + fetched

    return links


def _predecessors(
    session: Session, start: str, moment: str | None, deciding: list[Edge]
) -> tuple[list[Any], int, bool]:
    """What `start` supersedes, directly or not (breadth first): the views of the first
    `MAX_PREDECESSORS` (their `supersedes` edges join `deciding`), how many more were counted, and
    whether the walk stopped at `PREDECESSOR_COUNT` with more left.

    Now, the links behind `start` are read in one statement first (`_links_behind`); as of a past
    moment, one edge query per level. The shown views are built together.
    """
    links = _links_behind(session, start, moment)
    order: list[tuple[str, Edge]] = []
    seen = {start}
    frontier = [start]
    capped = False
    while frontier and not capped:
        edges = links(frontier)
        wanted = set(frontier)
        by_src: dict[str, list[Edge]] = {}
        for edge in edges:
            if edge.src in wanted and edge.edge_type == EdgeType.SUPERSEDES:
                by_src.setdefault(edge.src, []).append(edge)
        following: list[str] = []
        for edge in (e for here in frontier for e in by_src.get(here, ())):
            if edge.dst in seen:
                continue
            if len(seen) > PREDECESSOR_COUNT:
                capped = True
                break
            seen.add(edge.dst)
            following.append(edge.dst)
            order.append((edge.dst, edge))
        frontier = following
    shown = order[:MAX_PREDECESSORS]
    views = _views_at(session, [i for i, _ in shown], moment, ENTRY_CHARS)
    for _, edge in shown:
        if edge not in deciding:
            deciding.append(edge)
    return views, len(order) - len(shown), capped
