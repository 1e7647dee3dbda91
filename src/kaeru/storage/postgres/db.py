"""PostgreSQL's `Db`: statements on one psycopg connection, and the driver's errors as ours."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import psycopg

from kaeru.errors import Internal, InvalidArgument, KaeruError, Unavailable
from kaeru.storage.sql.db import Db, DuplicateKey, Params
from kaeru.storage.sql.dialect import POSTGRES


def translate(exc: Exception) -> KaeruError:
    """Driver errors as the project's errors: transient ones retryable, the rest internal."""
    if isinstance(exc, psycopg.errors.ProgramLimitExceeded):
        # SQLSTATE class 54 is an OperationalError in psycopg, but retrying cannot help. In practice:
        # a text whose distinct words overflow a tsvector (1 MB), which SQLite's FTS5 would accept.
        return InvalidArgument(
            f"the text is too large for PostgreSQL's full-text index ({exc}); split it into several notes"
        )
    if isinstance(exc, psycopg.errors.UniqueViolation):
        return DuplicateKey(f"storage error: {type(exc).__name__}: {exc}")
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        # Connection loss, pool exhaustion, lock or statement timeout (`QueryCanceled`), deadlock,
        # serialisation failure, shutdown.
        return Unavailable(f"the database is unavailable or busy ({type(exc).__name__}: {exc}); retry shortly")
    if isinstance(exc, psycopg.DataError) and "NUL" in str(exc):
        return InvalidArgument("text must not contain NUL characters (PostgreSQL cannot store them)")
    return Internal(f"storage error: {type(exc).__name__}: {exc}")


class PgDb(Db):
    """Statements on one psycopg connection, each one's driver errors translated where it runs."""

    dialect = POSTGRES

    def __init__(self, conn: psycopg.Connection[Any]):
        self._c = conn
        #: Statements `send` held back, rendered: they go in one pipeline with the next statement.
        self._held: list[tuple[str, Params]] = []

    def _cursor(self, sql: str, params: Params | dict[str, Any]) -> psycopg.Cursor[Any]:
        try:
            if not self._held:
                return self._c.execute(sql, params)  # type: ignore[arg-type, unused-ignore]
            held, self._held = self._held, []
            with self._c.pipeline():
                for text, values in held:
                    self._c.execute(text, values)  # type: ignore[arg-type, unused-ignore]
                cur = self._c.execute(sql, params)  # type: ignore[arg-type, unused-ignore]
            return cur  # its results arrived when the pipeline ended
        except (psycopg.Error, UnicodeEncodeError) as exc:
            raise translate(exc) from exc

    def send(self, sql: str, params: Params = ()) -> None:
        self._held.append((self.dialect.render(sql), params))

    def pending(self) -> bool:
        """Whether `send` holds statements back."""
        return bool(self._held)

    def flush(self) -> None:
        if not self._held:
            return
        held, self._held = self._held, []
        try:
            with self._c.pipeline():
                for text, values in held:
                    self._c.execute(text, values)  # type: ignore[arg-type, unused-ignore]
        except (psycopg.Error, UnicodeEncodeError) as exc:
            raise translate(exc) from exc

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
