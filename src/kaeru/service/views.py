"""Turning stored nodes into what callers see: currentness, successors, initiative names, cut bodies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from kaeru.domain.budget import Cut, allocate, cut
from kaeru.domain.currentness import decide
from kaeru.domain.model import EdgeType, Node, name_at
from kaeru.service import grants
from kaeru.service.outcomes import NodeView
from kaeru.storage.base import Session

VerdictMap = dict[str, list[tuple[str, EdgeType]]]


class Verdicts:
    """The live verdict edges against nodes, asked of the store once per node within one snapshot.

    A search needs them twice — to order tied hits by currentness, then to show the page — and the
    page's nodes are among the ones already asked about, so the second ask costs no query.
    """

    def __init__(self, session: Session):
        self._session = session
        self._known: VerdictMap = {}
        self._asked: set[str] = set()

    def none_against(self, ids: Sequence[str]) -> None:
        """Record that no live verdict edge points at `ids` (the storage said so while ranking)."""
        self._asked.update(ids)

    def of(self, ids: Sequence[str]) -> VerdictMap:
        missing = [i for i in ids if i not in self._asked]
        if missing:
            self._known.update(self._session.verdicts_against(missing))
            self._asked.update(missing)
        return {i: self._known[i] for i in ids if i in self._known}


def names_as_of(session: Session, ids: Sequence[int], at: str) -> tuple[dict[int, str], set[int]]:
    """The names initiatives `ids` had at `at`, and the ids whose name then is not known exactly.

    An id with no name history at all (`#<id>`: an initiative that ended before histories were
    kept, with no audit row recording its end) gets no name; one whose history does not cover `at` gets its nearest known name. Both are
    inexact: a view showing them says `metadata_is_current: false`.
    """
    history = session.name_history(ids)
    names: dict[int, str] = {}
    inexact: set[int] = set()
    missing = []
    for initiative_id in set(ids):
        found = name_at(history.get(initiative_id, []), at)
        if found is None:
            missing.append(initiative_id)
            inexact.add(initiative_id)
            continue
        names[initiative_id], exact = found
        if not exact:
            inexact.add(initiative_id)
    names.update(session.initiative_names(missing))
    return names, inexact


def build_views(
    session: Session,
    nodes: Sequence[Node],
    *,
    at: str | None = None,
    bodies: dict[str, tuple[str | None, Cut | None]] | None = None,
    only_initiatives: Mapping[int, str] | None = None,
    verdicts: Verdicts | None = None,
    known: Mapping[int, str] | None = None,
) -> list[NodeView]:
    """Views of `nodes` (current, or as of `at`); `bodies` overrides the shown body per id.

    As of `at`, initiatives are named as they were named then (their name history); a view whose
    initiatives' names then are not known exactly says `metadata_is_current: false`.

    `only_initiatives` (id → name: the caller's resolved scopes) limits the initiatives shown to
    those, and their names need no lookup. `known` (id → name, read in this snapshot) names current
    views' initiatives without looking them up again; the others are looked up.
    """
    ids = [n.id for n in nodes]
    found = session.verdicts_against_at(ids, at) if at else (verdicts or Verdicts(session)).of(ids)
    inexact: set[int] = set()
    if only_initiatives is not None:
        names: Mapping[int, str] = only_initiatives
    elif at is not None:
        names, inexact = names_as_of(session, [i for n in nodes for i in n.initiatives], at)
    else:
        wanted = [i for n in nodes for i in n.initiatives]
        if known:
            names = dict(known)
            if missing := [i for i in wanted if i not in known]:
                names.update(session.initiative_names(missing))
        else:
            names = session.initiative_names(wanted)
    # A token limited to some initiatives sees only their names, and only successors and chain
    # members in them (decision 15.K2).
    granted = grants.granted_ids(session)
    hidden: set[str] = set()
    if granted is not None:
        named = {s for n in nodes for s, _ in found.get(n.id, ())} | {i for n in nodes for i in chain_ids(n)}
        hidden = named - grants.visible_ids(session, named)
    views: list[NodeView] = []
    for node in nodes:
        currentness, successors = decide(node.node_type, node.status, node.retracted, found.get(node.id, ()))
        if hidden:
            successors = [s for s in successors if s not in hidden]
            node = without_hidden_steps(node, hidden)
        member_ids = [
            i
            for i in node.initiatives
            if (only_initiatives is None or i in only_initiatives) and (granted is None or i in granted)
        ]
        body, body_range = (bodies or {}).get(node.id, (node.body, None))
        views.append(
            NodeView(
                node=node,
                initiatives=sorted(names[i] for i in member_ids if i in names),
                currentness=currentness,
                successors=successors,
                body=body,
                body_range=body_range,
                metadata_is_current=not inexact.intersection(member_ids),
            )
        )
    return views


def chain_ids(node: Node) -> list[str]:
    """The node ids a saved chain's properties name: its members and its edges' ends (none for
    another node)."""
    chain = node.properties.get("chain")
    if not isinstance(chain, dict):
        return []
    ends = [str(i) for edge in chain.get("edges") or () if isinstance(edge, list) for i in edge[:2]]
    return [*map(str, chain.get("members") or ()), *ends]


def without_hidden_steps(node: Node, hidden: set[str]) -> Node:
    """`node` with its chain's members and edges outside a token's grants left out, as `trail
    kind=chain` leaves out such a member: an id alone tells that a node lies in an initiative the
    token may not see. Nothing says how many went (a count would tell as much, decision 15.K2)."""
    chain = node.properties.get("chain")
    if not isinstance(chain, dict) or hidden.isdisjoint(chain_ids(node)):
        return node
    members = [m for m in chain.get("members") or () if m not in hidden]
    edges = [e for e in chain.get("edges") or () if not (isinstance(e, list) and not hidden.isdisjoint(e[:2]))]
    return node.evolve(properties={**node.properties, "chain": {**chain, "members": members, "edges": edges}})


def budgeted_views(
    session: Session,
    nodes: Sequence[Node],
    budget: int,
    only_initiatives: Mapping[int, str] | None = None,
    verdicts: Verdicts | None = None,
) -> tuple[list[NodeView], int]:
    """Views of the leading `nodes` whose text fits `budget` characters (description + body).

    Every shown node gets a fair share, cut on word boundaries (the description keeps at least half
    of a node's share when it has a body); nodes that do not fit at all are left out — the caller
    defers them. Returns the views and how many texts were cut.
    """
    lengths = [len(n.description or "") + len(n.body or "") for n in nodes]
    granted = allocate(lengths, budget) or []
    shown = list(nodes[: len(granted)])
    bodies: dict[str, tuple[str | None, Cut | None]] = {}
    descriptions: dict[str, Cut] = {}
    truncated = 0
    for node, grant in zip(shown, granted, strict=True):
        description, body = node.description or "", node.body or ""
        if description:
            room = grant if not body else max(grant // 2, grant - len(body))
            piece = cut(description, 0, min(len(description), room))
            if piece.truncated:
                descriptions[node.id] = piece
                truncated += 1
            grant -= len(piece.text)
        if node.body is None:
            bodies[node.id] = (None, None)
            continue
        if len(body) <= grant:  # fits whole: nothing to cut
            bodies[node.id] = (body, None)
            continue
        part = cut(body, 0, max(grant, 0))
        bodies[node.id] = (part.text, part if part.truncated else None)
        truncated += part.truncated
    views = build_views(session, shown, bodies=bodies, only_initiatives=only_initiatives, verdicts=verdicts)
    return [
        replace(
            v,
            node=v.node.evolve(description=descriptions[v.node.id].text),
            description_range=descriptions[v.node.id],
        )
        if v.node.id in descriptions
        else v
        for v in views
    ], truncated
