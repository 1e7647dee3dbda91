"""Who may call the HTTP server: bearer tokens — the vault's own and `KAERU_AUTH_TOKEN`, or an
identity provider's through the SDK's `TokenVerifier` — checked before any request reaches `/mcp`
(decisions 15.K1–15.K3), and what a request is told when they cannot be checked (decision 175).

Loaded with the HTTP side only: `kaeru serve` on stdio never imports it (decision 16.O1)."""

from __future__ import annotations

import hmac
import logging
import shlex
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from kaeru.errors import KaeruError
from kaeru.mcp.faults import unavailable_said
from kaeru.mcp.logs import Refusals, client_of
from kaeru.mcp.peers import same_account

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken, TokenVerifier
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from kaeru.service.grants import Principal
    from kaeru.storage.base import Store


#: Scopes of the access tokens kaeru's verifier hands out, and what an identity provider plugged in
#: through `TokenVerifier` grants with (decision 15.K3): `kaeru:read` to call at all, `kaeru:write`
#: for mutations, `kaeru:all` for every initiative; otherwise the `kaeru_initiatives` claim (a list
#: of names) limits what it sees (no claim and no `kaeru:all`: nothing).
SCOPE_READ = "kaeru:read"
SCOPE_WRITE = "kaeru:write"
SCOPE_ALL = "kaeru:all"
INITIATIVES_CLAIM = "kaeru_initiatives"

log = logging.getLogger("kaeru.http")

#: What the operator's log names a token check answered `unavailable` as, where a tool's name goes
#: (`faults.unavailable_said`): the vault's tokens could not be read, so no tool ran.
TOKEN_CHECK = "a token check"


@dataclass(frozen=True)
class Refused:
    """A token refused with a reason its holder is told (`said`) and the operator's log says
    (`logged`): a vault token past its expiry."""

    said: str
    logged: str


class VaultTokens:
    """The MCP SDK's `TokenVerifier` over the vault's tokens (`kaeru token add`) and the admin token
    `KAERU_AUTH_TOKEN` (every initiative, write; its actor is `KAERU_ACTOR`)."""

    def __init__(self, store: Store, admin_token: str | None, admin_actor: str):
        self.store = store
        self.admin = admin_token.encode() if admin_token else None
        self.admin_actor = admin_actor

    async def verify_token(self, token: str) -> AccessToken | None:
        checked = await self.check(token)
        return checked if not isinstance(checked, Refused) else None

    async def check(self, token: str) -> AccessToken | Refused | None:
        """`verify_token`'s answer, except that a vault token past its expiry is why it is refused
        (said to whoever presents it: only its holder can), where `verify_token` says None."""
        from mcp.server.auth.provider import AccessToken

        if self.admin is not None and hmac.compare_digest(token.encode(), self.admin):
            return AccessToken(token=token, client_id=self.admin_actor, scopes=[SCOPE_READ, SCOPE_WRITE, SCOPE_ALL])
        from kaeru.service import grants
        from kaeru.service.runtime import vault_now

        # `last_used` and the expiry by the vault's clock, as every write of it (decision 404).
        record = await anyio.to_thread.run_sync(grants.check, self.store, token, vault_now(self.store))
        if record is None:
            return None
        if isinstance(record, grants.Expired):
            return Refused(expired_message(record.name, record.at), f"expired token {record.name!r}")
        scopes = [SCOPE_READ] if record.read_only else [SCOPE_READ, SCOPE_WRITE]
        claims: dict[str, Any] = {}
        if record.initiatives is None:
            scopes.append(SCOPE_ALL)
        else:
            claims[INITIATIVES_CLAIM] = list(record.initiatives)
        return AccessToken(token=token, client_id=record.name, scopes=scopes, claims=claims)

    async def refuses_tokenless(self, scope: Scope) -> bool:
        """True when the request of `scope`, made without a token, is refused: an admin token is set,
        the vault holds tokens, or it comes from another account on this machine (decision 178)."""
        if self.admin is not None or not same_account(scope):
            return True
        return await anyio.to_thread.run_sync(has_tokens, self.store)


def has_tokens(store: Store) -> bool:
    with store.read() as session:
        return session.has_tokens()


def registration(url: str, admin_token: bool, vault_tokens: bool) -> tuple[str, ...]:
    """How `serve --http` tells a person to register it with a client. A server that wants a token
    is registered by `kaeru setup … --token-env VAR`, which makes the client read the token from VAR
    where it runs: a token never goes into the client's file (decision 19.I4), and a command that
    spelled it out — or a `$VAR` the shell expands — put it there. Once the vault holds tokens each
    person registers with their own (`KAERU_TOKEN`), even where `KAERU_AUTH_TOKEN` is set too:
    everyone told to use the admin token wrote as one actor, the admin."""
    quoted = shlex.quote(url)
    if not admin_token and not vault_tokens:
        return (f"register it with:  claude mcp add --transport http kaeru {quoted}",)
    variable, whose = (
        ("KAERU_TOKEN", "set KAERU_TOKEN where the client runs to that person's token from `kaeru token add NAME`")
        if vault_tokens
        else ("KAERU_AUTH_TOKEN", "the client reads KAERU_AUTH_TOKEN where it runs")
    )
    return (
        f"register it with:  kaeru setup claude-code --http {quoted} --token-env {variable} --write",
        f"  every request needs a bearer token: {whose} (other clients: kaeru setup --help)",
    )


def principal_of(access: AccessToken) -> Principal:
    """The caller an access token stands for: named by its subject (else its client id)."""
    from kaeru.domain.naming import canonical
    from kaeru.service.grants import Principal

    granted: frozenset[str] | None
    if SCOPE_ALL in access.scopes:
        granted = None
    else:
        raw = (access.claims or {}).get(INITIATIVES_CLAIM)
        granted = frozenset(canonical(str(n)) for n in raw) if isinstance(raw, list) else frozenset()
    return Principal(access.subject or access.client_id, granted, SCOPE_WRITE not in access.scopes)


_INVALID = "a valid bearer token is required"
_REFUSED = (
    "a valid bearer token is required: a request without one is served only from the account that runs "
    "the server, on loopback, while neither KAERU_AUTH_TOKEN nor a vault token is set"
)


def expired_message(name: str, at: str) -> str:
    """What the holder of an expired token is told (in ASCII: it goes into a header too)."""
    return (
        f"token {name!r} expired at {at}: ask the vault's owner to renew it "
        f"(kaeru token renew {name} --expires 30d) or for a new one (kaeru token add)"
    )


#: The JSON-RPC error code of a refused token (the server-error range JSON-RPC leaves to servers).
UNAUTHORIZED_CODE = -32001


def _unauthorized(token_given: bool, why: str | None = None) -> ASGIApp:
    """401 for a missing or refused token; `why` is the verifier's reason when it gave one (an expired
    vault token), else the general one. The reason is a JSON-RPC error, which the official clients
    show: an OAuth-style body (`{"error": "unauthorized", …}`) reached an agent as "Server returned
    an error response" and nothing more, after a `kaeru token revoke` or the first `kaeru token add`
    on a tokenless server (decision 408). RFC 6750's own place for it is the `WWW-Authenticate`
    header, which says it too; `error_description` stays in the body as well."""
    from starlette.responses import JSONResponse

    said = why or (_INVALID if token_given else _REFUSED)
    quoted = said.replace("\\", "\\\\").replace('"', '\\"')
    challenge = 'Bearer realm="kaeru"' + (
        f', error="invalid_token", error_description="{quoted}"' if token_given else ""
    )
    return JSONResponse(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": UNAUTHORIZED_CODE, "message": f"unauthorized: {said}"},
            "error_description": said,
        },
        status_code=401,
        headers={"WWW-Authenticate": challenge},
    )


class BearerAuth:
    """Refuses every request to the MCP endpoint without `Authorization: Bearer <token>` that the
    verifier accepts, and runs an accepted one as its principal (decision 15.K3).

    Any `TokenVerifier` fits (an identity provider's, in place of `VaultTokens`); the accepted token is
    also where the SDK's `get_access_token()` finds it. `refuses_tokenless` (None: always) says
    whether a request without a token is refused; `VaultTokens.refuses_tokenless` serves one as the
    local admin only with no admin token and no vault token, from this account (decision 178), on
    loopback (`run_http`).
    """

    def __init__(
        self,
        app: ASGIApp,
        verifier: TokenVerifier,
        refuses_tokenless: Callable[[Scope], Awaitable[bool]] | None = None,
        refusals: Refusals | None = None,
    ):
        self.app = app
        self.verifier = verifier
        self.refuses_tokenless = refuses_tokenless
        #: Where refused requests are logged (`kaeru.mcp.logs`), bounded.
        self.refusals = refusals or Refusals(log)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path", "").startswith("/mcp"):
            tokens = [value for name, value in scope.get("headers") or [] if name == b"authorization"]
            # Two `Authorization` headers are refused: which one counted followed the order a proxy
            # added them in (decision 476).
            given = tokens[0] if len(tokens) == 1 else (b"" if tokens else None)
            try:
                checked = await self._verified(given) if given is not None else None
                open_door = (
                    given is None and self.refuses_tokenless is not None and not await self.refuses_tokenless(scope)
                )
            except KaeruError as error:  # the store the tokens live in did not answer
                unavailable_said(TOKEN_CHECK, error)
                await _cannot_check(error)(scope, receive, send)
                return
            if open_door:
                await self.app(scope, receive, send)
                return
            access = checked if not isinstance(checked, Refused) else None
            if access is None or SCOPE_READ not in access.scopes:
                why = checked.said if isinstance(checked, Refused) else None
                self.refusals.refused(client_of(scope), "/mcp", _reason(tokens, checked))
                await _unauthorized(given is not None, why)(scope, receive, send)
                return
            from mcp.server.auth.middleware.auth_context import auth_context_var
            from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

            from kaeru.service import grants

            user = auth_context_var.set(AuthenticatedUser(access))
            try:
                with grants.acting(principal_of(access)):
                    await self.app(scope, receive, send)
            finally:
                auth_context_var.reset(user)
            return
        await self.app(scope, receive, send)

    async def _verified(self, given: bytes) -> AccessToken | Refused | None:
        """The access the header's token grants, None, or why the vault's verifier refused it."""
        token = bearer_token(given)
        return await checked_by(self.verifier, token) if token is not None else None


def bearer_token(given: bytes) -> str | None:
    """The token of an `Authorization` header's value, or None when it is no `Bearer <token>`."""
    scheme, _, value = given.partition(b" ")
    token = value.strip().decode("latin-1")
    return token if scheme.lower() == b"bearer" and token else None


async def checked_by(verifier: TokenVerifier, token: str) -> AccessToken | Refused | None:
    """`verifier`'s answer to `token`: the vault's says why it refuses an expired token."""
    if isinstance(verifier, VaultTokens):
        return await verifier.check(token)
    return await verifier.verify_token(token)


def _reason(headers: list[bytes], checked: AccessToken | Refused | None) -> str:
    """Why a request to `/mcp` was refused, as the operator's log says it: never the token. A revoked
    token is an unknown one (only its digest was kept, and it is gone)."""
    if not headers:
        return "no token"
    if len(headers) > 1:
        return "two Authorization headers"
    if bearer_token(headers[0]) is None:
        return NOT_BEARER
    return _token_reason(checked)


#: Why a request whose `Authorization` header is no `Bearer <token>` was refused.
NOT_BEARER = "not a bearer token"


def _token_reason(checked: AccessToken | Refused | None) -> str:
    """Why a token the verifier answered `checked` to is refused (both paths say it alike)."""
    if isinstance(checked, Refused):
        return checked.logged
    return "unknown token" if checked is None else f"token {checked.client_id!r} without the {SCOPE_READ} scope"


class LoggedVerifier:
    """A `TokenVerifier` that logs the tokens it refuses, for the viewer (`/ui`): an unknown or
    expired token, and one without the `kaeru:read` scope (which the viewer refuses too: it is
    refused here, None). The client's address is the request's that `with_client` keeps while `/ui`
    answers it."""

    def __init__(self, verifier: TokenVerifier, refusals: Refusals):
        self.verifier = verifier
        self.refusals = refusals

    async def verify_token(self, token: str) -> AccessToken | None:
        checked = await checked_by(self.verifier, token)
        if isinstance(checked, Refused) or checked is None or SCOPE_READ not in checked.scopes:
            request = _ui_request.get()
            self.refusals.refused(request.client if request else "an unknown address", "/ui", _token_reason(checked))
            if request is not None:
                request.logged = True
            return None
        return checked


@dataclass
class _UiRequest:
    """The request `/ui` is answering: its client's address, and whether its refusal is logged."""

    client: str
    logged: bool = False


_ui_request: ContextVar[_UiRequest | None] = ContextVar("kaeru_ui_request", default=None)


def with_client(app: ASGIApp, refusals: Refusals) -> ASGIApp:
    """`app` with the request it answers kept for `LoggedVerifier`; and a request the viewer refuses
    (401) whose `Authorization` header is no `Bearer <token>` — the verifier never sees one — logged
    to `refusals` as `/mcp` logs it."""

    async def keeping(scope: Scope, receive: Receive, send: Send) -> None:
        request = _UiRequest(client_of(scope))
        given = [value for name, value in scope.get("headers") or [] if name == b"authorization"]
        not_bearer = len(given) == 1 and bearer_token(given[0]) is None

        async def said(message: Message) -> None:
            refused = message["type"] == "http.response.start" and message.get("status") == 401
            if refused and not_bearer and not request.logged:
                refusals.refused(request.client, "/ui", NOT_BEARER)
                request.logged = True
            await send(message)

        held = _ui_request.set(request)
        try:
            await app(scope, receive, said if scope["type"] == "http" else send)
        finally:
            _ui_request.reset(held)

    return keeping


def _cannot_check(error: KaeruError) -> Any:
    """503 for a request whose token could not be checked (the vault did not answer: a PostgreSQL
    server restarting or gone, a locked file), its body the JSON-RPC error the SDK's client raises
    with this message — not a 500 and a traceback in the log (decision 175)."""
    from starlette.responses import JSONResponse

    issue = {"code": error.code, "message": error.message, "retryable": error.retryable}
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32603, "message": f"{error.code}: {error.message}", "data": issue},
    }
    return JSONResponse(body, status_code=503, headers={"Retry-After": "1"})
