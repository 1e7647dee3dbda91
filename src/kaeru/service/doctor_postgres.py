"""`kaeru doctor`'s checks of what a PostgreSQL role may do with the vault it connects to.

On a shared server a DBA often gives kaeru two roles: one that owns the vault's tables and runs
its migrations, and an application role with only the data rights the doctor prints. The doctor's
own connection only reads, so what it read passed while that role could do nothing: a migration
pending that only the owner may apply refused every command of the role (the doctor said to run
`kaeru migrate`, which the role may not), a role that may not create the vault was told `writable:
ok`, and a vault restored into another schema was called "not a kaeru vault" with a fix that made a
second, empty one. These checks say each as what it is, with the role to use or the right to grant.
"""

from __future__ import annotations

from typing import Protocol, cast

from kaeru.errors import KaeruError
from kaeru.service.doctor_schema import SchemaHealth, migration_records
from kaeru.service.settings_checks import FAIL, OK, Check
from kaeru.storage.health import UTF8_REMEDY, holds_any_text


class RoleHealth(SchemaHealth, Protocol):
    """What these checks ask of `storage/postgres/health.py` (with `SchemaHealth`'s)."""

    def vaults_elsewhere(self) -> list[str]: ...
    def url_for_schema(self, schema: str) -> str: ...
    def schema_refused(self) -> tuple[str, str] | None: ...
    def cannot_migrate(self) -> tuple[str, str] | None: ...
    def refusal_fix(self, error: KaeruError) -> str | None: ...


def writable_check(problem: tuple[str, str] | None) -> Check:
    """PostgreSQL's `writable` check: `PostgresHealth.unwritable` says what the role is refused whole,
    reads too when it lacks SELECT (a missing SELECT was worded as a right to change)."""
    if problem is None:
        return Check("writable", OK, "kaeru can write the vault")
    return Check("writable", FAIL, problem[0], problem[1])


def encoding_check(encoding: str) -> Check:
    """A vault needs a UTF8 database: another encoding cannot hold every text (decision 186)."""
    if holds_any_text(encoding):
        return Check("encoding", OK, f"the database stores text as {encoding}")
    return Check("encoding", FAIL, f"the database stores text as {encoding}, not UTF8", UTF8_REMEDY)


def migrator_check(health: SchemaHealth, check: Check) -> Check:
    """`check` (the `migrations` check), or a failure in its place when what it advises cannot work
    for this role: pending migrations it may not apply (only the tables' owner may), or no vault on
    the search path while another schema of the database holds one (`kaeru migrate` would make a
    second, empty vault beside it)."""
    if health.backend != "postgres":
        return check
    pg = cast(RoleHealth, health)
    if not pg.has_table("schema_migrations"):
        elsewhere = pg.vaults_elsewhere()
        if not elsewhere:
            return check
        schemas = ", ".join(elsewhere)
        if (refused := pg.schema_refused()) is not None:  # the URL names it already: the role may not use it
            return Check("migrations", FAIL, f"no kaeru vault the role may reach: {refused[0]}", refused[1])
        return Check(
            "migrations",
            FAIL,
            f"no kaeru vault on the search path, but schema(s) {schemas} of this database hold one (a `pg_dump -n` "
            "restored, or a second vault): kaeru looks only where the search path says",
            f"point KAERU_DATABASE_URL at it: `{pg.url_for_schema(elsewhere[0])}` (the password, if any, where "
            f"`***` is; through a pooler, which refuses `options`: `ALTER ROLE name SET search_path = {elsewhere[0]}`); "
            "`kaeru migrate` here would make a second, empty vault",
        )
    problem = pg.cannot_migrate() if migration_records(pg)[1].pending else None
    if problem is None:
        return check
    return Check("migrations", FAIL, f"{check.summary}, {problem[0]}", problem[1])


def refused_fix(health: SchemaHealth, error: KaeruError) -> str | None:
    """The fix of a check that PostgreSQL failed by refusing this role a right on a table (grant it),
    None for another error or backend: a missing SELECT was answered with "run `kaeru reindex`"."""
    return cast(RoleHealth, health).refusal_fix(error) if health.backend == "postgres" else None
