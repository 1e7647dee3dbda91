"""What `kaeru doctor` learns from a vault's storage, the same shape on both backends.

The backend modules (`storage/sqlite/health.py`, `storage/postgres/health.py`) open a vault
read-only — never creating, migrating or writing it — and answer these facts; the service's doctor
turns them into checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kaeru.errors import Internal
from kaeru.storage.migrate import INDEX_PENDING, newest_version
from kaeru.storage.schema_objects import Lacking, lacking

#: How many disagreeing node ids a report names at most (the counts are always exact).
SAMPLE_IDS = 10
#: The WAL size above which the doctor warns: 128 MiB, far past the few MiB the checkpointer keeps
#: it at (decision 16.I1) — a WAL this large means checkpoints are being starved (a reader held a
#: snapshot for a long time), and every read pays for scanning it.
WAL_WARN_BYTES = 128 * 1024 * 1024


#: What to do about a SQLite vault on a network file system or in a sync client's folder (decision 182).
SHARED_PLACE_REMEDY = (
    "keep KAERU_VAULT on a local disk (and `kaeru backup` it to the synced or network folder), or use "
    "PostgreSQL (KAERU_DATABASE_URL) to share one vault between machines"
)


#: What a PostgreSQL database that cannot hold every text needs (decision 186).
UTF8_REMEDY = (
    "kaeru stores any Unicode text and needs a UTF8 database: create one with "
    "`CREATE DATABASE name ENCODING 'UTF8' TEMPLATE template0` and point KAERU_DATABASE_URL at it"
)


def holds_any_text(encoding: str) -> bool:
    """Whether a PostgreSQL database encoding (`server_encoding`) can hold every Unicode text."""
    return encoding.upper() in ("UTF8", "UTF-8", "UNICODE")


@dataclass(frozen=True)
class IndexAgreement:
    """Whether the full-text index holds exactly one row per live node."""

    live_nodes: int
    indexed_rows: int
    #: Live nodes without a full-text row (search cannot find them), a sample of their ids.
    missing: list[str] = field(default_factory=list)
    missing_count: int = 0
    #: Full-text rows of no live node (a deleted or retracted node still matches), a sample.
    stale: list[str] = field(default_factory=list)
    stale_count: int = 0
    #: The index is due a rebuild on the next read-write open (a migration asked for it).
    rebuild_pending: bool = False

    @property
    def agrees(self) -> bool:
        return not self.missing_count and not self.stale_count and not self.rebuild_pending


class Health:
    """What both engines' read-only looks share; the engine supplies its connection and its SQL."""

    backend = ""
    #: The package of the engine's migrations.
    migrations = ""
    _c: Any

    def close(self) -> None:
        self._c.close()

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return list(self._c.execute(sql, params))

    def has_table(self, name: str) -> bool:
        raise NotImplementedError

    def schema_objects(self) -> tuple[set[str], dict[str, str]]:
        """The vault's objects as `storage.schema_objects` says them, and its indexes by name."""
        raise NotImplementedError

    def lacking_objects(self) -> Lacking:
        """What the vault lacks of what its migrations made (catalog queries only)."""
        found, indexes = self.schema_objects()
        return lacking(self.backend, found, set(indexes))

    def initiative_names(self) -> list[str]:
        """Every live initiative's name as stored."""
        return sorted(str(r[0]) for r in self._rows("SELECT name FROM initiatives"))

    def migration_records(self) -> list[tuple[int, str]]:
        """The migrations recorded in the vault, (number, name) in number order (empty when it has
        no migration table): a number alone does not say which migration ran (decision 470)."""
        if not self.has_table("schema_migrations"):
            return []
        return [(int(v), str(n)) for v, n in self._rows("SELECT version, name FROM schema_migrations ORDER BY version")]

    def known_migrations(self) -> int:
        """The newest migration this kaeru ships."""
        return newest_version(self.migrations)

    def upgrading(self) -> bool:
        """Whether another process is applying the vault's pending migrations now (PostgreSQL: it
        holds the migration lock; SQLite's is the write lock any writer takes, which says nothing)."""
        return False

    def _agreement(self, live: str, indexed: str, missing: str, stale: str) -> IndexAgreement:
        """From the counts of live nodes and of index rows, the ids of live nodes without a row
        (`missing`) and `(row, id)` of rows without a live node (`stale`)."""
        gone = self._rows(stale)
        lacking = self._rows(missing)
        return IndexAgreement(
            live_nodes=int(self._rows(live)[0][0]),
            indexed_rows=int(self._rows(indexed)[0][0]),
            missing=[str(r[0]) for r in lacking[:SAMPLE_IDS]],
            missing_count=len(lacking),
            stale=[str(r[1]) if r[1] else f"row {r[0]}" for r in gone[:SAMPLE_IDS]],
            stale_count=len(gone),
            rebuild_pending=bool(self._rows(f"SELECT 1 FROM meta WHERE {INDEX_PENDING}")),
        )


#: An id no node has: the reads of `serving_reads` look it up and find nothing.
_NO_NODE = "00000000-0000-0000-0000-000000000000"


def serving_reads(session: Any) -> None:
    """One indexed read of each table every tool depends on — initiatives and their names, nodes and
    their past revisions, edges, slots, tokens, the vault's secret — each finding nothing (a name,
    an id no row has), so the check stays cheap on any vault. What `GET /health` asks of a serving
    vault: one lookup alone said `ok` while every tool failed on a table it did not read. The
    full-text index, the vectors and the replay of `request_id`s are not read here (`kaeru doctor`
    checks them).

    Raises:
        KaeruError: the database does not answer (`Unavailable`), or a table cannot be read (`Internal`).
    """
    session.initiative_by_name("")
    session.get_node(_NO_NODE)
    session.has_revision(_NO_NODE, 1)
    session.live_edges([_NO_NODE])
    session.get_slot(0, "")
    session.has_tokens()
    # From `meta` itself: `vault_secret()` answers from the secret the store read when it opened.
    if session._db.one("SELECT 1 FROM meta WHERE key = 'secret'") is None:
        raise Internal("vault has no secret; was it migrated?")
