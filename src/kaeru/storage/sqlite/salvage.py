"""Salvage a damaged SQLite vault: every row that still reads, copied into a fresh file.

`kaeru doctor` finds the damage; `kaeru export` cannot help then — it reads through indexes and
stops at the first bad page, so its advice to "export what still reads" led in a circle. Salvage
reads each table by its own b-tree (never an index, which is rebuilt), steps over the pages that do
not read, and says what it could not read. Indexes, triggers and the full-text index are built
afresh in the new file (the text index from the salvaged nodes, by the store, afterwards), and so
are the tables made from others (`salvage_derived`: memberships, edges, slots) at this kaeru's
schema, with the migration records a damaged `schema_migrations` lost.

The damaged file is read with `PRAGMA writable_schema` on (the connection is read-only: nothing is
written): without it SQLite refuses a file shorter than its header says — a vault truncated by a
full disk or a copy cut short — before reading a row, although every page it still holds reads.

How a table is read past its damage:
- a rowid table in rowid order; where a read fails, the next readable rowid is found by probing
  ever further ahead and then bisecting back, and the rowids skipped are then looked up one by one
  (a readable stretch between two damaged regions is kept);
- a table without rowid (a composite key) from its first key forwards and from its last key
  backwards: everything outside one damaged region is kept (rows between two regions are lost).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from kaeru.storage.sqlite import salvage_derived as derived

#: What a damaged file raises when a page is read (a bad page, a bad overflow chain, a short file).
DAMAGE = (apsw.CorruptError, apsw.NotADBError, apsw.IOError, apsw.FormatError, apsw.RangeError)
#: Rows written per statement.
CHUNK = 500
#: The widest span of rowids between two readable points looked up one by one (a few seconds).
EXACT_SPAN = 1_000_000
#: The largest rowid SQLite stores.
MAX_ROWID = 2**63 - 1
#: A column a JSON function of an index or trigger reads (`json_type(properties, …)`).
_JSON_ARGUMENT = re.compile(r"json_\w+\(\s*(?:(?:new|old)\.)?\"?(\w+)\"?\s*[,)]", re.IGNORECASE)


@dataclass
class TableSalvage:
    """What salvage made of one table: the rows copied and where rows could not be read."""

    name: str
    copied: int = 0
    #: Where reading failed, in words: `rowid 120 to 181`, `between key (3, 1, 77) and key (5, 0, 12)`.
    damaged: list[str] = field(default_factory=list)
    #: Made again from other tables (`copied` counts the rows made), not copied: nothing of it is lost.
    rebuilt: bool = False


@dataclass
class Salvage:
    """The whole salvage: per table, and the schema version the new file carries."""

    tables: list[TableSalvage]
    user_version: int

    @property
    def damaged(self) -> list[TableSalvage]:
        return [t for t in self.tables if t.damaged]


class Unsalvageable(Exception):
    """Not even the list of tables reads: nothing can be salvaged from this file."""


def salvage(source: Path, target: Path) -> Salvage:
    """Copy every row of `source` that reads into the new file `target` (which must not exist).

    Raises:
        Unsalvageable: `source`'s schema cannot be read.
    """
    src = apsw.Connection(str(source), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        try:
            list(src.execute("PRAGMA writable_schema = ON"))  # read-only: trusts the schema, writes nothing
            schema = list(src.execute("SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE sql IS NOT NULL"))
            user_version = int(next(iter(src.execute("PRAGMA user_version")))[0])
        except DAMAGE as exc:
            raise Unsalvageable(f"{source}: its list of tables cannot be read ({exc})") from exc
        dst = apsw.Connection(str(target), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE)
        try:
            return _copy(src, dst, schema, user_version)
        finally:
            dst.close()
    finally:
        src.close()


def _copy(src: apsw.Connection, dst: apsw.Connection, schema: list[Any], user_version: int) -> Salvage:
    virtual = {name for kind, name, _, sql in schema if kind == "table" and sql.upper().startswith("CREATE VIRTUAL")}
    # A virtual table's shadow tables (`nodes_fts_data`…) are made by the virtual table itself.
    shadow = {name for kind, name, _, _ in schema if kind == "table" and any(name.startswith(v + "_") for v in virtual)}
    # SQLite's own tables are made by SQLite (statistics by ANALYZE are gathered again, not copied):
    # only `sqlite_sequence`, which AUTOINCREMENT's tables make, carries rows worth keeping.
    tables = [
        (name, sql)
        for kind, name, _, sql in schema
        if kind == "table" and name not in shadow and (not name.startswith("sqlite_") or name == "sqlite_sequence")
    ]
    list(dst.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF"))  # a new file: no one else reads it
    report: list[TableSalvage] = []
    # The derived tables are made from their sources below when the schema is this kaeru's newest
    # (the statements are written for it); an older one's are copied and the store migrates them.
    derive = derived.current(user_version)
    with dst:
        for name, sql in tables:
            if not name.startswith("sqlite_"):
                dst.execute(sql)
        for name, _ in tables:
            if name not in virtual and not (derive and name in derived.NOT_COPIED):
                report.append(_copy_table(src, dst, name))  # the full-text index: rebuilt by the store
        _drop_unparsable(dst, schema, report)
        for kind, name, _, sql in schema:
            if kind in ("index", "trigger") and not name.startswith("sqlite_"):
                dst.execute(sql)
        dst.execute(f"PRAGMA user_version = {user_version}")
        if derived.restore_records(dst, user_version):
            # What did not read of it is written again whole: the table lost nothing.
            for table in report:
                if table.name == "schema_migrations":
                    table.damaged, table.rebuilt = [], True
                    table.copied = int(next(iter(dst.execute("SELECT count(*) FROM schema_migrations")))[0])
        if derive:
            made = derived.rebuild(dst)
            report = [t for t in report if t.name not in made]
            report += [TableSalvage(t, rows, rebuilt=True) for t, rows in made.items()]
    return Salvage(report, user_version)


def _drop_unparsable(dst: apsw.Connection, schema: list[Any], report: list[TableSalvage]) -> None:
    """Leave out the copied rows whose text an index or trigger reads as JSON but which is not JSON.
    A page cut short can read as a row with its text cut; an index over a JSON expression
    (`nodes_attention` reads `properties`) or a trigger then refuses the whole salvage ("malformed
    JSON"). Such rows are as damaged as rows that did not read: left out, and said. Done before any
    index or trigger exists, so that removing them fires none."""
    read: dict[str, set[str]] = {}
    for kind, _, table, sql in schema:
        if kind in ("index", "trigger") and sql:
            read.setdefault(table, set()).update(_JSON_ARGUMENT.findall(sql))
    for table, named in read.items():
        quoted = _quote(table)
        columns = sorted(named & {str(r[1]) for r in dst.execute(f"PRAGMA table_info({quoted})")})
        if not columns:
            continue
        invalid = " OR ".join(f"NOT json_valid({_quote(c)})" for c in columns)
        rowids = [int(r[0]) for r in dst.execute(f"SELECT rowid FROM {quoted} WHERE {invalid} ORDER BY rowid")]
        if not rowids:
            continue
        dst.execute(f"DELETE FROM {quoted} WHERE {invalid}")
        said = next((t for t in report if t.name == table), None)
        if said is not None:
            said.copied -= len(rowids)
            said.damaged += [f"{span} ({', '.join(columns)} not JSON)" for span in _spans(rowids)]


def _copy_table(src: apsw.Connection, dst: apsw.Connection, name: str) -> TableSalvage:
    quoted = _quote(name)
    columns = [row[1] for row in src.execute(f"PRAGMA table_info({quoted})")]
    keyed = [row[1] for row in sorted(src.execute(f"PRAGMA table_info({quoted})"), key=lambda r: r[5]) if row[5]]
    has_rowid = not _without_rowid(src, name)
    names = (["rowid"] if has_rowid else []) + columns
    insert = f"INSERT OR IGNORE INTO {quoted} ({', '.join(map(_quote, names))}) VALUES ({', '.join('?' * len(names))})"
    result = TableSalvage(name)
    rows = _by_rowid(src, quoted, names, result) if has_rowid else _by_key(src, quoted, names, keyed, result)
    batch: list[tuple[Any, ...]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == CHUNK:
            dst.executemany(insert, batch)
            result.copied += len(batch)
            batch = []
    if batch:
        dst.executemany(insert, batch)
        result.copied += len(batch)
    return result


def _by_rowid(src: apsw.Connection, table: str, names: list[str], result: TableSalvage) -> Iterator[tuple[Any, ...]]:
    """The table's rows in rowid order, stepping over the regions that do not read."""
    select = f"SELECT {', '.join(map(_quote, names))} FROM {table} NOT INDEXED WHERE rowid >= ? ORDER BY rowid"
    start: int | None = -MAX_ROWID - 1
    while start is not None:
        failed = start
        try:
            for row in src.execute(select, (start,)):
                failed = row[0] + 1
                yield row
            return
        except DAMAGE:
            start = _next_readable(src, select + " LIMIT 1", failed)
            if start is None:
                result.damaged.append("every row" if failed == -MAX_ROWID - 1 else f"rowid {failed} to the end")
            else:
                yield from _row_by_row(src, table, names, failed, start, result)


def _row_by_row(
    src: apsw.Connection, table: str, names: list[str], low: int, high: int, result: TableSalvage
) -> Iterator[tuple[Any, ...]]:
    """The rows with a rowid in `[low, high)` that still read, each looked up by its rowid: the
    probing that found `high` may have jumped over a readable stretch between two damaged regions.
    A span too wide to look up one by one is counted as damaged whole."""
    if high - low > EXACT_SPAN:
        result.damaged.append(f"rowid {low} to {high - 1}")
        return
    one = f"SELECT {', '.join(map(_quote, names))} FROM {table} NOT INDEXED WHERE rowid = ?"
    unread: list[int] = []
    for rowid in range(low, high):
        try:
            yield from src.execute(one, (rowid,))
        except DAMAGE:
            unread.append(rowid)
    result.damaged.extend(_spans(unread))


def _spans(rowids: list[int]) -> list[str]:
    """`rowid 120 to 181`, one per run of consecutive rowids (ascending)."""
    runs: list[list[int]] = []
    for rowid in rowids:
        if runs and rowid == runs[-1][1] + 1:
            runs[-1][1] = rowid
        else:
            runs.append([rowid, rowid])
    return [f"rowid {first} to {last}" for first, last in runs]


def _next_readable(src: apsw.Connection, first: str, failed: int) -> int | None:
    """The smallest rowid after `failed` from which the table reads again (None: nothing after it
    does), found by probing ever further ahead, then bisecting back."""
    step = 1
    while not _reads(src, first, failed + step):
        step *= 2
        if failed + step > MAX_ROWID:
            return None
    low, high = failed + step // 2, failed + step  # reading from `low` fails, from `high` succeeds
    while high - low > 1:
        middle = (low + high) // 2
        if _reads(src, first, middle):
            high = middle
        else:
            low = middle
    return high


def _reads(src: apsw.Connection, first: str, start: int) -> bool:
    """Whether the first row from `start` on reads."""
    try:
        list(src.execute(first, (start,)))
    except DAMAGE:
        return False
    return True


def _by_key(
    src: apsw.Connection, table: str, names: list[str], keyed: list[str], result: TableSalvage
) -> Iterator[tuple[Any, ...]]:
    """The rows of a table without rowid, from its first key forwards and then from its last key
    backwards down to the last one read forwards."""
    key = ", ".join(map(_quote, keyed))
    at = [names.index(k) for k in keyed]
    last: tuple[Any, ...] | None = None
    try:
        for row in src.execute(f"SELECT {', '.join(map(_quote, names))} FROM {table} ORDER BY {key}"):
            last = tuple(row[i] for i in at)
            yield row
        return
    except DAMAGE:
        pass
    descending = ", ".join(f"{_quote(k)} DESC" for k in keyed)
    after = f"WHERE ({key}) > ({', '.join('?' * len(keyed))}) " if last is not None else ""
    first_back: tuple[Any, ...] | None = None
    try:
        for row in src.execute(
            f"SELECT {', '.join(map(_quote, names))} FROM {table} {after}ORDER BY {descending}", last or ()
        ):
            first_back = tuple(row[i] for i in at)
            yield row
    except DAMAGE:
        result.damaged.append(
            "every row"
            if last is first_back is None
            else f"between {_key(last, 'the start')} and {_key(first_back, 'the end')}"
        )


def _key(key: tuple[Any, ...] | None, otherwise: str) -> str:
    return otherwise if key is None else f"key {key}"


def _without_rowid(src: apsw.Connection, name: str) -> bool:
    sql = next(iter(src.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (name,))))[0]
    return "WITHOUT ROWID" in " ".join(str(sql).upper().split())


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
