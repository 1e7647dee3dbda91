"""HTTP connections that hold a file descriptor and ask nothing are closed (`kaeru serve --http`,
`kaeru ui`).

uvicorn times a connection out only after a response (its keep-alive): one that never sends a whole
request's head — a client that leaks connections, a hung proxy, half a header — was kept for as long
as its peer kept it. A few hundred of them used up the process's descriptors (a desktop's soft limit
is often 1,024, 256 on some): every client, the owner's own included, then timed out, and asyncio
logged a traceback for each failed `accept` — some 150 MB of log a minute — until the peers let go.
Any local account could do that without a token (tokens are checked per request, and these make
none). So: a connection that has not sent a request's head within `REQUEST_HEAD_S` of opening, or
of its last response, is closed; the soft descriptor limit is raised to the hard one; and the
accept failures are logged once a minute, not ten thousand times a second.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time

from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a connection may take to send a whole request's head (a client sends it at once).
REQUEST_HEAD_S = 15.0
#: The soft descriptor limit asked for when the hard one is unlimited (macOS's OPEN_MAX).
OPEN_MAX = 10240
#: How often a failed `accept` (out of descriptors) is logged at most.
ACCEPT_ERROR_EVERY_S = 60.0


class PromptRequests(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection that sends no request head in time."""

    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = self.loop.call_later(REQUEST_HEAD_S, self._too_slow)

    def _too_slow(self) -> None:
        """Close the connection unless a request is being answered (its head arrived in time)."""
        self._head_timer = None
        serving = self.cycle is not None and not self.cycle.response_complete
        if not serving and not self.transport.is_closing():
            self.transport.close()


def raise_descriptor_limit() -> None:
    """The soft limit on open files raised to the hard one: more clients before any is refused."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # An unlimited hard limit (macOS's default, with a soft one of 256) cannot be the soft one:
    # the kernel's own per-process ceiling there is OPEN_MAX.
    wanted = OPEN_MAX if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError):  # a platform that refuses: the limit stays as it was
            pass


class _OncePerMinute(logging.Filter):
    """Lets asyncio's "socket.accept() out of system resource" through once per minute."""

    def __init__(self) -> None:
        super().__init__()
        self._last = float("-inf")

    def filter(self, record: logging.LogRecord) -> bool:
        if "socket.accept() out of system resource" not in record.getMessage():
            return True
        now = time.monotonic()
        if now - self._last < ACCEPT_ERROR_EVERY_S:
            return False
        self._last = now
        return True


def quiet_accept_errors() -> None:
    """Install the filter on asyncio's logger once (a second server in the process reuses it)."""
    log = logging.getLogger("asyncio")
    if not any(isinstance(f, _OncePerMinute) for f in log.filters):
        log.addFilter(_OncePerMinute())
