"""What `supersedes` edges leave behind: cycles when a slot goes back to an earlier holder (decision
294), and facts that read current again when their only successor is forgotten (decision 393).

Taking a slot supersedes its previous holder (`WriteContext.take_slot`): `prod-2` takes
`prod-state` from `prod-1`, `prod-2 supersedes prod-1`. Handing the slot back to `prod-1` (a
rollback) added `prod-1 supersedes prod-2` beside it: each superseded the other, both were hidden
from `search`, and the slot's holder was a superseded node. The edges of the way back are retracted
first (history keeps them), so the newest hand-over alone says which holder is current.

A node keeps its name when it is superseded, so an agent that names a fact as it named it
supersedes the old node again: the new node supersedes the current version(s) above it too
(`supersede_the_current`); `link` and `revise` warn (decision 462)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import Edge, EdgeType, Node
from kaeru.service import grants
from kaeru.service.outcomes import Issue
from kaeru.storage.base import Session

if TYPE_CHECKING:
    from kaeru.service.mutation import WriteContext

#: How many nodes a walk down a supersedes chain visits at most (a chain of slot holders is short;
#: the bound keeps a pathological graph from costing a write more than a few reads).
MAX_CHAIN = 64

#: Nodes named in a `superseded_current_again` warning at most (the rest are counted).
NAMED_AT_MOST = 10


def edges_back_to(session: Session, start: str, target: str) -> list[Edge]:
    """The live `supersedes` edges into `target` on the chains that lead from `start` down to it
    (`start` supersedes … supersedes `target`); none when `target` is not below `start`."""
    frontier, seen, found = [start], {start}, []
    while frontier and len(seen) <= MAX_CHAIN:
        here = set(frontier)
        frontier = []
        for edge in session.live_edges(sorted(here), [EdgeType.SUPERSEDES]):
            if edge.src not in here:
                continue
            if edge.dst == target:
                found.append(edge)
            elif edge.dst not in seen:
                seen.add(edge.dst)
                frontier.append(edge.dst)
    return found


def left_current(session: Session, retracted: Iterable[Edge], leaving: int | None = None) -> list[Node]:
    """The live nodes that a retracted `supersedes` edge was the last live one into: with it gone,
    nothing supersedes them and they read current again (a node is superseded only while a live
    node supersedes it). `leaving`: an initiative being deleted, whose own nodes are forgotten with
    it and so are not counted here. In id order."""
    targets = sorted({e.dst for e in retracted if e.edge_type == EdgeType.SUPERSEDES})
    if not targets:
        return []
    still = {e.dst for e in session.live_edges(targets, [EdgeType.SUPERSEDES])}
    found = session.nodes_by_ids([t for t in targets if t not in still])
    return [
        found[t]
        for t in sorted(found)
        if not found[t].retracted and (leaving is None or found[t].initiatives != (leaving,))
    ]


def current_again(nodes: list[Node], cause: str, field: str) -> Issue:
    """The warning that `nodes` read current again because of `cause` (their successor forgotten):
    `search`, `recall` and `context` answer them as current from now on, which the caller may not
    have meant when it forgot the node that replaced them."""
    named = ", ".join(repr(n.name) for n in nodes[:NAMED_AT_MOST])
    more = f" and {len(nodes) - NAMED_AT_MOST} more" if len(nodes) > NAMED_AT_MOST else ""
    one = len(nodes) == 1
    it = "it" if one else "them"
    return Issue(
        "superseded_current_again",
        f"{named}{more} {'reads' if one else 'read'} current again: nothing supersedes {it} now that {cause} "
        f"(if {'it is' if one else 'they are'} out of date: `link supersedes` from what replaces {it}, or "
        f"`forget` {it})",
        field,
    )


def say_current_again(ctx: WriteContext, gone: list[Edge], cause: str, field: str, leaving: int | None = None) -> None:
    """Warn of the nodes that the retracted edges `gone` (out of forgotten nodes) left current
    again; a limited token is told only of those it may see (15.K2)."""
    back = left_current(ctx.session, gone, leaving)
    hidden = grants.hidden_ids(ctx.session, [n.id for n in back])
    shown = [n for n in back if n.id not in hidden]
    if shown:
        ctx.outcome.issues.append(current_again(shown, cause, field))


#: Nodes a walk up to a node's current successors visits at most. Its steps are bounded by
#: `MAX_CHAIN`, one query each; this bounds their width: a fact superseded by its name again and
#: again (each successor also superseding the one current before it) has as many direct successors.
MAX_AHEAD = 1024


@dataclass(frozen=True)
class Ahead:
    """What supersedes a node: whether a live node does (`superseded`), the chain's heads (the live
    nodes that supersede it, directly or down a chain, that nothing live supersedes: the current
    version, or versions when it forked), and whether the walk stopped at its bound first (`cut`:
    heads beyond it were not seen)."""

    superseded: bool
    heads: list[Node]
    cut: bool


def ahead_of(session: Session, start: str, skip: str | None = None) -> Ahead:
    """`start`'s current successors (`Ahead`), walked level by level (one query a level, at most
    `MAX_CHAIN` levels and `MAX_AHEAD` nodes) through live `supersedes` edges from live nodes, as
    `currentness.decide` counts them. `skip`: a node left out of the walk (a new node whose own
    `supersedes` edge is already written)."""
    seen, frontier, heads = {start}, [start], []
    superseded, cut = False, False
    for _ in range(MAX_CHAIN):
        if not frontier:
            break
        verdicts = session.verdicts_against(frontier)
        following = []
        for here in frontier:
            sources = [s for s, kind in verdicts.get(here, ()) if kind == EdgeType.SUPERSEDES and s != skip]
            if here == start:
                superseded = bool(sources)
            elif not sources:
                heads.append(here)
            for source in sources:
                if source not in seen and len(seen) < MAX_AHEAD:
                    seen.add(source)
                    following.append(source)
                elif source not in seen:
                    cut = True
        frontier = following
    cut = cut or bool(frontier)
    found = session.nodes_by_ids(heads) if heads else {}
    return Ahead(superseded, [found[h] for h in sorted(found)], cut)


def _named(nodes: list[Node]) -> str:
    shown = ", ".join(f"{n.name!r} ({n.id})" for n in nodes[:NAMED_AT_MOST])
    return shown + (f" and {len(nodes) - NAMED_AT_MOST} more" if len(nodes) > NAMED_AT_MOST else "")


def _visible(session: Session, nodes: list[Node]) -> list[Node]:
    """`nodes` without those a limited token may not see: never linked, named or counted (15.K2)."""
    hidden = grants.hidden_ids(session, [n.id for n in nodes])
    return [n for n in nodes if n.id not in hidden]


def supersede_the_current(ctx: WriteContext, new: Node, target: Node, weight: float, field: str) -> list[Node]:
    """Write that `new` supersedes `target` and, when `target` was superseded before, its current
    version(s) too: the heads of the chain above it (`ahead_of`) that are members of the write's
    initiative and visible to the caller. Returns those heads.

    A node keeps its name when it is superseded (decision 294): an agent that superseded "dev server
    port" by the name it gave it, and did so again a session later, superseded the old node twice,
    and both successors read current — two ports in `context`, `search` and `recall`, a conflict
    only `current_state` told. The new node supersedes the node it was asked to (the edge the call
    names) and the version that was current, so that it alone is current (decision 462). The answer
    names the versions it superseded; a head in another initiative is left current and named, a
    hidden one is left unsaid (15.K2)."""
    ahead = ahead_of(ctx.session, target.id, skip=new.id)
    shown = _visible(ctx.session, ahead.heads)
    mine = [h for h in shown if ctx.initiative.id in h.initiatives]
    elsewhere = [h for h in shown if ctx.initiative.id not in h.initiatives]
    ctx.add_edge(new, target, EdgeType.SUPERSEDES, weight)
    for head in mine:
        ctx.add_edge(new, head, EdgeType.SUPERSEDES, weight)
        ctx.mark_affected(head)
    said = []
    if mine:
        one = len(mine) == 1
        said.append(
            f"{target.name!r} was already superseded by {_named(mine)}, {'its current version' if one else 'current'} "
            f"until now: {new.name!r} supersedes {'that' if one else 'those'} too, so that it alone is current "
            f"(a second successor of {target.name!r} would have left two current versions)"
        )
    if elsewhere:
        one = len(elsewhere) == 1
        said.append(
            f"{_named(elsewhere)}, which also supersede{'s' if one else ''} {target.name!r}, "
            f"{'is' if one else 'are'} outside {ctx.initiative.name!r} and stay{'s' if one else ''} current "
            f"beside {new.name!r}"
        )
    if ahead.cut:
        said.append(
            f"the chain of successors above {target.name!r} is longer than a write follows ({MAX_CHAIN} steps, "
            f"{MAX_AHEAD} nodes): a current version beyond may remain; `current_state` names it"
        )
    if said:
        ctx.outcome.issues.append(Issue("superseded_current_too", "; ".join(said), field))
    return mine


def say_forked(ctx: WriteContext, source: Node, target: Node) -> None:
    """Warn when `link` made `source` supersede `target` beside current successors it already had.

    An explicit link may mean a split (one decision replaced by two that both hold), so it is not
    relinked as `supersede_the_current` does: the answer names the other current versions, which
    stay current beside `source`, and the link that ends each (decision 462)."""
    mine = {h.id for h in ahead_of(ctx.session, source.id).heads} or {source.id}
    others = _visible(ctx.session, [h for h in ahead_of(ctx.session, target.id).heads if h.id not in mine])
    if others:
        one = len(others) == 1
        ctx.outcome.issues.append(
            Issue(
                "supersession_forked",
                f"{target.name!r} already had {'a current successor' if one else 'current successors'}, "
                f"{_named(others)}: {'it stays' if one else 'they stay'} current beside {source.name!r} (two "
                f"current versions in `context`, `search` and `recall`); if {source.name!r} replaces "
                f"{'it' if one else 'them'} too, link {source.name!r} to {'it' if one else 'each'} with supersedes",
                "to",
            )
        )


def say_revised_superseded(ctx: WriteContext, node: Node) -> None:
    """Warn when `revise` changed a node something supersedes: readers answer its current successors,
    not this revision (a patch of the superseded source of a fact, named by the name it kept, was
    applied without a word and read by no one). Correcting a past record is allowed."""
    ahead = ahead_of(ctx.session, node.id)
    if not ahead.superseded:
        return
    heads = _visible(ctx.session, ahead.heads)
    if heads:
        one = len(heads) == 1
        current = (
            f"readers (`context`, `search`, `recall`) answer {_named(heads)} as current, not this revision; to "
            f"change the current value, revise {'it' if one else 'them'}"
        )
    else:
        current = "readers answer what supersedes it as current, not this revision"
    ctx.outcome.issues.append(
        Issue("revised_superseded", f"{node.name!r} is superseded: the revision is stored, but {current}", "node")
    )


@dataclass(frozen=True)
class Fork:
    """A node of an initiative with more than one current version above it: `heads`, oldest first."""

    node: Node
    heads: list[Node]


def forks(session: Session, scope: int) -> list[Fork]:
    """The initiative's nodes that two or more current versions supersede, directly or down a chain
    (`reflect`'s `forked_supersession`), in id order; a set of current versions is named once.

    One statement reads the live `supersedes` edges into the initiative's members (`inbound`: its
    cost grows with the initiative's supersessions, not with its nodes), and only the few nodes
    superseded twice are walked, in memory (at most `MAX_AHEAD` nodes each); their heads and the
    forked nodes are then read in two batches — never a query per node of the initiative."""
    into: dict[str, list[str]] = {
        dst: [e.src for e in edges] for dst, edges in session.inbound([scope], [EdgeType.SUPERSEDES.value]).items()
    }
    found: dict[str, list[str]] = {}
    for start in sorted(d for d, sources in into.items() if len(sources) > 1):
        seen, frontier, heads = {start}, [start], []
        while frontier and len(seen) < MAX_AHEAD:
            following = []
            for here in frontier:
                if here != start and here not in into:
                    heads.append(here)
                for source in into.get(here, ()):
                    if source not in seen:
                        seen.add(source)
                        following.append(source)
            frontier = following
        if len(heads) > 1:
            found[start] = heads
    if not found:
        return []
    # A head outside the initiative may be superseded by an edge `inbound` did not read.
    candidates = sorted({h for heads in found.values() for h in heads})
    later = session.verdicts_against(candidates)
    ended = {h for h in candidates if any(kind == EdgeType.SUPERSEDES for _, kind in later.get(h, ()))}
    nodes = session.nodes_by_ids([*found, *candidates])
    out, named = [], set()
    for start, heads in found.items():
        alive = sorted((nodes[h] for h in heads if h not in ended and h in nodes), key=lambda n: (n.created_at, n.id))
        key = frozenset(n.id for n in alive)
        if len(alive) > 1 and start in nodes and key not in named:
            named.add(key)
            out.append(Fork(nodes[start], alive))
    return out


def fork_finding(fork: Fork, base: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """`reflect`'s message and fix for `fork`: the newest version supersedes the one before it (one
    call; the next `reflect` lists what remains). A split meant to stand (both hold) is left."""
    newest, before = fork.heads[-1], fork.heads[-2]
    message = (
        f"{fork.node.name!r} has {len(fork.heads)} current versions, {_named(fork.heads)}: `context`, `search` and "
        f"`recall` answer each as current. If {newest.name!r} replaces {before.name!r}, link it so (the fix); "
        "if they both hold, leave them"
    )
    arguments = {**base, "from": newest.id, "to": before.id, "edge_type": "supersedes", "weight": 1.0}
    return message, {"tool": "link", "arguments": arguments}


def leading(
    session: Session, candidates: list[str], moment: str | None = None, against: dict[str, list[Edge]] | None = None
) -> list[str]:
    """Of a node's live successors `candidates`, those that no other candidate supersedes, directly
    or down a chain: the ones a walk to the current version goes on through. A node superseded by
    `old ← 9090` and by `8443`, which supersedes both (`supersede_the_current`), has one way on,
    8443, not two candidates in conflict. All of them when each is behind another (a cycle).

    `against`: the live verdicts ahead, already read (`verdicts_ahead`, by target); without it they
    are read a level at a time, as of `moment` when given. One walk from all candidates at once, at
    most `MAX_CHAIN` levels and `MAX_AHEAD` nodes, each node knowing which candidates it is above."""

    def above(ids: list[str]) -> dict[str, list[str]]:
        if against is not None:
            return {i: [e.src for e in against.get(i, ()) if e.edge_type == EdgeType.SUPERSEDES] for i in ids}
        found = session.verdicts_against_at(ids, moment) if moment else session.verdicts_against(ids)
        return {i: [s for s, kind in found.get(i, ()) if kind == EdgeType.SUPERSEDES] for i in ids}

    below: dict[str, set[str]] = {c: {c} for c in candidates}
    frontier = list(candidates)
    for _ in range(MAX_CHAIN):
        if not frontier or len(below) > MAX_AHEAD:
            break
        following: dict[str, None] = {}
        for here, sources in above(frontier).items():
            for source in sources:
                known = below.setdefault(source, set())
                if not below[here] <= known:
                    known |= below[here]
                    following[source] = None
        frontier = list(following)
    behind = {c for d in candidates for c in below[d] if c != d}
    return [c for c in candidates if c not in behind] or candidates
