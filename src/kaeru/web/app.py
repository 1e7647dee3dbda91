"""The viewer's ASGI app, mounted at `/ui`: the checks every request passes, then the pages.

Checks, in order (decision 19.W3): the `Host` and `Origin` allow-lists of `/mcp` (DNS rebinding; a
cross-site form post carries a foreign `Origin`); then who is asking — a bearer token from the
`Authorization` header or from the `kaeru_ui_<port>` cookie set by the login form (HttpOnly,
SameSite=Strict; one per port, as a browser shares cookies between the ports of a host) — verified by the same verifier as `/mcp`, and the request runs as that token's
principal (`grants.acting`), so the tools it calls see exactly the grants an MCP call with that token
sees, and the edits are audited with the token's name as actor. Without a token, a request is served
as the local admin only when the server would serve `/mcp` so (no admin token, no vault token).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http.cookies import SimpleCookie
from importlib import resources
from urllib.parse import parse_qs, urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route, Router
from starlette.types import Receive, Scope, Send

from kaeru.errors import KaeruError
from kaeru.service import grants
from kaeru.service.grants import Principal
from kaeru.web import frame, node, pages
from kaeru.web.graph import Call

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
    #: Who the local admin is (shown on the pages; the audit uses `KAERU_ACTOR` itself).
    local_actor: str = "agent"


def _allowed(value: str, patterns: list[str]) -> bool:
    return any(value == p or (p.endswith(":*") and value.startswith(p[:-1])) for p in patterns)


class ViewerApp:
    """The checks (module docstring) around the page router."""

    def __init__(self, backend: Backend):
        self.backend = backend
        self.router = Router(
            routes=[
                Route("/", pages.handler(backend, pages.initiatives_page)),
                Route("/graph", pages.handler(backend, pages.graph_page)),
                Route("/node", pages.handler(backend, node.node_page)),
                Route("/board", pages.handler(backend, pages.board_page)),
                Route("/timeline", pages.handler(backend, pages.timeline_page)),
                Route("/reviews", pages.handler(backend, pages.reviews_page)),
                Route("/rules", pages.handler(backend, pages.rules_page)),
                Route("/search", pages.handler(backend, pages.search_page)),
                Route("/recall", pages.handler(backend, pages.recall_page)),
                Route("/edit", node.edit_handler(backend), methods=["POST"]),
                Route("/logout", _logout, methods=["POST"]),
            ]
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.router(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        if not _allowed(headers.get("host", ""), self.backend.allowed_hosts):
            await Response("Invalid Host header", status_code=421)(scope, receive, send)
            return
        origin = headers.get("origin")
        if origin and not _allowed(origin, self.backend.allowed_origins):
            await Response("Invalid Origin header", status_code=403)(scope, receive, send)
            return
        path = scope.get("path", "")
        relative = path[len(scope.get("root_path", "")) :] if path.startswith(scope.get("root_path", "")) else path
        if relative == "/static/style.css":
            await _stylesheet()(scope, receive, send)
            return
        if relative == "/login":
            await self._login(scope, receive, send)
            return
        cookie = cookie_name(headers)
        token = _token_of(headers, cookie)
        try:
            principal = await self.backend.verify(token) if token is not None else None
            closed = token is None and await self.backend.required(scope)
        except KaeruError as error:  # the tokens' store did not answer: the cookie stays (decision 175)
            await _login_page(_unanswered(error), status=503)(scope, receive, send)
            return
        if token is not None and principal is None:
            await _login_page(REFUSED_KEPT, status=401, clear=cookie)(scope, receive, send)
            return
        if closed:
            await _login_page(None, status=401)(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        with grants.acting(principal):
            await self.router(scope, receive, send)

    async def _login(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The sign-in form; a token posted by it (or given as `?token=`, the link `kaeru ui` prints)
        that the verifier accepts becomes the `kaeru_ui_<port>` cookie."""
        request = Request(scope, receive)
        cookie = cookie_name({k.lower(): v for k, v in request.headers.items()})
        token: str | None
        if request.method == "POST":
            form = parse_qs((await request.body()).decode("utf-8", "replace"))
            token = (form.get("token") or [""])[0].strip() or None
        else:
            token = request.query_params.get("token")
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
        response = RedirectResponse(f"{PREFIX}/", status_code=303)
        response.set_cookie(cookie, token, httponly=True, samesite="strict", path=PREFIX)
        await response(scope, receive, send)


#: What a refused cookie's page says: a viewer's token is made for its run, so a bookmark kept from
#: an earlier run (or another vault's viewer on the same port) is refused after a restart.
REFUSED_KEPT = (
    "That token was refused: it may be from an earlier run of `kaeru ui` or another vault's viewer. "
    "Open the sign-in link `kaeru ui` printed when it started, or sign in with a token below."
)


def cookie_name(headers: dict[str, str]) -> str:
    """The sign-in cookie for the port the browser asked (`kaeru_ui_9876`). A browser sends a
    host's cookies to all its ports: with one name, signing in to a second viewer (another vault,
    or `kaeru ui` beside `kaeru serve --http`) replaced the first's cookie, whose pages then said
    the token was refused — and cleared it, signing the second out too."""
    host = headers.get("host", "")
    port = host.rsplit(":", 1)[1] if ":" in host and not host.endswith("]") else ""
    return f"{COOKIE}_{port}" if port.isdigit() else COOKIE


def _token_of(headers: dict[str, str], name: str) -> str | None:
    given = headers.get("authorization")
    if given is not None:
        scheme, _, value = given.partition(" ")
        return value.strip() if scheme.lower() == "bearer" and value.strip() else ""
    cookie = SimpleCookie()
    try:
        cookie.load(headers.get("cookie", ""))
    except Exception:
        return None
    morsel = cookie.get(name)
    return morsel.value if morsel is not None and morsel.value else None


async def _logout(request: Request) -> Response:
    response = RedirectResponse(f"{PREFIX}/login", status_code=303)
    response.delete_cookie(cookie_name({k.lower(): v for k, v in request.headers.items()}), path=PREFIX)
    return response


def _stylesheet() -> Response:
    css = resources.files("kaeru.web").joinpath("static/style.css").read_text(encoding="utf-8")
    return Response(css, media_type="text/css", headers={"Cache-Control": "max-age=3600"})


def _unanswered(error: KaeruError) -> str:
    return f"The vault did not answer ({error.message}). Try again in a moment."


def _login_page(problem: str | None, status: int = 200, clear: str | None = None) -> HTMLResponse:
    """The sign-in form, saying `problem`; `clear`: the name of a refused cookie to delete."""
    response = HTMLResponse(frame.login_html(problem), status_code=status)
    if clear:
        response.delete_cookie(clear, path=PREFIX)
    return response


def ui_app(backend: Backend) -> ViewerApp:
    """The viewer, to mount at `/ui`."""
    return ViewerApp(backend)


def address(base: str, token: str | None = None) -> str:
    """The viewer's address on `base` (with a one-time login link when `token` is given)."""
    return f"{base}{PREFIX}/login?{urlencode({'token': token})}" if token else f"{base}{PREFIX}/"
