"""A trail's pages (decision 87): `limit` entries a page, the rest counted and continued by a cursor.

A history only grows at its end, so its cursor carries how many entries were served; a node's
neighbours are live links, which change, so theirs carries the last link's key as well. Both are
read a page at a time in SQL (`storage/sql/trails.py`, decision 105): a page costs a page, not the
whole trail.
"""

from __future__ import annotations

from typing import Any

from kaeru.domain.model import EdgeType, Node
from kaeru.service import cursors, grants
from kaeru.service.outcomes import Change, Continuation, Coverage, NodeView, Omission, TrailEntry, TrailOutcome
from kaeru.service.views import build_views, names_as_of
from kaeru.storage.base import HistoryItem, HistoryPlace, RevisionEntry, Session

_DIFFED = ("name", "body", "description", "tags", "layer", "visibility", "status", "properties", "tier", "pinned")
#: A history page ends before the entry that takes its text (each revision's body and description,
#: and the before and after of its changes) past this many characters, the first entry always kept:
#: 100 revisions of a 4 KB document were a 1.3 MB page (decision 159). The rest come with the cursor.
#: Half the largest `budget_chars` a read takes: two revisions of such a document a page, ten of 1 KB.
HISTORY_PAGE_CHARS = 32000


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
    session: Session, node: Node, after: HistoryPlace | None, served: int, limit: int
) -> tuple[list[TrailEntry], int, HistoryPlace | None]:
    """One page of the node's history: `limit` entries past the place `after` (the cursor's), or
    past the `served` first (a cursor without one), read as a page in SQL (`history_page`); how many
    follow it; and the page's last place. A token limited to some initiatives has the edge events it
    may not see left out before paging: its pages are full, and they count none of them."""
    granted = _granted(session)
    items = session.history_page(node.id, after, served, limit, granted)
    # A page short of `limit` reaches the end: only a full one needs the count.
    rest = max(0, session.history_count(node.id, granted) - served - len(items)) if len(items) == limit else 0
    wanted = [n for i in items if i.rev_no is not None for n in (i.rev_no, i.previous_rev) if n is not None]
    revisions = session.revisions(node.id, wanted) if wanted else {}
    entries: list[TrailEntry] = []
    text = 0
    last = after
    for k, item in enumerate(items):
        entry = _entry(session, node, item, revisions)
        if entry is None:
            continue  # (a history item is a revision or an edge event)
        text += _text_size(entry)
        if entries and text > HISTORY_PAGE_CHARS:
            # The page ends before the entry that takes its text past the bound; the rest follow.
            return entries, rest + len(items) - k, last
        entries.append(entry)
        last = item.place
    return entries, rest, items[-1].place if items else after


def _entry(session: Session, node: Node, item: HistoryItem, revisions: dict[int, RevisionEntry]) -> TrailEntry | None:
    """One history item as a trail entry: an edge event, or a revision with its changes."""
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
    before = revisions[item.previous_rev].node if item.previous_rev is not None else None
    view = build_views(session, [entry.node], at=entry.node.recorded_at)[0]
    return TrailEntry(
        kind="revision",
        at=entry.node.recorded_at,
        node=view,
        changes=diff(before, entry.node, session),
        actor=entry.actor,
        request_id=entry.request_id,
        action="created" if before is None else ("forgotten" if entry.node.retracted else "revised"),
    )


def _text_size(entry: TrailEntry) -> int:
    """The characters of an entry's text: its node's body and description, its changes' strings."""
    node = entry.node.node if entry.node is not None else None
    size = len(node.body or "") + len(node.description or "") if node is not None else 0
    return size + sum(len(v) for c in entry.changes for v in (c.before, c.after) if isinstance(v, str))


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
) -> TrailOutcome:
    """A trail page: `rest` entries after it are counted as left out (`limit`) and the next page's
    exact arguments given, its cursor carrying the entries served so far (and, for history and
    neighbours, the last one's `position`: the next page starts past it)."""
    continuation = None
    if rest and page:
        token = cursors.encode(
            secret or session.vault_secret(),
            cursors.CursorState("trail", None, served + len(page), key, position=position),
        )
        continuation = Continuation(token, {**{k: v for k, v in args.items() if k != "cursor"}, "cursor": token})
        coverage.omitted.append(Omission("entries", rest, "limit"))
        coverage.complete = False
    total = served + len(page) + rest
    return TrailOutcome(kind, subject, page, coverage, total=total, continuation=continuation)
