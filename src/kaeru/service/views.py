"""Turning stored nodes into what callers see: currentness, successors, initiative names, cut bodies."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kaeru.domain.budget import Cut, allocate, cut
from kaeru.domain.currentness import decide
from kaeru.domain.model import EdgeType, Node, name_at
from kaeru.service import grants
from kaeru.service.mutation import derived_tags, topic_name
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
    # A token limited to some initiatives sees only their names, and only successors and nodes named
    # by properties in them (decision 15.K2): one look-up for both.
    granted = grants.granted_ids(session)
    hiding = hidden_in(session, nodes, (s for n in nodes for s, _ in found.get(n.id, ())))
    views: list[NodeView] = []
    for node in nodes:
        currentness, successors = decide(node.node_type, node.status, node.retracted, found.get(node.id, ()))
        body, body_range = (bodies or {}).get(node.id, (node.body, None))
        if hiding is not None and hiding.hidden:
            successors = [s for s in successors if s not in hiding.hidden]
            stored, node = node, hiding.node(node)
            if node.body != stored.body:  # cut as the stored body was: `bodies` are its pieces
                body, body_range = _cut_alike(node.body, body_range)
        member_ids = [
            i
            for i in node.initiatives
            if (only_initiatives is None or i in only_initiatives) and (granted is None or i in granted)
        ]
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


#: What joins the names of a chain's steps in the body it is saved with when no summary is given.
STEP_ARROW = " → "
#: What a token limited to some initiatives reads for a step outside them in such a body.
HIDDEN_STEP = "…"


def named_ids(node: Node) -> list[str]:
    """The node ids a node's properties name: a saved chain's members and its edges' ends, a rule's
    `applicability.task` (none for another node)."""
    named: list[str] = []
    chain = node.properties.get("chain")
    if isinstance(chain, dict):
        named += map(str, chain.get("members") or ())
        named += [str(i) for edge in chain.get("edges") or () if isinstance(edge, list) for i in edge[:2]]
    applicability = node.properties.get("applicability")
    if isinstance(applicability, dict) and applicability.get("task"):
        named.append(str(applicability["task"]))
    return named


@dataclass(frozen=True)
class Hiding:
    """What a token limited to some initiatives may not read of the nodes that nodes it sees name
    (decision 15.K2): the ids outside its grants, and the names of every node named (a chain saved
    without a summary names its steps in its body)."""

    hidden: frozenset[str]
    names: Mapping[str, str]

    def node(self, node: Node) -> Node:
        """`node` as the token reads it: a chain without its members outside the grants, the edges
        touching them, their names in a body made of its steps' names and the topics drawn only
        from those; a rule scoped to a task outside them still scoped (`applicability.task` null:
        that is a fact about the rule, as a node superseded from outside reads superseded) but not
        naming it. An id alone tells that a node lies in an initiative the token may not see; nothing
        says how many were left out (a count would tell as much). The stored node is unchanged."""
        if self.hidden.isdisjoint(named_ids(node)):
            return node
        properties = dict(node.properties)
        fields: dict[str, Any] = {}
        chain = properties.get("chain")
        if isinstance(chain, dict):
            members = [str(m) for m in chain.get("members") or ()]
            edges = [
                e for e in chain.get("edges") or () if not (isinstance(e, list) and not self.hidden.isdisjoint(e[:2]))
            ]
            properties["chain"] = {**chain, "members": [m for m in members if m not in self.hidden], "edges": edges}
            body = self._steps_body(node.body, members)
            if body != node.body:
                fields["body"] = body
                fields["tags"] = _topics_of(node, body)
        applicability = properties.get("applicability")
        if isinstance(applicability, dict) and applicability.get("task") in self.hidden:
            properties["applicability"] = {**applicability, "task": None}
        return node.evolve(properties=properties, **fields)

    def _steps_body(self, body: str | None, members: list[str]) -> str | None:
        """`body` with the names of the steps outside the grants as `HIDDEN_STEP`, when it is the
        steps' names (`graph._chain` made it so): exactly their names now, or as many names as steps
        (one renamed since); a summary of the agent's own is shown as written."""
        if body is None or self.hidden.isdisjoint(members):
            return body
        if all(m in self.names for m in members) and body == STEP_ARROW.join(self.names[m] for m in members):
            steps = [self.names[m] for m in members]  # (a name may hold the arrow itself)
        else:
            steps = body.split(STEP_ARROW)
            if len(steps) != len(members) or not all(steps):
                return body
        return STEP_ARROW.join(HIDDEN_STEP if m in self.hidden else s for m, s in zip(members, steps, strict=True))


def _topics_of(node: Node, body: str | None) -> tuple[str, ...]:
    """`node`'s tags without the `topic:` ones that `body` (its body as shown) no longer gives: a
    topic drawn from a hidden step's name tells a word of it. None is added."""
    kept = set(derived_tags(topic_name(node.name, node.id), body))
    return tuple(t for t in node.tags if not t.startswith("topic:") or t in kept)


def hidden_in(session: Session, nodes: Sequence[Node], also: Iterable[str] = ()) -> Hiding | None:
    """What a token limited to some initiatives may not read of the nodes `nodes`' properties name
    and of `also` (successors, say), in one look-up; None for a token that sees every initiative."""
    among = grants.hidden_among(session, itertools.chain(also, (i for n in nodes for i in named_ids(n))))
    if among is None:
        return None
    hidden, found = among
    return Hiding(hidden, {i: n.name for i, n in found.items()} if hidden else {})


def _cut_alike(body: str | None, piece: Cut | None) -> tuple[str | None, Cut | None]:
    """`body` (a chain's as a limited token reads it, never longer than the stored one) cut at the
    offsets the stored body was cut at (`piece`: None for whole): a page is no longer, and pages
    continued from one another's ends (`read body_offset`) meet without a gap."""
    if body is None or piece is None:
        return body, None
    total = len(body)
    start, end = min(piece.start, total), min(piece.end, total)
    shown = Cut(body[start:end], start, end, total)
    return shown.text, shown if shown.truncated else None


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
