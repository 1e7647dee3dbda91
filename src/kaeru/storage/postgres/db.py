"""PostgreSQL's `Db`: statements on one psycopg connection, and the driver's errors as ours."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import psycopg

from kaeru.errors import CommitUnknown, Internal, InvalidArgument, KaeruError, Unavailable, WritesCrossed
from kaeru.storage.migrate import VaultUnusable
from kaeru.storage.sql.db import Db, DuplicateKey, Params
from kaeru.storage.sql.dialect import POSTGRES

#: A binary COPY's header; each row is then its field count and each field's length and value.
_COPY_HEADER = 19  # signature (11), flags (4), header extension length (4, zero)


#: What a role refused a right on the vault's schema needs (decision 187).
GRANT_REMEDY = (
    "give it the schema's rights (`GRANT USAGE, CREATE ON SCHEMA public TO role`: since PostgreSQL 15 "
    "only the database's owner may create in `public`), make it the database's owner, or give kaeru a "
    "schema it owns (`CREATE SCHEMA kaeru AUTHORIZATION role`, then `?options=-csearch_path%3Dkaeru` "
    "in KAERU_DATABASE_URL)"
)

#: A refusal on a table or sequence: the schema's rights do not reach objects another role owns.
TABLE_GRANT_REMEDY = (
    "the vault's tables belong to the role that made it: connect as that role, or have it grant this "
    "one their rights (`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO role; "
    "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO role`, the vault's schema for `public`; "
    "in a schema other than `public`, `GRANT USAGE ON SCHEMA schema TO role` first)"
)

#: The schemas of the session's search_path that exist but this role may not use: PostgreSQL leaves
#: them out of the path in silence, so the vault in one is "missing" and nothing can be made there.
UNUSABLE_SCHEMAS = (
    "SELECT quote_ident(n.nspname), quote_ident(current_user) FROM unnest(string_to_array("
    "current_setting('search_path'), ',')) WITH ORDINALITY AS p(item, k) JOIN pg_namespace n ON n.nspname = "
    "CASE WHEN trim(p.item) = '\"$user\"' THEN current_user ELSE trim(BOTH '\"' FROM trim(p.item)) END "
    "WHERE NOT has_schema_privilege(n.oid, 'USAGE') ORDER BY p.k"
)


def unusable_schemas(read: Callable[[str], Sequence[tuple[Any, ...]]]) -> tuple[str, str] | None:
    """What `UNUSABLE_SCHEMAS` finds (`read` runs it), said, and its fix: the grant of USAGE, or None."""
    if not (rows := read(UNUSABLE_SCHEMAS)):
        return None
    schemas, role = ", ".join(str(r[0]) for r in rows), str(rows[0][1])
    return (
        f"the role {role} may not use schema {schemas} of its search_path (no USAGE right), so PostgreSQL leaves "
        "it out of the path: kaeru finds no vault there and may make none",
        f"as the schema's owner, `GRANT USAGE ON SCHEMA {rows[0][0]} TO {role}`",
    )


#: A change only the owner of a table may make (`ALTER TABLE`, `CREATE INDEX`, `CREATE STATISTICS` on
#: it: a pending migration): the schema's rights, which `GRANT_REMEDY` names, do not give it (a DBA
#: granted `CREATE` on the schema and was refused again). PostgreSQL names the object it refused.
_NOT_OWNER = re.compile(r"must be owner of (?P<kind>.+) (?P<name>\S+)$")

#: The catalog that names the owner of each kind of object a migration changes.
_OWNER_OF = {
    "schema": "SELECT nspowner::regrole FROM pg_namespace WHERE nspname = {name}",
    "statistics object": "SELECT stxowner::regrole FROM pg_statistic_ext WHERE stxname = {name}",
}
_RELATION_OWNER = "SELECT relowner::regrole FROM pg_class WHERE relname = {name}"


def owner_remedy(refused: str) -> str:
    """The fix of "must be owner of table nodes": run `kaeru migrate` as the owner of that object,
    and the query that names it. It named the owner of `schema_migrations` for every refusal: with
    tables of several owners, the role that owns `schema_migrations` was told to run it as itself."""
    found = _NOT_OWNER.match(refused)
    if found is None:
        return (
            "only the owner of the object PostgreSQL names may change it, as a pending migration does: run "
            "`kaeru migrate` once as that role, then this one uses the vault with the rights it has"
        )
    kind, name = found["kind"], found["name"]
    query = _OWNER_OF.get(kind, _RELATION_OWNER).format(name="'" + name.replace("'", "''") + "'")
    return (
        f"only the owner of {kind} {name} (or a role that is a member of it) may change it, as a pending "
        f"migration does: run `kaeru migrate` once as that role (`{query}` names it; when the vault's tables "
        "have several owners, as a role that is a member of each, or a superuser), then this one uses the "
        "vault with the rights it has"
    )


#: Who owns the vault's tables (the owner of `schema_migrations`, in the schema the search path finds
#: it in), whether this role acts as that owner (a member of its role counts, a superuser too),
#: whether it may create in that schema, this role's name, and the schema's; no row without a vault.
MIGRATOR = (
    "SELECT pg_get_userbyid(c.relowner), pg_has_role(c.relowner, 'USAGE'), has_schema_privilege(c.relnamespace, "
    "'CREATE'), current_user, c.relnamespace::regnamespace::text FROM pg_class c "
    "WHERE c.oid = to_regclass('schema_migrations')"
)


def migrate_as_owner(owner: str, role: str) -> str:
    """How a vault whose tables `owner` owns gets a migration that `role`, which is not `owner`, may
    not apply: run once as the owner (decision 187's `GRANT CREATE` does not help here)."""
    return (
        f"connect as {owner}, the role that owns the vault's tables, and run `kaeru migrate` (KAERU_DATABASE_URL "
        f"with that role; only a table's owner may change it); then {role} uses the vault with the rights it has"
    )


#: A server that only reads: a write there is refused until the URL names another (decision 445).
READ_ONLY_REMEDY = (
    "it is a standby in recovery, or the database or role sets `default_transaction_read_only`: nothing "
    "was written (a vault there still answers reads); point KAERU_DATABASE_URL at the primary (with several hosts, add "
    "`target_session_attrs=read-write`), or turn the setting off (`ALTER DATABASE name SET "
    "default_transaction_read_only = off`)"
)

#: What PostgreSQL (or libpq) says of a connection that waiting will not let in — SQLSTATE 28P01,
#: 28000, 3D000, 42501 — and what to change. libpq gives a refused connection no SQLSTATE, only the
#: server's message (in English unless the server's `lc_messages` says otherwise: then it stays
#: retryable, as before).
CONNECT_REFUSALS = (
    (
        r"authentication failed for user",
        "the user or password in KAERU_DATABASE_URL is not accepted: correct it (a password with `@`, `/`, "
        "`:` or `%` is percent-encoded)",
    ),
    (
        # `kaeru setup` leaves the password out of a client's file on purpose: blaming the URL sent
        # its user to put the password back where setup had kept it out (found by a probe).
        r"no password supplied",
        "the server asks for a password and none was found: not in KAERU_DATABASE_URL, ~/.pgpass or "
        "PGPASSWORD; add a line `host:port:database:user:password` to ~/.pgpass (chmod 600) of the user "
        "kaeru runs as, or set PGPASSWORD where it starts",
    ),
    (r'role ".*" is not permitted to log in', "the role may not log in: `ALTER ROLE name LOGIN`, or use another"),
    (r'role ".*" does not exist', "create the role, or correct the user in KAERU_DATABASE_URL"),
    (r"pg_hba\.conf", "the server's pg_hba.conf lets no such connection in: have it allow this user and host"),
    (r'database ".*" does not exist', "create it (`CREATE DATABASE name OWNER role`) or correct its name"),
    (r"permission denied for database", "`GRANT CONNECT ON DATABASE name TO role`, or use another role"),
    (
        # PgBouncer refuses every startup parameter it does not know, the URL's `options` too.
        r"unsupported startup parameter",
        "a pooler (PgBouncer) refuses startup parameters such as `options=-csearch_path…`: take it out of "
        "KAERU_DATABASE_URL and give the role its schema instead (`ALTER ROLE name SET search_path = schema`), "
        "which reaches the server through a pooler in transaction mode",
    ),
)


#: The SQLSTATEs of a transaction PostgreSQL rolled back because of another one, by what it says.
CROSSED = {"40P01": "a deadlock, which PostgreSQL broke by ending this one", "40001": "a serialisation failure"}


def _first_line(exc: Exception) -> str:
    """The server's message without the statement it quotes."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def translate(exc: Exception) -> KaeruError:
    """Driver errors as the project's errors: transient ones retryable, the rest internal."""
    if isinstance(exc, psycopg.errors.ProgramLimitExceeded):
        # SQLSTATE class 54 is an OperationalError in psycopg, but retrying cannot help.
        if '"requests_pkey"' in str(exc):  # a replay key past what a b-tree entry holds (decision 443)
            return InvalidArgument(
                "request_id is too long for PostgreSQL's replay index (a key of at most ~2,700 bytes "
                "fits; a UUID is 36): nothing was written",
                field="request_id",
            )
        # A node's tsvectors hold only the words that fit (`domain.indexroom`): this is a safety net,
        # and PostgreSQL may not name the index (a huge replay key compresses past the b-tree check).
        return InvalidArgument(
            f"a value is too large for a PostgreSQL index ({_first_line(exc)}): a text too large to index "
            "(split it into several notes) or a request_id too long (a UUID is 36 characters); nothing was written"
        )
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        # Not a passing state and not kaeru's fault: the role lacks a right on the vault's schema,
        # or on its tables (the vault was made by another role, which owns them).
        first = _first_line(exc)
        remedy = (
            TABLE_GRANT_REMEDY
            if "for table" in first or "for sequence" in first
            else owner_remedy(first)
            if first.startswith("must be owner of")
            else GRANT_REMEDY
        )
        return VaultUnusable(f"PostgreSQL refused the role in KAERU_DATABASE_URL: {first}: {remedy}")
    if isinstance(exc, psycopg.errors.InvalidSchemaName):
        # The URL's `search_path` names a schema that is not there (forgotten, mistyped): kaeru's
        # own SQL quoted as `internal` said nothing of that.
        return VaultUnusable(
            f"PostgreSQL has no schema to hold the vault ({_first_line(exc)}): the schema that "
            "`options=-csearch_path%3D…` in KAERU_DATABASE_URL names does not exist, or the role may not use it: "
            "create it (`CREATE SCHEMA name AUTHORIZATION role`), grant its use (`GRANT USAGE ON SCHEMA name "
            "TO role`) or correct its name in the URL"
        )
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction) or (
        isinstance(exc, psycopg.errors.FeatureNotSupported) and "recovery" in str(exc)
    ):
        # SQLSTATE 25006, or 0A000 for BEGIN … READ WRITE on a standby: not kaeru's fault to report.
        return VaultUnusable(f"the PostgreSQL server only reads ({_first_line(exc)}): {READ_ONLY_REMEDY}")
    if isinstance(exc, psycopg.errors.IdleInTransactionSessionTimeout):
        # SQLSTATE 25P03: kaeru turns the limit off for its own sessions and transactions (`_configure`).
        return Unavailable(
            f"PostgreSQL ended the session, idle inside its transaction past idle_in_transaction_session_timeout "
            f"({_first_line(exc)}): nothing was written; a retry may pass — if every try ends so, raise that "
            "setting or reset it for this role or database (`ALTER ROLE name RESET idle_in_transaction_session_timeout`)"
        )
    if isinstance(exc, psycopg.errors.UniqueViolation):
        return DuplicateKey(f"storage error: {type(exc).__name__}: {exc}")
    if isinstance(exc, psycopg.errors.DiskFull):
        return Unavailable(
            f"the database server's disk is full ({exc}): nothing was written; free some space there and try again"
        )
    if str(getattr(exc, "sqlstate", None) or "").startswith("53"):
        # SQLSTATE class 53, insufficient resources: memory, connections, a configured limit.
        return Unavailable(
            f"the database server is out of resources ({type(exc).__name__}: {exc}): nothing was written; "
            "try again once it has room"
        )
    if isinstance(exc, psycopg.errors.QueryCanceled) and "statement timeout" in str(exc):
        # "busy; retry shortly" alone sent an agent round a call that every try runs past the limit,
        # and left its operator unable to tell a slow call from a busy database.
        return Unavailable(
            f"the call ran past the statement timeout, KAERU_PG_STATEMENT_TIMEOUT_MS ({_first_line(exc)}): nothing "
            "was written; a wait for a lock ends so too, and a retry may pass — if every try ends so, the call "
            "needs more time: raise the setting (0: no limit)"
        )
    if (crossed := CROSSED.get(str(getattr(exc, "sqlstate", None)))) is not None:
        # PostgreSQL's text names its process ids and transactions: nothing a caller can act on.
        return WritesCrossed(f"two writes waited for each other ({crossed}): nothing was written; retry")
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        # Connection loss, pool exhaustion, lock or statement timeout (`QueryCanceled`), shutdown.
        return Unavailable(f"the database is unavailable or busy ({type(exc).__name__}: {exc}); retry shortly")
    if isinstance(exc, psycopg.DataError) and "NUL" in str(exc):
        return InvalidArgument("text must not contain NUL characters (PostgreSQL cannot store them)")
    return Internal(f"storage error: {type(exc).__name__}: {exc}")


#: How many dead pooled connections one transaction's first exchange replaces at most, one after
#: the other (more than a pool holds: after a restart each of them is dead).
DEAD_SPARES = 64

#: Held with a write's opening: the transaction's id, known before its COMMIT is sent, so that a
#: COMMIT whose answer is lost can be asked about afterwards (`PgDb.commit`).
XID_QUERY = "SELECT pg_current_xact_id()::text"


class PgDb(Db):
    """Statements on one psycopg connection, each one's driver errors translated where it runs."""

    dialect = POSTGRES

    def __init__(self, conn: psycopg.Connection[Any]):
        self._c = conn
        #: Statements `send` held back, rendered: they go in one pipeline with the next statement.
        self._held: list[tuple[str, Params]] = []
        #: Set by `begin` until the first exchange: a fresh connection for the one that proved dead.
        self._replace: Callable[[psycopg.Connection[Any]], psycopg.Connection[Any]] | None = None
        #: How many held statements open the transaction (BEGIN and its settings; `begin`).
        self._opening = 0
        #: Whether the connection goes through a pooler: `begin` got per-transaction settings.
        self._pooled = False
        #: Whether an interrupt left the connection unusable and it was closed (`_pipelined`): it
        #: is not given back to the pool.
        self.abandoned = False
        #: The write transaction's id (`XID_QUERY`), once its first exchange answered.
        self.xid: str | None = None
        #: Asks, on another connection, what became of a transaction id (`begin`'s `settle`).
        self._settle: Callable[[str], str | None] | None = None

    @property
    def connection(self) -> psycopg.Connection[Any]:
        """The connection the transaction runs on (`begin` may have replaced the first)."""
        return self._c

    def begin(
        self,
        sql: str,
        replace: Callable[[psycopg.Connection[Any]], psycopg.Connection[Any]] | None = None,
        settings: tuple[str, Params] | None = None,
        settle: Callable[[str], str | None] | None = None,
    ) -> None:
        """Open the transaction with the first exchange instead of a round trip of its own
        (decision 16.L7), its `settings` statement (psycopg's placeholders) right after BEGIN. A
        pooled connection that died fails that exchange; nothing of the transaction can have
        committed then, so it is sent again, once, on `replace(dead)`.

        With `settle` (a write), the opening also asks the transaction's id, in the same exchange:
        `settle(xid)` tells `commit` what became of it when COMMIT's answer is lost."""
        self._held.append((sql, ()))
        if settings is not None:
            self._held.append(settings)
        if settle is not None:
            self._held.append((XID_QUERY, ()))
            self._settle = settle
        self._opening = len(self._held)
        self._replace = replace
        self._pooled = settings is not None

    def begun_only(self) -> bool:
        """Whether only the transaction's opening is still held: no statement reached the server."""
        return self._replace is not None and len(self._held) == self._opening

    def discard(self) -> None:
        """Forget what is held (a transaction that never reached the server)."""
        self._held.clear()
        self._replace = None

    def _exchange(self, sql: str | None, params: Params | dict[str, Any]) -> psycopg.Cursor[Any] | None:
        """The held statements and then `sql` (if any) in one round trip; the first exchange of a
        `begin` is tried again on a fresh connection when the connection proved dead."""
        held, self._held = self._held, []
        replace, self._replace = self._replace, None
        # Every connection the pool held may have died at once (a database restarted, its backends
        # terminated): a replacement that proves dead too is replaced again (decision 313).
        spares = DEAD_SPARES
        while True:
            try:
                if not held:
                    return self._c.execute(sql, params) if sql is not None else None  # type: ignore[arg-type, unused-ignore]
                return self._pipelined(held, sql, params)
            except (psycopg.Error, UnicodeEncodeError) as exc:
                # An exchange holding COMMIT is never sent again: it may have committed (`commit`).
                if replace is None or not self._c.broken or any(text == "COMMIT" for text, _ in held) or not spares:
                    raise translate(exc) from exc
                self._c = replace(self._c)
                spares -= 1

    def _pipelined(
        self, held: list[tuple[str, Params]], sql: str | None, params: Params | dict[str, Any]
    ) -> psycopg.Cursor[Any] | None:
        """`held`, then `sql` (if any), in one pipeline; the cursor of `sql`, whose results arrived
        when the pipeline ended.

        A Ctrl-C that comes while PostgreSQL still owes the pipeline answers is that interrupt, not
        an outage (decision 392). psycopg cancels the statement the server runs and raises the
        `KeyboardInterrupt` again, but on its way out it leaves pipeline mode on a connection still
        busy, and that `OperationalError` ("cannot exit pipeline mode while busy") replaced the
        interrupt: `kaeru import` ended "unavailable", exit 1. Such a connection, still in pipeline
        mode and owed answers, serves nothing more: it is closed (`abandoned`), and the server rolls
        its transaction back. A transaction is never left in part: the cancelled statement fails it
        with its COMMIT; only a COMMIT the server had already reached (the cancel came too late, or
        between two statements) commits it, whole."""
        cur = xid = None
        try:
            with self._c.pipeline():
                for text, values in held:
                    held_cur = self._c.execute(text, values)  # type: ignore[arg-type, unused-ignore]
                    if text is XID_QUERY:
                        xid = held_cur
                if sql is not None:
                    cur = self._c.execute(sql, params)  # type: ignore[arg-type, unused-ignore]
            if xid is not None and (row := xid.fetchone()) is not None:
                self.xid = str(row[0])
        except BaseException as exc:
            # What psycopg itself takes for an interruption: a Ctrl-C, or a signal handler's exit.
            interrupt = exc.__context__ if isinstance(exc, psycopg.Error) else exc
            if not isinstance(interrupt, KeyboardInterrupt | SystemExit):
                raise
            if self._c.closed or self._c.pgconn.pipeline_status != psycopg.pq.PipelineStatus.OFF:
                self._c.close()
                self.abandoned = True
            if interrupt is exc:
                raise
            raise interrupt from None
        return cur

    def _cursor(self, sql: str, params: Params | dict[str, Any]) -> psycopg.Cursor[Any]:
        cur = self._exchange(sql, params)
        assert cur is not None
        return cur

    def send(self, sql: str, params: Params = ()) -> None:
        self._held.append((self.dialect.render(sql), params))

    def flush(self) -> None:
        if self._held:
            self._exchange(None, ())

    def commit(self) -> None:
        """What is held, then COMMIT, in one pipeline that is never sent again: once COMMIT may have
        reached the server, a lost answer cannot say whether it committed, and a resent transaction
        would write twice. A transaction whose BEGIN is still held (only sent statements) first
        opens alone, in the exchange a dead pooled connection may be replaced in (`begin`).

        Behind a pooler, COMMIT goes alone, after the held statements' pipeline (decision 192): a
        pipeline's end may send a protocol Flush after its Sync when the answers are late (a busy
        client); after COMMIT the pooler has already given the server connection back, and the late
        Flush takes it again for this idle connection until its next transaction, so another
        client — or kaeru's next transaction — waits for it. Inside the open transaction that
        Flush is harmless: the server connection is this transaction's anyway."""
        if self._replace is not None:
            opening, rest = self._held[: self._opening], self._held[self._opening :]
            self._held = opening
            self._exchange(None, ())
            self._held = rest
        if self._pooled:
            self.flush()
        try:
            if self._pooled:
                try:
                    self._c.execute("COMMIT")
                except (psycopg.Error, UnicodeEncodeError) as exc:
                    raise translate(exc) from exc
            else:
                self._held.append(("COMMIT", ()))
                self._exchange(None, ())
        except Unavailable as lost:
            if not (self._c.closed or self._c.broken):
                raise  # the server answered: COMMIT failed, and the transaction with it
            self._settle_lost(lost)

    def _settle_lost(self, lost: Unavailable) -> None:
        """Return if the transaction whose COMMIT answer was `lost` committed; raise `lost` if it
        did not; `CommitUnknown` if that cannot be learnt. Resending it would write twice, and
        saying "nothing was written" of a transaction that committed made an agent write it again
        (decision 444)."""
        if self._settle is None:
            raise lost  # a read: nothing of it could stand
        status = self._settle(self.xid) if self.xid is not None else None
        if status == "committed":
            return
        if status == "aborted":
            raise lost
        cause = lost.__cause__ if isinstance(lost.__cause__, Exception) else lost
        raise CommitUnknown(
            f"the database's answer to COMMIT was lost ({type(cause).__name__}: {_first_line(cause)}), "
            "so whether the write was applied is not known: a retry with the same request_id applies it "
            "once; without one, read or search for it first — a retry may write it twice"
        ) from lost

    def raw_one(self, sql: str, params: Params | dict[str, Any] = ()) -> tuple[Any, ...] | None:
        """`one` for a statement in psycopg's own placeholders (`%s`, `%(name)s`)."""
        try:
            return self._cursor(sql, params).fetchone()  # type: ignore[no-any-return]
        except psycopg.Error as exc:
            raise translate(exc) from exc

    def raw_rows(self, sql: str, params: Params | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._cursor(sql, params).fetchall()
        except psycopg.Error as exc:
            raise translate(exc) from exc

    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        return self.raw_one(self.dialect.render(sql), params)

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return self.raw_rows(self.dialect.render(sql), params)

    def run(self, sql: str, params: Params = ()) -> int:
        return self._cursor(self.dialect.render(sql), params).rowcount

    def copy_out(self, sql: str, params: dict[str, Any]) -> bytearray:
        """What a `COPY … TO STDOUT` statement (psycopg's placeholders) writes, whole (not copied
        again into `bytes`: a first read of the copies at 1M nodes is ~100 MB)."""
        self.flush()
        data = bytearray()
        try:
            with self._c.cursor() as cur, cur.copy(sql, params) as copy:
                for chunk in copy:
                    data += chunk
        except psycopg.Error as exc:
            raise translate(exc) from exc
        return data

    def copy_rows(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """`rows` sent by a `COPY … FROM STDIN` statement: many rows in one statement, without a
        parameter each (the upgrade's names of edge revisions, `storage.link_actors`)."""
        self.flush()
        try:
            with self._c.cursor() as cur, cur.copy(sql) as copy:
                for row in rows:
                    copy.write_row(row)
        except psycopg.Error as exc:
            raise translate(exc) from exc

    def copy_columns(self, np: Any, select: str, params: dict[str, Any], width: int = 1) -> list[Any]:
        """The rows of `select` — a seq, then `width` float8 values, none NULL — as numpy arrays
        (int64, then float64 each), read by a binary COPY: a million rows never sit in Python objects."""
        data = self.copy_out(f"COPY ({select}) TO STDOUT (FORMAT BINARY)", params)
        body = memoryview(data)[_COPY_HEADER : len(data) - 2]  # (the trailer: a field count of -1)
        layout = [("n", ">i2"), ("l", ">i4"), ("seq", ">i8")]
        layout += [x for i in range(width) for x in ((f"l{i}", ">i4"), (f"v{i}", ">f8"))]
        table = np.frombuffer(body, dtype=np.dtype(layout))
        return [table["seq"].astype(np.int64), *(table[f"v{i}"].astype(np.float64) for i in range(width))]

    def stream(self, sql: str, params: Params = ()) -> Iterator[tuple[Any, ...]]:
        """Rows of a server-side cursor, fetched in batches."""
        self.flush()
        try:
            with self._c.cursor(name=f"kaeru_export_{secrets.token_hex(4)}") as cur:
                cur.itersize = 500
                cur.execute(self.dialect.render(sql), params)  # type: ignore[arg-type, unused-ignore]
                yield from cur
        except (psycopg.Error, UnicodeEncodeError) as exc:
            raise translate(exc) from exc
