"""What `salvage` writes into the new vault besides the rows it copied: the migration records a
damaged `schema_migrations` lost, and the tables made from other tables, rebuilt from those.

Migration records: the new file carries the damaged one's schema and `user_version`. A vault whose
`schema_migrations` page did not read came out with every table and no record, and every command
then ran migration 001 again over it (`table meta already exists`, a traceback). The records are
written again only when the salvaged schema is exactly what this kaeru's migrations up to
`user_version` make (run on an empty in-memory database and compared by name): a vault of another
lineage keeps its empty record, which every command then refuses (`VaultRecordsLost`).

Derived tables: `memberships` (from each live node's `initiatives`, tier and layer), `edges` (the
newest revision of each edge) and `slots` (the newest revision of each slot of a live initiative)
hold nothing their sources do not. Copied raw, a damaged page of one lost every row between its
first and last damaged key (a table without rowid is read from both ends), while the sources still
held the truth: an initiative showed half its notes, a graph no edges, and `kaeru doctor` said
healthy. Rebuilt from the salvaged sources, they agree with them whatever was damaged — the
statements say what `put_node`, `put_edge` and `put_slot` keep (`storage/derived.py`, which
`kaeru doctor` compares with, uses the same).
"""

from __future__ import annotations

from typing import Any

import apsw

from kaeru.storage.derived import SQLITE_REBUILD
from kaeru.storage.migrate import load_migrations, read_records

_MIGRATIONS = "kaeru.storage.sqlite.migrations"

#: The derived tables whose copied rows are of no use: a membership is its node's `initiatives`,
#: and a node lost is lost whole. `edges` and `slots` are copied first: a row that read is the newest
#: revision of its edge or slot, whole, and goes back among the revisions when those lost it.
NOT_COPIED = ("memberships",)
#: The revision table of each derived table whose rows are revisions, with their common columns.
_REVISIONS = {
    "edges": ("edge_revisions", "src, dst, edge_type, rev_no, weight, properties, created_at, recorded_at, retracted"),
    "slots": ("slot_revisions", "initiative_id, slot, rev_no, node_id, revision, updated_at"),
}


def current(user_version: int) -> bool:
    """Whether a vault at `user_version` has the tables the rebuild statements are written for."""
    return user_version == load_migrations(_MIGRATIONS)[-1].version


def restore_records(dst: apsw.Connection, user_version: int) -> int:
    """Write the records of migrations 1..`user_version` that `dst`'s `schema_migrations` lacks, when
    `dst`'s schema is what those migrations make; how many were written (0: none lacked, or the
    schema is another's)."""
    migrations = load_migrations(_MIGRATIONS)
    if not 0 < user_version <= len(migrations):
        return 0
    rows = [(int(v), str(n)) for v, n in dst.execute("SELECT version, name FROM schema_migrations")]
    lacking = [m for m in migrations[:user_version] if m.version not in read_records(rows, _MIGRATIONS).applied]
    if not lacking or {v for v, _ in rows} & {m.version for m in lacking}:
        return 0  # complete, or a record under another name there: not ours to overwrite
    if _objects(dst) != _made_by(user_version):
        return 0
    dst.executemany(
        "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [(m.version, m.name) for m in lacking]
    )
    return len(lacking)


def rebuild(dst: apsw.Connection) -> dict[str, int]:
    """Make each derived table again from its sources in `dst`; its rows, by table. A copied edge
    or slot whose revision did not read is added to the revisions first (`put_edge` and `put_slot`
    write the same values to both), so it is kept and the history says it."""
    for table, (revisions, columns) in _REVISIONS.items():
        dst.execute(f"INSERT OR IGNORE INTO {revisions} ({columns}) SELECT {columns} FROM {table}")
    made: dict[str, int] = {}
    for table, statement in SQLITE_REBUILD.items():
        dst.execute(f'DELETE FROM "{table}"')
        dst.execute(statement)
        made[table] = int(next(iter(dst.execute(f'SELECT count(*) FROM "{table}"')))[0])
    return made


def _objects(conn: apsw.Connection) -> set[tuple[str, str]]:
    """The schema's tables, indexes, views and triggers by kind and name (SQLite's own aside)."""
    found: set[tuple[str, str]] = set()
    for kind, name in conn.execute("SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"):
        found.add((str(kind), str(name)))
    return found - {("table", "schema_migrations")}


def _made_by(user_version: int) -> set[tuple[str, str]]:
    """What this kaeru's migrations up to `user_version` make, on an empty in-memory database."""
    scratch = apsw.Connection(":memory:")
    try:

        def script(sql: str) -> Any:
            return list(scratch.execute(sql))

        with scratch:
            for migration in load_migrations(_MIGRATIONS)[:user_version]:
                migration.apply(scratch, script)
        return _objects(scratch)
    finally:
        scratch.close()
