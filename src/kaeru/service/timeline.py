"""`timeline`: nodes in time order around an anchor, around the best match of a query, or in a window.

A walk pages forward in (created_at, seq) order, both fixed for a node's whole life: the cursor
carries the last shown item's position (signed, see `cursors`), and the next page starts strictly
after it. Writes between pages therefore never repeat an item nor skip one that existed when the
walk began (a node recorded later with an earlier `occurred_at` lands behind the walk and is not
shown; a node forgotten meanwhile is simply absent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kaeru.domain.budget import allocate, cut
from kaeru.domain.model import Node
from kaeru.domain.refs import parse_ref
from kaeru.domain.text import query_tokens
from kaeru.domain.timefmt import fmt, parse_moment
from kaeru.errors import AmbiguousRef, CursorInvalid, InvalidArgument, NotFound
from kaeru.service import cursors
from kaeru.service.outcomes import Continuation, Coverage, Omission, ReadOutcome
from kaeru.service.recall.dated import CHANGES_READ
from kaeru.service.resolve import MAX_LISTED, resolve_node
from kaeru.service.runtime import Runtime
from kaeru.service.search import resolve_scopes
from kaeru.service.views import build_views
from kaeru.storage.base import Initiative, SearchQuery, Session

if TYPE_CHECKING:
    from kaeru.service.requests import TimelineRequest

#: How many of the items a page leaves out (after it, and before an anchor) it counts exactly: it
#: reads that many ids more (ids only), plus one to know whether more lie beyond. Past them the
#: count is a lower bound, named by an omission with reason `window` (decision 13.F2).
COUNT_WINDOW = 200
#: A window without an end, for the changes made in it (past every canonical time).
_NO_END = "9999-12-31T23:59:59.999999Z"


def timeline(rt: Runtime, request: TimelineRequest) -> tuple[ReadOutcome, str | None]:
    """One page of the walk and the anchor's id (None for a window, and on a cursor's pages)."""
    before, after, limit, budget = request.before, request.after, request.limit, request.budget_chars
    moments = {}
    for key, raw in (("since", request.since), ("until", request.until)):
        if raw is not None:
            try:
                # A date is a whole day of the user's calendar: `since` its start, `until` its end
                # (decisions 285, 342).
                moments[key] = fmt(parse_moment(raw, rt.now(), key == "since", rt.settings.zone()))
            except ValueError as exc:
                raise InvalidArgument(f"{key}: {exc}", field=key) from exc
    if request.anchor is not None and request.query is not None:
        raise InvalidArgument("give anchor or query, not both", field="query")
    since, until = moments.get("since"), moments.get("until")
    if since is not None and until is not None and since > until:  # canonical times: text order is time order
        # An empty window answered `ok` with nothing: the agent read "nothing happened" (decision 316).
        raise InvalidArgument(
            f"since ({request.since}) is after until ({request.until}): the window holds no moment; swap them",
            field="since",
        )
    args = request.wire()
    key = cursors.args_key(args)
    with rt.store.read() as session:
        scopes, issues = resolve_scopes(session, request.initiatives)
        coverage = Coverage(initiatives=[s.name for s in scopes])
        if not scopes:
            return ReadOutcome(hits=[], total=0, coverage=coverage, issues=issues), None
        ids = [s.id for s in scopes]
        secret = session.vault_secret() if request.cursor else b""
        anchor: Node | None = None
        served = 0  # items shown by the walk's earlier pages
        position: tuple[str, int] | None = None  # where a later page starts
        changes: list[tuple[str, int, str]] = []  # memories made before the window and changed in it
        if request.anchor is None and request.query is None and since is not None:
            changes, read_all = session.changed_in(ids, since, until or _NO_END, CHANGES_READ)
            if not read_all:  # the log of changes was not read back to `since`: one may be missing
                coverage.omitted.append(Omission("timeline", 1, "window"))
        if request.cursor:
            # A later page: `limit` items strictly after the last one shown, whatever the first page's mode.
            state = cursors.decode(secret, request.cursor, "timeline", key)
            if state.position is None:
                raise CursorInvalid("cursor is malformed", field="cursor")
            served = state.offset
            moment, seq, last = state.position
            position = (moment, seq)
            reach = limit + COUNT_WINDOW + 1
            rest = session.timeline(ids, since=since, until=until, pivot=(moment, seq), before=0, after=reach)
            if rest and rest[0] == last:
                rest = rest[1:]
            found, later = rest[:limit], rest[limit : limit + COUNT_WINDOW + 1]
        else:
            anchor = _anchor(session, request, ids, scopes)
            if anchor is None:
                reach = limit + COUNT_WINDOW + 1
                walk = session.timeline(ids, since=since, until=until, pivot=None, before=0, after=reach)
                found, later = walk[:limit], walk[limit:]
            else:
                found, later, earlier = _around(session, ids, since, until, anchor, before, after)
                _count_left_out(coverage, "before", earlier)
        placed: dict[str, str] = {}  # a changed memory's place: the time of its change
        if changes:
            found, later, placed = _merged(session, found, later, changes, position, limit)
        nodes = session.nodes_by_ids(found)
        for node_id, moment in placed.items():
            if node_id in nodes and nodes[node_id].recorded_at > moment:  # as it was after that change
                nodes[node_id] = session.node_at(node_id, moment) or nodes[node_id]
        ordered = [nodes[i] for i in found if i in nodes]
        grants = allocate([len(n.body or "") for n in ordered], budget) or []
        shown = ordered[: len(grants)]
        deferred = len(ordered) - len(shown)
        if deferred:
            coverage.omitted.append(Omission("timeline", deferred, "budget"))
        beyond = len(later) > COUNT_WINDOW  # more lie past the counted window
        later = later[:COUNT_WINDOW]
        _count_left_out(coverage, "timeline", len(later) + beyond)
        bodies = {}
        for node, grant in zip(shown, grants, strict=True):
            piece = cut(node.body or "", 0, grant)
            bodies[node.id] = (piece.text if node.body is not None else None, piece if piece.truncated else None)
        views = build_views(session, shown, bodies=bodies, only_initiatives={s.id: s.name for s in scopes})
        from kaeru.service.rules_in_force import not_in_force  # imported when first needed (16.S1)

        # A rule shown as it is now says when it is no longer in force, as `search` does; one shown
        # as it was at a change in the window is history, as `read … at` (decision 478).
        issues.extend(not_in_force(session, [n for n in shown if n.id not in placed], rt.today, scopes))
        continuation = None
        if shown and (deferred or later):
            # Items deferred by the budget start the next page, so nothing is skipped.
            if not secret:
                secret = session.vault_secret()
            end = shown[-1]
            token = cursors.encode(
                secret,
                cursors.CursorState(
                    "timeline",
                    None,
                    served + len(shown),
                    key,
                    position=(placed.get(end.id, end.created_at), end.seq, end.id),
                ),
            )
            continuation = Continuation(token, {**{k: v for k, v in args.items() if k != "cursor"}, "cursor": token})
    if coverage.omitted:
        coverage.complete = False
    coverage.rules_complete = coverage.complete
    # A lower bound when the items after the page go past the counted window (`window` omission).
    total = served + len(ordered) + len(later) + beyond
    outcome = ReadOutcome(hits=views, total=total, coverage=coverage, continuation=continuation, issues=issues)
    return outcome, anchor.id if anchor else None


def _merged(
    session: Session,
    found: list[str],
    later: list[str],
    changes: list[tuple[str, int, str]],
    position: tuple[str, int] | None,
    limit: int,
) -> tuple[list[str], list[str], dict[str, str]]:
    """A window's page with the memories changed in it (`changes`: (time, seq, id), in time order)
    placed among those made in it (`found`, then `later`: the walk from `position`) by when each
    happened; the items after the page; and each changed memory's time on the page."""
    pending = [c for c in changes if position is None or (c[0], c[1]) > position]
    walk = [*found, *later]
    made = session.nodes_by_ids(walk[:limit])
    keyed = [(made[i].created_at, made[i].seq, i) for i in walk[:limit] if i in made]
    page = sorted([*keyed, *pending[:limit]])[:limit]
    taken = {i for _, _, i in page}
    used = sum(1 for _, _, i in keyed if i in taken)
    moments = {i: at for at, _, i in pending if i in taken}
    rest = [*walk[used:], *(i for _, _, i in pending if i not in taken)]
    return [i for _, _, i in page], rest, moments


def _anchor(session: Session, request: TimelineRequest, ids: list[int], scopes: list[Initiative]) -> Node | None:
    """The node named by `anchor`, or the best literal match of `query`, or None for a window."""
    if request.anchor is not None:
        return _named_anchor(session, request.anchor, scopes)
    if request.query is None:
        return None
    tokens = query_tokens(request.query)
    rows, _, _ = (
        session.search(SearchQuery(initiative_ids=ids, tokens=tokens[:256], window=1)) if tokens else ([], 0, 0)
    )
    if not rows:
        raise NotFound("nothing matches the query to anchor the timeline on", field="query")
    return session.get_node(rows[0].id)


def _named_anchor(session: Session, raw: Any, scopes: list[Initiative]) -> Node:
    """The node `raw` names in any of the walked initiatives. A name was looked up in the first one
    only: with a `deploy` in each, the order of `initiatives` chose the anchor without a word, and a
    name only the second held was refused as "not in the first". A name matching a node in several
    is ambiguous, its candidates listed as `resolve_node` lists them; an id or `{initiative, name}`
    names one node wherever it lives."""
    try:
        ref = parse_ref(raw)
    except ValueError as exc:
        raise InvalidArgument(str(exc), field="anchor") from exc
    if len(scopes) == 1 or ref.initiative is not None or ref.id:
        return resolve_node(session, raw, scopes[0], "anchor", ref)
    found: dict[str, tuple[Node, Initiative]] = {}
    misses: list[NotFound] = []
    for scope in scopes:
        try:
            node = resolve_node(session, raw, scope, "anchor", ref)
        except NotFound as miss:
            misses.append(miss)
            continue
        found.setdefault(node.id, (node, scope))
    if len(found) == 1:
        return next(iter(found.values()))[0]
    if found:
        listed = "; ".join(
            f"{n.id} ({n.node_type.value}, {n.name!r} in {where.name!r}, recorded {n.recorded_at})"
            for n, where in list(found.values())[:MAX_LISTED]
        )
        raise AmbiguousRef(
            f"{len(found)} live nodes are named {ref.name!r} in the walked initiatives: {listed}. "
            "Pass one of these ids, or {initiative, name}.",
            field="anchor",
            details={"candidates": list(found)},
        )
    names = ", ".join(repr(s.name) for s in scopes)
    hint = misses[0].message.partition(";")[2]  # the first scope's did-you-mean, or where else it lives
    raise NotFound(f"no live node named {ref.name!r} in {names}" + (f";{hint}" if hint else ""), field="anchor")


def _around(
    session: Session,
    ids: list[int],
    since: str | None,
    until: str | None,
    anchor: Node,
    before: int,
    after: int,
) -> tuple[list[str], list[str], int]:
    """The page around `anchor` (`before` items, the anchor's place, `after` items), the items after
    the page (for later pages, at most `COUNT_WINDOW + 1`) and how many earlier items the page
    leaves out (at most `COUNT_WINDOW + 1`: the last one says more lie beyond the counted window)."""
    pivot = (anchor.created_at, anchor.seq)
    walk = session.timeline(
        ids,
        since=since,
        until=until,
        pivot=pivot,
        before=before + COUNT_WINDOW + 1,
        after=after + COUNT_WINDOW + 1,  # the store returns one more: the anchor's place
    )
    # The storage returns the earlier items, then those from the pivot on: find where they meet.
    head = session.timeline(ids, since=since, until=until, pivot=pivot, before=0, after=0)
    split = walk.index(head[0]) if head and head[0] in walk else len(walk)
    earlier, rest = walk[:split], walk[split:]
    shown_before = earlier[max(0, len(earlier) - before) :]
    return shown_before + rest[: after + 1], rest[after + 1 :], len(earlier) - len(shown_before)


def _count_left_out(coverage: Coverage, section: str, left: int) -> None:
    """Name the `left` items of `section` a page leaves out (`COUNT_WINDOW + 1` means: more than
    were counted): `{section, count, limit}` for those counted and, past the counted window,
    `{section, 1, window}` — at least one more lies beyond, not counted to keep every page cheap."""
    if left > COUNT_WINDOW:
        coverage.omitted.append(Omission(section, COUNT_WINDOW, "limit"))
        beyond = Omission(section, 1, "window")
        # Said once, after the counted ones: a window's changes not read back to `since` name the
        # same "at least one more" (the page listed it twice, before and after the limit's count).
        coverage.omitted[:] = [o for o in coverage.omitted if o != beyond]
        coverage.omitted.append(beyond)
    elif left:
        coverage.omitted.append(Omission(section, left, "limit"))
