"""The one place that picks a backend: `open_store`, and for `kaeru doctor` `open_health` (the
vault read-only) and `rebuild_text_index`; for `kaeru bench`, `scratch_vault` and `settle`."""

from __future__ import annotations

import importlib
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from kaeru.config import Settings
from kaeru.storage.base import Store
from kaeru.storage.migrate import VaultUnusable

#: Why a PostgreSQL vault cannot open in an install without the `[postgres]` extra.
NO_DRIVER = (
    "KAERU_DATABASE_URL names a PostgreSQL database, but its driver (psycopg) is not installed: "
    "pip install 'kaeru-memory[postgres]', or unset KAERU_DATABASE_URL for the embedded vault"
)


def _postgres(module: str) -> Any:
    """`kaeru.storage.postgres.<module>`; a missing driver is said as what to install (a traceback
    of `import psycopg` told a user of the default install nothing, and `kaeru serve` died before
    `initialize`), any other missing module is raised as it is."""
    try:
        return importlib.import_module(f"kaeru.storage.postgres.{module}")
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("psycopg", "psycopg_pool"):
            raise
        raise VaultUnusable(NO_DRIVER) from None


def open_store(settings: Settings, *, upgrade_in_background: bool = False) -> Store:
    """PostgreSQL when `database_url` is set, else the embedded SQLite vault under `vault_dir`; an
    older vault migrated on a thread of its own with `upgrade_in_background` (`BackgroundUpgrade`)."""
    if settings.database_url:
        store: Store = _postgres("store").PostgresStore(
            settings.database_url,
            lock_timeout_ms=settings.busy_timeout_ms,
            statement_timeout_ms=settings.pg_statement_timeout_ms,
            search_cache_bytes=settings.search_cache_mb << 20,
            upgrade_in_background=upgrade_in_background,
        )
        return store
    from kaeru.storage.sqlite.machine import unnameable
    from kaeru.storage.sqlite.store import SqliteStore

    if (refusal := unnameable(settings.sqlite_path)) is not None:  # before anything is made there
        raise refusal
    return SqliteStore(
        settings.sqlite_path,
        busy_timeout_ms=settings.busy_timeout_ms,
        search_cache_bytes=settings.search_cache_mb << 20,
        upgrade_in_background=upgrade_in_background,
    )


def open_health(settings: Settings, *, connect_timeout_s: int = 10) -> Any:
    """The vault opened read-only for `kaeru doctor` (never created, migrated or written); the
    object answers `service.doctor.VaultHealth`. Raises NotFound or Unavailable. A PostgreSQL
    server that does not answer is given up on after `connect_timeout_s` (per host)."""
    if settings.database_url:
        return _postgres("health").PostgresHealth(settings.database_url, connect_timeout_s=connect_timeout_s)
    from kaeru.storage.sqlite.health import SqliteHealth

    return SqliteHealth(settings.sqlite_path, busy_timeout_ms=settings.busy_timeout_ms)


def rebuild_text_index(store: Store) -> int:
    """Rebuild the full-text index from the nodes (the fix for a `fulltext` failure); rows written."""
    with store.write() as session:
        rebuild: Any = session
        return int(rebuild.rebuild_text_index())


@contextmanager
def scratch_vault(settings: Settings, *, sqlite: bool = False) -> Iterator[Settings]:
    """`settings` pointed at a new, empty vault on the same backend (SQLite with `sqlite`): a
    temporary directory, or a scratch database on the same PostgreSQL server; removed when the
    block ends. The vault `settings` names is never opened."""
    directory = Path(tempfile.mkdtemp(prefix="kaeru-bench-"))
    try:
        if settings.database_url and not sqlite:
            with _postgres("scratch").scratch_database(settings.database_url) as url:
                yield replace(settings, vault_dir=directory, database_url=url)
        else:
            yield replace(settings, vault_dir=directory, database_url=None)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def settle(settings: Settings) -> None:
    """After a bulk fill, what the engine's own upkeep would have done by the time a vault is used:
    PostgreSQL's planner statistics (autovacuum's ANALYZE). SQLite keeps none and needs nothing."""
    if settings.database_url:
        _postgres("scratch").analyze(settings.database_url)
