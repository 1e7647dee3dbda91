"""The one place that picks a backend: `open_store`, and for `kaeru doctor` `open_health` (the
vault read-only) and `rebuild_text_index`; for `kaeru bench`, `scratch_vault` and `settle`."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from kaeru.config import Settings
from kaeru.storage.base import Store


def open_store(settings: Settings, *, upgrade_in_background: bool = False) -> Store:
    """PostgreSQL when `database_url` is set, else the embedded SQLite vault under `vault_dir`; an
    older vault migrated on a thread of its own with `upgrade_in_background` (`BackgroundUpgrade`)."""
    if settings.database_url:
        from kaeru.storage.postgres.store import PostgresStore  # type: ignore[import-untyped,unused-ignore]

        store: Store = PostgresStore(
            settings.database_url,
            lock_timeout_ms=settings.busy_timeout_ms,
            statement_timeout_ms=settings.pg_statement_timeout_ms,
            search_cache_bytes=settings.search_cache_mb << 20,
            upgrade_in_background=upgrade_in_background,
        )
        return store
    from kaeru.storage.sqlite.store import SqliteStore

    return SqliteStore(
        settings.sqlite_path,
        busy_timeout_ms=settings.busy_timeout_ms,
        search_cache_bytes=settings.search_cache_mb << 20,
        upgrade_in_background=upgrade_in_background,
    )


def open_health(settings: Settings) -> Any:
    """The vault opened read-only for `kaeru doctor` (never created, migrated or written); the
    object answers `service.doctor.VaultHealth`. Raises NotFound or Unavailable."""
    if settings.database_url:
        from kaeru.storage.postgres.health import PostgresHealth  # type: ignore[import-untyped,unused-ignore]

        return PostgresHealth(settings.database_url)
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
            from kaeru.storage.postgres.scratch import scratch_database  # type: ignore[import-untyped,unused-ignore]

            with scratch_database(settings.database_url) as url:
                yield replace(settings, vault_dir=directory, database_url=url)
        else:
            yield replace(settings, vault_dir=directory, database_url=None)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def settle(settings: Settings) -> None:
    """After a bulk fill, what the engine's own upkeep would have done by the time a vault is used:
    PostgreSQL's planner statistics (autovacuum's ANALYZE). SQLite keeps none and needs nothing."""
    if settings.database_url:
        from kaeru.storage.postgres.scratch import analyze  # type: ignore[import-untyped,unused-ignore]

        analyze(settings.database_url)
