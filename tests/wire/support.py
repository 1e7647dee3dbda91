"""Helpers for the over-the-wire tests: real server subprocesses, free ports, file barriers, workers.

Imported by the tests, and also run as a script (`python support.py worker|inserter …`) to act as an
independent OS process on a vault: it imports nothing from `tests`, only `kaeru`, and reads the
vault from the environment exactly like `kaeru serve` does.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SUPPORT = Path(__file__).resolve()
LOOPBACK = "127.0.0.1"
STARTUP_SECONDS = 30.0
BARRIER_SECONDS = 60.0
POLL_SECONDS = 0.02


# --- environment and processes ------------------------------------------------------------------


def subprocess_env(vault_env: Mapping[str, str], **extra: str) -> dict[str, str]:
    """This process's environment pointed at one vault.

    Every inherited `KAERU_*` variable is dropped first, so a developer's own `KAERU_DATABASE_URL`
    or `KAERU_AUTH_TOKEN` cannot leak into a test server.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}
    env.update(vault_env)
    env.update(extra)
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (bind port 0, read it back)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def stop(proc: subprocess.Popen[Any], grace: float = 10.0) -> None:
    """Terminate one child process we started, and reap it (kill it if it ignores SIGTERM)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(grace)


def utc_stamp() -> str:
    """Now as RFC 3339 UTC with microseconds, e.g. `2026-01-02T03:04:05.123456Z`."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def wait_until(predicate: Any, timeout: float, what: str) -> None:
    """Poll `predicate` until it is true; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(POLL_SECONDS)


# --- HTTP servers --------------------------------------------------------------------------------


@dataclass
class HttpServer:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def _healthy(server: HttpServer) -> bool:
    if server.proc.poll() is not None:
        raise AssertionError(f"kaeru serve --http exited with {server.proc.returncode}:\n{server.output()}")
    try:
        with urllib.request.urlopen(f"{server.base}/health", timeout=2) as response:
            return bool(response.status == 200 and response.read().strip() == b"ok")
    except (OSError, urllib.error.URLError):
        return False


KAERU_SERVE = (sys.executable, "-m", "kaeru", "serve")


def _server_argv(command: tuple[str, ...], env: Mapping[str, str], spawn: bool) -> list[str]:
    """`command` as it is started: `python -m kaeru …` forked from the worker's zygote through its
    launcher (a process standing for the server: its signals forwarded, its exit status the
    server's), or anew with `spawn` (and see `tests/cli/zygote_client.py`, `server_argv`)."""
    from tests.cli.zygote_client import server_argv  # here: this file also runs as a script

    return server_argv(command, env, spawn=spawn)


def _count_served_cpu() -> None:
    from tests.cli.zygote_client import count_served_cpu

    count_served_cpu()


@contextmanager
def http_server(
    env: Mapping[str, str], log_dir: Path, serve: tuple[str, ...] = KAERU_SERVE, *, spawn: bool = False
) -> Iterator[HttpServer]:
    """`kaeru serve --http` (or another `serve` command taking the same options) on 127.0.0.1 as a
    subprocess, ready (GET /health is ok), always stopped. Forked from the worker's zygote unless
    `spawn` (a test that needs the server's own pid, its start-up, a fresh interpreter)."""
    port = free_port()
    argv = _server_argv((*serve, "--http", "--host", LOOPBACK, "--port", str(port)), env, spawn)
    with serving_http(argv, env, log_dir / f"kaeru-http-{port}.log", port) as server:
        yield server


@contextmanager
def serving_http(argv: Sequence[str], env: Mapping[str, str], log: Path, port: int) -> Iterator[HttpServer]:
    """`argv`, an HTTP server listening on `port` of 127.0.0.1, started with its output in `log`,
    ready (GET /health is ok), always stopped (`http_server`; a test that starts it its own way)."""
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            list(argv), env=dict(env), stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT
        )
    server = HttpServer(proc, port, log)
    try:
        wait_until(lambda: _healthy(server), STARTUP_SECONDS, f"GET /health on port {port}")
        yield server
    finally:
        stop(proc)
        _count_served_cpu()


def raw_post(url: str, payload: Any, headers: Mapping[str, str] | None = None) -> tuple[int, str]:
    """One raw JSON-RPC POST (no SDK): (status, body text). Custom `Host`/`Origin` headers are kept."""
    data = json.dumps(payload).encode()
    all_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    all_headers.update(headers or {})
    request = urllib.request.Request(url, data=data, headers=all_headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return int(response.status), response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return int(error.code), error.read().decode(errors="replace")


def initialize_request(request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "kaeru-wire-tests", "version": "1"},
        },
    }


def tools_call_request(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A raw JSON-RPC `tools/call` of `name` with `arguments`."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


# --- MCP clients over either transport -----------------------------------------------------------


def stdio_params(env: Mapping[str, str], *, spawn: bool = False) -> Any:
    """The SDK's parameters for `kaeru serve` over stdio in `env`: forked from the worker's zygote
    through its launcher, whose pipes become the server's (or started anew with `spawn`)."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import get_default_environment

    started = {**get_default_environment(), **env}  # what the SDK starts it in
    command, *args = _server_argv(KAERU_SERVE, started, spawn)
    return StdioServerParameters(command=command, args=args, env=dict(env))


@asynccontextmanager
async def connect(transport: str, env: Mapping[str, str], log_dir: Path, *, spawn: bool = False) -> AsyncIterator[Any]:
    """An SDK `Client` connected to a fresh `kaeru serve` subprocess over `stdio` or `http` (forked
    from the worker's zygote unless `spawn`)."""
    from mcp import Client

    if transport == "stdio":
        try:
            async with Client(stdio_params(env, spawn=spawn)) as client:
                yield client
        finally:
            _count_served_cpu()
    elif transport == "http":
        with http_server(env, log_dir, spawn=spawn) as server:
            async with Client(server.url) as client:
                yield client
    else:
        raise ValueError(transport)


def structured(result: Any) -> dict[str, Any]:
    """The envelope of a tool result (every kaeru tool answers with structured content)."""
    envelope = result.structured_content
    assert isinstance(envelope, dict), f"no structured content in {result!r}"
    return envelope


async def call_ok(client: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call a tool and insist it was not rejected; return the envelope."""
    result = await client.call_tool(tool, args)
    envelope = structured(result)
    assert not result.is_error and envelope["state"] != "rejected", f"{tool} {args} → {envelope}"
    return envelope


# --- independent worker processes ----------------------------------------------------------------


def worker_command(*args: str) -> list[str]:
    return [sys.executable, str(SUPPORT), *args]


def spawn(args: list[str], env: Mapping[str, str], log: Path) -> subprocess.Popen[str]:
    """A worker subprocess: stdout piped (its JSON result), stderr to `log`."""
    with log.open("w") as sink:
        return subprocess.Popen(
            args, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=sink, text=True
        )


def release_barrier(ready_dir: Path, count: int, go: Path, procs: list[subprocess.Popen[str]]) -> None:
    """Wait until `count` workers are ready (each made a file in `ready_dir`), then let them all go."""

    def all_ready() -> bool:
        for proc in procs:
            if proc.poll() is not None:
                raise AssertionError(f"a worker exited before the barrier with {proc.returncode}")
        return len(list(ready_dir.iterdir())) >= count

    wait_until(all_ready, BARRIER_SECONDS, f"{count} workers to reach the barrier")
    go.touch()


def collect(procs: list[subprocess.Popen[str]], logs: list[Path], timeout: float = 60.0) -> list[dict[str, Any]]:
    """Each worker's JSON result; fails with the worker's stderr if one crashed."""
    results: list[dict[str, Any]] = []
    try:
        for proc, log in zip(procs, logs, strict=True):
            out, _ = proc.communicate(timeout=timeout)
            assert proc.returncode == 0, f"worker failed ({proc.returncode}):\n{log.read_text()}"
            results.append(json.loads(out))
    finally:
        for proc in procs:
            stop(proc)
    return results


def _service() -> Any:
    from kaeru.config import Settings
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    settings = Settings.from_env()
    return Service(open_store(settings), settings)


def _call(service: Any, operation: str, args: dict[str, Any]) -> dict[str, Any]:
    """One mutation through the service, answered as the API envelope (as the MCP adapter does)."""
    from kaeru.api import envelope as env
    from kaeru.errors import KaeruError

    try:
        from kaeru.api.requests import parse

        outcome, replayed = getattr(service, operation)(parse(operation, args))
        return env.mutation_envelope(operation, outcome, replayed=replayed, request_id=args.get("request_id"))
    except KaeruError as error:
        return env.rejected_envelope(operation, env.MUTATION_KIND, error, args.get("request_id"))


def _worker(ns: argparse.Namespace) -> None:
    service = _service()
    with service.store.read() as session:  # open a connection now, not after the barrier
        session.all_initiatives()
    (Path(ns.ready) / ns.name).touch()
    go = Path(ns.go)
    wait_until(go.exists, BARRIER_SECONDS, "the go signal")
    envelope = _call(service, ns.operation, json.loads(ns.args))
    service.store.close()
    print(json.dumps(envelope))


def _inserter(ns: argparse.Namespace) -> None:
    """Insert notes until told to stop (or `max` reached); report how many were applied."""
    service = _service()
    stop_file = Path(ns.stop)
    ready = Path(ns.ready)
    applied = 0
    rejected: list[dict[str, Any]] = []
    for i in range(ns.max):
        if stop_file.exists():
            break
        envelope = _call(service, "note", {"initiative": ns.initiative, "text": f"{ns.text} late{i}"})
        if envelope["state"] == "applied":
            applied += 1
        else:
            rejected.append(envelope)
        if i == 0:
            ready.touch()
        time.sleep(ns.pause)  # leave CPU to the pager on a small machine; not used for ordering
    service.store.close()
    print(json.dumps({"applied": applied, "rejected": rejected}))


def _serve(ns: argparse.Namespace) -> None:
    """`kaeru serve` with a pinned clock and entropy, and the `tools/call` fast path optional.

    Two of these on copies of one vault make the same ids and timestamps for the same calls, so
    their answers can be compared byte for byte. On exit, writes how many calls the fast path
    answered to `--report` (null when it was removed).
    """
    import itertools
    import random
    from datetime import timedelta

    from kaeru.config import Settings
    from kaeru.mcp.fastpath import FastToolCalls
    from kaeru.mcp.server import build_server
    from kaeru.mcp.transports import run_http, run_stdio
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    settings = Settings.from_env()
    start = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    ticks = itertools.count()
    rng = random.Random(ns.seed)
    service = Service(
        open_store(settings),
        settings,
        clock=lambda: start + timedelta(milliseconds=next(ticks)),
        entropy=rng.randbytes,
    )
    kaeru = build_server(service)
    fast = next(m for m in kaeru.server.middleware if isinstance(m, FastToolCalls))
    if ns.sdk_only:
        kaeru.server.middleware = [m for m in kaeru.server.middleware if m is not fast]
    elif ns.fast_versions is not None:
        fast.versions = frozenset(v for v in ns.fast_versions.split(",") if v)
    try:
        if ns.http:
            run_http(kaeru, settings, ns.host, ns.port)
        else:
            run_stdio(kaeru)
    finally:
        Path(ns.report).write_text(json.dumps({"answered": None if ns.sdk_only else fast.answered}))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    worker = sub.add_parser("worker", help="one mutation, released by a file barrier")
    worker.add_argument("--operation", required=True)
    worker.add_argument("--args", required=True, help="the call's arguments as JSON")
    worker.add_argument("--ready", required=True, help="directory to announce readiness in")
    worker.add_argument("--go", required=True, help="file whose appearance releases the worker")
    worker.add_argument("--name", required=True)
    inserter = sub.add_parser("inserter", help="insert matching notes until a stop file appears")
    inserter.add_argument("--initiative", required=True)
    inserter.add_argument("--text", required=True)
    inserter.add_argument("--ready", required=True, help="file made after the first insert")
    inserter.add_argument("--stop", required=True)
    inserter.add_argument("--max", type=int, default=2000)
    inserter.add_argument("--pause", type=float, default=0.01)
    serve = sub.add_parser("serve", help="kaeru serve, pinned clock and entropy, fast path optional")
    serve.add_argument("--seed", type=int, default=7)
    serve.add_argument("--sdk-only", action="store_true", help="remove the tools/call fast path")
    serve.add_argument("--fast-versions", default=None, help="the fast path's allow-list, comma-separated")
    serve.add_argument("--report", required=True, help="file to write the fast path's answer count to")
    serve.add_argument("--http", action="store_true")
    serve.add_argument("--host", default=LOOPBACK)
    serve.add_argument("--port", type=int, default=0)
    ns = parser.parse_args(argv)
    {"worker": _worker, "inserter": _inserter, "serve": _serve}[ns.command](ns)


if __name__ == "__main__":
    main()
