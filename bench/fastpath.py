"""Before/after of the `tools/call` fast path (decision 63) over real stdio. A script, not a test.

Builds a SQLite vault from the bench corpus, starts two server subprocesses on it that differ only
in the fast path — `fast` as `kaeru serve` builds it, `sdk` with the middleware removed so the
SDK's own pipeline answers — and drives both with raw newline JSON-RPC (no client library). Every
round calls each op once on `fast`, on `sdk` and in process (`ToolRegistry.run`, what the handler
does minus the transport), the three in each of their six orders in turn, so all see the same
noise. Reports medians of the paired differences (stdio − in-process, and sdk − fast), each
server's CPU per request, and the in-process cost of the two pipelines alone (no I/O).

    PYTHONPATH=src python -m bench.fastpath [--notes 3000] [--calls 300]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.build import build
from bench.corpus import MAIN, CorpusBuilder
from bench.measure import RawStdioClient
from bench.vaults import BenchVault, new_vault

LAYERS = ("fast", "sdk", "in_process")
#: Every order of the three, in turn: a layer that follows another on the same query finds its pages
#: warm, so a rotation (where `sdk` follows `fast` two rounds in three) favours one side by ~50–100 µs.
ORDERS = tuple(itertools.permutations(LAYERS))
OPS = ("search_broad", "search_selective", "read")


class Pipe(RawStdioClient):
    """One server subprocess spoken to in raw JSON-RPC lines, with its CPU time readable."""

    def __init__(self, env: dict[str, str], sdk_only: bool, errlog: Any):
        command = [sys.executable, "-m", "bench.fastpath", "serve", *(["--sdk-only"] if sdk_only else [])]
        super().__init__(env, errlog, command)
        self.version = self.protocol_version or ""

    def cpu_seconds(self) -> float:
        """The server process's user + system CPU so far (from /proc, in clock ticks)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _serve(sdk_only: bool) -> None:
    """`kaeru serve` (stdio) as the CLI builds it, optionally without the fast path."""
    from kaeru.config import Settings
    from kaeru.mcp.fastpath import FastToolCalls
    from kaeru.mcp.server import build_server
    from kaeru.mcp.transports import run_stdio
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    settings = Settings.from_env()
    kaeru = build_server(Service(open_store(settings), settings))
    if sdk_only:
        kaeru.server.middleware = [m for m in kaeru.server.middleware if not isinstance(m, FastToolCalls)]
    gc.collect()
    gc.freeze()
    run_stdio(kaeru)


def _median_us(values: list[int]) -> float:
    return statistics.median(values) / 1000


def _quartiles_us(values: list[int]) -> str:
    q = statistics.quantiles(values, n=4)
    return f"[{q[0] / 1000:.0f}, {q[2] / 1000:.0f}]"


def measure(notes: int, calls: int, warmup: int) -> None:
    from kaeru.mcp.server import build_server
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    vault: BenchVault = new_vault("sqlite", "fastpath", None, keep=False)
    try:
        settings = vault.settings()
        service = Service(open_store(settings), settings)
        builder = CorpusBuilder(notes)
        ids = build(service, builder, "bulk", quiet=True)
        registry = build_server(service).registry
        registry.serial = True  # as `kaeru serve` on stdio runs calls
        work = {
            "search_broad": [{"initiatives": [MAIN], "text": w} for w in builder.corpus.broad],
            "search_selective": [{"initiatives": [MAIN], "text": w} for w in builder.corpus.selective],
            "read": [{"initiative": MAIN, "node": n} for k, n in enumerate(ids) if builder.initiative_of(k) == MAIN],
        }
        tool = {"search_broad": "search", "search_selective": "search", "read": "read"}
        env = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")} | vault.env()
        samples: dict[str, dict[str, list[int]]] = {op: {layer: [] for layer in LAYERS} for op in OPS}
        sizes: dict[str, list[int]] = {op: [] for op in OPS}
        pings: dict[str, list[int]] = {"fast": [], "sdk": []}
        with open(os.devnull, "w") as errlog:
            pipes = {"fast": Pipe(env, False, errlog), "sdk": Pipe(env, True, errlog)}
            cpu0: dict[str, float] = {}
            try:
                for i in range(warmup + calls):
                    if i == warmup:
                        cpu0 = {name: pipe.cpu_seconds() for name, pipe in pipes.items()}
                    for op in OPS:
                        args = work[op][i % len(work[op])]
                        for layer in ORDERS[i % len(ORDERS)]:
                            start = time.perf_counter_ns()
                            if layer == "in_process":
                                envelope = registry.run(tool[op], args)
                            else:
                                answer = pipes[layer].call_tool(tool[op], args)
                                envelope = answer["structuredContent"]
                            elapsed = time.perf_counter_ns() - start
                            if envelope["state"] != "ok":
                                raise RuntimeError(f"{op} via {layer}: {envelope}")
                            if i >= warmup:
                                samples[op][layer].append(elapsed)
                                if layer == "in_process":
                                    sizes[op].append(len(json.dumps(envelope, separators=(",", ":"))))
                    for name in ("fast", "sdk") if i % 2 else ("sdk", "fast"):
                        start = time.perf_counter_ns()
                        pipes[name].request("ping", {})
                        if i >= warmup:
                            pings[name].append(time.perf_counter_ns() - start)
                cpu = {name: pipe.cpu_seconds() - cpu0[name] for name, pipe in pipes.items()}
                version = pipes["fast"].version
                shaped = {op: pipeline(registry.run(tool[op], work[op][0]), version, 2000) for op in OPS}
            finally:
                for pipe in pipes.values():
                    pipe.close()
        service.store.close()
    finally:
        vault.drop()

    print(f"vault: {notes:,} notes (SQLite); {calls} measured rounds after {warmup} warm-up; protocol {version}")
    print("times in µs; medians, [quartiles] of the paired differences")
    header = f"{'op':<17} {'envelope':>9} {'in-proc':>8} {'fast−in-proc':>20} {'sdk−in-proc':>20} {'sdk−fast':>16}"
    print(header)
    for op in OPS:
        s = samples[op]
        fast_d = [f - p for f, p in zip(s["fast"], s["in_process"], strict=True)]
        sdk_d = [f - p for f, p in zip(s["sdk"], s["in_process"], strict=True)]
        saved = [b - a for a, b in zip(s["fast"], s["sdk"], strict=True)]
        print(
            f"{op:<17} {statistics.median(sizes[op]) / 1000:>7.1f}KB {_median_us(s['in_process']):>8.0f}"
            f" {_median_us(fast_d):>8.0f} {_quartiles_us(fast_d):>11} {_median_us(sdk_d):>8.0f} {_quartiles_us(sdk_d):>11}"
            f" {_median_us(saved):>5.0f} {_quartiles_us(saved):>10}"
        )
    print(f"ping: fast {_median_us(pings['fast']):.0f}, sdk {_median_us(pings['sdk']):.0f}")
    for op, (sdk_us, fast_us) in shaped.items():
        print(f"pipeline only, in process ({op}): sdk {sdk_us:.1f}, fast {fast_us:.1f}")
    requests = calls * (len(OPS) + 1)
    print(
        f"server CPU per request (all ops and pings): fast {cpu['fast'] / requests * 1e6:.0f},"
        f" sdk {cpu['sdk'] / requests * 1e6:.0f}"
    )


def pipeline(envelope: dict[str, Any], version: str, rounds: int) -> tuple[float, float]:
    """Median µs of the SDK's in-process steps around one `tools/call` vs the fast path's, no I/O.

    The SDK's, as `ServerRunner._on_request` takes them: surface validation of the params, the
    typed params model, the handler's `CallToolResult`, its dump, the per-version
    validate-and-re-dump, the final copy. The fast path's: its checks and `wire_result`. Both
    serialise the envelope's JSON text, so that is in both.
    """
    import mcp_types as types
    from mcp_types import methods

    from kaeru.mcp.adapter import result
    from kaeru.mcp.fastpath import wire_result

    params = {"name": "search", "arguments": {"initiatives": [MAIN], "text": "word"}}

    def sdk() -> dict[str, Any]:
        methods.validate_client_request("tools/call", version, params)
        typed = types.CallToolRequestParams.model_validate(params, by_name=False)
        assert typed.arguments is not None
        dumped = result(envelope).model_dump(by_alias=True, mode="json", exclude_none=True)
        return dict(methods.serialize_server_result("tools/call", version, dumped))

    def fast() -> dict[str, Any]:
        assert params.keys() <= {"name", "arguments"} and isinstance(params.get("arguments"), dict)
        return dict(wire_result(envelope))

    assert json.dumps(sdk()) == json.dumps(fast())
    times: dict[str, list[int]] = {"sdk": [], "fast": []}
    for i in range(rounds):
        for name, fn in (("sdk", sdk), ("fast", fast)) if i % 2 else (("fast", fast), ("sdk", sdk)):
            start = time.perf_counter_ns()
            fn()
            times[name].append(time.perf_counter_ns() - start)
    return _median_us(times["sdk"]), _median_us(times["fast"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="(internal) the measured server")
    serve.add_argument("--sdk-only", action="store_true")
    parser.add_argument("--notes", type=int, default=3000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    ns = parser.parse_args(argv)
    if ns.command == "serve":
        _serve(ns.sdk_only)
    else:
        measure(ns.notes, ns.calls, ns.warmup)


if __name__ == "__main__":
    main()
