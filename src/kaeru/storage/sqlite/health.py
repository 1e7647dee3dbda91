"""A read-only look at a SQLite vault for `kaeru doctor`: nothing is created, migrated or written.

The vault file is opened with `SQLITE_OPEN_READONLY` and `PRAGMA query_only`, so even a bug here
cannot change it; a vault that does not exist is reported, never created.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from kaeru.errors import NotFound, Unavailable
from kaeru.storage.health import SAMPLE_IDS, IndexAgreement
from kaeru.storage.migrate import load_migrations
from kaeru.storage.sqlite.store import SqliteSession


class SqliteHealth:
    """One read-only connection to a vault file."""

    backend = "sqlite"

    def __init__(self, path: Path, *, busy_timeout_ms: int = 30_000):
        """Open `path` read-only.

        Raises:
            NotFound: there is no vault file at `path`.
            Unavailable: the file cannot be opened as a database.
        """
        self.path = path
        if not path.is_file():
            raise NotFound(f"there is no vault at {path}")
        try:
            self._c = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
            self._c.set_busy_timeout(busy_timeout_ms)
            list(self._c.execute("PRAGMA query_only = 1"))
            list(self._c.execute("SELECT count(*) FROM sqlite_schema"))
        except apsw.Error as exc:
            raise Unavailable(f"cannot open {path} as a SQLite database ({type(exc).__name__}: {exc})") from exc

    def close(self) -> None:
        self._c.close()

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return list(self._c.execute(sql, params))

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend, "path": str(self.path), "sqlite": apsw.sqlite_lib_version()}

    def has_table(self, name: str) -> bool:
        return bool(self._rows("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", (name,)))

    def applied_migrations(self) -> list[int]:
        """Migration numbers recorded in the vault (empty when it has no migration table)."""
        if not self.has_table("schema_migrations"):
            return []
        return [int(r[0]) for r in self._rows("SELECT version FROM schema_migrations ORDER BY version")]

    @staticmethod
    def known_migrations() -> int:
        """The newest migration this kaeru ships."""
        return load_migrations("kaeru.storage.sqlite.migrations")[-1].version

    def integrity(self) -> list[str]:
        """`PRAGMA quick_check`'s lines: `["ok"]` for a sound file."""
        return [str(r[0]) for r in self._rows("PRAGMA quick_check")]

    def index_agreement(self) -> IndexAgreement:
        """Live nodes against the rows of the full-text index, by count and by row id."""
        live = self._rows("SELECT count(*) FROM nodes WHERE retracted = 0")[0][0]
        indexed = self._rows("SELECT count(*) FROM nodes_fts")[0][0]
        missing = self._rows(
            "SELECT id FROM nodes WHERE retracted = 0 AND seq NOT IN (SELECT rowid FROM nodes_fts) ORDER BY seq"
        )
        stale = self._rows(
            "SELECT f.rowid, n.id FROM nodes_fts f LEFT JOIN nodes n ON n.seq = f.rowid "
            "WHERE n.seq IS NULL OR n.retracted <> 0 ORDER BY f.rowid"
        )
        pending = bool(self._rows("SELECT 1 FROM meta WHERE key = 'stem_index_pending'"))
        return IndexAgreement(
            live_nodes=int(live),
            indexed_rows=int(indexed),
            missing=[str(r[0]) for r in missing[:SAMPLE_IDS]],
            missing_count=len(missing),
            stale=[str(r[1]) if r[1] else f"row {r[0]}" for r in stale[:SAMPLE_IDS]],
            stale_count=len(stale),
            rebuild_pending=pending,
        )

    def wal_bytes(self) -> int:
        """The size of the vault's write-ahead log on disk (0 when there is none)."""
        wal = self.path.with_name(self.path.name + "-wal")
        return wal.stat().st_size if wal.exists() else 0

    @contextmanager
    def read(self) -> Iterator[SqliteSession]:
        """One read snapshot on the read-only connection."""
        list(self._c.execute("BEGIN"))
        try:
            yield SqliteSession(self._c, snapshot=True)
        finally:
            list(self._c.execute("ROLLBACK"))


def rebuild_text_index(store: Any) -> int:
    """Rebuild the full-text index of a (read-write) `SqliteStore` from its nodes; the rows written."""
    with store.write() as session:
        count: int = session.reindex_text()
    return count
