"""`trail kind=history`: one page of a node's history, each link event naming who made it.

An edge's revision keeps the actor and request id of the write that made it, as a node's revision
does (`WriteContext.put_edge`): a link event names them from its own row, read with the page's
edges' other revisions by their keys — a page costs a page, however long the audit log.

A revision written before edge revisions kept them was named from the write's audit record when the
vault was upgraded (SQLite migration 024, PostgreSQL 022). One that still names no actor — brought by
an archive whose edge records carry neither, or one no record named then — is matched against the
audit record here, by the same rule (`storage.link_actors`): the record stamped earliest (of those
stamped alike, the first written) from the revision's time up to (not including) its link's next
revision's, naming the same link with the same change. No index holds a record's time or the links it names, so that match reads
the audit log through once — only a page showing such a revision pays it. One no record names in that
window (an archive brought it without its audit records, or its record was stamped past the window;
or, written before decision 483, its record was stamped by the write's clock while the revision was
pushed past it) names no actor, and the text and the viewer say its actor is unknown: a wider window
could name the wrong person.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kaeru.domain.model import Edge, Node
from kaeru.errors import CursorInvalid
from kaeru.service.cursors import CursorState
from kaeru.service.outcomes import Coverage, NodeView, TrailEntry, TrailOutcome
from kaeru.service.trail_pages import history, history_place, history_position, newest_history, paged
from kaeru.storage.base import Session
from kaeru.storage.link_actors import Unnamed, name_from_audit, next_time, revision_change
from kaeru.storage.records import EdgeMark

#: An edge's key and one of its revisions' time: what names one link event of a history.
_Event = tuple[tuple[str, str, str], str]


def history_trail(
    session: Session,
    node: Node,
    state: CursorState | None,
    limit: int,
    initiative: str,
    args: dict[str, Any],
    key: str,
    secret: bytes,
    subject: NodeView,
    coverage: Coverage,
    served: int,
    *,
    newest: bool = False,
) -> TrailOutcome:
    """The page of the node's history the cursor `state` asks for (the first without one; the last,
    `newest`, read from the history's end), its link events naming their actors (`named_link_actors`)."""
    try:
        place = history_place(state.position) if state is not None and state.position else None
    except ValueError as exc:
        raise CursorInvalid("cursor is malformed", field="cursor") from exc
    if newest and state is None:
        page, rest, reached, cuts, served = newest_history(session, node, limit, initiative)
    else:
        page, rest, reached, cuts = history(session, node, place, served, limit, initiative)
    page = named_link_actors(session, node.id, page)
    position = history_position(reached) if reached is not None else None
    # A page short of `limit` with entries after it was ended by its text's bound, not by `limit`:
    # "(limit)" told a caller who asked for 5 and got 1 that 1 was the limit.
    reason = "budget" if rest and len(page) < limit else "limit"
    outcome = paged(session, args, key, secret, "history", subject, page, coverage, served, rest, position, reason)
    outcome.issues += cuts
    return outcome


def named_link_actors(session: Session, node_id: str, entries: list[TrailEntry]) -> list[TrailEntry]:
    """`entries` with each link event's actor and request id: its edge revision's, or for a revision
    that names none, the audit record's of the write that made it (`_audit_named`); an event neither
    names is left without (its actor is unknown)."""
    events = [e.edge for e in entries if e.kind == "edge" and e.edge is not None]
    if not events:
        return entries
    revisions = session.edge_revisions_of(node_id, events)
    marks = {(key, mark.rev_no): mark for key, found in revisions.items() for mark in found}
    named: dict[_Event, tuple[str, str | None]] = {}
    for edge in events:
        mark = marks.get((edge.key, edge.rev_no))
        if mark is not None and mark.actor is not None:
            named[(edge.key, edge.recorded_at)] = (mark.actor, mark.request_id)
    unnamed = [edge for edge in events if (edge.key, edge.recorded_at) not in named]
    if unnamed:
        named.update(_audit_named(session, node_id, unnamed, revisions))
    out: list[TrailEntry] = []
    for entry in entries:
        made = entry.edge
        who = named.get((made.key, made.recorded_at)) if entry.kind == "edge" and made is not None else None
        out.append(replace(entry, actor=who[0], request_id=who[1]) if who is not None else entry)
    return out


def _audit_named(
    session: Session, node_id: str, events: list[Edge], revisions: dict[tuple[str, str, str], list[EdgeMark]]
) -> dict[_Event, tuple[str, str | None]]:
    """The actor and request id of each of `events` (edge revisions that name none) that the audit
    record of the write that made it names (`link_actors.name_from_audit`); one no record names is
    left out."""
    unnamed = []
    for edge in events:
        times = [mark.at for mark in revisions.get(edge.key, [])]
        before = next_time(edge.recorded_at, times)
        change = revision_change(edge.retracted, edge.weight)
        unnamed.append(Unnamed((edge.key, edge.rev_no), edge.key, edge.recorded_at, before, change))
    ends = [u.before for u in unnamed]
    until = None if None in ends else max(end for end in ends if end is not None)
    records = session.audit_naming(node_id, min(u.at for u in unnamed), until)
    found = name_from_audit(unnamed, ((r.at, r.actor, r.request_id, r.changes) for r in records))
    return {(e.key, e.recorded_at): found[(e.key, e.rev_no)] for e in events if (e.key, e.rev_no) in found}
