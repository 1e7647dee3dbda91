"""`kaeru doctor`: read-only checks of a vault and of the settings, each with its fix.

Nothing here creates, migrates or writes a vault: the storage health modules open it read-only
(a SQLite file with `SQLITE_OPEN_READONLY`, a PostgreSQL connection with
`default_transaction_read_only`). Each check is one line — a name, a status, what was found and,
when it is not `ok`, what to do. `fail` means something is wrong (the command exits non-zero);
`warn` is worth a look but the vault works; `info` and `skip` are informational.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

from kaeru.config import SettingError, Settings
from kaeru.domain.model import Node
from kaeru.domain.naming import canonical
from kaeru.domain.text import indexed_name, tokens
from kaeru.errors import KaeruError, NotFound
from kaeru.service.doctor_derived import derived_check
from kaeru.service.doctor_postgres import encoding_check, migrator_check, refused_fix, writable_check
from kaeru.service.doctor_schema import migration_records, migrations_check, objects_check
from kaeru.service.embedding import node_text, text_digest
from kaeru.service.settings_checks import (
    FAIL,
    INFO,
    OK,
    SKIP,
    WARN,
    Check,
    http_check,
    semantic_check,
    unusable_settings_check,
)
from kaeru.storage.base import SearchQuery, Session
from kaeru.storage.health import SHARED_PLACE_REMEDY, WAL_WARN_BYTES, IndexAgreement
from kaeru.storage.migrate import VaultUnusable
from kaeru.storage.schema_objects import Lacking

#: A word no vault is expected to hold: the search probe of an empty vault.
PROBE_WORD = "kaerudoctorprobe"


class VaultHealth(Protocol):
    """What `storage/{sqlite,postgres}/health.py` answer about a vault opened read-only."""

    backend: str
    migrations: str  # the package of the engine's migrations

    def close(self) -> None: ...
    def describe(self) -> dict[str, Any]: ...
    def has_table(self, name: str) -> bool: ...
    def migration_records(self) -> list[tuple[int, str]]: ...
    def lacking_objects(self) -> Lacking: ...
    @staticmethod
    def known_migrations() -> int: ...
    def upgrading(self) -> bool: ...
    def integrity(self) -> list[str]: ...
    def index_agreement(self) -> IndexAgreement: ...
    def read(self) -> Any: ...
    def wal_bytes(self) -> int: ...  # SQLite only: asked when `backend` is "sqlite"
    def unwritable(self) -> tuple[str, str] | None: ...
    def readable_by_others(self) -> str | None: ...  # SQLite only, as `wal_bytes`
    def shared_place(self) -> str | None: ...  # SQLite only, as `wal_bytes`
    def section_count_errors(self) -> list[str] | None: ...  # PostgreSQL only, as `wal_bytes`
    def text_encoding(self) -> str: ...  # PostgreSQL only, as `wal_bytes`
    def clock_offset(self) -> timedelta: ...  # PostgreSQL only, as `wal_bytes`
    def use_timeouts(self, lock_timeout_ms: int, statement_timeout_ms: int) -> None: ...  # PostgreSQL only
    def initiative_names(self) -> list[str]: ...


@dataclass
class Report:
    version: str
    vault: dict[str, Any]
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(c.status != FAIL for c in self.checks)

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "version": self.version,
            "vault": self.vault,
            "checks": [c.as_json() for c in self.checks],
        }


@contextmanager
def _open(settings: Settings, open_health: Callable[[Settings], VaultHealth]) -> Iterator[VaultHealth]:
    """The vault opened read-only by the caller's `open_health` (raises NotFound/Unavailable)."""
    health = open_health(settings)
    try:
        yield health
    finally:
        health.close()


def diagnose(
    settings: Settings,
    *,
    version: str,
    semantic_installed: bool,
    is_loopback: Callable[[str], bool],
    open_health: Callable[[Settings], VaultHealth],
    load_semantic: Callable[[], str] | None = None,
    unusable: Sequence[SettingError] = (),
) -> Report:
    """Every check, in order; the vault checks stop at the first that makes the rest meaningless.
    `load_semantic` loads the semantic model and returns its id (raises when it cannot): with
    KAERU_SEMANTIC=1, the extra is usable only if it does, and the vault's vectors are counted."""
    semantic, model = semantic_check(settings, semantic_installed, load_semantic)
    vault: dict[str, Any] = (
        {"backend": "postgres"} if settings.database_url else {"backend": "sqlite", "path": str(settings.sqlite_path)}
    )
    checks: list[Check] = [unusable_settings_check(unusable)] if unusable else []
    vault_tokens: bool | None = False
    opened = False
    try:
        with _open(settings, open_health) as health:
            if health.backend == "postgres":  # a call's timeouts, not the role's: the doctor agrees with calls (446)
                health.use_timeouts(settings.busy_timeout_ms, settings.pg_statement_timeout_ms)
            vault = health.describe()
            checks.append(Check("vault", OK, f"opened read-only ({_where(vault)})"))
            opened = True
            _vault_checks(health, checks)
            if model is not None and all(c.status != FAIL for c in checks):
                checks.append(_vectors(health, model))
            vault_tokens = _holds_tokens(health, checks)
    except NotFound as error:
        checks.append(
            Check(
                "vault",
                FAIL,
                f"{error.message} (the doctor never creates one)",
                "check --vault / KAERU_VAULT (or KAERU_DATABASE_URL); a new vault is created by the first "
                "`kaeru note` or `kaeru migrate`",
            )
        )
    except KaeruError as error:
        fix = (
            "as the message says (the server answered, and refused)"  # the remedy is in the message
            if settings.database_url and isinstance(error, VaultUnusable)
            # Connected, then a statement failed (a timeout, a lost connection): not the URL's fault.
            else "as the message says; the PostgreSQL server's log tells more"
            if settings.database_url and opened
            else "check KAERU_DATABASE_URL (host, port, database, user, password) and that the PostgreSQL server "
            "runs and accepts connections"
            if settings.database_url
            else _sqlite_open_fix(error.message)
        )
        # Opened, then refused (a role without rights on the tables): the checks made so far stay,
        # and the failure is the schema's — a second `vault` line, `ok` then `fail`, broke monitors.
        checks.append(Check("schema" if opened else "vault", FAIL, error.message, fix))
    checks.append(semantic)
    checks.append(http_check(settings, is_loopback, vault_tokens))
    return Report(version, vault, checks)


def _where(vault: dict[str, Any]) -> str:
    if vault["backend"] == "sqlite":
        return f"SQLite {vault['sqlite']} at {vault['path']}"
    through = ", through a pooler" if vault.get("pooler") else ""  # the schema: which vault of the database
    schema = vault.get("schema") or f"none (no schema of search_path = {vault.get('search_path')} exists)"
    return f"PostgreSQL {vault['postgresql']} at {vault['url']}, schema {schema}{through}"


def _vault_checks(health: VaultHealth, checks: list[Check]) -> None:
    """The vault's checks, appended to `checks` as each is made (those made before one raises stay)."""
    if health.backend == "sqlite":
        lines = health.integrity()
        if lines == ["ok"]:
            checks.append(Check("integrity", OK, "PRAGMA quick_check: ok"))
        else:
            checks.append(
                Check(
                    "integrity",
                    FAIL,
                    "PRAGMA quick_check: " + "; ".join(lines[:5]),
                    "the vault file is damaged: stop every kaeru process, then `kaeru salvage NEW_FOLDER` copies "
                    "what still reads into a new vault (or restore a backup or an export)",
                )
            )
        checks.append(_writable(health.unwritable()))
        checks.append(_private(health.readable_by_others(), health.describe()))
        checks.append(_place(health.shared_place()))
    else:
        vault = health.describe()
        lines = health.integrity()
        status = OK if lines == ["ok"] else FAIL
        checks.append(
            Check(
                "connection",
                status,
                f"PostgreSQL {vault['postgresql']} answers" if status == OK else "; ".join(lines),
                None if status == OK else "check the server's logs",
            )
        )
        checks.append(writable_check(health.unwritable()))
        checks.append(encoding_check(health.text_encoding()))
        checks.append(_clock(health.clock_offset()))
    try:
        _schema_checks(health, checks)
    except KaeruError as error:
        if lines == ["ok"]:
            raise
        # A file too damaged to read past its first pages: what it could not answer is said as
        # not checked, after the integrity failure that explains it — not a traceback.
        checks.append(Check("schema", SKIP, f"not checked: {error.message}"))


def _schema_checks(health: VaultHealth, checks: list[Check]) -> None:
    """Appended as each is made, as `_vault_checks`: a missing table named by `schema_objects`
    stays named when a later check fails on it."""
    migrations = migrations_check(health)
    checks.append(migrator_check(health, migrations))  # may fail where `kaeru migrate` cannot help this role
    if migrations.status == FAIL or (migrations.status == WARN and not health.has_table("nodes")):
        checks.append(Check("fulltext", SKIP, "not checked: the vault's schema is not one this kaeru reads"))
        checks.append(Check("search", SKIP, "not checked: the vault's schema is not one this kaeru reads"))
        return
    if migrations.status == OK:  # what the migrations make is known for the newest schema only
        checks.append(objects_check(health))
        checks.append(derived_check(health, checks[-1]))
    checks.append(_fulltext(health.index_agreement()))
    checks.append(_twins(health.initiative_names()))
    if health.backend == "sqlite":
        checks.append(_wal(health))
    else:
        checks.append(_section_counts(health.section_count_errors()))
    # This kaeru's search reads what its migrations make (PostgreSQL's `term_docs`, `text_totals`): on
    # an older schema it fails, which says nothing of the vault but that a migration is pending.
    if pending := migration_records(health)[1].pending:
        checks.append(Check("search", SKIP, f"not checked: search needs migration {pending[0]}: run `kaeru migrate`"))
    else:
        checks.append(_search(health))


def _writable(problem: tuple[str, str] | None) -> Check:
    """A vault its user cannot write still reads, so nothing else here notices it (decisions 173, 454):
    the doctor's own connection only reads."""
    if problem is None:
        return Check("writable", OK, "kaeru can write the vault")
    return Check("writable", FAIL, f"{problem[0]}: reads answer, every write is refused", problem[1])


def _private(exposed: str | None, vault: dict[str, Any]) -> Check:
    """A vault holds what its user decided, wrote and pasted; one made before kaeru made vaults
    private (decision 177), or copied in, may be readable by every account on the machine."""
    if exposed is None and sys.platform == "win32":  # mode bits say nothing there (decision 177)
        return Check("private", INFO, "cannot tell on Windows who else may read the vault's files (its ACLs)")
    if exposed is None:
        return Check("private", OK, "no other account on this machine can read the vault's files")
    path = Path(str(vault.get("path", "")))
    return Check(
        "private",
        WARN,
        exposed,
        f"chmod 700 {shlex.quote(str(path.parent))} && chmod 600 {shlex.quote(str(path))}* (unless it is shared on purpose)",
    )


def _twins(names: list[str]) -> Check:
    """Initiatives whose names differ only in Unicode form: a kaeru before decision 184 split one
    project in two when a name came in both forms, and a name now finds the composed one only."""
    by_form: dict[str, list[str]] = {}
    for name in names:
        by_form.setdefault(canonical(name), []).append(name)
    twins = [spelled for spelled in by_form.values() if len(spelled) > 1]
    if not twins:
        return Check("names", OK, f"{len(names)} initiative name(s), none written twice in different Unicode forms")
    shown = "; ".join(" / ".join(ascii(n) for n in spelled) for spelled in twins[:5])
    return Check(
        "names",
        WARN,
        f"{len(twins)} initiative name(s) were written in two Unicode forms, as two initiatives: {shown}",
        "for each: rename the composed one to a temporary name (initiative action rename), merge the name "
        "in its other form into it (that name now finds the decomposed one), then rename it back",
    )


def _place(shared: str | None) -> Check:
    """A vault on a network file system or in a sync client's folder is damaged sooner or later,
    and nothing else shows it until then (decision 182)."""
    if shared is None:
        return Check("place", OK, "the vault is on a local file system, outside any sync client's folder")
    return Check("place", WARN, shared, SHARED_PLACE_REMEDY)


def _section_counts(errors: list[str] | None) -> Check:
    """PostgreSQL keeps each `context` section's size as a count (decision 16.P1): a count that
    drifted from the memberships makes `context` report wrong totals."""
    if errors is None:
        return Check("section_counts", SKIP, "not kept before migration 14")
    if not errors:
        return Check("section_counts", OK, "every kept section size equals its members counted")
    return Check(
        "section_counts",
        FAIL,
        "kept section sizes differ from the memberships: " + "; ".join(errors),
        "run `kaeru reindex --text` (it counts them again)",
    )


def _fulltext(agreement: IndexAgreement) -> Check:
    summary = f"{agreement.live_nodes} live node(s), {agreement.indexed_rows} full-text row(s)"
    if agreement.agrees:
        return Check("fulltext", OK, summary + ", ids agree")
    problems: list[str] = []
    if agreement.missing_count:
        problems.append(
            f"{agreement.missing_count} live node(s) missing from the index (search cannot find them): "
            + ", ".join(agreement.missing)
        )
    if agreement.stale_count:
        problems.append(
            f"{agreement.stale_count} index row(s) of no live node (deleted memory still matches): "
            + ", ".join(agreement.stale)
        )
    if agreement.rebuild_pending:
        problems.append("a rebuild is pending (done when kaeru next opens the vault read-write)")
    return Check("fulltext", FAIL, summary + "; " + "; ".join(problems), "run `kaeru reindex --text` to rebuild it")


def _wal(health: VaultHealth) -> Check:
    size = health.wal_bytes()
    summary = f"write-ahead log {size / 1048576:.1f} MiB (warns above {WAL_WARN_BYTES // 1048576} MiB)"
    if size > WAL_WARN_BYTES:
        return Check(
            "wal",
            WARN,
            summary,
            "a long-lived reader is starving checkpoints: restart the kaeru processes that hold the vault "
            "(the log is folded back and truncated when the last connection closes)",
        )
    return Check("wal", OK, summary)


#: How far this machine's clock may be from the database server's before `doctor` warns.
CLOCK_WARN = timedelta(seconds=2)


def _clock(offset: timedelta) -> Check:
    """Every writer stamps by the database server's clock (decision 404): a machine far off it
    writes nothing wrong, but its own logs and tools disagree with the vault's times."""
    seconds = offset.total_seconds()
    if abs(seconds) < 0.1:  # said in tenths: two runs of the doctor say the same
        said = "this machine's clock agrees with the database server's (within 0.1 s)"
    else:
        said = f"this machine's clock is {abs(seconds):.1f} s {'behind' if seconds > 0 else 'ahead of'} the database server's"
    if abs(offset) <= CLOCK_WARN:
        return Check("clock", OK, said)
    return Check(
        "clock",
        WARN,
        f"{said}; kaeru stamps what it writes by the server's clock, so the vault's times are right, but "
        "this machine's logs and tools disagree with them",
        "turn on time synchronisation (NTP) on this machine or the database server",
    )


def _search(health: VaultHealth) -> Check:
    """A read-only search answers: for a word of one live node, the search must find that node."""
    try:
        with health.read() as session:
            return _probe(session)
    except KaeruError as error:
        said = f"a read-only search failed: {error.code}: {error.message}"
        return Check("search", FAIL, said, refused_fix(health, error) or _REBUILD)  # a right refused is granted
    except Exception as error:  # anything else a damaged vault raises (a row that does not decode): said
        return Check("search", FAIL, f"a read-only search failed: {type(error).__name__}: {error}", _REBUILD)


_REBUILD = "run `kaeru reindex --text`; if it persists, export the vault and import it into a fresh one"


#: How many of the probed node's words its search asks for, all of them, and how many hits it reads.
PROBE_WORDS = 8
PROBE_WINDOW = 20_000
#: Live nodes read at a time while looking for one that holds words to probe with.
PROBE_BATCH = 200


def _probe(session: Session) -> Check:
    sample = session.live_node_batch(0, 1)
    if not sample:
        ids = [i.id for i in session.all_initiatives()]
        _, total, _ = session.search(SearchQuery(initiative_ids=ids, tokens=[PROBE_WORD]))
        return Check("search", OK, f"answered ({total} hit(s) for a probe word; the vault holds no node yet)")
    found = _worded(session)
    if found is None:
        return Check("search", OK, "not searched: no live node holds a word to look for")
    node, words = found
    # Every word of the node (a few), all required: one common word matched thousands of nodes and
    # the oldest node ranked past the window, a healthy vault failed the check.
    asked = list(dict.fromkeys(words))[:PROBE_WORDS]
    query = SearchQuery(
        initiative_ids=list(node.initiatives), tokens=asked, match_all=True, omit_superseded=False, window=PROBE_WINDOW
    )
    rows, total, _ = session.search(query)
    shown = " ".join(asked)
    if any(row.id == node.id for row in rows):
        return Check("search", OK, f"answered: {shown!r} found {node.id} among {total} hit(s)")
    if total > len(rows):
        return Check(
            "search", OK, f"answered: {total} hit(s) for {shown!r}; {node.id} ranks past the first {len(rows)}"
        )
    return Check("search", FAIL, f"a search for {shown!r} did not find {node.id}, which holds it", _REBUILD)


def _worded(session: Session) -> tuple[Node, list[str]] | None:
    """The first live node that holds words, with its words: a node of emoji or symbols has none
    to search for, and the check searched nothing when the vault's first node was one (decision 421)."""
    after = 0
    while batch := session.live_node_batch(after, PROBE_BATCH):
        for node in batch:
            if words := tokens(indexed_name(node)) or tokens(node.body) or tokens(node.description):
                return node, words
        after = batch[-1].seq
    return None


def _vectors(health: VaultHealth, model: str) -> Check:
    """Live memories without a vector of `model`, or with one of a text they no longer hold (written
    or revised by a process without the semantic channel): recall finds them by their words only,
    not by their meaning, until `kaeru reindex`."""
    try:
        with health.read() as session:
            known = session.vector_digests(model)
            live = missing = stale = 0
            after = 0
            while batch := session.live_node_batch(after, 1000):
                after = batch[-1].seq
                for node in batch:
                    text = node_text(node)
                    if not text.strip():
                        continue
                    live += 1
                    digest = known.get(node.id)
                    missing += digest is None
                    stale += digest is not None and digest != text_digest(text)
    except KaeruError as error:
        return Check("vectors", FAIL, f"the vectors could not be read: {error.code}: {error.message}", _REBUILD)
    summary = f"{live} live memories with text, {missing} without a vector, {stale} with one of an older text"
    if missing or stale:
        return Check(
            "vectors", WARN, summary + ": semantic recall does not find those by meaning", "run `kaeru reindex`"
        )
    return Check("vectors", OK, summary)


def _holds_tokens(health: VaultHealth, checks: list[Check]) -> bool | None:
    """Whether the vault holds a per-person token (`kaeru token add`): `serve --http` then refuses
    every request without one, wherever it listens, as it does with `KAERU_AUTH_TOKEN` set. Tokens
    that cannot be read fail a check of their own, and are None (the `http` check says so): said as
    none, it judged a vault that may hold some, and serving it would fail (decision 424)."""
    try:
        if not health.has_table("tokens"):  # a vault from before tokens (it can hold none)
            return False
        with health.read() as session:
            return bool(session.has_tokens())
    except KaeruError as error:
        checks.append(Check("tokens", FAIL, f"the tokens could not be read: {error.code}: {error.message}", _TOKENS))
        return None


_TOKENS = (
    "a SQLite vault: stop every kaeru process, then `kaeru salvage NEW_FOLDER` copies what still reads into a new "
    "vault (PostgreSQL: check the server's logs and the role's rights); add lost tokens again with `kaeru token add`"
)


def migration_state(settings: Settings, open_health: Callable[[Settings], VaultHealth]) -> tuple[list[int], int]:
    """The migrations a vault's records stand for (a record of a former numbering stands for the
    migration it was, or for none: decision 470) and the newest this kaeru knows (read-only)."""
    with _open(settings, open_health) as health:
        return sorted(migration_records(health)[1].applied), health.known_migrations()


__all__ = ["diagnose", "migration_state"]


def _sqlite_open_fix(message: str) -> str:
    """What to do about a SQLite vault that would not open, by why: a damaged file gets the way out
    every other command names for it (decision 450), a locked one waits, the rest is access."""
    if "BusyError" in message or "locked" in message:
        return "another process holds the vault locked (an exclusive lock, a long write): let it end, then run again"
    if any(word in message for word in ("NotADBError", "CorruptError", "not a database", "malformed", "damaged")):
        return (
            "a damaged file: `kaeru salvage NEW_FOLDER` copies what still reads into a new vault (or restore a "
            "`kaeru backup` copy)"
        )
    return "check that this account may read and write the vault file and its folder"
