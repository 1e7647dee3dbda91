"""The schema fuzzer of `bench.fuzz`, sent over a real transport as raw JSON-RPC (decision 241).

`bench.fuzz` speaks to the server through the SDK's in-memory client, which never puts a call on a
wire: the arguments are not encoded as JSON, and a lone surrogate in them is replaced before the
server sees it. A client on the wire — another SDK, a script — sends `"\\ud800"` as JSON allows, and a
refusal the server could not write killed the stdio server (decision 239) where the in-memory fuzzer
saw nothing. Here the same drawn and mutated calls go to `kaeru serve` (stdio) or `kaeru serve
--http` in a subprocess as JSON text with every non-ASCII character escaped, as a JavaScript
client writes it, and the same invariants are checked, plus: every request gets its answer, the
answer is JSON, and the server is still running after each call.

Over HTTP a body the SDK's parser refuses (a lone surrogate, JSON nested past its limit) is answered
with a JSON-RPC error, not a tool result (decision 69): such an answer to such a call counts as a
rejection that must change nothing; any other JSON-RPC error is a finding.

`python -m bench.fuzz_wire --transport stdio|http --calls 2000 [--backend postgres]`;
`tests/fuzz/test_fuzz_wire.py` runs a short pass of each transport on every backend.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from bench.fuzz import Report, Target, fuzz

#: The version both transports are spoken at: the handshake version the contract tests use.
PROTOCOL_VERSION = "2025-06-18"
#: An answer line may carry a whole 4M-character note back.
MAX_LINE_BYTES = 256 << 20
#: JSON-RPC errors the SDK's HTTP parser gives a body it cannot read (parse error, invalid request,
#: invalid params).
PARSER_REFUSALS = (-32700, -32600, -32602)


@dataclass
class WireResult:
    """What `bench.fuzz.run` reads of a tool call's answer. `refused_by_transport`: the SDK's parser
    refused the body (no tool ran): `run` checks only that the vault did not change."""

    structured_content: Any
    is_error: bool
    refused_by_transport: bool = False


class ServerGone(Exception):
    """The server process exited, or stopped answering in JSON."""


def _unreadable_by_parser(arguments: Any) -> bool:
    """Whether JSON text of `arguments` holds what a strict parser refuses: a lone surrogate (the
    server's own test, `domain.surrogates.lone_surrogate`), or nesting deeper than the SDK's parser goes."""
    from kaeru.domain.surrogates import lone_surrogate

    return lone_surrogate(arguments) is not None or _nesting(arguments) > 100


def _nesting(value: Any) -> int:
    """How deep `value`'s objects and arrays nest."""
    if isinstance(value, dict):
        return 1 + max(map(_nesting, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_nesting, value), default=0)
    return 0


def _as_result(answer: dict[str, Any], arguments: dict[str, Any], http: bool) -> WireResult:
    if "result" in answer:
        result = answer["result"]
        return WireResult(result.get("structuredContent"), bool(result.get("isError")))
    error = answer.get("error") or {}
    if http and error.get("code") in PARSER_REFUSALS and _unreadable_by_parser(arguments):
        # The SDK refused the body before any tool ran: a rejection, checked to change nothing.
        return WireResult(None, True, refused_by_transport=True)
    raise ServerGone(f"JSON-RPC error instead of a tool result: {json.dumps(error)[:300]}")


class StdioWire:
    """`kaeru serve` over stdio: one request line out, lines in until the one with its id."""

    def __init__(self, process: Process) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)
        self.next_id = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            try:
                line = await self.stdout.receive_until(b"\n", MAX_LINE_BYTES)
            except (anyio.EndOfStream, anyio.IncompleteRead) as exc:
                raise ServerGone(f"stdout closed (exit {self.process.returncode})") from exc
            try:
                message = json.loads(line)
            except ValueError as exc:
                raise ServerGone(f"a line that is not JSON: {line[:200]!r}") from exc
            if isinstance(message, dict) and message.get("id") == self.next_id:
                return message

    async def send(self, message: dict[str, Any]) -> None:
        await self.stdin.send(json.dumps(message).encode("ascii") + b"\n")


class HttpWire:
    """`kaeru serve --http`: one POST a request, stateless."""

    def __init__(self, url: str, process: subprocess.Popen[bytes]) -> None:
        import httpx2

        self.url = url
        self.process = process
        self.client = httpx2.AsyncClient(timeout=120)
        self.next_id = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
        }
        try:
            answer = await self.client.post(self.url, content=body.encode("ascii"), headers=headers)
        except Exception as exc:
            raise ServerGone(f"POST failed ({type(exc).__name__}: {exc}); exit {self.process.poll()}") from exc
        try:
            message: dict[str, Any] = answer.json()
        except ValueError as exc:
            raise ServerGone(f"HTTP {answer.status_code}, not JSON: {answer.text[:200]!r}") from exc
        return message


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@asynccontextmanager
async def serving(transport: str, env: Mapping[str, str], log: Path) -> AsyncIterator[StdioWire | HttpWire]:
    """`kaeru serve` on `transport` with `env` (a vault's), spoken to raw; stopped after."""
    command = [sys.executable, "-m", "kaeru", "serve"]
    if transport == "stdio":
        with log.open("wb") as sink:
            process = await anyio.open_process(command, env=dict(env), stderr=sink)
        try:
            wire = StdioWire(process)
            capabilities: dict[str, Any] = {}
            hello = {"protocolVersion": PROTOCOL_VERSION, "capabilities": capabilities, "clientInfo": {"name": "fuzz"}}
            await wire.request("initialize", hello)
            await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            yield wire
        finally:
            if process.stdin is not None:
                await process.stdin.aclose()
            with anyio.move_on_after(15):
                await process.wait()
            if process.returncode is None:
                process.kill()
        return
    port = _free_port()
    with log.open("wb") as sink:
        popen = subprocess.Popen([*command, "--http", "--port", str(port)], env=dict(env), stdout=sink, stderr=sink)
    try:
        await _wait_healthy(port, popen, log)
        wire_http = HttpWire(f"http://127.0.0.1:{port}/mcp", popen)
        yield wire_http
        await wire_http.client.aclose()
    finally:
        popen.terminate()
        try:
            popen.wait(15)
        except subprocess.TimeoutExpired:
            popen.kill()


async def _wait_healthy(port: int, popen: subprocess.Popen[bytes], log: Path) -> None:
    import httpx2

    deadline = time.monotonic() + 60
    async with httpx2.AsyncClient(timeout=2) as client:
        while time.monotonic() < deadline:
            if popen.poll() is not None:
                raise ServerGone(f"kaeru serve --http exited with {popen.returncode}: {log.read_text()[-2000:]}")
            try:
                if (await client.get(f"http://127.0.0.1:{port}/health")).status_code == 200:
                    return
            except Exception:
                pass
            await anyio.sleep(0.1)
    raise ServerGone(f"kaeru serve --http did not answer /health in 60 s: {log.read_text()[-2000:]}")


async def wire_target(wire: StdioWire | HttpWire, digest: Any) -> Target:
    """A `bench.fuzz.Target` over `wire`: the tools' schemas from its own `tools/list`."""
    listing = await wire.request("tools/list", {})
    tools = listing["result"]["tools"]
    http = isinstance(wire, HttpWire)

    async def call_tool(name: str, arguments: dict[str, Any]) -> WireResult:
        answer = await wire.request("tools/call", {"name": name, "arguments": arguments})
        return _as_result(answer, arguments, http)

    return Target(
        call_tool=call_tool,
        input_schemas={t["name"]: t["inputSchema"] for t in tools},
        output_schemas={t["name"]: t.get("outputSchema") or {} for t in tools},
        digest=digest,
    )


async def fuzz_over_wire(
    transport: str, env: Mapping[str, str], settings: Any, log: Path, *, calls: int, seed: int, timeout: float
) -> Report:
    """One pass of about `calls` calls: a server on `transport` over the vault `env` and `settings`
    name, fuzzed."""
    from kaeru.export.archive import content_digest
    from kaeru.storage.factory import open_store

    store = open_store(settings)
    try:
        async with serving(transport, env, log) as wire:
            target = await wire_target(wire, lambda: content_digest(store))
            per_tool = max(1, math.ceil(calls / 2 / len(target.input_schemas)))
            report = await fuzz(target, per_tool=per_tool, seed=seed, timeout=timeout)
        return report
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    from bench.vaults import new_vault

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--calls", type=int, default=2000, help="calls to make (half valid-shaped, half mutated)")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30.0, help="per-call timeout, seconds")
    parser.add_argument("--workdir", help="where the temporary vault goes")
    args = parser.parse_args(argv)
    vault = new_vault(args.backend, "fuzzwire", Path(args.workdir) if args.workdir else None, keep=False)
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")} | vault.env()
        with tempfile.TemporaryDirectory() as logs:
            log = Path(logs) / "server.log"
            report = anyio.run(
                lambda: fuzz_over_wire(
                    args.transport, env, vault.settings(), log, calls=args.calls, seed=args.seed, timeout=args.timeout
                )
            )
            if report.findings:
                print(log.read_text(errors="replace")[-3000:], file=sys.stderr)
    finally:
        vault.drop()
    print(report.table())
    print(
        f"\n{report.calls} calls over {args.transport} on {args.backend} (seed {args.seed}) in {report.seconds:.0f} s; "
        f"rejected calls digest-checked: {report.rejected_checked}; findings: {len(report.findings)}"
    )
    for finding in report.findings[:50]:
        print(f"FINDING {finding.tool} [{finding.variant}] {finding.problem}\n    {finding.arguments}")
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
