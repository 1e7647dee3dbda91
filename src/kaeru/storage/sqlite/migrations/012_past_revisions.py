"""Rename `node_revisions` to `past_revisions` where migration 010's first text left it (decision 16.D1).

Migration 010 was edited (87b34b1) after main had run its first text (330390c), which did everything
the landed text does except its last statement, `ALTER TABLE node_revisions RENAME TO
past_revisions`. Such a vault records 010 as applied, so it never runs the landed text, and the
current code fails on it with "no such table: past_revisions". Plain SQL has no conditional rename,
so this migration is a module: it renames the table only where the old name is still there (the
indexes keep their names either way, as the landed 010 keeps them), leaving every other vault as it
is. After it, a vault that ran either text of 010 has the same schema.
"""

from __future__ import annotations

from typing import Any


def up(conn: Any) -> None:
    """`conn` is the migrating apsw connection, inside the migration's write transaction."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    if "node_revisions" in tables and "past_revisions" not in tables:
        list(conn.execute("ALTER TABLE node_revisions RENAME TO past_revisions"))
