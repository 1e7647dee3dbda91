"""Numbered migrations per backend, applied once each and recorded in `schema_migrations`.

A migration is a `.sql` script, or a `.py` module with `def up(conn)` for a change plain SQL cannot
make (e.g. a rename only where an earlier text of a migration left the old name): `up` gets the
engine's own connection (apsw or psycopg) inside the migrating transaction. Both stores run them
with `run_pending`, inside a transaction that holds their engine's lock (SQLite `BEGIN IMMEDIATE`,
PostgreSQL an advisory lock): one loader, one runner for both engines.
"""

from __future__ import annotations

import importlib
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from kaeru.errors import Unavailable
from kaeru.storage.sql.db import Db

_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.(sql|py)$")

#: The `meta` keys a migration sets when what is indexed changed: the index is rebuilt when the store
#: next opens the vault read-write — the stems only (`stem_index_pending`, SQLite 002, PostgreSQL
#: 002/009), or the literal tokens too (`text_index_pending`, SQLite 020/021, PostgreSQL 015/016).
STEMS_PENDING, TEXT_PENDING = "stem_index_pending", "text_index_pending"
#: The condition on `meta` of "a rebuild is pending", as every statement that asks or clears it says it.
INDEX_PENDING = f"key IN ('{STEMS_PENDING}', '{TEXT_PENDING}')"


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    #: The script of a `.sql` migration; empty for a `.py` one.
    sql: str
    #: The `up(conn)` of a `.py` migration; None for a `.sql` one.
    up: Callable[[Any], None] | None = None

    def apply(self, conn: Any, script: Callable[[str], object]) -> None:
        """Run this migration inside the caller's transaction: `up(conn)` with the engine's connection
        (apsw or psycopg), or the `.sql` text through `script`, the engine's way to run a script."""
        if self.up is not None:
            self.up(conn)
        else:
            script(self.sql)


def _load(package: str, file: str, version: int, name: str, text: str) -> Migration:
    if file.endswith(".sql"):
        return Migration(version, name, text)
    module = importlib.import_module(f"{package}.{file[:-3]}")
    up = getattr(module, "up", None)
    if not callable(up):
        raise RuntimeError(f"migration {package}.{file} has no up(conn)")
    return Migration(version, name, "", up)


def load_migrations(package: str) -> list[Migration]:
    """The migrations shipped in `package` (e.g. `kaeru.storage.sqlite.migrations`), in order."""
    found: list[Migration] = []
    for entry in resources.files(package).iterdir():
        match = _NAME.match(entry.name)
        if match:
            text = entry.read_text(encoding="utf-8")
            found.append(_load(package, entry.name, int(match.group(1)), match.group(2), text))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations in {package} are not numbered 001..N: {versions}")
    return found


def newest_version(package: str) -> int:
    """The number of the newest migration shipped in `package`, from the file names alone."""
    versions = [int(m.group(1)) for e in resources.files(package).iterdir() if (m := _NAME.match(e.name))]
    return max(versions, default=0)


class VaultTooNew(Unavailable):
    """The vault was migrated by a newer kaeru: this one would write rows that break its invariants."""

    retryable = False


class VaultUnusable(Unavailable):
    """The configured place cannot hold a vault (a file where a folder should be, a file that is
    not a database): retrying cannot help; the user must point kaeru elsewhere or move the thing."""

    retryable = False


def refuse_newer(applied: set[int], known: list[Migration], where: str) -> None:
    """Raise `VaultTooNew` when `applied` holds a migration newer than every one in `known`.

    An older kaeru writing into a newer schema could leave out what the newer code relies on (a name
    history, an index row), so it refuses to open the vault at all rather than corrupt it quietly.
    """
    newest_known = known[-1].version if known else 0
    newer = sorted(v for v in applied if v > newest_known)
    if newer:
        raise VaultTooNew(
            f"the {where} vault is at migration {newer[-1]}, newer than this kaeru knows ({newest_known}): "
            "upgrade kaeru (pip install -U kaeru-memory) before using it"
        )


def run_pending(
    db: Db, conn: Any, script: Callable[[str], object], package: str, where: str, table: str
) -> tuple[int, bool]:
    """Apply the migrations of `package` that `schema_migrations` does not list, in order, each
    recorded there, and give the vault its secret if it has none. Returns the newest migration
    this code knows and whether one ran.

    Runs inside the caller's migrating transaction, which holds the engine's lock; `conn` is the
    engine's connection (for `.py` migrations), `script` its way to run a `.sql` one, `table` its
    `CREATE TABLE IF NOT EXISTS schema_migrations`. A vault migrated past `package` raises
    `VaultTooNew` (`where` names the engine in the message).
    """
    db.run(table)
    done = {int(r[0]) for r in db.rows("SELECT version FROM schema_migrations")}
    migrations = load_migrations(package)
    refuse_newer(done, migrations, where)
    pending = [m for m in migrations if m.version not in done]
    for migration in pending:
        migration.apply(conn, script)
        db.run("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (migration.version, migration.name))
    db.run("INSERT INTO meta (key, value) VALUES ('secret', ?) ON CONFLICT (key) DO NOTHING", (secrets.token_hex(32),))
    return migrations[-1].version, bool(pending)
