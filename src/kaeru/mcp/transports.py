"""Running the server: stdio for one agent session, streamable HTTP for several."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from kaeru.config import Settings
from kaeru.errors import KaeruError
from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.addresses import MAX_MESSAGE_BYTES, bare_host, is_loopback, listen, reachable_as, security_settings
from kaeru.mcp.heap import settle_heap
from kaeru.mcp.pipes import reader_gone, say_client_gone, serve_pipes
from kaeru.mcp.server import KaeruServer

if TYPE_CHECKING:
    # The HTTP side is imported when HTTP is served: `kaeru serve` on stdio answers `initialize`
    # without loading starlette (decision 16.O1).
    import socket

    from mcp.server.auth.provider import TokenVerifier

    from kaeru.mcp.logs import Outages, Refusals
    from kaeru.storage.base import Store

log = logging.getLogger("kaeru.http")

#: How long `GET /health` answers its last verdict again before it checks the vault anew.
HEALTH_REUSE_S = 1.0


def _vault_answers(store: Any) -> None:
    """The reads every tool depends on, one cheap indexed read of each core table (`serving_reads`);
    raises `Unavailable` when the database does not answer, `Internal` when a table cannot be read."""
    from kaeru.storage.health import serving_reads

    with store.read() as session:
        serving_reads(session)


def run_stdio(kaeru: KaeruServer) -> None:
    """Serve one MCP session over this process's stdin/stdout until the client closes it, or until
    SIGTERM or SIGINT; then close the store (decision 16.I1) and return, so the process exits 0."""

    kaeru.registry.serial = True
    kaeru.registry.warms = True
    if kaeru.registry.loaded:
        settle_heap()

    async def serve() -> None:
        # On Windows always the SDK's own transport: its reader is a thread, where the event loop's
        # `connect_read_pipe` cannot be relied on for a pipe handle.
        if sys.platform != "win32" and await serve_pipes(kaeru):
            return
        from mcp.server.stdio import stdio_server

        # stdin a terminal (or Windows): the SDK's own transport, which moves fd 1 aside while it
        # serves; a duplicate of it still tells whether anyone reads the answers.
        wire = os.dup(1)
        kaeru.registry.admits = lambda: not reader_gone(wire)
        try:
            async with stdio_server() as (read_stream, write_stream):
                await kaeru.server.run(read_stream, write_stream, kaeru.server.create_initialization_options())
        except* (BrokenPipeError, ConnectionResetError):  # it ends at the write that failed
            say_client_gone()
        finally:
            kaeru.registry.admits = lambda: False
            os.close(wire)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            # A signal ends the session where it waits (a tool call already running in its worker
            # thread finishes first), instead of raising wherever the main thread happens to be.
            loop = asyncio.get_running_loop()

            def stop() -> None:
                group.cancel_scope.cancel()
                # On a terminal the SDK reads stdin in a worker thread that no cancellation reaches:
                # if the session has not ended a moment later, close the store here and leave
                # without waiting for that read.
                loop.call_later(STOP_GRACE_SECONDS, exit_now)

            def exit_now() -> None:
                # A call still running (a long import) is left as a kill would leave it: its open
                # transaction rolls back, and a chunked job resumes when run again (decision 15.P2).
                if kaeru.registry.running == 0 and not kaeru.registry.warming:
                    kaeru.store.close()
                os._exit(0)

            if not kaeru.registry.loaded:
                # The heap is settled once the tools are built, and then only when no call is
                # running: the full collection that settling starts with (a walk over everything
                # start-up imported) is paid neither before `initialize` nor inside the first answers,
                # and covers the service layer too (decisions 16.O1, 16.O3). `kaeru serve` keeps the
                # collector off until then; `initialize` and pings allocate little.
                def settle() -> None:
                    # The building starts at `notifications/initialized` (decision 16.S1): a session
                    # that ends at once may close the loop before it is done; nothing is left to settle.
                    try:
                        loop.call_soon_threadsafe(_settle_when_idle, kaeru.registry, loop, 0)
                    except RuntimeError:  # the event loop is closed
                        pass

                kaeru.registry.settle = settle
            undo = _stop_on_signals(loop, stop)
            try:
                await serve()
            finally:
                undo()

    try:
        anyio.run(main)
    finally:
        kaeru.registry.wait_loaded(STOP_GRACE_SECONDS)
        kaeru.store.close()


def _stop_on_signals(loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> Callable[[], None]:
    """`stop` run on `loop` at SIGTERM or SIGINT; returns what takes the handlers away again.

    Windows' event loops have no `add_signal_handler` (NotImplementedError, and `kaeru serve` ended
    in that traceback before it answered anything): there `signal.signal` takes the signals, its
    handler running in the main thread — the loop's — and handing `stop` to the loop (the loop's
    handlers given back if it took one signal and refused the next). A handler Python did not install
    (`signal.getsignal` answered None: set from C) cannot be put back: the signal's default action is."""
    # What held each signal before the loop took it: the loop, giving one back, leaves the default.
    before = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS}
    taken: list[signal.Signals] = []
    try:
        for signum in _STOP_SIGNALS:
            loop.add_signal_handler(signum, stop)
            taken.append(signum)
    except NotImplementedError:
        for sig in taken:
            loop.remove_signal_handler(sig)

        def handler(signum: int, frame: Any) -> None:
            loop.call_soon_threadsafe(stop)

        for signum in _STOP_SIGNALS:
            signal.signal(signum, handler)

        def restore() -> None:
            for signum, was in before.items():
                signal.signal(signum, signal.SIG_DFL if was is None else was)

        return restore

    def remove() -> None:
        for signum in _STOP_SIGNALS:
            loop.remove_signal_handler(signum)

    return remove


#: How long the settling of the heap waits, in turns of `_SETTLE_TURN` seconds, for a moment with no
#: call running before it settles anyway (a client that never pauses must not keep the collector off).
_SETTLE_TURNS = 40
_SETTLE_TURN = 0.05


def _settle_when_idle(registry: ToolRegistry, loop: asyncio.AbstractEventLoop, turn: int) -> None:
    """`settle_heap` on the event loop at the first turn with no tool call running (the answers
    written) and no warm-up (decision 269) once a first call has been answered, or after
    `_SETTLE_TURNS` turns whatever runs.

    The tools are built from `notifications/initialized` on (decision 16.S1), usually before the
    client's first call: settling then would put its full collection in that call's way."""
    if (registry.running or registry.warming or not registry.answered) and turn < _SETTLE_TURNS:
        loop.call_later(_SETTLE_TURN, _settle_when_idle, registry, loop, turn + 1)
    elif turn == 0:
        loop.call_later(_SETTLE_TURN, _settle_when_idle, registry, loop, 1)
    else:
        settle_heap()


#: What ends a server cleanly: the store is closed (the WAL checkpointed and, by the last process
#: on the vault, removed) before the process exits 0.
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
#: How long a stop signal waits for the session to end by itself before the process leaves anyway.
STOP_GRACE_SECONDS = 1.0


def http_app(
    kaeru: KaeruServer,
    settings: Settings,
    host: str,
    port: int,
    verifier: TokenVerifier | None = None,
    refusals: Refusals | None = None,
    outages: Outages | None = None,
) -> Any:
    """The ASGI app: `/mcp` (streamable HTTP, stateless so any server process can take any call),
    and `/ui`, the web viewer, checked as `/mcp` is (`kaeru.mcp.ui.viewer`, decision 19.W3), always
    served: `/` leads to it, as `kaeru ui`'s does (a person who opened the server's address got 404).

    Bearer tokens are checked by `verifier` — by default the vault's tokens and `KAERU_AUTH_TOKEN`
    (`VaultTokens`); a deployment passes its identity provider's `TokenVerifier` instead, issuing
    the scopes and claim `principal_of` reads (decision 15.K3). Requests either refuses are logged
    through `refusals`, and tool calls answered `unavailable` through `outages` (`kaeru.mcp.logs`;
    by default ones of the app's own).
    """
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Mount, Route

    from kaeru.mcp.bearer import BearerAuth, VaultTokens
    from kaeru.mcp.gate import RequestGate

    security = security_settings(settings, host, port)
    app: Starlette = kaeru.server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=security,
        host=host,
        max_request_body_size=MAX_MESSAGE_BYTES,
    )

    failing: list[str] = []  # what the last failed health check said; empty while it passes
    checking = anyio.Lock()
    verdict: list[tuple[float, int, str]] = []  # the last check's (when, status, body)

    async def health(_: Any) -> PlainTextResponse:
        """`ok` when the vault answers the reads every tool depends on, else 503: a load balancer kept
        sending calls to a server whose PostgreSQL was gone, or whose tables could not be read, each
        to be answered `unavailable` or `internal`. The reason is not said here (no token is asked,
        and it names the database): the operator's log says it, once when the check starts failing
        and once when it passes again (a balancer asks every few seconds), and `kaeru doctor` too.

        A verdict younger than `HEALTH_REUSE_S` is answered again, and one check runs at a time (the
        others wait for its verdict): `/health` asks no token, and a flood of it must not take the
        store's connections from the tools."""
        async with checking:
            if not verdict or time.monotonic() - verdict[0][0] >= HEALTH_REUSE_S:
                verdict[:] = [(time.monotonic(), *await _checked())]
        return PlainTextResponse(verdict[0][2], status_code=verdict[0][1])

    async def _checked() -> tuple[int, str]:
        try:
            await anyio.to_thread.run_sync(_vault_answers, kaeru.store)
        except KaeruError as exc:
            said = f"{exc.code}: {exc.message}"
            if not failing or failing[-1] != said:
                log.error("health check failing: %s", said)
                failing[:] = [said]
            why = "the server's log and kaeru doctor say why"
            return 503, f"{exc.code}: the vault does not answer the tools' reads ({why})"
        if failing:
            log.info("health check passes again")
            failing.clear()
        return 200, "ok"

    app.router.routes.append(Route("/health", health))
    app.router.routes.append(Route("/", _to_the_viewer))
    from kaeru.mcp.bearer import LoggedVerifier, with_client
    from kaeru.mcp.logs import Outages, Refusals
    from kaeru.mcp.ui import viewer

    refusals = refusals or Refusals(log)
    outages = outages or Outages(log)
    if verifier is not None:
        ui = viewer(kaeru, settings, host, port, LoggedVerifier(verifier, refusals), None)
        app.router.routes.append(Mount("/ui", app=with_client(ui, refusals)))
        gated = BearerAuth(app, verifier, None, refusals)
    else:
        tokens = VaultTokens(kaeru.store, settings.auth_token, settings.actor)
        ui = viewer(kaeru, settings, host, port, LoggedVerifier(tokens, refusals), tokens.refuses_tokenless)
        app.router.routes.append(Mount("/ui", app=with_client(ui, refusals)))
        gated = BearerAuth(app, tokens, tokens.refuses_tokenless, refusals)
    return _saying_outages(RequestGate(gated, security, MAX_MESSAGE_BYTES, refusals), outages)


async def _to_the_viewer(_: Any) -> Any:
    """`/`: the viewer's address (a temporary redirect, as `kaeru ui` answers it)."""
    from starlette.responses import RedirectResponse

    return RedirectResponse(VIEWER_PATH, status_code=307)


#: Where `http_app` serves the web viewer (`kaeru.web.app.PREFIX`, not imported before its first request).
VIEWER_PATH = "/ui/"


def _saying_outages(app: Any, outages: Outages) -> Any:
    """`app`, each request served with its tool calls' `unavailable` answers counted in `outages`
    (`faults.outages_said`)."""
    from kaeru.mcp.faults import outages_said

    async def saying(scope: Any, receive: Any, send: Any) -> None:
        with outages_said(outages):
            await app(scope, receive, send)

    return saying


def run_http(kaeru: KaeruServer, settings: Settings, host: str, port: int) -> None:
    """Serve streamable HTTP on host:port until interrupted.

    Raises:
        ValueError: a non-loopback address without `KAERU_AUTH_TOKEN` or a vault token.
    """
    import uvicorn

    from kaeru.mcp.bearer import has_tokens, registration
    from kaeru.mcp.peers import owners_known

    host = bare_host(host)
    vault_tokens = has_tokens(kaeru.store)
    if vault_tokens:
        _warn_of_an_actors_token(kaeru.store, settings.actor)
    if not is_loopback(host) and not settings.auth_token and not vault_tokens:
        raise ValueError(
            f"binding {host} exposes the vault beyond this machine: set KAERU_AUTH_TOKEN or add a token "
            "(kaeru token add NAME) first"
        )
    if not settings.auth_token and not vault_tokens and not owners_known():
        log.warning(
            "this system cannot tell which account a loopback connection comes from: with no token set, any "
            "local account can connect and is served as this server's admin; set KAERU_AUTH_TOKEN or add a "
            "token (kaeru token add NAME) to keep the others out"
        )
    tls = tls_files(settings)
    sock = listen(host, port)
    port = sock.getsockname()[1]
    from kaeru.mcp.logs import Outages, Refusals

    refusals, outages = Refusals(log), Outages(log)
    app = http_app(kaeru, settings, host, port, refusals=refusals, outages=outages)
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
        log_config=None,  # its lines go through `kaeru.mcp.logs`, with a time and a level
        access_log=False,
        lifespan="on",
        http=PromptRequests,  # a connection that asks nothing is closed (mcp/connections.py)
        # SIGTERM waited for every open request, a stalled one too, and a service manager then
        # killed the server, leaving its `-wal` (decision 407): what is still running is cancelled.
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        timeout_keep_alive=KEEP_ALIVE_S,
        # The client address is the connection's own: a forwarded header must not name another
        # (decision 178 asks the kernel who owns it).
        proxy_headers=False,
        ssl_certfile=tls[0] if tls else None,
        ssl_keyfile=tls[1] if tls else None,
    )
    server = uvicorn.Server(config)
    kaeru.registry.settle = settle_heap
    settle_heap()
    base = f"{'https' if tls else 'http'}://{reachable_as(host)}:{port}"
    url = f"{base}/mcp"
    announce = (
        f"kaeru-memory serving MCP over streamable HTTP at {url}",
        f"the web viewer at {base}{VIEWER_PATH}"
        + (" (sign in with a token)" if settings.auth_token or vault_tokens else ""),
        *registration(url, bool(settings.auth_token), vault_tokens),
    )
    kaeru.registry.warms = True
    announced = lambda: print(*announce, sep="\n", file=sys.stderr, flush=True)  # noqa: E731

    def stopping() -> None:
        refusals.flush()
        outages.flush()

    serve_until_stopped(server, sock, kaeru.store, announced, kaeru.registry, stopping)


def _warn_of_an_actors_token(store: Store, actor: str) -> None:
    """Warn when a vault token bears the name this server's admin actor writes as (`KAERU_ACTOR`):
    history cannot tell the two apart. `kaeru token add` refuses its own process's actor name, but a
    server run with another `KAERU_ACTOR`, or a token made before that check, is only seen here."""
    with store.read() as session:
        named = [record.name for record in session.list_tokens() if record.name.casefold() == actor.casefold()]
    for name in named:
        log.warning(
            "the vault token %r is named as this server's admin actor (KAERU_ACTOR=%s): history and audit cannot "
            "tell its holder's writes from the admin's (and the CLI's); revoke it and add one under another name "
            "(kaeru token revoke %s; kaeru token add NAME)",
            name,
            actor,
            name,
        )


def tls_files(settings: Settings) -> tuple[Path, Path] | None:
    """The certificate and key to serve HTTPS with (decision 180), checked before anything listens:
    a missing file, a key that does not match, or a file that is not PEM is said in one line.

    Raises:
        ValueError: the pair cannot be loaded.
    """
    if settings.tls_cert is None or settings.tls_key is None:
        return None
    import ssl

    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(settings.tls_cert, settings.tls_key)
    except (OSError, ssl.SSLError) as exc:
        why = (
            "they are not a PEM certificate and its private key"
            if isinstance(exc, ssl.SSLError)
            else exc.strerror or exc
        )
        raise ValueError(
            f"cannot serve HTTPS with the certificate {settings.tls_cert} and key {settings.tls_key}: {why} "
            "(both PEM files, the key matching the certificate)"
        ) from None
    return settings.tls_cert, settings.tls_key


def serve_until_stopped(
    server: Any,
    sock: socket.socket,
    store: Store,
    announce: Callable[[], None],
    registry: ToolRegistry | None = None,
    stopping: Callable[[], None] | None = None,
) -> None:
    """`announce` the server, run the uvicorn `server` on `sock` until SIGTERM or SIGINT, then close
    `store` (the WAL checkpointed, and removed by the last process on the vault) and return: exit 0.

    uvicorn stops on either signal, then raises it again for the handler set before it ran: by
    default death by SIGTERM (the store never closed, `-wal`/`-shm` left, exit 143) or click's
    "Aborted!" (exit 1). Ours, set before the announcement, only asks uvicorn to stop — also before
    uvicorn has taken the signals, while it starts (decision 160). A warm-up under way in `registry`
    ends first (decision 269); `stopping` runs once serving has ended (the refusals' and `unavailable`
    answers' last counts are logged). The log's last line says the stop was clean: `stopped on SIGTERM; vault closed`."""

    stopped_by: list[str] = []

    def stop(signum: int, frame: Any) -> None:
        stopped_by.append(signal.Signals(signum).name)
        server.should_exit = True

    previous = {signum: signal.signal(signum, stop) for signum in _STOP_SIGNALS}
    try:
        try:
            announce()
            server.run(sockets=[sock])
        finally:
            sock.close()
            if stopping is not None:
                stopping()
            if registry is not None:
                registry.wait_loaded(STOP_GRACE_SECONDS)
            store.close()
        # Said after the store closed, so that a clean stop can be told from a crash in the log.
        log.info("stopped%s; vault closed", f" on {stopped_by[0]}" if stopped_by else "")
    finally:
        # Only once the store is closed: a second Ctrl-C during its last checkpoint must not cut it.
        for signum, handler in previous.items():
            signal.signal(signum, handler)
