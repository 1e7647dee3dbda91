"""Who made an edge revision that names no one, from the audit record of the write that made it
(decision 493): the one rule that a history page's fallback (`service/trail_history.py`) and the
upgrade's backfill (`backfill`: SQLite migration 024, PostgreSQL 022) both apply.

Every write that changes a link names it in its audit record (`WriteContext.changes_log`: the link's
key and its new weight, or that it was retracted). The record of an edge revision stamped at `t` is
stamped at `t` or later (the write's latest stamp) and, but for a write that also stamped something
else past the link's next revision, before that next revision (a later write, stamped past it). So a
revision is named by the first record, in the order written, stamped from its time up to (not
including) the time of its link's next revision, that names its link with its change; one no record
names names no actor: a wider window could credit a later person with an earlier change.

Migrations are never edited once committed, but those two run this module: a change to the rule
here changes what upgrading a vault not yet upgraded writes (and what a page's fallback says), so it
is a change to both, made for both.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Generator, Hashable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kaeru.storage.sql.db import Db

Key = tuple[str, str, str]
#: What a revision did to its link, as a record's change says it: retracted it, or gave it a weight.
Change = tuple[Any, ...]
#: The actor and request id a record names.
Named = tuple[str, str | None]
#: An audit record as the rule reads it: its stamp, actor, request id and (decoded) changes.
Record = tuple[str, str, str | None, Any]

T = TypeVar("T", bound=Hashable)

RETRACTED: Change = ("retracted",)


def revision_change(retracted: bool, weight: float) -> Change:
    """The change a record names for a revision that retracted its link, or gave it `weight`."""
    return RETRACTED if retracted else ("weight", weight)


def record_changes(changes: Any) -> Iterator[tuple[Key, Change]]:
    """The link changes a record's decoded `changes` name: a dict naming its `edge` by (src, dst,
    type) and saying it was retracted (`"retracted": true`) or giving its weight."""
    if not isinstance(changes, list):
        return
    for change in changes:
        if not isinstance(change, dict):
            continue
        edge = change.get("edge")
        if not (isinstance(edge, list) and len(edge) == 3 and all(isinstance(part, str) for part in edge)):
            continue
        key = (edge[0], edge[1], edge[2])
        if change.get("retracted") is True:
            yield key, RETRACTED
        weight = change.get("weight")
        if isinstance(weight, int | float):  # anything else equals no revision's weight
            yield key, ("weight", weight)


def next_time(at: str, times: Sequence[str]) -> str | None:
    """The first of a link's revision times (`times`, sorted) later than `at`: where the window of
    its revision stamped at `at` ends (None: it is the link's last)."""
    i = bisect_right(times, at)
    return times[i] if i < len(times) else None


@dataclass(frozen=True, slots=True)
class Unnamed(Generic[T]):
    """An edge revision that names no actor, as the rule matches it: `ident` is the caller's name
    for it; `before` ends its window (`next_time`)."""

    ident: T
    key: Key
    at: str
    before: str | None
    change: Change


def name_from_audit(revisions: Iterable[Unnamed[T]], records: Iterable[Record]) -> dict[T, Named]:
    """The actor and request id of each of `revisions` that a record names (the module's rule), by
    ident; one no record names is left out. `records` come in the order written and are read once,
    each record's changes indexed by link and change, and only until every revision is named."""
    # A link's windows never overlap (each ends at its link's next revision time), so a record falls
    # in at most one window of each (link, change): the one that starts last at or before it.
    # Revisions stamped at the same time share their window and are named by the same record.
    windows: dict[tuple[Key, Change], dict[str, tuple[str | None, list[T]]]] = {}
    left = 0
    for revision in revisions:
        by_start = windows.setdefault((revision.key, revision.change), {})
        by_start.setdefault(revision.at, (revision.before, []))[1].append(revision.ident)
        left += 1
    ordered = {link: sorted(by_start) for link, by_start in windows.items()}
    named: dict[T, Named] = {}
    for at, actor, request_id, changes in records:
        if not left:
            break
        for link in record_changes(changes):
            starts = ordered.get(link)
            i = bisect_right(starts, at) - 1 if starts is not None else -1
            if starts is None or i < 0:
                continue
            before, idents = windows[link][starts[i]]
            if before is not None and at >= before:
                continue
            for ident in idents:
                named[ident] = (actor, request_id)
            left -= len(idents)
            idents.clear()  # named by the first record only
    return named


#: Edge revisions read per statement, and the revisions that name no one matched per pass over the
#: audit log: what `backfill` holds in memory at most (plus one link's revisions), however long the log.
READ_ROWS = 5000
PER_PASS = 50_000
#: Revisions named per UPDATE statement (six parameters each, within SQLite's bound on parameters).
WRITE_ROWS = 500


def backfill(db: Db) -> int:
    """Name every edge revision that names no actor and that the rule names, in its own row (`actor`,
    `request_id`); how many were named. Rows already naming an actor are never touched, so running it
    again changes nothing (a revision the audit does not name stays NULL, for the history page's
    fallback). One ordered pass over `edge_revisions` (by key, to know each revision's window), and
    one over the audit records that name a link per `PER_PASS` revisions that name none, streamed."""
    named = 0
    pending: list[Unnamed[tuple[Key, int]]] = []
    for key, marks in _links(db):
        times = sorted(at for _, at, _, _, _ in marks)
        pending += [
            Unnamed((key, rev_no), key, at, next_time(at, times), revision_change(bool(retracted), weight))
            for rev_no, at, weight, retracted, nameless in marks
            if nameless
        ]
        if len(pending) >= PER_PASS:
            named += _fill(db, pending)
            pending = []
    return named + (_fill(db, pending) if pending else 0)


def _links(db: Db) -> Iterator[tuple[Key, list[tuple[int, str, float, Any, Any]]]]:
    """Each link's revisions (number, time, weight, retracted, names no actor), link by link in key
    order, read `READ_ROWS` at a time (no statement stays open while `backfill` writes)."""
    columns = "src, dst, edge_type, rev_no, recorded_at, weight, retracted, actor IS NULL FROM edge_revisions"
    order = f"ORDER BY src, dst, edge_type, rev_no LIMIT {READ_ROWS}"
    key: Key | None = None
    marks: list[tuple[int, str, float, Any, Any]] = []
    after: tuple[Any, ...] | None = None
    while True:
        if after is None:
            found = db.rows(f"SELECT {columns} {order}")
        else:
            found = db.rows(f"SELECT {columns} WHERE (src, dst, edge_type, rev_no) > (?, ?, ?, ?) {order}", after)
        for src, dst, edge_type, *mark in found:
            if (src, dst, edge_type) != key:
                if key is not None:
                    yield key, marks
                key, marks = (src, dst, edge_type), []
            marks.append((mark[0], mark[1], mark[2], mark[3], mark[4]))
        if len(found) < READ_ROWS:
            break
        after = tuple(found[-1][:4])
    if key is not None:
        yield key, marks


def _fill(db: Db, pending: list[Unnamed[tuple[Key, int]]]) -> int:
    """Match `pending` against the audit records (in the order written, from the earliest of their
    times; only records whose text names an edge are decoded) and write what is named."""
    with closing(_records(db, min(r.at for r in pending))) as records:
        found = name_from_audit(pending, records)
    rows = [(actor, rid, *key, rev_no) for (key, rev_no), (actor, rid) in found.items()]
    written = 0
    for start in range(0, len(rows), WRITE_ROWS):
        part = rows[start : start + WRITE_ROWS]
        values = ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(part))
        written += db.run(
            "UPDATE edge_revisions SET actor = v.column1, request_id = v.column2 "
            f"FROM (VALUES {values}) AS v WHERE edge_revisions.src = v.column3 AND edge_revisions.dst = v.column4 "
            "AND edge_revisions.edge_type = v.column5 AND edge_revisions.rev_no = v.column6 "
            "AND edge_revisions.actor IS NULL",
            [p for row in part for p in row],
        )
    return written


def _records(db: Db, since: str) -> Generator[Record, None, None]:
    """The audit records stamped at `since` or later whose text names an edge (a superset of those
    whose changes name a link), in the order written, streamed; closed, it ends the statement."""
    for at, actor, request_id, text in db.stream(
        "SELECT at, actor, request_id, changes FROM audit WHERE at >= ? AND changes LIKE ? ORDER BY seq",
        (since, '%"edge"%'),
    ):
        try:
            changes = json.loads(text)
        except ValueError:
            changes = None  # names no link
        yield at, actor, request_id, changes
