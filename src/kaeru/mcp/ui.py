"""The web viewer's side of the server (issue 19): `/ui` over this server's tools and token checks,
mounted by `transports.http_app`, and served alone by `kaeru ui` (`run_ui`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from kaeru.config import Settings
from kaeru.mcp.addresses import admitted_hosts, listen, security_settings
from kaeru.mcp.bearer import SCOPE_READ, VaultTokens, principal_of
from kaeru.mcp.heap import settle_heap
from kaeru.mcp.server import KaeruServer
from kaeru.mcp.transports import serve_until_stopped

if TYPE_CHECKING:
    from mcp.server.auth.provider import TokenVerifier

    from kaeru.service.grants import Principal


def viewer(
    kaeru: KaeruServer,
    settings: Settings,
    host: str,
    port: int,
    verifier: TokenVerifier,
    required: Callable[[Any], Awaitable[bool]] | None,
) -> Any:
    """The web viewer (`kaeru.web`, mounted at `/ui`) over this server's tools, checked as `/mcp` is:
    the same Host allow-list (and, for reads, Origin's; a POST must come from the viewer's own
    origin exactly, decision 347), the same verifier, and each accepted token run as the same
    principal `BearerAuth` makes of it (decision 19.W3). `required` None: a token is always needed.

    The viewer (and through it the service layer) is imported at its first request, not when the
    server starts, so `kaeru serve --http` listens sooner (decision 19.W6)."""
    security = security_settings(settings, host, port)

    async def verify(token: str) -> Principal | None:
        access = await verifier.verify_token(token) if token else None
        if access is None or SCOPE_READ not in access.scopes:
            return None
        return principal_of(access)

    async def always(scope: Any) -> bool:
        return True

    app: Any = None

    async def lazily(scope: Any, receive: Any, send: Any) -> None:
        nonlocal app
        if app is None:
            from kaeru.web import Backend, ui_app

            app = ui_app(
                Backend(
                    call=kaeru.registry.envelope,
                    verify=verify,
                    required=required or always,
                    allowed_hosts=list(security.allowed_hosts),
                    allowed_origins=list(security.allowed_origins),
                    proxied_origins=[
                        f"{scheme}://{name}" for name in admitted_hosts(settings) for scheme in ("http", "https")
                    ],
                    local_actor=settings.actor,
                )
            )
        await app(scope, receive, send)

    return lazily


def run_ui(kaeru: KaeruServer, settings: Settings, port: int, out: Callable[[str], None]) -> None:
    """`kaeru ui`: the viewer alone on 127.0.0.1:`port` (0: any free port) until interrupted.

    A one-off token made for this run (the local admin, actor `KAERU_ACTOR`) is the login link
    `out` is given; a person's vault token signs in too (decision 19.W5).
    """
    import secrets

    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import RedirectResponse
    from starlette.routing import Mount, Route

    from kaeru.web.app import address

    host = "127.0.0.1"
    once = secrets.token_urlsafe(32)
    tokens = VaultTokens(kaeru.store, once, settings.actor)

    async def home(_: Request) -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=307)

    app = Starlette(routes=[Route("/", home), Mount("/ui", app=viewer(kaeru, settings, host, port, tokens, None))])
    sock = listen(host, port)  # listening before the address is printed: a browser opened at once waits
    bound = sock.getsockname()[1]
    from kaeru.mcp.connections import (
        GRACEFUL_SHUTDOWN_S,
        KEEP_ALIVE_S,
        PromptRequests,
        quiet_accept_errors,
        raise_descriptor_limit,
    )

    raise_descriptor_limit()
    quiet_accept_errors()
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        proxy_headers=False,
        http=PromptRequests,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        timeout_keep_alive=KEEP_ALIVE_S,
    )
    server = uvicorn.Server(config)
    kaeru.registry.settle = settle_heap

    def announce() -> None:
        out(f"kaeru viewer at {address(f'http://{host}:{bound}')}")
        out(f"open (signs you in): {address(f'http://{host}:{bound}', once)}")

    serve_until_stopped(server, sock, kaeru.store, announce)
