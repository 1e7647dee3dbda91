"""`kaeru doctor`'s checks of a vault's schema: which migrations ran, and whether what they made is
still there (decision 446).

`kaeru migrate` reads only which migrations ran, so a table, an index or a unique constraint dropped
since — by hand, or on a managed database's "unused index" advice — went unnoticed until every call
that needed it failed, or, for a constraint, never: two writers could create one initiative twice.
The catalog is compared with what the migrations make (`storage.schema_objects`), a few catalog
queries whatever the vault's size.
"""

from __future__ import annotations

from typing import Protocol

from kaeru.service.settings_checks import FAIL, OK, WARN, Check
from kaeru.storage.migrate import (
    UNKNOWN_RECORD_FIX,
    Records,
    read_records,
    records_lost,
    unknown_said,
    upgrade_said,
)
from kaeru.storage.schema_objects import INDEXES, Lacking


class SchemaHealth(Protocol):
    """What these checks ask of `storage/*/health.py` (a part of `doctor.VaultHealth`)."""

    backend: str
    #: The package of the engine's migrations.
    migrations: str

    def has_table(self, name: str) -> bool: ...
    def migration_records(self) -> list[tuple[int, str]]: ...
    @staticmethod
    def known_migrations() -> int: ...
    def lacking_objects(self) -> Lacking: ...
    def upgrading(self) -> bool: ...


def migration_records(health: SchemaHealth) -> tuple[list[int], Records]:
    """The numbers the vault records, and what its records say against the shipped migrations.
    A number alone does not say which migration ran: main's history recorded some under names
    since given to others (decision 470), so the names are read too."""
    rows = health.migration_records()
    return [v for v, _ in rows], read_records(rows, health.migrations)


def migrations_check(health: SchemaHealth) -> Check:
    applied, records = migration_records(health)
    known = health.known_migrations()
    if not applied and health.has_table("meta"):  # the tables are there, the records lost (not a new vault)
        said = records_lost("PostgreSQL" if health.backend == "postgres" else "SQLite")
        summary, fix = said.split("; nothing was changed: ")
        return Check("migrations", FAIL, summary, fix)
    if not applied:
        return Check(
            "migrations",
            FAIL,
            "no schema_migrations table: this is not a kaeru vault (yet)",
            "point --vault / KAERU_VAULT (or KAERU_DATABASE_URL) at a kaeru vault, or make this one: "
            "`kaeru migrate` (or a first `kaeru serve`) creates the vault in an empty database — unless it held "
            "memories (a file emptied by a full disk or a copy cut short): then put a `kaeru backup` copy in its place, "
            "or import a `kaeru export` archive into a new vault",
        )
    newest = max(applied)
    if newest > known:
        return Check(
            "migrations",
            FAIL,
            f"the vault is at migration {newest}, newer than this kaeru knows ({known}): a newer kaeru wrote it",
            upgrade_said("this vault"),
        )
    if records.unknown:
        return Check("migrations", FAIL, unknown_said(records.unknown, health.migrations), UNKNOWN_RECORD_FIX)
    if records.pending or records.former:
        said = "every migration applied"  # only its records of a former numbering to rewrite
        if records.pending:
            said = (
                f"{len(records.pending)} migration(s) pending (applied {len(records.applied)} of {known}; "
                f"next: {records.pending[0]})"
            )
        if records.former:
            said += "; recorded under names of a former numbering: " + ", ".join(
                f"{v:03d} {n!r}" for v, n in records.former
            )
        if records.pending and health.upgrading():
            # Read while another process most likely applies them: "run `kaeru migrate`" was printed
            # after they were. The lock covers the whole database, whose other schemas may hold other
            # vaults, so whose upgrade it is goes unsaid.
            return Check(
                "migrations",
                WARN,
                f"{said}: an upgrade of a kaeru vault in this database is under way (another process holds the "
                "migration lock)",
                "wait for it to finish, then run `kaeru migrate`: it waits for the lock, then applies what is still "
                "pending or says the vault is current",
            )
        return Check(
            "migrations", WARN, said, "run `kaeru migrate` (any kaeru that opens the vault read-write applies them)"
        )
    return Check("migrations", OK, f"current ({newest} of {known} applied)")


#: What to do when a SQLite vault lost a table (or a trigger or view): what a table held is gone
#: from the file, and neither `kaeru salvage` (which copies the file's own schema) nor `kaeru copy`
#: (which reads every table) makes a whole vault of it.
_SQLITE_RESTORE = (
    "what it held is not in this file any more: stop every kaeru process and put a `kaeru backup` copy "
    "made before it went missing in place of vault.sqlite3, or import a `kaeru export` archive into a new "
    "vault (`kaeru --vault NEW_FOLDER import FILE`)"
)
#: …a PostgreSQL vault that lost a table: what the table held is gone from this database.
_POSTGRES_RESTORE = (
    "restore the database from a backup made before the table went missing (pg_dump, or your provider's "
    "point-in-time restore): what it held is not in this database any more"
)
#: …a PostgreSQL vault that lost a constraint, a unique index or a trigger: `kaeru copy` reads it all
#: into a new database migrated afresh.
_POSTGRES_COPY = (
    "copy the vault into a new, empty database, which `kaeru copy` migrates with the whole schema: "
    "`kaeru copy --from THIS_URL --to NEW_URL`, then point KAERU_DATABASE_URL at the new one (or restore "
    'a backup); and tell whoever dropped it (an "unused index" advisor) that kaeru needs it'
)


def objects_check(health: SchemaHealth) -> Check:
    """Whether the vault still holds every table, view, trigger, index and unique or primary-key
    constraint its migrations made. Objects besides those (an index a DBA added) are no concern.
    The checks after it still run: one that reads a missing table fails on it, the others pass."""
    lacking = health.lacking_objects()
    if not lacking.required and not lacking.indexes:
        return Check("schema_objects", OK, "every table, index, constraint and trigger its migrations made is there")
    if not lacking.required:
        names = ", ".join(lacking.indexes)
        named = ", ".join(lacking.named)
        return Check(
            "schema_objects",
            FAIL if named else WARN,
            f"the vault lacks {len(lacking.indexes)} index(es) its migrations made: {names}; "
            + (
                f"the calls whose statements name {named} fail"
                if named
                else "calls answer, more slowly as the vault grows"
            ),
            "make it again: " + "; ".join(lacking.indexes.values()),
        )
    said = ", ".join([*lacking.required, *(f"index {name}" for name in lacking.indexes)])
    if health.backend == "sqlite":
        fix = _sqlite_fix(lacking)
    else:
        fix = _POSTGRES_RESTORE if lacking.tables else _POSTGRES_COPY
    return Check(
        "schema_objects",
        FAIL,
        f"the vault lacks what its migrations made, which `kaeru migrate` does not make again: {said}"
        + ("; every call that needs a missing table fails" if lacking.tables else "; kaeru relies on them"),
        fix,
    )


def _sqlite_fix(lacking: Lacking) -> str:
    """A SQLite vault's repair: the statements that make lost indexes again (a unique one refuses
    if rows now repeat what it kept unique: then a backup), else a backup or an export."""
    unique = [item.removeprefix("index ") for item in lacking.required if item.startswith("index ")]
    if len(unique) < len(lacking.required):
        return _SQLITE_RESTORE
    statements = [INDEXES["sqlite"][name] for name in unique] + list(lacking.indexes.values())
    return (
        "stop every kaeru process, then make it again (`sqlite3 vault.sqlite3`): "
        + "; ".join(statements)
        + " — if a unique one refuses, rows now repeat what it kept unique: "
        + _SQLITE_RESTORE.removeprefix("what it held is not in this file any more: ")
    )
