"""Numbered migrations per backend, applied once each and recorded in `schema_migrations`.

A migration is a `.sql` script, or a `.py` module with `def up(conn)` for a change plain SQL cannot
make (e.g. a rename only where an earlier text of a migration left the old name): `up` gets the
engine's own connection (apsw or psycopg) inside the migrating transaction. Both stores run them
with `run_pending`, inside a transaction that holds their engine's lock (SQLite `BEGIN IMMEDIATE`,
PostgreSQL an advisory lock): one loader, one runner for both engines.
"""

from __future__ import annotations

import functools
import importlib
import logging
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from kaeru.errors import Internal, KaeruError, Unavailable
from kaeru.storage.sql.db import Db

if TYPE_CHECKING:
    from kaeru.storage.health import Health

log = logging.getLogger(__name__)

_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.(sql|py)$")

#: The `meta` keys a migration sets when what is indexed changed: the index is rebuilt when the store
#: next opens the vault read-write — the stems only (`stem_index_pending`, SQLite 002, PostgreSQL
#: 002/009), or the literal tokens too (`text_index_pending`, SQLite 020/021/025, PostgreSQL 015/016/023).
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
            + upgrade_said("it")
        )


def upgrade_said(using: str) -> str:
    """How to upgrade this kaeru, as it was installed: kaeru-memory is not on PyPI (docs/clients.md),
    so `pip install -U kaeru-memory` fetched nothing of ours — or a stranger's package of that name.
    An install from a clone (`pip install -e .`, `pipx install ./kaeru-memory`) records the folder
    in `direct_url.json`: the message names it."""
    import json
    from importlib import metadata
    from urllib.parse import urlsplit
    from urllib.request import url2pathname

    clone = "the clone of kaeru-memory it was installed from"
    try:
        origin = json.loads(metadata.distribution("kaeru-memory").read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError, OSError):
        origin = {}
    url = origin.get("url") if isinstance(origin, dict) else None
    if isinstance(url, str) and url.startswith("file://") and isinstance(origin.get("dir_info"), dict):
        clone = url2pathname(urlsplit(url).path)
    return (
        f"upgrade kaeru before using {using}: `git pull` in {clone}, then install it again from there as before "
        "(`pip install -e .` in its virtual environment, `pipx install --force .` or "
        "`uv tool install --reinstall .`; docs/clients.md)"
    )


#: Records that main, or a branch merged into it whose code could have written a vault, left in
#: `schema_migrations` at a number whose shipped migration is now another (decision 470): before a
#: merge a branch held a number with a `SELECT 1` placeholder, or gave its migration a number the
#: merge then changed. `run_pending` compared numbers only, so it took such a record for the
#: migration shipped at that number, which then never ran (PostgreSQL: no `term_docs`, every call
#: `internal`; SQLite: no `vector_code_clock`). Per backend, (version, name) recorded -> the shipped
#: version it was (its text the same), or None for a placeholder that changed nothing. Found with
#: `git log --name-status -- src/kaeru/storage/*/migrations` over every commit HEAD reaches.
FORMER_RECORDS: dict[str, dict[tuple[int, str], int | None]] = {
    "sqlite": {
        (10, "compact_requests"): None,  # h9-wal before its merge: 010_compact_writes's first half
        (12, "section_index"): 14,  # h16-reentry before its merge renumbered 012-014 to 014-016
        (13, "rule_index"): 15,
        (14, "forgotten_index"): 16,
        (18, "reserved"): None,  # main f237d73, h16-pages (1ce2285), h17-vecspeed: placeholders
        (19, "fewer_btrees"): 18,  # main f237d73 and h16-pages; memberships_node, which it dropped, 022 makes
        (19, "reserved"): None,  # h17-vecspeed
        (20, "vector_code_clock"): 19,  # h17-vecspeed
    },
    "postgres": {
        (9, "reserved"): None,  # main cb7b27d, 0dba4d6, 92d35bc, 0116973, bd1a5db (h17-vectors)
        (13, "reserved"): None,  # h16-pghot before its merge
    },
}


class VaultUnknownRecord(Unavailable):
    """The vault records a migration under a name this kaeru neither ships nor knows as a former
    one: a kaeru built from another branch wrote it. Running this kaeru's migration of that number
    over it could break the vault, so it is opened by nothing until its records are understood."""

    retryable = False


class VaultRecordsLost(Unavailable):
    """The vault's tables are there but its `schema_migrations` holds no record (a damaged page, or
    cleared by hand): every migration would run again over tables they already made, so it is opened
    by nothing (a traceback of `table meta already exists` was the answer before)."""

    retryable = False


#: Whether the vault holds `meta`, the first table migration 001 makes, per engine.
_HOLDS_META = {
    "sqlite": "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'meta'",
    "postgres": "SELECT count(to_regclass('meta'))",
}


def records_lost(where: str) -> str:
    """What `VaultRecordsLost` says, and `kaeru doctor` with it: `where` names the engine."""
    fix = (
        "restore the database from a backup (pg_dump, or your provider's point-in-time restore)"
        if where.lower().startswith("postgres")
        else "stop every kaeru process, then `kaeru salvage NEW_FOLDER` copies it into a new vault and writes the "
        "records again when its schema is one this kaeru made (or put a `kaeru backup` copy in its place)"
    )
    return (
        f"the {where} vault holds its tables but no record of the migrations that made them (schema_migrations "
        f"is empty: damaged, or cleared by hand), so they cannot be run or skipped safely; nothing was changed: {fix}"
    )


@functools.cache
def shipped_names(package: str) -> dict[int, str]:
    """The migrations shipped in `package`, version -> name, from the file names alone."""
    return {int(m.group(1)): m.group(2) for e in resources.files(package).iterdir() if (m := _NAME.match(e.name))}


@dataclass(frozen=True, slots=True)
class Records:
    """What a vault's `schema_migrations` rows say against the migrations `package` ships."""

    #: The shipped versions a record stands for (its own, or a former record's), and the versions
    #: past the newest shipped (a newer kaeru's: `refuse_newer`).
    applied: frozenset[int]
    #: Shipped versions that no record stands for: they run next, in order.
    pending: tuple[int, ...]
    #: Records of a former numbering (`FORMER_RECORDS`), rewritten to the shipped names by `run_pending`.
    former: tuple[tuple[int, str], ...]
    #: Records neither shipped nor former, at a shipped number: refused (`VaultUnknownRecord`).
    unknown: tuple[tuple[int, str], ...]


def read_records(records: list[tuple[int, str]], package: str) -> Records:
    """Which shipped migrations `records` (version, name) count as applied: a record stands for the
    migration shipped at its number only under that migration's name (decision 470)."""
    shipped = shipped_names(package)
    newest = max(shipped, default=0)
    former = FORMER_RECORDS[package.split(".")[-2]]
    applied: set[int] = set()
    was: list[tuple[int, str]] = []
    unknown: list[tuple[int, str]] = []
    for version, name in sorted(records):
        if version > newest or shipped.get(version) == name:
            applied.add(version)
        elif (version, name) in former:
            was.append((version, name))
            if (now := former[(version, name)]) is not None:
                applied.add(now)
        else:
            unknown.append((version, name))
    pending = tuple(v for v in sorted(shipped) if v not in applied)
    return Records(frozenset(applied), pending, tuple(was), tuple(unknown))


#: What to do with a vault whose records name a migration this kaeru does not know (`unknown_said`).
UNKNOWN_RECORD_FIX = (
    "open it with the kaeru that wrote it and `kaeru export` it, then import the archive into a new vault "
    "with this one (`kaeru --vault NEW_FOLDER import FILE`)"
)


def unknown_said(unknown: tuple[tuple[int, str], ...], package: str) -> str:
    """What records of a migration no kaeru of this history wrote are: said by the refusal on open
    and by `kaeru doctor`."""
    shipped = shipped_names(package)
    said = ", ".join(f"{v:03d} {n!r} (this kaeru's {v:03d} is {shipped.get(v)!r})" for v, n in unknown)
    return (
        f"the vault records migration(s) {said}, which this kaeru neither ships nor knows under an earlier "
        "name: a kaeru built from another branch wrote it, and running this kaeru's migrations over it could "
        "break the vault"
    )


def run_pending(
    db: Db, conn: Any, script: Callable[[str], object], package: str, where: str, table: str
) -> tuple[int, bool, tuple[int, ...]]:
    """Apply the migrations of `package` that `schema_migrations` does not record, in order, each
    recorded there, and give the vault its secret if it has none. Returns the newest migration
    this code knows, whether anything was written, and the migrations this call applied (none when
    another process applied them while this one waited for the lock).

    A record stands for the migration shipped at its number only under that migration's name, or
    as a former record of it (`FORMER_RECORDS`, decision 470): a placeholder's number is pending
    like any other, and former records are rewritten to the shipped names in this transaction. A
    record neither shipped nor former raises `VaultUnknownRecord` before anything is changed.

    Runs inside the caller's migrating transaction, which holds the engine's lock; `conn` is the
    engine's connection (for `.py` migrations), `script` its way to run a `.sql` one, `table` its
    `CREATE TABLE IF NOT EXISTS schema_migrations`. A vault migrated past `package` raises
    `VaultTooNew` (`where` names the engine in the message).
    """
    db.run(table)
    rows = [(int(r[0]), str(r[1])) for r in db.rows("SELECT version, name FROM schema_migrations")]
    if not rows and db.rows(_HOLDS_META[db.dialect.name])[0][0]:
        raise VaultRecordsLost(records_lost(where))
    migrations = load_migrations(package)
    refuse_newer({v for v, _ in rows}, migrations, where)
    records = read_records(rows, package)
    if records.unknown:
        said = unknown_said(records.unknown, package).replace("the vault", f"the {where} vault", 1)
        raise VaultUnknownRecord(f"{said}; nothing was changed: {UNKNOWN_RECORD_FIX}")
    for version, _ in records.former:
        db.run("DELETE FROM schema_migrations WHERE version = ?", (version,))
    recorded = {v for v, _ in rows} - {v for v, _ in records.former}
    for migration in migrations:
        if migration.version in records.applied and migration.version not in recorded:
            db.run("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (migration.version, migration.name))
    pending = [m for m in migrations if m.version in records.pending]
    for migration in pending:
        migration.apply(conn, script)
        db.run("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (migration.version, migration.name))
    db.run("INSERT INTO meta (key, value) VALUES ('secret', ?) ON CONFLICT (key) DO NOTHING", (secrets.token_hex(32),))
    return migrations[-1].version, bool(pending or records.former), tuple(m.version for m in pending)


#: How long a transaction waits for an upgrade under way before it is refused `unavailable`: a
#: migration of DDL alone ends in milliseconds, so the first call simply waits for it; a re-indexing
#: of a large vault (23 s at 100k nodes) answers the agent instead of outlasting its client's timeout.
UPGRADE_WAIT_S = 15.0
#: Between tries while another process holds the migration lock (an upgrade of a vault in this database).
UPGRADE_RETRY_S = 1.0


@dataclass(frozen=True, slots=True)
class Shipped:
    """What a store asks of a vault at open about the migrations `package` ships (`shipped`)."""

    #: The newest shipped migration.
    newest: int
    #: A scalar subquery: how many records name a shipped migration at its own number. Fewer than
    #: `newest` when one is pending, or recorded under a former name only (decision 470), however
    #: high the vault's newest number.
    recorded: str
    #: What `upgrade_later` reads: the newest number, whether a re-indexing is pending, and how many
    #: records name no shipped migration at their number (former or unknown ones).
    behind: str


@functools.cache
def shipped(package: str) -> Shipped:
    """`Shipped` for `package`, made once: every open of a store asks it, and what a package ships
    does not change while kaeru runs."""
    names = shipped_names(package)
    listed = ", ".join(f"'{v} {n}'" for v, n in sorted(names.items()))
    named = f"(CAST(version AS TEXT) || ' ' || name) IN ({listed})"
    return Shipped(
        max(names, default=0),
        f"(SELECT count(*) FROM schema_migrations WHERE {named})",
        "SELECT (SELECT max(version) FROM schema_migrations), "
        f"EXISTS (SELECT 1 FROM meta WHERE {INDEX_PENDING}), "
        f"(SELECT count(*) FROM schema_migrations WHERE version <= {max(names, default=0)} AND NOT ({named}))",
    )


def upgrade_later(top: int | None, pending: bool, newest: int, strangers: int = 0) -> str:
    """What an existing vault at migration `top` (`pending`: a re-indexing asked; `strangers`: records
    of no shipped migration) still needs from a kaeru that knows `newest` — "" when nothing may wait:
    a new vault is created at once, and a newer one refused at once (`VaultTooNew`), whatever the
    caller prefers."""
    if top is None or top > newest:
        return ""
    if top < newest:
        return f"migrating it from schema {top} to {newest}"
    if strangers:
        return "applying the migrations its records of a former numbering hid"
    return "rebuilding its text index" if pending else ""


def due(health: Health) -> str:
    """What opening the vault `health` reads will do to it before anything else (`upgrade_later`'s
    words), "" when nothing: `kaeru migrate` says it before a step that may take long (decision 474)."""
    if not health.has_table("schema_migrations"):
        return ""  # a new vault: created in milliseconds
    ((top, pending, strangers),) = health._rows(shipped(health.migrations).behind)
    return upgrade_later(top, bool(pending), shipped(health.migrations).newest, strangers)


class BackgroundUpgrade:
    """The pending migrations of a vault already opened, applied on a thread of their own.

    `kaeru serve` on stdio opens its store this way (decision 139): an agent's client waits for
    `initialize` with a timeout, and a re-indexing migration on a large vault outlasted it (`kaeru
    serve` answered nothing for 23 s at 100k nodes), so the client gave up on a server that was
    working. Meanwhile every transaction waits for the upgrade (`wait`); none runs on the old
    schema. `run` applies the migrations in one transaction; `busy(exc)` says an error is another
    process holding the migration lock, which is waited out and tried again, as a foreground open
    would have waited (but without its busy timeout: nobody is kept waiting for it)."""

    def __init__(self, what: str, run: Callable[[], None], busy: Callable[[BaseException], bool]):
        self.what = what
        self._run = run
        self._busy = busy
        self._started = time.monotonic()
        self._done = threading.Event()
        self._stopping = threading.Event()
        self._error: KaeruError | None = None
        self._thread = threading.Thread(target=self._upgrade, name="kaeru-upgrade", daemon=True)
        self._thread.start()

    def _upgrade(self) -> None:
        while not self._stopping.is_set():
            try:
                self._run()
                break
            except BaseException as exc:
                if self._busy(exc):
                    self._stopping.wait(UPGRADE_RETRY_S)
                    continue
                log.exception("upgrading the vault failed")
                self._error = exc if isinstance(exc, KaeruError) else Internal(f"upgrading the vault failed: {exc}")
                break
        self._done.set()

    def wait(self, timeout: float | None = None) -> None:
        """Return once the upgrade is applied; raise `Unavailable` (retryable) if it is still under
        way after `timeout` (`UPGRADE_WAIT_S`), or the error that ended it."""
        if not self._done.wait(UPGRADE_WAIT_S if timeout is None else timeout):
            raise Unavailable(
                f"the vault is being upgraded ({self.what}; {time.monotonic() - self._started:.0f} s so far): "
                "nothing was read or written; retry in a moment"
            )
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        """Stop trying (the store is closing). A migration already running is left to the process's
        exit, which rolls its transaction back: the next open applies it again."""
        self._stopping.set()


class UpgradeGate:
    """A store's side of its `BackgroundUpgrade` (shared by both stores): every transaction waits for
    it (`_upgraded`), and a server asks whether it is still under way (`upgrading`)."""

    #: The migrations applied after opening (None: none pending, applied before returning, or applied since).
    _upgrade: BackgroundUpgrade | None = None
    #: The migrations this store applied (`run_pending`): `kaeru migrate` counted the records
    #: before and after, and said "2 migration(s) applied now" of those another process applied
    #: while it waited for the lock.
    migrated_now: tuple[int, ...] = ()

    @property
    def upgrading(self) -> bool:
        """Whether an upgrade started at open has not yet been found applied by a transaction (it is
        under way, or it failed). A server's warm-up (decision 269) starts only after a call answered
        once it has (decision 474): its read would wait for the upgrade and be refused (a traceback in
        the server's log), and its imports would take the interpreter from the re-index."""
        return self._upgrade is not None

    @property
    def upgrade_under_way(self) -> str:
        """What an upgrade started at open does (`upgrade_later`'s words) while `upgrading`, else ""."""
        return self._upgrade.what if self._upgrade is not None else ""

    def _upgraded(self) -> None:
        """Return once an upgrade under way is applied (`BackgroundUpgrade.wait`), then forget it."""
        if self._upgrade is not None:
            self._upgrade.wait()
            self._upgrade = None  # applied: later transactions skip the wait
