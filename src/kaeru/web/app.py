"""The viewer's ASGI app, mounted at `/ui`: the checks every request passes, then the pages.

Checks, in order (decision 19.W3, and the session-40 probe's fixes in `guard.py` and `sessions.py`):
the `Host` allow-list of `/mcp` (DNS rebinding); a request that changes something (every POST:
`/ui/edit`, `/ui/logout`, `/ui/login`) must come from the viewer's own origin exactly — not any
port of the host, which `/mcp`'s `Origin` allow-list admits — and declare no body over
`guard.BODY_LIMIT`; then who is asking — a bearer token from the `Authorization` header, or the
session of the `kaeru_ui_<port>` cookie the sign-in sets (a random id, HttpOnly, SameSite=Strict,
Secure under TLS; one per port, as a browser shares cookies between the ports of a host), whose
token is checked again by the same verifier as `/mcp` on every request — and the request runs as
that token's principal (`grants.acting`), so the tools it calls see exactly the grants an MCP call
with that token sees, and the edits are audited with the token's name as actor. A signed-in
session's forms carry its CSRF token, checked on every POST. Without a token, a request is served
as the local admin only when the server would serve `/mcp` so (no admin token, no vault token).
Every answer carries `guard.HEADERS` (a Content-Security-Policy that forbids framing, among them).
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route, Router
from starlette.types import Receive, Scope, Send

from kaeru.errors import KaeruError
from kaeru.service import grants
from kaeru.service.grants import Principal
from kaeru.web import frame, guard, lists, node, pages, ways
from kaeru.web.graph import Call
from kaeru.web.sessions import Found, Notices, Sessions, token_digest

COOKIE = "kaeru_ui"
PREFIX = "/ui"


@dataclass
class Backend:
    """What the viewer needs from the server that mounts it."""

    #: A tool call through the server's registry (`ToolRegistry.envelope`): always an envelope.
    call: Call
    #: A token → its principal, or None when the token is refused.
    verify: Callable[[str], Awaitable[Principal | None]]
    #: True when the request of an ASGI scope, made without a token, is refused.
    required: Callable[[Scope], Awaitable[bool]]
    #: The `Host` and `Origin` allow-lists (patterns `name:*` or exact), as for `/mcp`.
    allowed_hosts: list[str]
    allowed_origins: list[str]
    #: The origins of the names an operator admitted (KAERU_ALLOWED_HOSTS: a proxy's public name),
    #: a POST's own however the proxy rewrote `Host` (not the loopback names' other ports).
    proxied_origins: list[str] = field(default_factory=list)
    #: Who the local admin is (shown on the pages; the audit uses `KAERU_ACTOR` itself).
    local_actor: str = "agent"


def _allowed(value: str, patterns: list[str]) -> bool:
    return any(value == p or (p.endswith(":*") and value.startswith(p[:-1])) for p in patterns)


@dataclass
class Caller:
    """Who a request comes from: the principal its token names (None: the local admin), the
    session it was made in (None: a bearer header, or no token), and whom its edits' notices are
    shown to (`Notices`)."""

    principal: Principal | None
    found: Found | None
    owner: str


class ViewerApp:
    """The checks (module docstring) around the page router; owns the viewer's sign-in sessions and
    the outcomes of its edits (`sessions.py`), so each server's viewer keeps its own."""

    def __init__(self, backend: Backend):
        self.backend = backend
        self.sessions = Sessions()
        self.notices = Notices()
        self.router = Router(
            routes=[
                Route("/", pages.handler(backend, pages.initiatives_page)),
                Route("/graph", pages.handler(backend, pages.graph_page)),
                Route("/node", pages.handler(backend, node.node_page)),
                Route("/board", pages.handler(backend, pages.board_page)),
                Route("/timeline", pages.handler(backend, ways.timeline_page)),
                Route("/reviews", pages.handler(backend, lists.reviews_page)),
                Route("/rules", pages.handler(backend, lists.rules_page)),
                Route("/links", pages.handler(backend, lists.links_page)),
                Route("/search", pages.handler(backend, pages.search_page)),
                Route("/recall", pages.handler(backend, pages.recall_page)),
                Route("/edit", node.edit_handler(backend, self.notices), methods=["POST"]),
            ]
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.router(scope, receive, send)
            return
        send = guard.with_headers(send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        refused = self._refusal(scope, headers)
        if refused is not None:
            await refused(scope, receive, send)
            return
        path = scope.get("path", "")
        relative = path[len(scope.get("root_path", "")) :] if path.startswith(scope.get("root_path", "")) else path
        if relative == "/static/style.css":
            await _stylesheet()(scope, receive, send)
            return
        cookie = cookie_name(headers)
        if relative == "/login":
            await self._login(scope, receive, send, headers, cookie)
            return
        caller = await self._caller(scope, headers, cookie)
        if isinstance(caller, Response):
            await caller(scope, receive, send)
            return
        state: dict[str, Any] = scope.setdefault("state", {})
        state["principal"] = caller.principal
        state["csrf"] = caller.found.session.csrf if caller.found is not None else ""
        state["owner"] = caller.owner
        edited = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("edited")
        if edited:
            state["notice"] = self.notices.find(edited[0], caller.owner)
        if scope.get("method") == "POST" and relative in ("/edit", "/logout"):
            answer = await self._posted(scope, receive, caller, cookie, relative == "/logout")
            if answer is not None:
                await answer(scope, receive, send)
                return
        with grants.acting(caller.principal):
            await self.router(scope, receive, send)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> Response | None:
        """What a request is refused before anyone is asked who sent it: a `Host` not in the
        allow-list (DNS rebinding); a change not sent from the viewer's own origin, or declared
        larger than the viewer reads; a read with an `Origin` outside `/mcp`'s allow-list."""
        if not _allowed(headers.get("host", ""), self.backend.allowed_hosts):
            return Response("Invalid Host header", status_code=421)
        if scope.get("method", "GET") not in ("GET", "HEAD"):
            foreign = guard.foreign_post(scope, headers, lambda o: _allowed(o, self.backend.proxied_origins))
            if foreign is not None:
                return _problem(403, "Refused: not sent by this viewer", FOREIGN.format(why=foreign))
            return _too_large() if guard.declared_too_large(headers) else None
        origin = headers.get("origin")
        if origin and not _allowed(origin, self.backend.allowed_origins):
            return Response("Invalid Origin header", status_code=403)
        return None

    async def _caller(self, scope: Scope, headers: dict[str, str], cookie: str) -> Caller | Response:
        """Who is asking — a bearer header's token, or the token of the cookie's session, checked by
        the verifier on every request (revoked, it ends the session) — or the sign-in page."""
        found: Found | None = None
        secret: str | None = None
        token: str | None
        given = headers.get("authorization")
        if given is not None:
            scheme, _, value = given.partition(" ")
            token = value.strip() if scheme.lower() == "bearer" and value.strip() else ""
        else:
            secret = _cookie_value(headers, cookie)
            found = self.sessions.find(secret) if secret else None
            token = found.token if found is not None else None
        ended = secret is not None and found is None  # signed out, idle, dropped, or another run's
        try:
            principal = await self.backend.verify(token) if token is not None else None
            closed = token is None and await self.backend.required(scope)
        except KaeruError as error:  # the tokens' store did not answer: the session stays (decision 175)
            return _login_page(_unanswered(error), status=503)
        if token is not None and principal is None:
            if found is None:
                return _login_page(REFUSED, 401)
            self.sessions.close(found.key)  # revoked, or the admin token changed: the session ends
            return _login_page(TOKEN_ENDED, 401, cookie, scope)
        if closed:
            return _login_page(self._ended(secret), 401, cookie, scope) if ended else _login_page(None, 401)
        owner = found.key if found is not None else token_digest(token) if token else ""
        return Caller(principal, found, owner)

    def _ended(self, secret: str | None) -> str:
        """What a browser whose session this viewer does not hold is told: why it was dropped, when
        the viewer dropped it for room and still knows, else every way a session ends (`ENDED`)."""
        why = self.sessions.why_ended(secret) if secret else None
        if why == "token":
            return DROPPED_FOR_TOKEN.format(kept=self.sessions.per_token)
        if why == "room":
            return DROPPED_FOR_ROOM.format(kept=self.sessions.kept)
        return ENDED

    async def _posted(
        self, scope: Scope, receive: Receive, caller: Caller, cookie: str, logout: bool
    ) -> Response | None:
        """The form of a POST to `/edit` or `/logout`, read up to `guard.BODY_LIMIT` and, from a
        signed-in session, checked for its CSRF token; left for the edit's handler, or sign-out
        done here (the session ends). Returns the answer when the request ends here."""
        body = await guard.read_body(receive)
        if body is None:
            return _too_large()
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        found = caller.found
        if found is not None and not hmac.compare_digest(form.get("csrf", "").encode(), found.session.csrf.encode()):
            return _problem(403, "Refused: an old or foreign form", STALE_FORM)
        if logout:
            if found is not None:
                self.sessions.close(found.key)
            response = RedirectResponse(f"{PREFIX}/login", status_code=303)
            _clear(response, cookie, scope)
            return response
        scope["state"]["form"] = form
        return None

    async def _login(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], cookie: str) -> None:
        """The sign-in form; a token posted by it (or given as `?token=`, the link `kaeru ui` prints)
        that the verifier accepts opens a session, whose random id becomes the `kaeru_ui_<port>`
        cookie (the session this browser had on this port ends). A HEAD of the link opens none."""
        token: str | None
        if scope.get("method") == "POST":
            body = await guard.read_body(receive)
            if body is None:
                await _too_large()(scope, receive, send)
                return
            form = parse_qs(body.decode("utf-8", "replace"))
            token = (form.get("token") or [""])[0].strip() or None
        elif scope.get("method") == "GET":
            token = Request(scope).query_params.get("token")
        else:  # HEAD (a link checker, a preview): the page's headers, no session opened
            token = None
        if token is None:
            await _login_page(None)(scope, receive, send)
            return
        try:
            refused = await self.backend.verify(token) is None
        except KaeruError as error:
            await _login_page(_unanswered(error), status=503)(scope, receive, send)
            return
        if refused:
            await _login_page("That token was refused.", status=401)(scope, receive, send)
            return
        before = _cookie_value(headers, cookie)
        previous = self.sessions.find(before) if before else None
        if previous is not None:
            self.sessions.close(previous.key)
        secret, _ = self.sessions.open(token)
        response = RedirectResponse(f"{PREFIX}/", status_code=303)
        response.set_cookie(
            cookie, secret, httponly=True, samesite="strict", path=PREFIX, secure=scope.get("scheme") == "https"
        )
        await response(scope, receive, send)


#: What a refused bearer token's page says.
REFUSED = "That token was refused. Sign in with a token below."
#: What the page says when the token a session was opened with is refused now.
TOKEN_ENDED = "Your sign-in has ended: its token was revoked, expired or changed. Sign in again with a token below."
#: What a cookie whose session this viewer does not hold, and whose reason it did not keep, is told:
#: a viewer keeps its sessions in memory, and a `kaeru ui` token is made for its run, so a browser kept
#: from an earlier run (or another vault's viewer on the same port) signs in again. A session dropped
#: for room whose reason was since dropped too (`sessions.ENDED_KEPT`) lands here, so that is named.
ENDED = (
    "Your sign-in has ended: you signed out, it went unused for 12 hours, the viewer ended it to make "
    "room for newer sign-ins, or it is from an earlier run of `kaeru ui` or another vault's viewer. Open "
    "the sign-in link `kaeru ui` printed when it started, or sign in with a token below."
)
#: What a session dropped because its token opened more than `sessions.SESSIONS_PER_TOKEN` is told:
#: the token's holder (this person's other browsers, or whoever else holds it) opened them, no one else.
DROPPED_FOR_TOKEN = (
    "Your sign-in has ended: more sign-ins were opened with the same token than the viewer keeps for "
    "one token ({kept}), and this browser's was the one used least recently. Sign in again with a token below."
)
#: What a session dropped because the viewer held `sessions.SESSIONS_KEPT` in all is told.
DROPPED_FOR_ROOM = (
    "Your sign-in has ended: the viewer keeps at most {kept} sign-ins in all, and this browser's was the "
    "one used least recently when newer ones were opened. Sign in again with a token below."
)
FOREIGN = (
    "A change is accepted only from the viewer's own pages, and {why}. Open the viewer at its own "
    "address and use its form."
)
STALE_FORM = (
    "This form was not made for your sign-in (it is from before you signed in again, or another site "
    "sent it). Reload the page and try again."
)


def cookie_name(headers: dict[str, str]) -> str:
    """The sign-in cookie for the port the browser asked (`kaeru_ui_9876`). A browser sends a
    host's cookies to all its ports: with one name, signing in to a second viewer (another vault,
    or `kaeru ui` beside `kaeru serve --http`) replaced the first's cookie, whose pages then said
    the sign-in had ended — and cleared it, signing the second out too. (It also means a server on
    another port is sent the cookie: it holds a session id that works on this viewer's `/ui` only.)"""
    host = headers.get("host", "")
    port = host.rsplit(":", 1)[1] if ":" in host and not host.endswith("]") else ""
    return f"{COOKIE}_{port}" if port.isdigit() else COOKIE


def _cookie_value(headers: dict[str, str], name: str) -> str | None:
    cookie: SimpleCookie = SimpleCookie()
    try:
        cookie.load(headers.get("cookie", ""))
    except Exception:
        return None
    morsel = cookie.get(name)
    return morsel.value if morsel is not None and morsel.value else None


def _clear(response: Response, cookie: str, scope: Scope) -> None:
    response.delete_cookie(cookie, path=PREFIX, httponly=True, samesite="strict", secure=scope.get("scheme") == "https")


def _stylesheet() -> Response:
    css = resources.files("kaeru.web").joinpath("static/style.css").read_text(encoding="utf-8")
    return Response(css, media_type="text/css", headers={"Cache-Control": "max-age=3600"})


def _unanswered(error: KaeruError) -> str:
    return f"The vault did not answer ({error.message}). Try again in a moment."


def _login_page(
    problem: str | None, status: int = 200, clear: str | None = None, scope: Scope | None = None
) -> HTMLResponse:
    """The sign-in form, saying `problem`; `clear`: the name of a cookie to delete (an ended session)."""
    response = HTMLResponse(frame.login_html(problem), status_code=status)
    if clear and scope is not None:
        _clear(response, clear, scope)
    return response


def _problem(status: int, title: str, problem: str) -> HTMLResponse:
    return HTMLResponse(frame.problem_html(title, problem), status_code=status)


def _too_large() -> HTMLResponse:
    return _problem(
        413,
        "Refused: too large",
        f"The form sent is larger than the viewer reads ({guard.BODY_LIMIT // 1024} KiB): "
        "its fields are short; shorten the text and send it again.",
    )


def ui_app(backend: Backend) -> ViewerApp:
    """The viewer, to mount at `/ui`."""
    return ViewerApp(backend)


def address(base: str, token: str | None = None) -> str:
    """The viewer's address on `base` (with a one-time login link when `token` is given)."""
    return f"{base}{PREFIX}/login?{urlencode({'token': token})}" if token else f"{base}{PREFIX}/"
