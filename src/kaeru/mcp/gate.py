"""What `/mcp` refuses before any tool runs — a Host or Origin outside the allow-list, a GET (no
event stream is ever sent), a body that is not JSON, a body over `MAX_MESSAGE_BYTES` — answered as a JSON-RPC error that names the value
and the fix (decision 227).

The SDK refuses the same requests with a plain-text body ("Invalid Host header"), and its client,
which reads a JSON-RPC error from a non-2xx answer but nothing else, tells the agent only "Server
returned an error response": a teammate who typed the server's host name could not know that
`KAERU_ALLOWED_HOSTS` was the answer. This gate checks by the SDK's own rules (the same allow-list,
exact or `name:*` for any port; Content-Type starting `application/json`; the declared length), so
the SDK's checks behind it are left to requests this cannot see (a chunked body with no length).

Loaded with the HTTP side only (decision 16.O1)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("kaeru.http")

#: JSON-RPC "Invalid Request": the request never reached a method.
_INVALID_REQUEST = -32600


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

    def __init__(self, app: ASGIApp, security: TransportSecuritySettings, max_body: int):
        self.app = app
        self.hosts = list(security.allowed_hosts)
        self.origins = list(security.allowed_origins)
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path", "").startswith("/mcp"):
            refusal = self.refusal(scope)
            if refusal is not None:
                from starlette.responses import JSONResponse

                status, message = refusal
                log.warning("refused %s %s: %s", scope.get("method"), scope.get("path"), message)
                body = {"jsonrpc": "2.0", "id": None, "error": {"code": _INVALID_REQUEST, "message": message}}
                allow = {"Allow": "POST, DELETE"} if status == 405 else None
                await JSONResponse(body, status_code=status, headers=allow)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """(status, message) for a request `/mcp` will not serve, else None."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        host = headers.get("host", "")
        if not _allowed(host, self.hosts):
            return 421, (
                f"this server does not answer to the Host {host!r} (a guard against DNS rebinding): reach it as "
                f"{_names(self.hosts)}, or add that name to KAERU_ALLOWED_HOSTS where the server runs"
            )
        origin = headers.get("origin")
        if origin and not _allowed(origin, self.origins):
            return 403, (
                f"requests from the web page at {origin!r} are refused (a guard against DNS rebinding); "
                "add its host to KAERU_ALLOWED_HOSTS where the server runs to allow them"
            )
        if scope.get("method") == "GET":
            # The server is stateless (decision 231): a GET stream would never carry a message,
            # so it is refused as MCP's transport says a server without one must refuse it.
            return 405, "this server sends no event stream: POST each JSON-RPC request to /mcp"
        if scope.get("method") != "POST":
            return None
        kind = headers.get("content-type")
        if kind is None or not kind.lower().startswith("application/json"):
            return 400, f"a request to /mcp is JSON-RPC: its Content-Type must be application/json, not {kind!r}"
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body:
            return 413, (
                f"the request is {int(length):,} bytes, over the {self.max_body // (1024 * 1024)} MiB this server "
                "takes in one call (a text field holds at most 4,000,000 characters): send it in several calls"
            )
        return None
