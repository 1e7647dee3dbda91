"""What `kaeru serve` says in its operator's log (stderr), and how much of it.

One line per event — ISO time (UTC), level, logger, message — for kaeru's own loggers and for the
libraries' (psycopg's pool, uvicorn, the MCP SDK) alike; a traceback, when there is one, follows its
line. Before, no logging was set up: Python's last-resort handler printed bare messages without a
time, and a refused token or a failed storage read left nothing at all.

Over HTTP kaeru's loggers say INFO and up (a refusal, the stop); on stdio stderr is the agent's
client's log and only warnings and errors go there. Nothing logged here holds a token, a password
or a request body: a refusal names the client's address and a reason, a token by its name only;
an `unavailable` answer its tool and the error's class and first line."""

from __future__ import annotations

import asyncio
import logging
import re
import sys
import time
from datetime import UTC, datetime
from typing import Any

#: A message's line breaks, said on its one line (a storage error quotes its SQL over several).
_BREAKS = re.compile(r"\s*\n\s*")


class OneLine(logging.Formatter):
    """`2026-12-07T15:13:17.123Z WARNING kaeru.http: message`, the message on one line."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        return stamp.replace("+00:00", "Z")

    def format(self, record: logging.LogRecord) -> str:
        message = _BREAKS.sub(" | ", record.getMessage().strip())
        line = f"{self.formatTime(record)} {record.levelname} {record.name}: {message}"
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        return f"{line}\n{record.exc_text}" if record.exc_text else line


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever `sys.stderr` is when a line is logged (as Python's last-resort handler
    does), not to the stream there was when it was installed."""

    @property
    def stream(self) -> Any:  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def configure(*, http: bool) -> None:
    """Send every logger's warnings, and over HTTP kaeru's INFO lines too, to stderr as `OneLine`s.
    Once per process: a second call only sets the level."""
    root = logging.getLogger()
    if not any(isinstance(handler, _Stderr) for handler in root.handlers):
        handler = _Stderr()
        handler.setFormatter(OneLine())
        root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)
    logging.getLogger("kaeru").setLevel(logging.INFO if http else logging.WARNING)


#: How long repeated events (refusals, `unavailable` answers) are counted before their summary is logged.
WINDOW_S = 60.0
#: How many kinds of one event a window logs one by one; the rest are counted together.
KINDS = 20


class Windowed:
    """One kind of repeated event's lines, bounded: the first event of each key (`Refusals`: path,
    client address and reason; `Outages`: tool and error class) in a window is logged at once; the
    ones after it are counted, and their counts logged when the window ends (`WINDOW_S`, or the
    server stops). Past `KINDS` keys in one window, further events are only counted, together. So a
    window costs at most 2 × `KINDS` + 1 lines whatever arrives — its first lines, then its summary
    as it ends — and any `WINDOW_S` seconds at most 3 × `KINDS` + 1: one window's last first lines,
    its summary and the next window's first lines can fall within them. A flood cannot fill the
    disk, and the log still says who and how many.

    Used on the event loop's thread only (a tool call's worker thread hands its event over,
    `faults.unavailable_said`): the counts are not locked."""

    def __init__(self, log: logging.Logger):
        self.log = log
        self._counts: dict[tuple[str, ...], int] = {}
        self._others = 0
        self._since = time.monotonic()
        self._due: asyncio.TimerHandle | None = None

    def _first(self, key: tuple[str, ...]) -> bool:
        """Count one event of `key`: True when it is the first of its key in this window, which the
        caller logs in full; the others are said in the window's summary."""
        if time.monotonic() - self._since >= WINDOW_S:
            self.flush()
        if key in self._counts:
            self._counts[key] += 1
        elif len(self._counts) >= KINDS:
            self._others += 1
        else:
            self._counts[key] = 0
            return True
        self._summary_due()
        return False

    def _summary_due(self) -> None:
        """Log the counts when the window ends, even if nothing else happens by then."""
        if self._due is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop: the next event or the stop logs them
            return
        self._due = loop.call_later(max(0.0, WINDOW_S - (time.monotonic() - self._since)), self.flush)

    def flush(self) -> None:
        """Log the counts of the events not yet logged, and start a new window."""
        if self._due is not None:
            self._due.cancel()
            self._due = None
        for key, more in self._counts.items():
            if more:
                self._more(key, more)
        if self._others:
            self._rest(self._others)
        self._counts.clear()
        self._others = 0
        self._since = time.monotonic()

    def _more(self, key: tuple[str, ...], more: int) -> None:
        """Say that `key` happened `more` times since its first line."""
        raise NotImplementedError

    def _rest(self, count: int) -> None:
        """Say the `count` events past `KINDS` keys."""
        raise NotImplementedError


class Refusals(Windowed):
    """The refused requests' lines (`/mcp`, `/ui`), bounded as `Windowed` says: by path, client
    address and a fixed reason, never a header's value or a token."""

    def refused(self, client: str, path: str, reason: str) -> None:
        """Count one refused request to `path` from `client` (an address), logged as above."""
        if self._first((path, client, reason)):
            self.log.warning("refused %s from %s: %s", path, client, reason)

    def _more(self, key: tuple[str, ...], more: int) -> None:
        path, client, reason = key
        self.log.warning("refused %s from %s %d more times since the first: %s", path, client, more, reason)

    def _rest(self, count: int) -> None:
        self.log.warning(
            "refused %d more requests from other addresses or for other reasons (past %d kinds in a window)",
            count,
            KINDS,
        )


class Outages(Windowed):
    """The tool calls answered `unavailable` — the database down or busy, a lock not had in time —
    bounded as `Windowed` says, by tool and error class: a database gone under load answers every
    call so, and a line each would flood the log. Before, only `/health` said it."""

    def unavailable(self, tool: str, kind: str, said: str) -> None:
        """Count one call of `tool` answered `unavailable` by an error of class `kind`; `said` is its
        first line, logged with the first of its kind (never a password: `faults.unavailable_said`)."""
        if self._first((tool, kind)):
            self.log.warning("unavailable answer to %s: %s: %s", tool, kind, said)

    def _more(self, key: tuple[str, ...], more: int) -> None:
        tool, kind = key
        self.log.warning("unavailable answer to %s %d more times since the first: %s", tool, more, kind)

    def _rest(self, count: int) -> None:
        self.log.warning(
            "unavailable answer %d more times to other tools or for other errors (past %d kinds in a window)",
            count,
            KINDS,
        )


def client_of(scope: Any) -> str:
    """The address a request came from (the connection's own: a proxy in front is its address)."""
    client = scope.get("client") if isinstance(scope, dict) else None
    return str(client[0]) if client else "an unknown address"
