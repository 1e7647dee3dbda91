"""What a signal does to a backup or an export while it writes: SIGTERM and SIGHUP (a cron or
systemd time-out, a closed terminal) end it as an exception, so its hidden scraps are removed, not
left whole-sized beside the target; and the few renames that put an export in place run to their
end before any signal is acted on, so the target is the old export or the new one, never a mix.

Python acts on a signal only in the main thread: elsewhere (a server's worker) both do nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from kaeru.errors import Unavailable

#: The signals that end a command which is not told otherwise (Windows has no SIGHUP: a backup there
#: ended in AttributeError before it copied anything).
_ENDING = ("SIGTERM", "SIGHUP")


class Stopped(Exception):
    """SIGTERM or SIGHUP arrived while a copy was being written; `left`, when given, says what the
    writer left instead of what `stopped_by_signals` was told: a signal held while an export was put
    in place acts once it is, and "nothing was written" was said of a folder holding the new export."""

    def __init__(self, message: str, left: str | None = None) -> None:
        super().__init__(message)
        self.left = left


class InterruptedInPlace(KeyboardInterrupt):
    """A Ctrl-C held while an export was put in place, acted on once it was: `detail` says so, and
    what else was done, for the CLI to say instead of "stopped before it ended" of a folder holding
    the new export. A KeyboardInterrupt still, so whatever ends a command on Ctrl-C ends it."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _signals(names: tuple[str, ...]) -> list[signal.Signals]:
    return [getattr(signal, name) for name in names if hasattr(signal, name)]


@contextmanager
def stopped_by_signals(what: str, left: str) -> Iterator[None]:
    """SIGTERM and SIGHUP raise `Stopped` inside the block (the writer's own clean-up runs), said as
    `Unavailable`: "the `what` was stopped by signal SIGTERM: `left`". SQLite's progress handler gives
    Python a moment to raise it while `VACUUM INTO` runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Stopped(f"stopped by signal {signal.Signals(signum).name}")

    previous = {signum: signal.signal(signum, stop) for signum in _signals(_ENDING)}
    try:
        yield
    except Stopped as exc:
        raise Unavailable(f"the {what} was {exc}: {exc.left or left}") from None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def held_signals() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP kept until the block ends, then acted on as they would have been
    (a Ctrl-C's KeyboardInterrupt, `stopped_by_signals`' `Stopped`): a block of renames that puts an
    export in place, stopped half-way, left the folder half old pages and half new ones."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def keep(signum: int, frame: object) -> None:
        arrived.append(signum)

    previous = {signum: signal.signal(signum, keep) for signum in _signals(("SIGINT", *_ENDING))}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if arrived:
            signal.raise_signal(arrived[0])
