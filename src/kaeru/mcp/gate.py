"""What `/mcp` refuses before any tool runs — a Host or Origin outside the allow-list, a GET (no
event stream is ever sent) or another method but POST and DELETE, a body that is not JSON, a body over `MAX_MESSAGE_BYTES` (declared, or
found while a chunked body is read), a body framed two ways at once (`Content-Length` and
`Transfer-Encoding`), an `MCP-Protocol-Version` no MCP release has — answered as a JSON-RPC error
that names the value and the fix (decisions 227, 237).

The SDK refuses the same requests with a plain-text body ("Invalid Host header"), and its client,
which reads a JSON-RPC error from a non-2xx answer but nothing else, tells the agent only "Server
returned an error response": a teammate who typed the server's host name could not know that
`KAERU_ALLOWED_HOSTS` was the answer. This gate checks by the SDK's own rules (the same allow-list,
exact or `name:*` for any port; Content-Type starting `application/json`; the declared length), so
the SDK's one check behind it that headers cannot show — a chunked body with no length found over
the limit while it is read — has its plain-text 413 rewritten here into the same words.

The bodies of the requests in flight share one budget (`BodyBudget`): one body is bounded by
`MAX_MESSAGE_BYTES`, but nothing bounded them together, and the server holds each about three times
over while it reads and parses it (the SDK's buffer, its copy, the parsed text): a few clients
sending large calls at once could take it out of memory. A request that would pass the budget, by its declared length or as
its body is read, is answered 503 with `Retry-After` before anything is applied. Bytes are held
only as the app behind the token check reads them, and only those that came: a declared length
is no more than the early refusal's measure, so an upload sent a byte at a time holds what it
sent, not what it promised. A request without a valid token holds none: before the token is
checked the gate reads its body's first chunk — what the server buffered of it before pausing the
connection, a fraction of a megabyte — to refuse a batch or a bare JSON value in words, and the
token check then refuses it without reading more; so a stranger cannot fill the budget with stalled
uploads, though each one in progress keeps that first chunk until it is answered or closed.

A request that declares its length and is sent chunked as well is refused (400) unread: the
transport reads such a body as chunked (RFC 9112 §6.3), so its declared length says nothing of
what comes, and a front-end proxy that trusts the other header would see a different request
there — the mark of request smuggling, which no honest client sends.

Each refusal goes to the operator's log through the server's `Refusals` (`kaeru.mcp.logs`), as a
refused token does: by the client's address and a fixed reason, never the caller's header values,
so a flood of them costs a bounded number of lines. A GET is the exception: the TypeScript SDK
asks for its optional event stream after every `initialize` and reads the 405 as "none here", so
it is said at DEBUG, not as a warning beside the refused tokens.

Loaded with the HTTP side only (decision 16.O1)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kaeru.mcp.addresses import BATCH, NOT_AN_OBJECT, too_large
from kaeru.mcp.logs import Refusals, client_of

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("kaeru.http")

#: JSON-RPC "Invalid Request": the request never reached a method.
_INVALID_REQUEST = -32600
#: MCP's "Unsupported protocol version", the code a negotiating client falls back on.
_UNSUPPORTED_PROTOCOL_VERSION = -32022

#: The first byte of a JSON number, string, `true`, `false` or `null`: a body that is no message.
_SCALAR_OPENINGS = b'0123456789-"tfn'


def _scalar(first: Message) -> bool:
    """Whether a body that came whole in its first chunk is JSON but no object or array (`42`,
    `null`); one that is no JSON at all (`nonsense`) stays the SDK's parse error."""
    if first.get("more_body"):
        return False
    try:
        return not isinstance(json.loads(first.get("body", b"")), dict | list)
    except ValueError:
        return False


@dataclass(frozen=True)
class Refusal:
    """What a refused request is answered — `status`, and a JSON-RPC error of `message`, `code` and
    `data` — and `reason`, what the operator's log says: fixed words, never a header's value (the
    caller chooses those, and a flood of distinct ones would each be a line of their own)."""

    status: int
    message: str
    reason: str
    code: int = _INVALID_REQUEST
    data: dict[str, object] | None = None
    #: Seconds a client is told to wait before it tries again (`Retry-After`), for a busy server.
    retry_after: int | None = None
    #: A refusal a well-behaved client meets by design, not a warning: the GET the TypeScript SDK
    #: opens after `initialize` for an optional event stream, and takes 405 as "none here" (decision
    #: 231). At WARNING, beside the refused tokens, every Claude Code, Cursor or VS Code connection
    #: looked like an attack; it is logged at DEBUG.
    expected: bool = False


#: A body over `MAX_MESSAGE_BYTES`, as the operator's log says it (declared or found while read).
_OVER = "body over the limit"
#: A body the budget of the bodies in flight had no room for, as the operator's log says it.
_BUSY = "request bodies in flight at their limit"
#: A body framed by both `Content-Length` and `Transfer-Encoding`, as the operator's log says it.
_TWO_FRAMINGS = "both Content-Length and Transfer-Encoding"
#: JSON-RPC "Internal error", under which a 503 says `unavailable` (as `bearer` answers a token
#: that could not be checked): the request was valid, the server could not take it now.
_INTERNAL_ERROR = -32603

#: How many bodies of the largest size one request may carry (`max_body`) the requests in flight may
#: hold together. Each is held about three times over while read and parsed, so two bound the server's
#: growth to some six times `max_body`; a third large body waits for one of them (503, retryable).
LARGE_AT_ONCE = 2
#: A body over this many bytes (declared, or read so far) is large: the large bodies together hold at
#: most `LARGE_AT_ONCE` × `max_body`. A tool call's body is some kilobytes; a note of a long text, megabytes.
LARGE_BODY = 1024 * 1024
#: What all bodies together may hold beyond the large ones' share: the agents' ordinary calls are still
#: served while large uploads fill theirs (sixteen 1 MiB bodies, thousands of usual ones), and small
#: ones in flight up to this much take nothing from two of the largest.
SMALL_LANE = 16 * 1024 * 1024
#: How soon a client refused for the budget is told to try again: room is made as soon as one of the
#: large requests in flight is answered, as `bearer` tells a client whose token could not be checked.
_RETRY_AFTER_S = 1


class BodyBudget:
    """The bytes of request bodies the server holds at once: each body's bytes as the app (past the
    token check) reads them, whatever length it declared; all of them until the answer has been sent,
    or the request ends otherwise (the client gone, an error). Two counts: the large bodies' bytes
    (`held_large`), at most `large` — `LARGE_AT_ONCE` of the largest, beside up to `SMALL_LANE` of
    small ones — and every body's (`held`), at most `large` + `SMALL_LANE`; small bodies may use the
    large ones' share while it is idle. A body is large once its declared
    length or the bytes read of it pass `LARGE_BODY`; what it held before then moves to the large
    count. Used on the event loop's thread only."""

    def __init__(self, max_body: int):
        self.large = LARGE_AT_ONCE * max_body
        self.held = 0
        self.held_large = 0

    def room(self, more: int, size: int, moving: int = 0) -> bool:
        """Whether `more` bytes of a body then `size` bytes long fit now; `moving`, the bytes it held
        as a small body that become a large one's with these."""
        if self.held + more > self.large + SMALL_LANE:
            return False
        return size <= LARGE_BODY or self.held_large + moving + more <= self.large

    def take(self, more: int, size: int, moving: int = 0) -> bool:
        """Hold `more` bytes of a body now `size` bytes long (see `room`), or nothing and False when
        there is no room."""
        if not self.room(more, size, moving):
            return False
        self.held += more
        if size > LARGE_BODY:
            self.held_large += moving + more
        return True

    def give(self, held: int, large: bool) -> None:
        """Give back `held` bytes of a body, counted as a large one's when `large`."""
        self.held -= held
        if large:
            self.held_large -= held


class _OverBudget(Exception):
    """Raised into the app by the `receive` of a body the budget had no room for: the SDK stops
    reading it, and the gate answers."""


class _Body:
    """One request's share of the `BodyBudget`: what it holds, given back once (`release`). Its
    `declared` length makes it large from its first byte, but holds nothing it has not sent."""

    def __init__(self, budget: BodyBudget, declared: int | None):
        self.budget = budget
        self.declared = declared or 0
        self.held = 0
        self.size = 0
        #: Counted among the large bodies (`BodyBudget.held_large`).
        self.large = False
        #: Refused while read: whatever the app would send is dropped, and the gate answers 503.
        self.over = False

    def take(self, more: int) -> bool:
        self.size += more
        size = max(self.size, self.declared)
        moving = self.held if size > LARGE_BODY and not self.large else 0
        if not self.budget.take(more, size, moving):
            self.over = True
            return False
        self.large = size > LARGE_BODY
        self.held += more
        return True

    def release(self) -> None:
        self.budget.give(self.held, self.large)
        self.held = 0


def _allowed(value: str, patterns: list[str]) -> bool:
    """The SDK's match (`TransportSecurityMiddleware`): exactly, or `base:*` for `base:` and any port."""
    return any(value == p or (p.endswith(":*") and value.startswith(p[:-1])) for p in patterns)


def _names(patterns: list[str]) -> str:
    """The allow-list as a person reads it: `name` for `name:*`, each once."""
    seen: list[str] = []
    for pattern in patterns:
        name = pattern.removesuffix(":*")
        if name not in seen:
            seen.append(name)
    return ", ".join(seen)


class RequestGate:
    """In front of the app: requests to `/mcp` checked as the SDK checks them, a refusal said in words."""

    def __init__(
        self, app: ASGIApp, security: TransportSecuritySettings, max_body: int, refusals: Refusals | None = None
    ):
        self.app = app
        self.hosts = list(security.allowed_hosts)
        self.origins = list(security.allowed_origins)
        self.max_body = max_body
        #: Where refused requests are logged, bounded (shared with `BearerAuth` by `http_app`).
        self.refusals = refusals or Refusals(log)
        #: The bytes the bodies in flight hold together, and their bound.
        self.budget = BodyBudget(max_body)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path", "").startswith("/mcp"):
            refusal = self.refusal(scope)
            if refusal is not None:
                await self._refuse(scope, receive, send, refusal)
            elif scope.get("method") == "POST":
                await self._post(scope, receive, send)
            else:
                await self.app(scope, receive, self._said(scope, receive, send, None))
            return
        await self.app(scope, receive, send)

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A POST, its body held in the budget: refused before it is read when its declared length
        finds no room now; else held chunk by chunk as the app behind the token check reads it —
        declared or chunked, only the bytes that came — and refused when a chunk finds none (the app
        unwound, what it would send dropped). Its bytes are given back once the answer is sent, or
        however the request ends."""
        declared = _declared(scope)
        if declared is not None and not self.budget.room(declared, declared):
            await self._refuse(scope, receive, send, self._busy(f"its {declared:,} bytes were not read"))
            return
        unbatched = await self._unbatched(scope, receive, send)
        if unbatched is None:
            return
        body = _Body(self.budget, declared)
        try:
            try:
                await self.app(scope, _held(unbatched, body), self._said(scope, receive, send, body))
            except* _OverBudget:  # raised by `_held` through the app: answered below
                pass
            if body.over:
                body.release()
                await self._refuse(scope, receive, send, self._busy("it was refused as its body was read"))
        finally:
            body.release()

    def _busy(self, what: str) -> Refusal:
        """The 503 of a request the budget has no room for: `what` of its body happened."""
        said = (
            f"this server is taking in other large requests (at most {self.budget.large // (1024 * 1024)} MiB of "
            f"request bodies at once): {what} and nothing was applied; retry in a moment"
        )
        data: dict[str, object] = {"code": "unavailable", "message": said, "retryable": True}
        return Refusal(503, f"unavailable: {said}", _BUSY, _INTERNAL_ERROR, data, _RETRY_AFTER_S)

    async def _unbatched(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """`receive` with its first body chunk read ahead, or None when that chunk opens a JSON-RPC
        batch or a JSON value that is no object (`42`, `null`), each refused as stdio refuses it
        (`unreadable.answer`): the SDK answered both with "invalid params" and a thousand
        characters of its parser's errors."""
        first = await receive()
        opening = first.get("body", b"").lstrip()[:1] if first.get("type") == "http.request" else b""
        if opening == b"[":
            await self._refuse(scope, receive, send, Refusal(400, BATCH, "a JSON-RPC batch"))
            return None
        if opening and opening in _SCALAR_OPENINGS and _scalar(first):
            await self._refuse(scope, receive, send, Refusal(400, NOT_AN_OBJECT, "a body that is no JSON object"))
            return None
        given = False

        async def again() -> Message:
            nonlocal given
            if not given:
                given = True
                return first
            return await receive()

        return again

    def _said(self, scope: Scope, receive: Receive, send: Send, body: _Body | None) -> Send:
        """`send`, except that the SDK's plain-text 413 — a chunked body it found over the limit as it
        read it — goes out as this gate's JSON-RPC refusal, the same words as a declared length's;
        nothing goes out once `body` was refused while read; and `body`'s bytes are given back as
        its answer's last part goes out (the client cannot see the answer whole before they are)."""
        swallowing = False

        async def rewritten(message: Message) -> None:
            nonlocal swallowing
            if body is not None and body.over:
                return
            if message["type"] == "http.response.start" and message.get("status") == 413:
                swallowing = True
                if body is not None:
                    body.release()
                await self._refuse(scope, receive, send, Refusal(413, self._too_large("over"), _OVER))
            elif not (swallowing and message["type"] == "http.response.body"):
                if body is not None and message["type"] == "http.response.body" and not message.get("more_body"):
                    body.release()
                await send(message)

        return rewritten

    def _too_large(self, size: str) -> str:
        return too_large(size, self.max_body)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, refusal: Refusal) -> None:
        """Log `refusal` (bounded, by address and reason; an `expected` one at DEBUG) and answer it."""
        if refusal.expected:
            log.debug("answered %s on /mcp from %s with %d", refusal.reason, client_of(scope), refusal.status)
        else:
            self.refusals.refused(client_of(scope), "/mcp", refusal.reason)
        await _answer(scope, receive, send, refusal)

    def refusal(self, scope: Scope) -> Refusal | None:
        """Why `/mcp` will not serve a request, else None."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        host = headers.get("host", "")
        if not _allowed(host, self.hosts):
            return Refusal(
                421,
                f"this server does not answer to the Host {host!r} (a guard against DNS rebinding): reach it as "
                f"{_names(self.hosts)}, or add that name to KAERU_ALLOWED_HOSTS where the server runs",
                "Host not allowed",
            )
        origin = headers.get("origin")
        if origin and not _allowed(origin, self.origins):
            return Refusal(
                403,
                f"requests from the web page at {origin!r} are refused (a guard against DNS rebinding); "
                "/mcp is for MCP clients, which send no Origin: a browser page cannot call it even from an "
                "allowed host (this server sends no CORS headers)",
                "Origin not allowed",
            )
        method = scope.get("method")
        if method == "GET":
            # The server is stateless (decision 231): a GET stream would never carry a message,
            # so it is refused as MCP's transport says a server without one must refuse it.
            said = "this server sends no event stream: POST each JSON-RPC request to /mcp"
            return Refusal(405, said, "GET", expected=True)
        if method == "DELETE":
            # Stateless (decision 231): no session to end. The SDK's own 405 named no allowed method.
            return Refusal(
                405,
                "this server keeps no sessions: there is none to DELETE; POST each JSON-RPC request to /mcp",
                "DELETE",
            )
        if method != "POST":
            # The SDK answered these with `Allow: GET, POST, DELETE`, two of which are refused too.
            return Refusal(
                405, f"/mcp takes POST (one JSON-RPC request a POST), not {method}", "a method other than POST"
            )
        kind = headers.get("content-type")
        if kind is None or not kind.lower().startswith("application/json"):
            said = f"a request to /mcp is JSON-RPC: its Content-Type must be application/json, not {kind!r}"
            return Refusal(400, said, "Content-Type not application/json")
        length = headers.get("content-length")
        if length is not None and "transfer-encoding" in headers:
            said = (
                "a request to /mcp declares its length (Content-Length) and is sent with Transfer-Encoding "
                "as well: the two may not be read alike (RFC 9112 §6.3), so it is refused; send one of them"
            )
            return Refusal(400, said, _TWO_FRAMINGS)
        length = length or ""
        if length.isdigit() and int(length) > self.max_body:
            return Refusal(413, self._too_large(f"{int(length):,} bytes, over"), _OVER)
        return _version_refusal(headers.get("mcp-protocol-version"))


def _declared(scope: Scope) -> int | None:
    """The body's length the request declares (`Content-Length`), or None (chunked): the measure of
    the early refusal, and whether the body is large from its first byte — never bytes held."""
    for name, value in scope.get("headers") or []:
        if name.lower() == b"content-length" and value.strip().isdigit():
            return int(value)
    return None


def _held(receive: Receive, body: _Body) -> Receive:
    """`receive`, the body held in the budget chunk by chunk as the app reads it; `_OverBudget` raised
    into the app when there is no room (nothing more held). A declared length is not taken ahead:
    one taken whole at the first read let an upload that sends a byte now and then — each within
    the stall timeout (`connections.REQUEST_HEAD_S`) — hold the largest share for as long as it
    liked, and one whose body came chunked hold only its declared few bytes of however many came.
    An upload holds what it has sent until it ends: one past the token check that sends most of its
    body and then trickles holds that much — bytes it did send — while the small calls' lane is served."""

    async def held() -> Message:
        message = await receive()
        if message["type"] == "http.request" and not body.take(len(message.get("body", b""))):
            raise _OverBudget
        return message

    return held


def _version_refusal(version: str | None) -> Refusal | None:
    """A version no MCP release has, refused as what it is. The SDK sends every version it does not
    handshake to its per-request-envelope path, whose first complaint is a missing `params._meta` —
    true of that path, but the client's mistake is the header. The code and `data` are the SDK's own
    for an unsupported version, so a negotiating client still reads the versions it may retry with."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    if version is None or version in KNOWN_PROTOCOL_VERSIONS:
        return None
    message = (
        f"MCP-Protocol-Version {version!r} is no protocol version this server speaks: it speaks "
        f"{', '.join(MODERN_PROTOCOL_VERSIONS)} (each request carrying its envelope) and, after an initialize "
        f"handshake, {', '.join(HANDSHAKE_PROTOCOL_VERSIONS)}"
    )
    data: dict[str, object] = {"supported": list(MODERN_PROTOCOL_VERSIONS), "requested": version}
    return Refusal(400, message, "unknown MCP-Protocol-Version", _UNSUPPORTED_PROTOCOL_VERSION, data)


async def _answer(scope: Scope, receive: Receive, send: Send, refusal: Refusal) -> None:
    """Answer `refusal.status` with a JSON-RPC error the SDK's client shows as `refusal.message`."""
    from starlette.responses import JSONResponse

    error: dict[str, object] = {"code": refusal.code, "message": refusal.message}
    if refusal.data is not None:
        error["data"] = refusal.data
    body = {"jsonrpc": "2.0", "id": None, "error": error}
    # Only POST is served: GET and DELETE are always refused by a stateless server (decision 255).
    headers = {"Allow": "POST"} if refusal.status == 405 else {}
    if refusal.retry_after is not None:
        headers["Retry-After"] = str(refusal.retry_after)
    await JSONResponse(body, status_code=refusal.status, headers=headers or None)(scope, receive, send)
