"""HTTP connections that hold a file descriptor and ask nothing are closed (`kaeru serve --http`,
`kaeru ui`).

uvicorn times a connection out only after a response (its keep-alive): one that never sends a whole
request's head — a client that leaks connections, a hung proxy, half a header — was kept for as long
as its peer kept it. A few hundred of them used up the process's descriptors (a desktop's soft limit
is often 1,024, 256 on some): every client, the owner's own included, then timed out, and asyncio
logged a traceback for each failed `accept` — some 150 MB of log a minute — until the peers let go.
Any local account could do that without a token (tokens are checked per request, and these make
none). So: a connection that has not sent a request's head within `REQUEST_HEAD_S` of opening, or
of the first byte of its next request, nor begun one within `KEEP_ALIVE_S` of its last response
(a kept connection's idle time, decision 435), is closed; the soft descriptor limit is raised to
the hard one; and the accept failures are logged once a minute, not ten thousand times a second.

A request whose head came but whose body stops coming held its connection as long (the body was
awaited without a limit, before any token was checked; and SIGTERM waited for it): one that sends
no byte of its body for `REQUEST_HEAD_S`, before any answer started, is closed too. A slow upload
that keeps sending is not (decision 407).
"""

from __future__ import annotations

import asyncio
import logging
import time

from uvicorn.protocols.http.h11_impl import H11Protocol

try:
    import resource
except ImportError:  # Windows: no descriptor limit to raise
    resource = None  # type: ignore[assignment]

#: Seconds a connection may take to send a whole request's head (a client sends it at once), and
#: may leave between two bytes of a request's body.
REQUEST_HEAD_S = 15.0
#: Seconds a connection is kept after a response for the client's next request (uvicorn's own was
#: 5 s). Whichever side holds an idle connection longer must be the server: HTTP clients keep theirs
#: for less (the SDK's, httpx2, 5 s), and the reverse proxies and load balancers put in front of a
#: shared server for up to 60 s (nginx's upstream keep-alive, AWS's load balancers); a request they
#: send just as the server closes the connection is lost (`Server disconnected`, a proxy's 502).
KEEP_ALIVE_S = 75
#: Seconds SIGTERM leaves the requests still running to finish before they are cancelled.
GRACEFUL_SHUTDOWN_S = 5
#: The soft descriptor limit asked for when the hard one is unlimited (macOS's OPEN_MAX).
OPEN_MAX = 10240
#: How often a failed `accept` (out of descriptors) is logged at most.
ACCEPT_ERROR_EVERY_S = 60.0


class PromptRequests(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection that sends no request head in time."""

    _head_timer: asyncio.TimerHandle | None = None
    #: When the connection last received bytes (the loop's clock).
    _heard = 0.0
    #: Kept after a response, waiting for the next request (`KEEP_ALIVE_S`), which has not begun.
    _kept = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._heard = self.loop.time()
        self._arm()

    def data_received(self, data: bytes) -> None:
        self._heard = self.loop.time()
        if self._kept:  # a kept connection's next request begins: its head has `REQUEST_HEAD_S`
            self._kept = False
            self._arm()
        super().data_received(data)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._kept = True
        self._arm(KEEP_ALIVE_S)  # the client's next request may come later than its first

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        super().connection_lost(exc)

    def _arm(self, after: float = REQUEST_HEAD_S) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = self.loop.call_later(after, self._too_slow)

    def _too_slow(self) -> None:
        """Close the connection unless a request is being answered: its head arrived in time, and
        its body has either all come or is still coming (a byte within `REQUEST_HEAD_S`)."""
        self._head_timer = None
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            if not cycle.more_body or cycle.response_started:
                return  # being answered
            quiet = self.loop.time() - self._heard
            if quiet < REQUEST_HEAD_S:
                self._arm(REQUEST_HEAD_S - quiet)  # the body is still coming: wait for its next byte
                return
        if not self.transport.is_closing():
            self.transport.close()


def raise_descriptor_limit() -> None:
    """The soft limit on open files raised to the hard one: more clients before any is refused."""
    if resource is None:
        return
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


class _GoneClients(logging.Filter):
    """Drops the SDK's traceback for a client that went away in the middle of sending a request
    (`ClientDisconnect`): each dropped upload logged some ten lines at ERROR, for nothing the
    server did wrong or could do (decision 407). Nothing was applied: the request never arrived."""

    def filter(self, record: logging.LogRecord) -> bool:
        from starlette.requests import ClientDisconnect

        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, ClientDisconnect)


def quiet_accept_errors() -> None:
    """Install the filters once (a second server in the process reuses them): asyncio's accept
    failures once a minute, and no traceback for a client that left mid-request."""
    log = logging.getLogger("asyncio")
    if not any(isinstance(f, _OncePerMinute) for f in log.filters):
        log.addFilter(_OncePerMinute())
    sdk = logging.getLogger("mcp.server.streamable_http")
    if not any(isinstance(f, _GoneClients) for f in sdk.filters):
        sdk.addFilter(_GoneClients())
