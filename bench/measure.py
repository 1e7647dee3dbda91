"""Timing the four hot calls at several layers, interleaved so every layer sees the same noise.

Layers:

* `raw_fts` — the bare FTS5 query on an apsw connection to the same file, with the MATCH string the
  service builds (`fts_match(query_tokens(text), …, scope)`): what the search's ranking costs. On PostgreSQL,
  the same idea over the GIN-indexed `tsv` column with `tsquery_literal`.
* `raw_fts_bare` — the same raw query for the words alone, without the `scope : (…)` initiative
  filter the service's MATCH carries (SQLite, when `fts_match` takes a scope): a floor that answers
  a different question (every initiative, row ids only).
* `raw_fts_page` — the hand-written SQLite query that returns what the search returns: the words
  matched bare, restricted to the initiative through `memberships`, ranked by bm25, top 10, with
  the stored columns of each hit (SQLite only). The target's "raw FTS5 query".
* `service` — the `Service` method (outcome objects, no envelope, no schema validation).
* `in_process` — `ToolRegistry.run(name, args)`: schema validation → service → envelope, i.e. all the
  MCP handler does except the worker-thread hop and the transport.
* `stdio` — a real `python -m kaeru serve` subprocess driven by the `mcp` Python `Client`.
* `stdio_raw` — a second server subprocess driven by hand-written newline JSON-RPC over its pipes:
  the transport cost without the Python client library's own overhead.
* `ping` (an op, `stdio_raw` only) — a JSON-RPC ping round trip: the transport's floor.
* `in_process_paired` — `in_process` again, sampled in the same loop as the stdio layers, so
  "stdio − in-process" compares calls taken side by side.
"""

from __future__ import annotations

import inspect
import json
import os
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.corpus import MAIN, CorpusBuilder
from bench.vaults import BenchVault
from kaeru.mcp.adapter import ToolRegistry
from kaeru.service import Service

OPS = ("note", "read", "search_selective", "search_broad")
ALL_OPS = (*OPS, "ping")  # ping: stdio layers only
TOOL = {"note": "note", "read": "read", "search_selective": "search", "search_broad": "search"}
OK_STATES = ("ok", "applied", "unchanged")
RAW_FTS_SQL = "SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ? ORDER BY rank LIMIT 10"
RAW_PAGE_SQL = (
    "SELECT n.id, n.rev_no, n.revision, n.node_type, n.name, n.body, n.description, n.tags, n.layer, n.status, "
    "n.created_at, n.recorded_at FROM nodes_fts JOIN nodes n ON n.seq = nodes_fts.rowid "
    "WHERE nodes_fts MATCH ? AND n.retracted = 0 "
    "AND EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq AND m.initiative_id = ?) "
    "ORDER BY rank LIMIT 10"
)
#: The PostgreSQL counterpart: the GIN-indexed literal tsvector, ranked, top 10.
RAW_PG_SQL = "SELECT seq FROM nodes WHERE tsv @@ %s::tsquery ORDER BY ts_rank(tsv, %s::tsquery) DESC LIMIT 10"


class BenchError(RuntimeError):
    """A measured call did not succeed: its timing would be meaningless."""


@dataclass
class Workload:
    """Argument factories for each op, drawing from the built corpus."""

    builder: CorpusBuilder
    read_ids: list[str]
    rng: random.Random = field(default_factory=lambda: random.Random(7))

    def args(self, op: str) -> dict[str, Any]:
        if op == "note":
            return self.builder.fresh_note()
        if op == "read":
            return {"initiative": MAIN, "node": self.rng.choice(self.read_ids)}
        if op == "search_selective":
            return {"initiatives": [MAIN], "text": self.rng.choice(list(self.builder.corpus.selective))}
        if op == "search_broad":
            return {"initiatives": [MAIN], "text": self.rng.choice(list(self.builder.corpus.broad))}
        raise ValueError(op)

    @staticmethod
    def for_call(op: str, args: dict[str, Any]) -> dict[str, Any]:
        """A copy of `args` for one call: each note gets its own request_id (a reused one would replay)."""
        if op == "note":
            return {**args, "request_id": uuid.uuid4().hex}
        return args


def _rotate(layers: list[str], i: int) -> list[str]:
    k = i % len(layers)
    return layers[k:] + layers[:k]


def _shuffled(ops: tuple[str, ...], i: int) -> list[str]:
    """Round `i`'s op order: a seeded shuffle. (A rotation keeps the cyclic order, so every note
    would still come right after the broad searches — half a second of scanning that empties
    the page cache — and pay for them.)"""
    order = list(ops)
    random.Random(i).shuffle(order)
    return order


@dataclass
class Series:
    samples: dict[str, dict[str, list[int]]] = field(default_factory=dict)  # op -> layer -> ns
    hits: dict[str, list[int]] = field(default_factory=dict)  # op -> `total` of each in-process search
    protocol: dict[str, str | None] = field(default_factory=dict)  # negotiated MCP protocol versions (stdio)

    cpu: dict[str, dict[str, list[int]]] = field(default_factory=dict)  # op -> layer -> thread CPU ns

    def add(self, op: str, layer: str, ns: int, cpu_ns: int | None = None) -> None:
        self.samples.setdefault(op, {}).setdefault(layer, []).append(ns)
        if cpu_ns is not None:
            self.cpu.setdefault(op, {}).setdefault(layer, []).append(cpu_ns)


def _check_envelope(op: str, layer: str, envelope: dict[str, Any]) -> None:
    if envelope.get("state") not in OK_STATES:
        raise BenchError(f"{op} via {layer} was {envelope.get('state')}: {envelope.get('issues')}")


class InProcess:
    """The service, its tool registry, and a raw connection for the full-text baselines."""

    def __init__(self, service: Service, registry: ToolRegistry, vault: BenchVault):
        self.service = service
        self.registry = registry
        self.backend = vault.backend
        self.raw: Any = None
        # text tokens -> the full-text query string; `bare` drops the initiative scope (SQLite only).
        self._literal: Callable[[list[str], bool], str] = lambda tokens, bare: ""
        self.scoped_match = False
        self.main_id: int | None = None
        if vault.backend == "sqlite":
            import apsw

            from kaeru.storage.sqlite.store import fts_match

            self.raw = apsw.Connection(str(vault.sqlite_path))
            self.raw.set_busy_timeout(30_000)
            # Mirror SqliteSession.search: since the FTS table gained a `scope` column, the service's
            # MATCH also names the searched initiatives. Older fts_match versions have no scope.
            scope = [row[0] for row in self.raw.execute("SELECT id FROM initiatives WHERE name = ?", (MAIN,))]
            self.main_id = scope[0] if scope else None
            self.scoped_match = "scope" in inspect.signature(fts_match).parameters

            def literal(tokens: list[str], bare: bool) -> str:
                if self.scoped_match and not bare:
                    return fts_match(tokens, False, False, scope)
                return fts_match(tokens, False, False)

            self._literal = literal
        elif vault.backend == "postgres":
            try:
                import psycopg

                from kaeru.storage.postgres.store import tsquery_literal

                self.raw = psycopg.connect(str(vault.database_url), autocommit=True)
                self._literal = lambda tokens, bare: tsquery_literal(tokens, False, False)
            except Exception as exc:  # the baseline is optional; the rest of the run is still useful
                print(f"note: no raw full-text baseline on PostgreSQL ({exc})", file=sys.stderr)
                self.raw = None

    def describe(self) -> dict[str, Any]:
        """The raw baselines' query strings, for one example word."""
        if self.raw is None:
            return {}
        out = {
            "sql": RAW_FTS_SQL if self.backend == "sqlite" else RAW_PG_SQL,
            "raw_fts": self._literal(["word"], False),
        }
        if self.scoped_match:
            out["raw_fts_bare"] = self._literal(["word"], True)
        if self.main_id is not None:
            out["raw_fts_page"] = {"sql": RAW_PAGE_SQL, "match": self._literal(["word"], True)}
        return out

    def close(self) -> None:
        if self.raw is not None:
            self.raw.close()

    def layers(self, op: str) -> list[str]:
        layers = ["service", "in_process"]
        if op.startswith("search") and self.raw is not None:
            layers.append("raw_fts")
            if self.scoped_match:
                layers.append("raw_fts_bare")
            if self.main_id is not None:
                layers.append("raw_fts_page")
        return layers

    def call(self, op: str, layer: str, args: dict[str, Any]) -> tuple[int, int, Any]:
        """(elapsed ns, this thread's CPU ns, result) of one call of `op` at `layer`."""
        if layer in ("in_process", "in_process_paired"):
            elapsed, cpu, envelope = _timed(self.registry.run, TOOL[op], args)
            _check_envelope(op, layer, envelope)
            return elapsed, cpu, envelope
        if layer == "service":
            from kaeru.api.requests import parse

            # The request is validated and built outside the timing: this layer is the service's own cost.
            return _timed(getattr(self.service, TOOL[op]), parse(TOOL[op], args))
        if layer == "raw_fts_page":
            from kaeru.domain.text import query_tokens

            literal = self._literal(query_tokens(args["text"]), True)
            return _timed(lambda: list(self.raw.execute(RAW_PAGE_SQL, (literal, self.main_id))))
        if layer in ("raw_fts", "raw_fts_bare"):
            from kaeru.domain.text import query_tokens

            literal = self._literal(query_tokens(args["text"]), layer == "raw_fts_bare")
            sql, params = (RAW_FTS_SQL, (literal,)) if self.backend == "sqlite" else (RAW_PG_SQL, (literal, literal))
            return _timed(lambda: list(self.raw.execute(sql, params)))
        raise ValueError(layer)


def _timed(fn: Callable[..., Any], *args: Any) -> tuple[int, int, Any]:
    """Wall and thread-CPU nanoseconds of `fn(*args)`. CPU time barely moves when other processes
    compete for the cores, so it stays comparable on a shared machine where wall time does not."""
    cpu0 = time.thread_time_ns()
    start = time.perf_counter_ns()
    result = fn(*args)
    elapsed = time.perf_counter_ns() - start
    return elapsed, time.thread_time_ns() - cpu0, result


def measure_in_process(ip: InProcess, work: Workload, samples: int, warmup: int) -> Series:
    """`samples` rounds; each round calls every op once at every layer, in a rotating order."""
    series = Series()
    for i in range(warmup + samples):
        for op in _shuffled(OPS, i):
            args = work.args(op)
            for layer in _rotate(ip.layers(op), i):
                elapsed, cpu, result = ip.call(op, layer, work.for_call(op, args))
                if i < warmup:
                    continue
                series.add(op, layer, elapsed, cpu)
                if layer == "in_process" and op.startswith("search"):
                    series.hits.setdefault(op, []).append(int(result["data"]["total"]))
    return series


# --- stdio ----------------------------------------------------------------------------------------


def _server_env(vault: BenchVault) -> dict[str, str]:
    """The parent's environment without any KAERU_* setting, plus the vault's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}
    env.update(vault.env())
    return env


KAERU_SERVE = (sys.executable, "-m", "kaeru", "serve")


class RawStdioClient:
    """Newline-delimited JSON-RPC to a `kaeru serve` subprocess (or another stdio server command),
    with nothing in between."""

    def __init__(self, env: dict[str, str], errlog: Any, command: Sequence[str] = KAERU_SERVE):
        self.proc = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin
        self._out = self.proc.stdout
        self._next_id = 0
        answer = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "kaeru-bench", "version": "0"},
            },
        )
        self.protocol_version: str | None = answer.get("protocolVersion")
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        self._in.write(json.dumps(message).encode() + b"\n")
        self._in.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        wanted = self._next_id
        self._send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        while True:
            line = self._out.readline()
            if not line:
                raise BenchError(f"the stdio server exited (code {self.proc.poll()}) during {method}")
            message = json.loads(line)
            if message.get("id") == wanted:
                if "error" in message:
                    raise BenchError(f"{method} failed: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    def call_tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": args})

    def close(self) -> None:
        try:
            self._in.close()
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def measure_stdio(ip: InProcess, vault: BenchVault, work: Workload, samples: int, warmup: int, log: Path) -> Series:
    """stdio (mcp Client), stdio_raw (plain JSON-RPC) and in_process_paired, interleaved per round."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    series = Series()
    params = StdioServerParameters(command=sys.executable, args=["-m", "kaeru", "serve"], env=_server_env(vault))

    async def main() -> None:
        with log.open("a") as errlog:
            raw = RawStdioClient(_server_env(vault), errlog)
            try:
                async with Client(stdio_client(params, errlog=errlog), cache=None) as client:
                    series.protocol = {"mcp_client": client.protocol_version, "raw_client": raw.protocol_version}
                    await client.list_tools()
                    layers = ["stdio", "stdio_raw", "in_process_paired"]
                    for i in range(warmup + samples):
                        for op in _shuffled(OPS, i):
                            args = work.args(op)
                            for layer in _rotate(layers, i):
                                call_args = work.for_call(op, args)
                                cpu: int | None = None  # the client's CPU says nothing about the server
                                if layer == "stdio":
                                    start = time.perf_counter_ns()
                                    result = await client.call_tool(TOOL[op], call_args)
                                    elapsed = time.perf_counter_ns() - start
                                    if result.is_error:
                                        raise BenchError(f"{op} via stdio failed: {result.content}")
                                elif layer == "stdio_raw":
                                    start = time.perf_counter_ns()
                                    answer = raw.call_tool(TOOL[op], call_args)
                                    elapsed = time.perf_counter_ns() - start
                                    if answer.get("isError"):
                                        raise BenchError(f"{op} via stdio_raw failed: {answer.get('content')}")
                                else:
                                    elapsed, cpu, _ = ip.call(op, layer, call_args)
                                if i >= warmup:
                                    series.add(op, layer, elapsed, cpu)
                        # The transport's floor: a JSON-RPC ping does no tool work at all. (Only on the raw
                        # client: the protocol version the mcp Client negotiates has no ping.)
                        start = time.perf_counter_ns()
                        raw.request("ping", {})
                        raw_ping = time.perf_counter_ns() - start
                        if i >= warmup:
                            series.add("ping", "stdio_raw", raw_ping)
            finally:
                raw.close()

    anyio.run(main)
    return series
