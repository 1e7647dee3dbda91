"""explore_history: every revision of the matched nodes and of their supersession chains, and the
views of those revisions as they were recorded."""

from __future__ import annotations

from kaeru.domain.budget import allocate, cut
from kaeru.domain.currentness import decide
from kaeru.domain.model import Currentness, EdgeType, Node, name_at
from kaeru.service import grants
from kaeru.service.outcomes import NodeView
from kaeru.service.recall.fusion import Fusion
from kaeru.service.views import hidden_in
from kaeru.storage.base import Session

#: explore_history: how many matched nodes have their history listed, how many nodes at most once
#: their supersession chains are added, and how many revisions the listing holds at most.
HISTORY_NODES = 20
HISTORY_CHAIN = 64
HISTORY_REVISIONS = 1000
#: The channels that match the query itself (not neighbours of a match, not priors).
DIRECT_CHANNELS = frozenset({"lexical", "name", "semantic", "proximity", "feedback", "date"})


def key_id(key: str) -> str:
    """The node id of a listing key (`id` or, for explore_history, `id/rev_no`)."""
    return key.split("/", 1)[0]


def history_keys(
    session: Session, fusion: Fusion, ranked: list[str], scope_ids: list[int], has_query: bool
) -> tuple[list[str], int]:
    """explore_history's listing: every revision (`id/rev_no`) of the matched nodes and of their
    supersession chains, oldest first; and how many revisions fell beyond `HISTORY_REVISIONS`.

    Matched: with a query, the best `HISTORY_NODES` ranked nodes that a direct channel found (the
    query's words, name or meaning — not a temporal or graph neighbour); without one, the plan's
    best. Then, breadth first, every node a `supersedes` edge (live or since removed) links to them,
    in either direction, while it belongs to a searched initiative — forgotten predecessors included.
    A token limited to some initiatives lists only the revisions written while their node was in one
    of them, as `read … at` their time shows them (decision 15.K2); the others are not counted.
    """
    if has_query:
        ranked = [i for i in ranked if DIRECT_CHANNELS & set(fusion.scores.get(i, {}))]
    members = list(ranked[:HISTORY_NODES])
    known = set(members)
    frontier = list(members)
    scope = set(scope_ids)
    while frontier and len(members) < HISTORY_CHAIN:
        linked = [
            other
            for edge in session.edge_log(frontier)
            if edge.edge_type == EdgeType.SUPERSEDES
            for other in (edge.src, edge.dst)
            if other not in known
        ]
        found = session.nodes_by_ids(list(dict.fromkeys(linked)))
        frontier = []
        for node_id in dict.fromkeys(linked):
            node = found.get(node_id)
            known.add(node_id)
            if node is not None and scope & set(node.initiatives) and len(members) < HISTORY_CHAIN:
                members.append(node_id)
                frontier.append(node_id)
    granted = grants.granted_ids(session)
    revisions = [
        entry.node
        for node_id in members
        for entry in session.revision_log(node_id)
        if grants.node_visible(entry.node, granted)
    ]
    revisions.sort(key=lambda n: (n.recorded_at, n.id, n.rev_no))
    keys = [f"{n.id}/{n.rev_no}" for n in revisions]
    return keys[:HISTORY_REVISIONS], max(0, len(keys) - HISTORY_REVISIONS)


def history_revisions(session: Session, keys: list[str]) -> list[Node]:
    """The stored revisions a page of explore_history keys names, in the page's order: those the
    caller may see, checked again on every page as a resumed page's nodes are (decision 364). Only
    the page's revisions are read, not each node's whole log."""
    wanted = [(k.split("/", 1)[0], int(k.split("/", 1)[1])) for k in keys]
    granted = grants.granted_ids(session)
    numbers: dict[str, list[int]] = {}
    for node_id, rev_no in wanted:
        numbers.setdefault(node_id, []).append(rev_no)
    logs = {
        node_id: {
            n: e.node for n, e in session.revisions(node_id, revs).items() if grants.node_visible(e.node, granted)
        }
        for node_id, revs in numbers.items()
    }
    return [logs[i][r] for i, r in wanted if r in logs[i]]


def revision_views(
    session: Session, revisions: list[Node], budget: int, scope_ids: list[int]
) -> tuple[list[NodeView], int]:
    """Views of the leading `revisions` that fit `budget` characters, each marked: its own revision
    and recorded_at, and its currentness — that of its node for the node's latest revision, and
    `superseded` (by its node's next revision) for an earlier one that would otherwise read current.

    Each revision names its initiatives (the searched ones only) as they were named at its own
    `recorded_at`, as `read at=<recorded_at>` does; `metadata_is_current` says whether those names
    are known exactly (decision 13.B2).
    """
    granted = allocate([len(n.description or "") + len(n.body or "") for n in revisions], budget) or []
    shown = revisions[: len(granted)]
    ids = list(dict.fromkeys(n.id for n in shown))
    latest = session.nodes_by_ids(ids)
    verdicts = session.verdicts_against(ids)
    history = session.name_history(scope_ids) if shown else {}
    current_names = session.initiative_names(scope_ids) if shown else {}
    # Successors, and nodes the revisions' properties name, outside a token's grants (decision 15.K2):
    # left out as `build_views` leaves them out.
    hiding = hidden_in(session, shown, [src for found in verdicts.values() for src, _ in found])
    hidden = hiding.hidden if hiding is not None else frozenset()
    views: list[NodeView] = []
    truncated = 0
    for revision, grant in zip(shown, granted, strict=True):
        if hiding is not None:
            revision = hiding.node(revision)  # (never longer: a step's name is shown as one character)
        description, body = revision.description or "", revision.body or ""
        room = grant if not body else max(grant // 2, grant - len(body))
        described = cut(description, 0, min(len(description), room))
        cut_body = cut(body, 0, max(grant - len(described.text), 0))
        truncated += described.truncated or cut_body.truncated
        currentness, successors = decide(
            revision.node_type, revision.status, revision.retracted, verdicts.get(revision.id, [])
        )
        successors = [i for i in successors if i not in hidden]
        newest = latest.get(revision.id)
        if newest is not None and revision.rev_no < newest.rev_no and currentness == Currentness.CURRENT:
            currentness = Currentness.SUPERSEDED
        names: list[str] = []
        exact = True
        for initiative_id in revision.initiatives:
            if initiative_id not in history and initiative_id not in current_names:
                continue  # not a searched initiative
            found = name_at(history.get(initiative_id, []), revision.recorded_at)
            if found is None:
                # No recorded name at all: the nearest known one is today's (decision 13.B2).
                exact = False
                if initiative_id in current_names:
                    names.append(current_names[initiative_id])
                continue
            names.append(found[0])
            exact = exact and found[1]
        views.append(
            NodeView(
                node=revision.evolve(description=described.text) if described.truncated else revision,
                initiatives=sorted(names),
                currentness=currentness,
                successors=successors,
                body=cut_body.text if revision.body is not None else None,
                body_range=cut_body if cut_body.truncated else None,
                description_range=described if described.truncated else None,
                metadata_is_current=exact,
            )
        )
    return views, truncated
