"""A trail's pages (decision 87): `limit` entries a page, the rest counted and continued by a cursor.

A history only grows at its end, so its cursor carries how many entries were served; a node's
neighbours are live links, which change, so theirs carries the last link's key as well. Both are
read a page at a time in SQL (`storage/sql/trails.py`, decision 105): a page costs a page, not the
whole trail.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from kaeru.domain.budget import Cut, cut
from kaeru.domain.model import EdgeType, Node
from kaeru.service import cursors, grants
from kaeru.service.outcomes import (
    Change,
    Continuation,
    Coverage,
    Issue,
    NodeView,
    Omission,
    TrailEntry,
    TrailOutcome,
)
from kaeru.service.views import Hiding, build_views, hidden_in, names_as_of
from kaeru.storage.base import HistoryItem, HistoryPlace, RevisionEntry, Session

_DIFFED = ("name", "body", "description", "tags", "layer", "visibility", "status", "properties", "tier", "pinned")
#: A history page ends before the entry that takes its text (each revision's body and description,
#: and the before and after of its changes) past this many characters: 100 revisions of a 4 KB
#: document were a 1.3 MB page (decision 159). The rest come with the cursor. Half the largest
#: `budget_chars` a read takes: two revisions of such a document a page, ten of 1 KB. An entry past
#: it on its own has its texts cut to share it (`bounded_entry`), so no page is larger.
HISTORY_PAGE_CHARS = 32000
#: The body a trail's subject shows at most: what `read` shows by default (its `budget_chars`); the
#: subject names the node, `read` pages its body.
SUBJECT_CHARS = 8000
#: The body a listed node shows at most — a neighbour, an ancestor, a path's step, a chain's member,
#: a predecessor in `current_state`: a page lists up to `limit` of them, and four neighbours of 1 MB
#: each made a 4 MB answer (decision 377); `read` shows one whole.
ENTRY_CHARS = 2000


def diff(before: Node | None, after: Node, session: Session) -> list[Change]:
    changes: list[Change] = []
    for field_name in _DIFFED:
        old = getattr(before, field_name) if before is not None else None
        new = getattr(after, field_name)
        if old != new:
            changes.append(Change(field_name, _plain(old), _plain(new)))
    if (before is None and after.initiatives) or (
        before is not None and sorted(before.initiatives) != sorted(after.initiatives)
    ):
        # Each side named as it was named then (a rename between revisions is no membership change).
        old_members = _member_names(session, before) if before else []
        new_members = _member_names(session, after)
        if before is None or old_members != new_members:  # (a change outside a token's grants is not shown)
            changes.append(Change("initiatives", old_members if before else None, new_members))
    if before is not None and before.retracted != after.retracted:
        changes.append(Change("retracted", before.retracted, after.retracted))
    return changes


def _member_names(session: Session, node: Node) -> list[str]:
    granted = grants.granted_ids(session)
    shown = [i for i in node.initiatives if granted is None or i in granted]
    names, _ = names_as_of(session, shown, node.recorded_at)
    return sorted(names[i] for i in shown if i in names)  # a name never recorded is not shown


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return getattr(value, "value", value)


def history(
    session: Session, node: Node, after: HistoryPlace | None, served: int, limit: int, initiative: str
) -> tuple[list[TrailEntry], int, HistoryPlace | None, list[Issue]]:
    """One page of the node's history: `limit` entries past the place `after` (the cursor's), or
    past the `served` first (a cursor without one), read as a page in SQL (`history_page`); how many
    follow it; the page's last place; and a `budget_truncated` warning for each entry whose texts
    were cut to the page's bound, with the `read` calls (in `initiative`) that show them whole. A
    token limited to some initiatives has the edge events and the revisions it may not see left out
    in SQL before paging (a revision is seen by its own memberships, as `read … at` its time
    decides): its pages are full, they count none of them, and a page reads a page of revisions
    however long the node's log (decision 15.K2)."""
    granted = _granted(session)
    items = session.history_page(node.id, after, served, limit, granted)
    # A page short of `limit` reaches the end: only a full one needs the count.
    rest = max(0, session.history_count(node.id, granted) - served - len(items)) if len(items) == limit else 0
    return _history_entries(session, node, items, after, rest, initiative, granted)


def newest_history(
    session: Session, node: Node, limit: int, initiative: str
) -> tuple[list[TrailEntry], int, HistoryPlace | None, list[Issue], int]:
    """The node's history's last page, read from its end (`history_tail`), as `history` gives a
    page, and how many entries come before it: the entries past the last whole `limit` of them, as
    the pages from the first number them (all `limit` when they divide evenly) — of those, as many
    of the last as `HISTORY_PAGE_CHARS` holds (the newest one always), so the latest change is on it."""
    granted = _granted(session)
    count = session.history_count(node.id, granted)
    items = session.history_tail(node.id, count - (count - 1) // limit * limit if count else limit, granted)
    sized = [(entry, issue) for _, entry, issue in _sized_entries(session, node, items, initiative, granted)]
    page: list[tuple[TrailEntry, Issue | None]] = []
    text = 0
    for entry, issue in reversed(sized):
        text += _text_size(entry)
        if page and text > HISTORY_PAGE_CHARS:
            break  # the page starts after the entry that takes its text past the bound
        page.insert(0, (entry, issue))
    last = items[-1].place if items else None
    issues = [issue for _, issue in page if issue is not None]
    return [entry for entry, _ in page], 0, last, issues, max(0, count - len(page))


def _history_entries(
    session: Session,
    node: Node,
    items: list[HistoryItem],
    after: HistoryPlace | None,
    rest: int,
    initiative: str,
    granted: list[int] | None,
) -> tuple[list[TrailEntry], int, HistoryPlace | None, list[Issue]]:
    """A history page's items (past `after`, `rest` entries after them) as entries, ending before
    the entry that takes its text past `HISTORY_PAGE_CHARS`."""
    entries: list[TrailEntry] = []
    issues: list[Issue] = []
    text = 0
    last = after
    # Made one at a time: a page's entries past the bound are not worked out.
    for k, (item, entry, issue) in enumerate(_sized_entries(session, node, items, initiative, granted)):
        text += _text_size(entry)
        if entries and text > HISTORY_PAGE_CHARS:
            # The page ends before the entry that takes its text past the bound; the rest follow.
            return entries, rest + len(items) - k, last, issues
        entries.append(entry)
        issues += [issue] if issue is not None else []
        last = item.place
    return entries, rest, items[-1].place if items else after, issues


def _sized_entries(
    session: Session, node: Node, items: list[HistoryItem], initiative: str, granted: list[int] | None
) -> Iterator[tuple[HistoryItem, TrailEntry, Issue | None]]:
    """Each history item with its entry, one whose text alone passes `HISTORY_PAGE_CHARS` cut to
    share it (`bounded_entry`, with its `budget_truncated` warning); made as they are asked for."""
    compared = _compared(session, node, items, granted)
    wanted = [n for i in items if i.rev_no is not None for n in (i.rev_no, compared[i.rev_no]) if n is not None]
    revisions = session.revisions(node.id, wanted) if wanted else {}
    hiding = hidden_in(session, [r.node for r in revisions.values()])
    for item in items:
        prior_rev = compared[item.rev_no] if item.rev_no is not None else None
        entry = _entry(session, node, item, revisions, prior_rev, hiding)
        if entry is None:
            continue  # (a history item is a revision or an edge event)
        issue = None
        if _text_size(entry) > HISTORY_PAGE_CHARS:
            # Alone past the bound (a long body's first revision holds it twice): its texts share it.
            prior = revisions[prior_rev].node.recorded_at if prior_rev is not None else None
            entry, issue = bounded_entry(entry, initiative, prior)
        yield item, entry, issue


def _compared(
    session: Session, node: Node, items: list[HistoryItem], granted: list[int] | None
) -> dict[int, int | None]:
    """For each revision on the page, the revision it is compared with: the one before it, or for a
    token limited to some initiatives the latest one before it that the token sees (None: none is).
    The page holds every shown revision between its first and last, so only the first needs a
    look back (`revision_before`)."""
    compared: dict[int, int | None] = {}
    shown: int | None = None
    for item in items:
        if item.rev_no is None:
            continue
        if granted is None:
            compared[item.rev_no] = item.previous_rev
        elif not compared:
            compared[item.rev_no] = session.revision_before(node.id, item.rev_no, granted)
        else:
            compared[item.rev_no] = shown
        shown = item.rev_no
    return compared


def _entry(
    session: Session,
    node: Node,
    item: HistoryItem,
    revisions: dict[int, RevisionEntry],
    compared: int | None,
    hiding: Hiding | None,
) -> TrailEntry | None:
    """One history item as a trail entry: an edge event, or a revision with its changes since the
    revision `compared` (None: none; the one before it, or the one before it the caller may see).
    The changes compare the two revisions as the view shows them (`hiding`: what a token limited to
    some initiatives may not read of the nodes they name), so they name nothing the view leaves out."""
    if item.edge is not None:
        edge = item.edge
        if edge.retracted:
            action = "removed"
        elif item.previous_retracted is None or item.previous_retracted:
            action = "added"
        else:
            action = "reweighted"
        direction = "out" if edge.src == node.id else "in"
        return TrailEntry(kind="edge", at=edge.recorded_at, edge=edge, action=action, direction=direction)
    if item.rev_no is None:
        return None
    entry = revisions[item.rev_no]
    before = revisions[compared].node if compared is not None else None
    view = build_views(session, [entry.node], at=entry.node.recorded_at)[0]
    after = hiding.node(entry.node) if hiding is not None else entry.node
    if hiding is not None and before is not None:
        before = hiding.node(before)
    return TrailEntry(
        kind="revision",
        at=entry.node.recorded_at,
        node=view,
        changes=diff(before, after, session),
        actor=entry.actor,
        request_id=entry.request_id,
        # Created by the node's first revision, not by the first one a token limited to some initiatives sees.
        action="created" if item.previous_rev is None else ("forgotten" if entry.node.retracted else "revised"),
    )


def _text_size(entry: TrailEntry) -> int:
    """The characters of an entry's text: its node's body and description as shown, its changes' strings."""
    view = entry.node
    size = len(view.body or "") + len(view.node.description or "") if view is not None else 0
    return size + sum(map(len, _change_texts(entry.changes)))


def _change_texts(changes: Sequence[Change]) -> list[str]:
    """The string values of `changes`, in order: each change's before, then its after."""
    return [v for c in changes for v in (c.before, c.after) if isinstance(v, str)]


def cut_texts(texts: Sequence[str], budget: int) -> list[Cut | None]:
    """Each of `texts` cut so that together they take at most `budget` characters, each cut on a
    word boundary; None for a text shown whole (all of them, when they fit). The short ones are
    whole and the long ones share the rest evenly: a revision's body and its change's `after` (the
    same text) are cut alike, and a change's `before` and `after` show as much of each."""
    grants = [len(text) for text in texts]
    room, left = budget, len(texts)
    for i in sorted(range(len(texts)), key=lambda k: grants[k]):
        if grants[i] * left > room:  # this one and every longer one share what is left alike
            for k in range(len(texts)):
                grants[k] = min(grants[k], room // left)
            break
        room, left = room - grants[i], left - 1
    pieces = [cut(text, 0, grant) for text, grant in zip(texts, grants, strict=True)]
    return [piece if piece.truncated else None for piece in pieces]


def _cut_changes(changes: Sequence[Change], cuts: Iterator[Cut | None]) -> list[Change]:
    """`changes` with their string values cut by `cuts` (in `_change_texts`' order; None keeps one)."""
    shown: list[Change] = []
    for change in changes:
        sides: dict[str, Any] = {}
        for side in ("before", "after"):
            piece = next(cuts) if isinstance(getattr(change, side), str) else None
            if piece is not None:
                sides[side], sides[f"{side}_range"] = piece.text, piece
        shown.append(replace(change, **sides) if sides else change)
    return shown


def _read_call(initiative: str, node_id: str, at: str | None, offset: int | None) -> str:
    """The `read` that shows a revision's text: as of `at` (the revision's own time), its body from
    `offset` (the rest after a cut: its continuation pages on), or whole (a description, a name)."""
    args: dict[str, Any] = {"initiative": initiative, "node": {"id": node_id}}
    if at is not None:
        args["at"] = at
    if offset is not None:
        args["body_offset"] = offset
    return "read " + json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def _cut_issue(what: str, cuts: list[tuple[str, Cut, str]]) -> Issue:
    """The warning `what` (which texts were cut, to what bound), then each cut (label, range) with
    the `read` that shows the rest, one clause per call."""
    by_call: dict[str, list[str]] = {}
    for label, piece, call in cuts:
        by_call.setdefault(call, []).append(f"{label} {piece.end} of {piece.total}")
    clauses = [f"{', '.join(shown)} characters shown, the rest: {call}" for call, shown in by_call.items()]
    return Issue("budget_truncated", f"{what}: " + "; ".join(clauses))


def bounded_entry(entry: TrailEntry, initiative: str, prior: str | None) -> tuple[TrailEntry, Issue | None]:
    """A revision entry whose texts (its node's body and description, its changes' strings) share
    `HISTORY_PAGE_CHARS`, each cut marked as `read` marks one (`body_range`, `description_range`,
    a change's `before_range`/`after_range`); and the warning with the `read` calls, as of the
    revision (`entry.at`) or of the one before it (`prior`), that show the whole texts."""
    view = entry.node
    if view is None:
        return entry, None
    node = view.node
    body_cut, description_cut, *change_cuts = cut_texts(
        [view.body or "", node.description or "", *_change_texts(entry.changes)], HISTORY_PAGE_CHARS
    )
    # A forgotten revision cannot be read as of its own time; its texts are the revision's before it.
    here = prior if node.retracted and prior is not None else entry.at
    cuts: list[tuple[str, Cut, str]] = []
    if body_cut is not None:
        view = replace(view, body=body_cut.text, body_range=body_cut)
        cuts.append(("body", body_cut, _read_call(initiative, node.id, here, body_cut.end)))
    if description_cut is not None:
        view = replace(view, node=node.evolve(description=description_cut.text), description_range=description_cut)
        cuts.append(("description", description_cut, _read_call(initiative, node.id, here, None)))
    changes = _cut_changes(entry.changes, iter(change_cuts))
    cuts += _change_cuts(changes, initiative, node.id, prior, here)
    if not cuts:
        return entry, None
    what = (
        f"the history entry of {entry.at} (revision {node.revision}) was cut to keep this page within "
        f"{HISTORY_PAGE_CHARS} characters of text (`body_range`, `description_range` and a change's "
        "`before_range`/`after_range` say what is shown)"
    )
    return replace(entry, node=view, changes=changes), _cut_issue(what, cuts)


def bounded_changes(
    changes: list[Change], budget: int, initiative: str, node_id: str, before_at: str, after_at: str
) -> tuple[list[Change], Issue | None]:
    """`changes` whose string values share `budget` characters (a `revise` of a long body answered
    the old and the new body whole), each cut marked by its `before_range`/`after_range`; and
    the warning with the `read` calls, as of `before_at` (the revision changed) or `after_at` (the
    new one), that show the whole values."""
    cuts = cut_texts(_change_texts(changes), budget)
    if not any(cuts):
        return changes, None
    shown = _cut_changes(changes, iter(cuts))
    named = _change_cuts(shown, initiative, node_id, before_at, after_at)
    what = (
        f"the changes were cut to keep this answer within {budget} characters of text "
        "(`before_range`/`after_range` say what is shown)"
    )
    return shown, _cut_issue(what, named)


def _change_cuts(
    changes: Sequence[Change], initiative: str, node_id: str, before_at: str | None, after_at: str | None
) -> list[tuple[str, Cut, str]]:
    """Each cut value of `changes`, labelled, with the `read` that shows the rest: a `before` as of
    `before_at`, an `after` as of `after_at`; a body from the cut's end (read pages it), any other
    text whole (read shows a name or description whole)."""
    named: list[tuple[str, Cut, str]] = []
    for change in changes:
        for side, at, piece in (("before", before_at, change.before_range), ("after", after_at, change.after_range)):
            if piece is not None:
                offset = piece.end if change.field == "body" else None
                named.append((f"change {change.field}.{side}", piece, _read_call(initiative, node_id, at, offset)))
    return named


def bounded_subject(view: NodeView, chars: int = SUBJECT_CHARS) -> NodeView:
    """A trail's subject (or a listed node, `ENTRY_CHARS`) with its body cut to `chars`, marked by
    `body_range` (as `read` shows it)."""
    if view.body is None or len(view.body) <= chars:
        return view
    piece = cut(view.body, 0, chars)
    return replace(view, body=piece.text, body_range=piece)


def history_position(place: HistoryPlace) -> tuple[str, int, str]:
    """A history place as a cursor's position: (time, rev_no, '' for a revision or the edge's key)."""
    at, group, src, dst, edge_type, rev_no = place
    return at, rev_no, f"{src}\n{dst}\n{edge_type}" if group else ""


def history_place(position: tuple[str, int, str]) -> HistoryPlace:
    """The place a cursor's position names (`history_position` undone)."""
    at, rev_no, key = position
    if not key:
        return at, 0, "", "", "", rev_no
    src, dst, edge_type = key.split("\n")
    return at, 1, src, dst, edge_type, rev_no


def _granted(session: Session) -> list[int] | None:
    granted = grants.granted_ids(session)
    return None if granted is None else sorted(granted)


def neighbours(
    session: Session, node: Node, edge_types: set[EdgeType] | None, after: tuple[str, str, str] | None, limit: int
) -> tuple[list[TrailEntry], int, tuple[str, int, str] | None]:
    """One page of the node's live links to live nodes, in the order of their keys (source, target,
    type), as the whole list always was: `limit` of them after the key `after`; how many follow; and
    the page's last key, as a cursor's position. A link removed between two pages skips nothing; one made meanwhile comes on
    a later page when its key sorts after the last one shown (decision 87). Read as a page in SQL
    (`links_page`); a token limited to some initiatives neither sees nor counts the others."""
    types = sorted(edge_types, key=lambda t: t.value) if edge_types is not None else None
    page, count = session.links_page(node.id, types, after, limit, _granted(session))
    others = session.nodes_by_ids([e.dst if e.src == node.id else e.src for e in page])
    views = build_views(session, [others[e.dst if e.src == node.id else e.src] for e in page])
    entries = [
        TrailEntry(kind="neighbour", node=view, edge=edge, direction="out" if edge.src == node.id else "in")
        for edge, view in zip(page, views, strict=True)
    ]
    last = page[-1].key if page else after
    return entries, max(0, count - len(page)), (last[0], 0, f"{last[1]}\n{last[2]}") if last is not None else None


def paged(
    session: Session,
    args: dict[str, Any],
    key: str,
    secret: bytes,
    kind: str,
    subject: NodeView,
    page: list[TrailEntry],
    coverage: Coverage,
    served: int,
    rest: int,
    position: tuple[str, int, str] | None,
    reason: str = "limit",
) -> TrailOutcome:
    """A trail page: `rest` entries after it are counted as left out (for `reason`: `limit`, or
    `budget` for a history page that `HISTORY_PAGE_CHARS` ended first) and the next page's
    exact arguments given, its cursor carrying the entries served so far (and, for history and
    neighbours, the last one's `position`: the next page starts past it)."""
    issues: list[Issue] = []
    if kind != "history":  # a history page is bounded as a whole (`HISTORY_PAGE_CHARS`)
        bounded = [replace(e, node=bounded_subject(e.node, ENTRY_CHARS)) if e.node is not None else e for e in page]
        cuts = sum(1 for before, after in zip(page, bounded, strict=True) if before.node is not after.node)
        if cuts:
            issues.append(
                Issue(
                    "budget_truncated",
                    f"{cuts} listed bodies cut to their first {ENTRY_CHARS} characters (see body_range); "
                    "`read` a node to see it whole",
                )
            )
        page = bounded
    continuation = None
    if rest and page:
        token = cursors.encode(
            secret or session.vault_secret(),
            cursors.CursorState("trail", None, served + len(page), key, position=position),
        )
        continuation = Continuation(token, {**{k: v for k, v in args.items() if k != "cursor"}, "cursor": token})
        coverage.omitted.append(Omission("entries", rest, reason))
        coverage.complete = False
    total = served + len(page) + rest
    return TrailOutcome(kind, subject, page, coverage, issues=issues, total=total, continuation=continuation)
