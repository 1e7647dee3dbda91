"""A tool call that ends in `internal`: logged once for the operator, answered for the caller.

An `internal` answer is a fault of the server or its storage — a table gone, a bug — that the
caller cannot fix. Before, a storage error went to the caller in full and to nobody else: the
operator's log said nothing and `/health` stayed `ok`. Now each one is logged with the tool, the
actor, the `request_id` and the whole error, under a short reference the answer repeats, so the
person an agent reports it to can find the line.

What the caller sees of an `internal` error depends on what it may see: a driver's message quotes
the statement and can quote a row's values (a constraint's `DETAIL`), and an `Internal` raised
around one (`upgrading the vault failed: …`) can carry it on. So a caller limited to some
initiatives is told only the error's first clause — a storage error's class, the words before the
first colon of any other — and the reference; a caller that sees every initiative (stdio, the CLI,
the admin token, an unlimited vault token) is told the message as well, which is what it needs to
report the problem and reveals nothing it could not read.

An `unavailable` answer — the database down or busy — is the caller's to retry, but its operator
must hear of it too: over HTTP each is counted by tool and error class in the server's `Outages`
(`kaeru.mcp.logs`), whose bounded lines give the tool, the class and the error's first line, any
password in it replaced by `***`. A request whose vault token could not be checked is counted so
too, as `a token check`: with vault tokens a database gone stops every request there, before any
tool. On stdio the agent's client's log stays as it was."""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from kaeru.errors import Internal, KaeruError, Unavailable

if TYPE_CHECKING:
    from kaeru.mcp.logs import Outages
    from kaeru.service import Service

log = logging.getLogger("kaeru.mcp")

#: How a storage error's message starts (`storage/postgres/db.py`, `storage/sqlite/machine.py`).
STORAGE = "storage error: "


def answered(exc: Exception, tool: str, request_id: str | None, service: Service | None) -> KaeruError:
    """What a call that raised `exc` is answered: a `KaeruError` other than `Internal` as it is; an
    `Internal`, or any other exception (with its traceback), logged once and answered as `Internal`
    with the log line's reference."""
    if isinstance(exc, KaeruError) and not isinstance(exc, Internal):
        unavailable_said(tool, exc)
        return exc
    from kaeru.service import grants

    principal = grants.current()
    actor = principal.name if principal is not None else _local_actor(service)
    ref = secrets.token_hex(4)
    if isinstance(exc, Internal):
        message, logged, trace = exc.message, exc.message, None
    else:
        message = f"unexpected server fault ({type(exc).__name__}); nothing was applied"
        logged, trace = f"{type(exc).__name__}: {exc}", exc
    log.error(
        "internal answer to %s (actor %s, request_id %s, ref %s): %s",
        tool,
        actor,
        request_id,
        ref,
        logged,
        exc_info=trace,
    )
    if principal is not None and principal.initiatives is not None:
        message = first_clause(message)
    field, details = (exc.field, exc.details) if isinstance(exc, Internal) else (None, None)
    return Internal(f"{message} [log ref {ref}]", field=field, details=details)


#: Where a call answered `unavailable` is said while an HTTP request is served (`outages_said`):
#: the tool, the error's class and its first line, handed to the event loop's `Outages`.
_outage: ContextVar[Callable[[str, str, str], None] | None] = ContextVar("kaeru_outage", default=None)

#: A URL's password (`scheme://user:password@`) and any `…password=` setting's (a conninfo's
#: `password=`, an environment's `PGPASSWORD=`), its value bare or quoted — `\'` escapes a quote in
#: a conninfo, and an unclosed quote runs to the line's end: what an error's line may quote of the
#: database's address, replaced by `***` before it is logged.
_PASSWORDS = re.compile(
    r"(?P<head>://[^\s/@:]*:)[^\s]*@|(?P<key>\b\w*password\s*=\s*)(?:'(?:[^'\\]|\\.)*(?:'|\\?$)|\S+)",
    re.IGNORECASE,
)
#: How much of an error's first line is logged: a driver's line can quote a long statement.
_LINE_CHARS = 300


@contextmanager
def outages_said(outages: Outages) -> Iterator[None]:
    """While it lasts — one HTTP request, entered on the event loop — a tool call it makes that is
    answered `unavailable` is counted in `outages`. The call runs on a worker thread; its event is
    handed to the loop (`call_soon_threadsafe`), where `outages` keeps its counts unlocked."""
    loop = asyncio.get_running_loop()

    def said(tool: str, kind: str, line: str) -> None:
        try:
            loop.call_soon_threadsafe(outages.unavailable, tool, kind, line)
        except RuntimeError:  # the loop has closed: the server stopped while the call ran
            pass

    token = _outage.set(said)
    try:
        yield
    finally:
        _outage.reset(token)


def unavailable_said(tool: str, error: KaeruError) -> None:
    """Count `error`, when it is `unavailable`, in the `Outages` of the HTTP request being served
    (`outages_said`): a tool call's answer, or a step before any tool runs that is answered so — a
    token the vault could not check (`bearer.BearerAuth`), which else only `/health` would show.
    Outside an HTTP request (stdio, the CLI) nothing is said. Callable from the event loop or a
    worker thread."""
    if isinstance(error, Unavailable) and (said := _outage.get()) is not None:
        said(tool, type(error.__cause__ or error).__name__, _first_line(error.message))


def _first_line(message: str) -> str:
    """`message`'s first line, its passwords masked, then cut to `_LINE_CHARS`: masked after the cut,
    a URL the cut ran through had lost the `@` that marks its password, which was logged."""
    line = _unsecret(message.strip().splitlines()[0] if message.strip() else "")
    return line if len(line) <= _LINE_CHARS else f"{line[:_LINE_CHARS]}…"


def _unsecret(line: str) -> str:
    """`line` with any password a URL or conninfo in it quotes replaced by `***`."""
    return _PASSWORDS.sub(lambda m: f"{m['head']}***@" if m["head"] is not None else f"{m['key']}***", line)


def first_clause(message: str) -> str:
    """What a limited caller is told of an `internal` message: a storage error's class
    (`storage error: UndefinedTable`), else the words before its first colon."""
    head = STORAGE if message.startswith(STORAGE) else ""
    clause = message[len(head) :].partition(":")[0].strip()
    if f"{head}{clause}" == message:
        return message
    return f"{head}{clause} (the server's log has the whole message)"


def _local_actor(service: Service | None) -> str:
    """The actor a call without a token writes as (`KAERU_ACTOR`), where the service is built."""
    return service.rt.settings.actor if service is not None else "the local admin"
