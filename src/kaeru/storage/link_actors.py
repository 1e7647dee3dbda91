"""Who made an edge revision that names no one, from the audit record of the write that made it
(decision 493): the one rule that a history page's fallback (`service/trail_history.py`) and the
upgrade's backfill (`backfill`: SQLite migration 024, PostgreSQL 022) both apply.

Every write that changes a link names it in its audit record (`WriteContext.changes_log`: the link's
key and its new weight, or that it was retracted). The record of an edge revision stamped at `t` is
stamped at `t` or later (the write's latest stamp) and, but for a write that also stamped something
else past the link's next revision, before that next revision (a later write, stamped past it). So a
revision is named by the record stamped earliest (of records stamped alike, the first written) from
its time up to (not including) the time of its link's next revision that names its link with its
change; one no record names names no actor: a wider window could credit a later person with an
earlier change. The earliest, not the first written: a write whose other node was stamped ahead
writes a record stamped past the next person's, and may name the same link with the same change.

Migrations are never edited once committed, but those two run this module: a change to the rule
here changes what upgrading a vault not yet upgraded writes (and what a page's fallback says), so it
is a change to both, made for both.
"""

from __future__ import annotations

import heapq
import json
import logging
import time
from bisect import bisect_right
from collections.abc import Generator, Hashable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from kaeru.storage.schema_objects import INDEXES
from kaeru.storage.sql.db import Db

Key = tuple[str, str, str]
#: What a revision did to its link, as a record's change says it: retracted it, or gave it a weight.
Change = tuple[Any, ...]
#: The actor and request id a record names.
Named = tuple[str, str | None]
#: An audit record as the rule reads it: its stamp, actor, request id and (decoded) changes.
Record = tuple[str, str, str | None, Any]

T = TypeVar("T", bound=Hashable)

log = logging.getLogger(__name__)

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
    ident; one no record names is left out. `records` come in the order of their stamps (of records
    stamped alike, in the order written: `ORDER BY at, seq`), so the first that falls in a revision's
    window names it; they are read once, each record's changes looked up by link and change, and
    only until every revision is named."""
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
            idents.clear()  # named by the earliest record only
    return named


#: The most revisions that name no one `backfill` holds while it looks for their records.
PER_PASS = 50_000
#: Revisions named per UPDATE statement on SQLite (six parameters each, within its bound on parameters).
WRITE_ROWS = 500
#: Names sent at a time into PostgreSQL's temporary table (`_CopiedWrites`): what it holds meanwhile.
COPY_ROWS = 20_000
#: PostgreSQL: kaeru's own plain indexes on the edge revisions are built again instead of written row
#: by row when at least this many rows, and at least one in `REBUILD_SHARE` of the table's, are named
#: (`_indexes_dropped`).
REBUILD_ROWS = 10_000
REBUILD_SHARE = 5
#: How often a long backfill says how far it got, in seconds (INFO on this module's logger, which
#: `kaeru migrate` and `kaeru serve --http` show on stderr): an upgrade of a large vault said nothing
#: for minutes, and looked hung.
PROGRESS_S = 10.0

#: One (link, change)'s windows waiting for a record: the time each starts → (where it ends, revisions).
_Windows = dict[str, tuple[str | None, list[tuple[Key, int]]]]


def backfill(db: Db) -> int:
    """Name every edge revision that names no actor and that the rule names, in its own row (`actor`,
    `request_id`); how many were named. Rows already naming an actor are never touched, so running it
    again changes nothing (a revision the audit does not name stays NULL, for the history page's
    fallback).

    One sweep through time: the revisions that name no one, in the order of their stamps, each with
    its window's end (`_unnamed`), against the audit records that name a link, in the order of
    theirs (`_records`): a revision waits from the first record stamped at or after it until one
    names it or its window ends. A record is stamped at or soon after its revision, so few wait at
    once and each revision and record is read once, however long the log. A revision no record
    names with no later revision of its link waits to the end: when `PER_PASS` wait, they are looked
    for together in the records still to come (`name_from_audit`) and let go, so memory stays bounded
    by that whatever the audit lacks. The names are written as they are found (`_Writes`), on
    PostgreSQL all at once at the end (`_CopiedWrites`)."""
    writes = _CopiedWrites(db) if isinstance(db, Copies) else _Writes(db)
    progress = _Progress(db, writes)
    with closing(_unnamed(db)) as pending:
        upcoming = next(pending, None)
        if upcoming is None:
            return 0
        waiting: dict[tuple[Key, Change], _Windows] = {}
        ends: list[tuple[str, tuple[Key, Change], str]] = []  # heap: (window end, link, window start)
        held = 0
        with closing(_records(db, upcoming.at)) as records:
            for at, actor, request_id, changes in records:
                while upcoming is not None and upcoming.at <= at:
                    link = (upcoming.key, upcoming.change)
                    window = waiting.setdefault(link, {}).setdefault(upcoming.at, (upcoming.before, []))
                    if not window[1] and upcoming.before is not None:
                        heapq.heappush(ends, (upcoming.before, link, upcoming.at))
                    window[1].append(upcoming.ident)
                    held += 1
                    upcoming = next(pending, None)
                    progress.read_one()
                    if held >= PER_PASS:
                        _look_ahead(db, waiting, at, writes)
                        waiting, ends, held = {}, [], 0
                while ends and ends[0][0] <= at:  # these windows ended with no record naming them
                    _, link, start = heapq.heappop(ends)
                    held -= len(_take(waiting, link, start))
                if len(ends) > 2 * PER_PASS:  # most are of windows named since: keep those still waiting
                    ends = [(e, link, s) for link, ws in waiting.items() for s, (e, _) in ws.items() if e is not None]
                    heapq.heapify(ends)
                for link in record_changes(changes):
                    for start in [s for s, (end, _) in waiting.get(link, {}).items() if end is None or at < end]:
                        for ident in _take(waiting, link, start):
                            writes.add(ident, actor, request_id)
                            held -= 1
                if upcoming is None and not waiting:
                    break
    written = writes.done(progress.said)
    progress.finished(written)
    return written


def _take(waiting: dict[tuple[Key, Change], _Windows], link: tuple[Key, Change], start: str) -> list[tuple[Key, int]]:
    """The revisions of `link`'s window starting at `start`, no longer waiting (none if gone)."""
    windows = waiting.get(link, {})
    _, idents = windows.pop(start, (None, []))
    if not windows:
        waiting.pop(link, None)
    return idents


def _look_ahead(db: Db, waiting: dict[tuple[Key, Change], _Windows], since: str, writes: _Writes) -> None:
    """Name the `waiting` revisions from the records stamped at `since` or later (every earlier
    record was read for them already), in one pass of their own."""
    revisions = [
        Unnamed(ident, key, start, end, change)
        for (key, change), windows in waiting.items()
        for start, (end, idents) in windows.items()
        for ident in idents
    ]
    with closing(_records(db, since)) as records:
        for ident, (actor, request_id) in name_from_audit(revisions, records).items():
            writes.add(ident, actor, request_id)


@runtime_checkable
class Copies(Protocol):
    """A database that takes many rows in one `COPY … FROM STDIN` (PostgreSQL's `PgDb`)."""

    def copy_rows(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...


class _Writes:
    """The names found, written `WRITE_ROWS` at a time (only into rows that still name no actor)."""

    def __init__(self, db: Db) -> None:
        self._db = db
        self._rows: list[tuple[Any, ...]] = []
        #: Names found so far; rows written so far.
        self.found = self.written = 0

    def add(self, ident: tuple[Key, int], actor: str, request_id: str | None) -> None:
        (src, dst, edge_type), rev_no = ident
        self._rows.append((actor, request_id, src, dst, edge_type, rev_no))
        self.found += 1
        if len(self._rows) >= WRITE_ROWS:
            self._flush()

    def done(self, said: bool) -> int:
        """Write what is left; how many rows were named (`said`: progress was said meanwhile)."""
        self._flush()
        return self.written

    def _flush(self) -> None:
        if not self._rows:
            return
        values = ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(self._rows))
        self.written += self._db.run(
            "UPDATE edge_revisions SET actor = v.column1, request_id = v.column2 "
            f"FROM (VALUES {values}) AS v WHERE edge_revisions.src = v.column3 AND edge_revisions.dst = v.column4 "
            "AND edge_revisions.edge_type = v.column5 AND edge_revisions.rev_no = v.column6 "
            "AND edge_revisions.actor IS NULL",
            [p for row in self._rows for p in row],
        )
        self._rows = []


#: PostgreSQL's `work_mem` while the names are joined (and sorted): at least 64 MB (a setting already
#: larger is kept).
_AT_LEAST_64MB = (
    "CASE WHEN pg_size_bytes(current_setting('work_mem')) < 64 * 1024 * 1024 THEN '64MB' "
    "ELSE current_setting('work_mem') END"
)

#: The temporary table `_CopiedWrites` gathers the names in (dropped at the end, and with its transaction).
_GATHERED = (
    'CREATE TEMPORARY TABLE kaeru_link_actors (src TEXT COLLATE "C", dst TEXT COLLATE "C", '
    'edge_type TEXT COLLATE "C", rev_no INTEGER, actor TEXT COLLATE "C", request_id TEXT COLLATE "C") ON COMMIT DROP'
)


#: Whether the edge revisions' indexes may be dropped and built again at all: the table is in no
#: publication (one for all tables counts) and keeps its default replica identity (a logical replica
#: finds each row updated by it), new indexes go where the old ones were (the session names no
#: `default_tablespace` of its own), and no foreign key refers to the table.
_REBUILDABLE = (
    "SELECT t.relkind = 'r' AND t.relreplident = 'd' AND current_setting('default_tablespace') = '' "
    "AND NOT EXISTS (SELECT 1 FROM pg_publication WHERE puballtables) "
    "AND NOT EXISTS (SELECT 1 FROM pg_publication_tables p WHERE p.schemaname = n.nspname AND p.tablename = t.relname) "
    "AND NOT EXISTS (SELECT 1 FROM pg_constraint f WHERE f.confrelid = t.oid) "
    "FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace WHERE t.oid = 'edge_revisions'::regclass"
)

#: kaeru's own plain indexes on the edge revisions (PostgreSQL migration 001), by their names: each
#: one's name to drop it by, the statement that makes it again (the table named with its schema), that
#: statement as `kaeru doctor` says it (`schema_objects.INDEXES`: one of another definition is not
#: kaeru's), and whether a drop and that statement give it back whole — no storage option, tablespace,
#: clustering, replica identity, comment, constraint or other object depending on it, and valid.
_OWN = (
    "SELECT c.relname, i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid), "
    "replace(pg_get_indexdef(i.indexrelid), ' ON ' || c.relnamespace::regnamespace::text || '.', ' ON '), "
    "c.relkind = 'i' AND c.reloptions IS NULL AND c.reltablespace = 0 AND NOT i.indisclustered "
    "AND NOT i.indisreplident AND i.indisvalid AND i.indisready AND i.indislive "
    "AND obj_description(c.oid, 'pg_class') IS NULL AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = c.oid) "
    "AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = c.oid) "
    "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
    "WHERE i.indrelid = 'edge_revisions'::regclass AND c.relname IN ('edge_revisions_dst', 'edge_revisions_src') "
    "ORDER BY 1"
)


class _CopiedWrites(_Writes):
    """PostgreSQL: the names found are copied into a temporary table, `COPY_ROWS` at a time, and
    written by one UPDATE at the end (still only into rows naming no actor). Written as they were
    found, a few hundred a statement in the order of their revisions' stamps, which is no order of the
    table's key, each statement looked its rows up all over the table: most of a large upgrade's time.
    One UPDATE joins them to the table in one pass, in the order of the table's key: each row it
    writes anew gets an entry in every index beside its old one, so in that order the primary key's
    pages (and the `src` index's, nearly) are written one after another; in a hash join's order (the
    table's own), each entry landed on a page read anew, most of the UPDATE's time. So the join is a
    merge, or a loop over the names sorted by key, never a hash join, for that one statement."""

    def __init__(self, db: Copies) -> None:
        assert isinstance(db, Db)
        super().__init__(db)
        self._copies = db
        self._made = False

    def add(self, ident: tuple[Key, int], actor: str, request_id: str | None) -> None:
        (src, dst, edge_type), rev_no = ident
        self._rows.append((src, dst, edge_type, rev_no, actor, request_id))
        self.found += 1
        if len(self._rows) >= COPY_ROWS:
            self._flush()

    def done(self, said: bool) -> int:
        self._flush()
        if not self._made:
            return 0
        if said:
            log.info("writing the %s names found into the edge revisions", f"{self.found:,}")
        self._db.run("ANALYZE kaeru_link_actors")  # the planner joins it whole, knowing its size
        rebuilt = self._indexes_dropped()
        # The join's sorts held in memory as far as they fit, and in the key's order (no hash join); the
        # settings as they were after.
        kept = self._db.one("SELECT current_setting('work_mem'), current_setting('enable_hashjoin')") or ("", "")
        self._db.one(
            f"SELECT set_config('work_mem', {_AT_LEAST_64MB}, true), set_config('enable_hashjoin', 'off', true)"
        )
        self.written = self._db.run(
            "UPDATE edge_revisions SET actor = t.actor, request_id = t.request_id "
            "FROM (SELECT * FROM kaeru_link_actors ORDER BY src, dst, edge_type, rev_no) AS t "
            "WHERE edge_revisions.src = t.src AND edge_revisions.dst = t.dst AND edge_revisions.edge_type = t.edge_type "
            "AND edge_revisions.rev_no = t.rev_no AND edge_revisions.actor IS NULL"
        )
        self._db.one("SELECT set_config('work_mem', ?, true), set_config('enable_hashjoin', ?, true)", tuple(kept))
        for statement in rebuilt:
            self._db.run(statement)
        self._db.run("DROP TABLE kaeru_link_actors")
        return self.written

    def _indexes_dropped(self) -> list[str]:
        """When most of the table is named, kaeru's own plain indexes on it dropped (what makes them
        again returned): an UPDATE writes a new version of each row (none fits beside the old one in a
        full page), and with it an entry in every index, the `dst` index's at random places in any
        order of the UPDATE; building one again afterwards is one sorted pass. Only those that a drop and their statement give back whole
        (`_OWN`), and none when the table is published, replicated by an index, or referred to by a
        foreign key (`_REBUILDABLE`) or one of them is not whole. The primary key, a constraint's
        index and an index of the vault's owner are never dropped: without its key, a published
        table's UPDATE was refused (no replica identity) at every try, and what a definition does not
        say — a storage option, clustering, the replica identity, a comment — was lost."""
        (rows,) = self._db.one("SELECT count(*) FROM edge_revisions") or (0,)
        if self.found < REBUILD_ROWS or self.found * REBUILD_SHARE < int(rows):
            return []
        if not (self._db.one(_REBUILDABLE) or (False,))[0]:
            return []
        own = [row for row in self._db.rows(_OWN) if row[3] == INDEXES["postgres"][row[0]]]
        if not all(whole for *_, whole in own):
            return []
        for _, index, _, _, _ in own:
            self._db.run(f"DROP INDEX {index}")
        return [statement for _, _, statement, _, _ in own]

    def _flush(self) -> None:
        if not self._rows:
            return
        if not self._made:
            self._db.run(_GATHERED)
            self._made = True
        self._copies.copy_rows(
            "COPY kaeru_link_actors (src, dst, edge_type, rev_no, actor, request_id) FROM STDIN", self._rows
        )
        self._rows = []


class _Progress:
    """How far a backfill got, said every `PROGRESS_S` (INFO): the revisions that named no one are
    counted when the first line is due, so a short backfill says nothing and counts nothing."""

    def __init__(self, db: Db, writes: _Writes) -> None:
        self._db = db
        self._writes = writes
        self._started = time.monotonic()
        self._due = self._started + PROGRESS_S
        self._read = 0
        #: How many revisions named no one when the backfill began (None: not counted, nothing said).
        self._total: int | None = None

    @property
    def said(self) -> bool:
        return self._total is not None

    def read_one(self) -> None:
        """One more revision read: say how far the backfill got if a line is due."""
        self._read += 1
        if time.monotonic() < self._due:
            return
        if self._total is None:  # the rows named so far no longer count themselves
            row = self._db.one("SELECT count(*) FROM edge_revisions WHERE actor IS NULL")
            self._total = (int(row[0]) if row is not None else 0) + self._writes.written
        log.info(
            "naming who made each older link change from the audit log: %s of %s edge revisions read, %s named "
            "(%.0f s so far)",
            f"{self._read:,}",
            f"{self._total:,}",
            f"{self._writes.found:,}",
            time.monotonic() - self._started,
        )
        self._due = time.monotonic() + PROGRESS_S

    def finished(self, written: int) -> None:
        """Say how many were named, when progress was said."""
        if self._total is not None:
            log.info(
                "named who made %s of %s edge revisions (in %.0f s)",
                f"{written:,}",
                f"{self._total:,}",
                time.monotonic() - self._started,
            )


def _unnamed(db: Db) -> Generator[Unnamed[tuple[Key, int]], None, None]:
    """The edge revisions that name no actor, in the order of their stamps, each with where its window
    ends: the next later time among its link's revisions (`next_time`: the first of the next group
    of equal times), streamed; closed, it ends the statement. The engine sorts them (no index holds
    a revision by its time alone), so rows named meanwhile do not change what it yields."""
    for src, dst, edge_type, rev_no, at, weight, retracted, before in db.stream(
        "SELECT src, dst, edge_type, rev_no, recorded_at, weight, retracted, window_end FROM "
        "(SELECT src, dst, edge_type, rev_no, recorded_at, weight, retracted, actor, "
        "MIN(recorded_at) OVER (PARTITION BY src, dst, edge_type ORDER BY recorded_at "
        "GROUPS BETWEEN 1 FOLLOWING AND 1 FOLLOWING) AS window_end FROM edge_revisions) AS w "
        "WHERE actor IS NULL ORDER BY recorded_at, src, dst, edge_type, rev_no"
    ):
        key = (src, dst, edge_type)
        yield Unnamed((key, rev_no), key, at, before, revision_change(bool(retracted), weight))


def _records(db: Db, since: str) -> Generator[Record, None, None]:
    """The audit records stamped at `since` or later whose text names an edge (a superset of those
    whose changes name a link), in the order of their stamps (then written), streamed; closed, it
    ends the statement."""
    for at, actor, request_id, text in db.stream(
        "SELECT at, actor, request_id, changes FROM audit WHERE at >= ? AND changes LIKE ? ORDER BY at, seq",
        (since, '%"edge"%'),
    ):
        try:
            changes = json.loads(text)
        except ValueError:
            changes = None  # names no link
        yield at, actor, request_id, changes
