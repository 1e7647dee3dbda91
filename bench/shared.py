"""Several agents, one laptop vault: N `kaeru serve` processes on ONE SQLite file. A script, not a test.

    python -m bench.shared [--servers 3] [--calls 1500] [--rounds 2] [--modes shared separate http] [--out FILE]

Every other benchmark drives one server. A user who runs an agent per terminal, or a client that
starts a server per session, has several processes on one vault file, each writing, searching and
checkpointing on its own. This measures what that costs and whether the vault's promises still hold:

- **shared**: `--servers` stdio servers on one vault, each driven by its own client thread with the
  soak benchmark's mixed agent workload (`bench.soak.Workload`, its own seed per agent, the same six
  projects for all), every write carrying a request id. All start together (a barrier).
- **separate**: the same servers, clients and calls, each on a vault of its own — the same CPU
  contention without the sharing. The ratio shared ÷ separate is the cost of sharing one file.
- **http** (`--modes http`): the other way to share a vault — ONE `kaeru serve --http` on it (the
  README's embedded server), the same agents as concurrent HTTP clients (one keep-alive connection
  each), stopped with SIGTERM at the end.

The two alternate (`--rounds`, the order swapped each round). For each: every tool's p50 / p95 / max
(client side, the call sent → its answer), the envelopes' states and issue codes (a `rejected` with
`unavailable` is a write the agent must send again), the `-wal` sampled every 20 ms while the calls
run (peak and p95: the steady-state bound of decision 16.D5 is per process), the `-wal` once every
client went quiet for two checkpoint pauses, and whether any `-wal`/`-shm` is left after every server
exited on end of input. Then every node an applied write returned is looked for in the file (a lost
write), and no request id of a write that makes a node (`note`, `task`, `claim`) may have made two
(a duplicated one).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import apsw

from bench.disk import IDLE_WAIT, MB, _env, _files
from bench.measure import BenchError, RawStdioClient
from bench.servers import spawn_http, wait_ready
from bench.soak import SHOWN, Workload, _first_code
from bench.stats import percentile

#: How often the sampler reads the `-wal` sizes while the calls run.
SAMPLE_S = 0.02
#: Tools that write: each carries a request id; an applied one returns the node it made or changed.
WRITES = frozenset({"note", "task", "claim", "revise", "link", "task_update", "verdict"})
#: The writes that make a node: one request id, one node.
MAKERS = frozenset({"note", "task", "claim"})
#: shared: N stdio servers on one file; separate: N on files of their own; http: one HTTP server, N clients.
MODES = ("shared", "separate", "http")


class Agent(threading.Thread):
    """One client and its server: `calls` calls of its own workload, timed, after the barrier."""

    def __init__(
        self, index: int, client: RawStdioClient | RawHttpClient, calls: int, size: int, barrier: threading.Barrier
    ):
        super().__init__(name=f"agent-{index}", daemon=True)
        self.client = client
        self.workload = Workload(seed=1600 + index, size=size)
        self.calls = calls
        self.barrier = barrier
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.states: Counter[str] = Counter()
        #: (tool, request id, node id) of every applied write that named its node.
        self.written: list[tuple[str, str, str]] = []
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            self.barrier.wait()
            for _ in range(self.calls):
                tool, args = self.workload.next()
                if tool in WRITES:
                    args = {**args, "request_id": uuid.uuid4().hex}
                started = time.perf_counter()
                result = self.client.call_tool(tool, args)
                self.latency[tool].append((time.perf_counter() - started) * 1000)
                envelope = result.get("structuredContent") or {}
                state = str(envelope.get("state"))
                self.states[state if state != "rejected" else f"rejected:{_first_code(envelope)}"] += 1
                self.workload.harvest(tool, args, envelope)
                node = ((envelope.get("data") or {}).get("primary") or {}).get("id")
                if tool in WRITES and state == "applied" and isinstance(node, str):
                    self.written.append((tool, args["request_id"], node))
        except BaseException as exc:  # reported by the caller, with the agent that failed
            self.failure = exc


class RawHttpClient:
    """JSON-RPC `tools/call` POSTed to a stateless `kaeru serve --http` over one keep-alive connection
    (the server answers in JSON, no session to open), with nothing in between."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self._next_id = 0

    def call_tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        body = json.dumps(
            {"jsonrpc": "2.0", "id": self._next_id, "method": "tools/call", "params": {"name": name, "arguments": args}}
        )
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        self.conn.request("POST", "/mcp", body=body, headers=headers)
        response = self.conn.getresponse()
        answer = response.read()
        if response.status != 200:
            raise BenchError(f"{name}: HTTP {response.status}: {answer[:200]!r}")
        message = json.loads(answer)
        if "error" in message:
            raise BenchError(f"{name} failed: {message['error']}")
        result: dict[str, Any] = message["result"]
        return result

    def close(self) -> None:
        self.conn.close()


class HttpServer:
    """ONE `kaeru serve --http` on `vault`, stopped with SIGTERM (a clean close) by `close`."""

    def __init__(self, vault: Path, log: Any):
        self.proc, self.port = spawn_http(_env(vault), log)
        wait_ready(self.proc, self.port, lambda: f"exit code {self.proc.poll()}")

    def close(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def _sampler(vaults: list[Path], stop: threading.Event, into: list[int]) -> None:
    while not stop.is_set():
        into.append(max(_files(v)["wal"] or 0 for v in vaults))
        stop.wait(SAMPLE_S)


def _lost_and_doubled(vault: Path, written: list[tuple[str, str, str]]) -> tuple[int, int]:
    """How many nodes of applied writes the file does not hold, and how many request ids of writes
    that make a node made two."""
    conn = apsw.Connection(str(vault / "vault.sqlite3"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        held = {str(r[0]) for r in conn.execute("SELECT DISTINCT id FROM nodes")}
        per_request = Counter(
            str(r[0]) for r in conn.execute("SELECT request_id FROM nodes WHERE rev_no = 1 AND request_id IS NOT NULL")
        )
    finally:
        conn.close()
    lost = sum(1 for _, _, node in written if node not in held)
    doubled = sum(1 for tool, request, _ in written if tool in MAKERS and per_request[request] > 1)
    return lost, doubled


def run_mode(mode: str, servers: int, calls: int, size: int, work: Path, log: Any) -> dict[str, Any]:
    """One mode's run on new vaults: `servers` agents, `calls` calls each."""
    root = work / f"{mode}-{uuid.uuid4().hex[:6]}"
    vaults = [root / f"vault-{i}" for i in range(servers)] if mode == "separate" else [root / "vault"] * servers
    server = HttpServer(vaults[0], log) if mode == "http" else None
    try:
        return _driven(mode, servers, calls, size, root, vaults, server, log)
    finally:
        if server is not None and server.proc.poll() is None:  # a failure before its SIGTERM
            server.proc.kill()
            server.proc.wait()


def _driven(
    mode: str, servers: int, calls: int, size: int, root: Path, vaults: list[Path], server: HttpServer | None, log: Any
) -> dict[str, Any]:
    """`run_mode`'s run once its vaults (and, for `http`, its one server) are set."""
    barrier = threading.Barrier(servers + 1)
    clients = [RawHttpClient(server.port) if server else RawStdioClient(_env(v), log) for v in vaults]
    agents = [Agent(i, clients[i], calls, size, barrier) for i in range(servers)]
    for agent in agents:
        agent.start()
    wal: list[int] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_sampler, args=(sorted(set(vaults)), stop, wal), daemon=True)
    sampler.start()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    barrier.wait()
    for agent in agents:
        agent.join()
    seconds = time.perf_counter() - started
    stop.set()
    sampler.join()
    failed = [f"{a.name}: {a.failure!r}" for a in agents if a.failure]
    time.sleep(IDLE_WAIT)
    idle = max(_files(v)["wal"] or 0 for v in set(vaults))
    for agent in agents:
        agent.client.close()
    codes = [server.close()] if server else [c.proc.returncode for c in clients if isinstance(c, RawStdioClient)]
    left = sorted({f"{v.name}{suffix}" for v in set(vaults) for suffix in ("-wal", "-shm") if _files(v)[suffix[1:]]})
    lost = doubled = 0
    for vault in set(vaults):
        mine = [w for a, v in zip(agents, vaults, strict=True) if v == vault for w in a.written]
        got = _lost_and_doubled(vault, mine)
        lost, doubled = lost + got[0], doubled + got[1]
    latency: dict[str, list[float]] = defaultdict(list)
    states: Counter[str] = Counter()
    for agent in agents:
        states.update(agent.states)
        for tool, took in agent.latency.items():
            latency[tool].extend(took)
    wal.sort()
    shutil.rmtree(root, ignore_errors=True)
    return {
        "mode": mode,
        "servers": servers,
        "calls_each": calls,
        "seconds": round(seconds, 2),
        "calls_per_s": round(servers * calls / seconds, 1),
        "load_average": round(load, 2),
        "failed": failed,
        "exit_codes": codes,
        "states": dict(states.most_common()),
        "lost_writes": lost,
        "duplicated_writes": doubled,
        "writes_applied": sum(len(a.written) for a in agents),
        "wal_peak_bytes": wal[-1] if wal else 0,
        "wal_p95_bytes": round(percentile(wal, 95)) if wal else 0,
        "wal_idle_bytes": idle,
        "left_after_exit": left,
        "latency_ms": {
            tool: {
                "n": len(took),
                "p50": round(percentile(sorted(took), 50), 2),
                "p95": round(percentile(sorted(took), 95), 2),
                "max": round(max(took), 2),
            }
            for tool, took in sorted(latency.items())
        },
    }


def _row(r: dict[str, Any]) -> str:
    cells = []
    for tool in SHOWN:
        t = r["latency_ms"].get(tool)
        cells.append(f"{t['p50']:.1f} / {t['p95']:.1f} / {t['max']:.0f}" if t else "—")
    rejected = sum(n for s, n in r["states"].items() if s.startswith("rejected:unavailable"))
    return (
        f"| {r['mode']} | {' | '.join(cells)} | {r['calls_per_s']} | {r['wal_peak_bytes'] / MB:.2f} / "
        f"{r['wal_p95_bytes'] / MB:.2f} | {r['wal_idle_bytes'] / MB:.2f} | {', '.join(r['left_after_exit']) or 'none'} | "
        f"{rejected} | {r['lost_writes']} / {r['duplicated_writes']} |"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.shared", description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", type=int, default=3, help="server processes (agents) at once (default 3)")
    p.add_argument("--calls", type=int, default=1500, help="calls each agent makes (default 1500)")
    p.add_argument("--rounds", type=int, default=2, help="shared and separate, alternating (default 2)")
    p.add_argument("--size", type=int, default=20000, help="the workload's corpus size (its vocabulary draws)")
    p.add_argument(
        "--modes",
        nargs="+",
        choices=MODES,
        default=["shared", "separate"],
        help="the modes to alternate (default shared separate; http: one HTTP server, the agents its clients)",
    )
    p.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    a = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="kaeru-shared-"))
    results: list[dict[str, Any]] = []
    try:
        with (work / "server-stderr.log").open("ab") as log:
            for round_ in range(a.rounds):
                modes = a.modes if round_ % 2 == 0 else a.modes[::-1]
                for mode in modes:
                    print(f"round {round_ + 1}: {mode}, {a.servers} agents × {a.calls} calls …", file=sys.stderr)
                    results.append(run_mode(mode, a.servers, a.calls, a.size, work, log))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{a.servers} servers × {a.calls} calls; ms p50 / p95 / max per tool, client side")
    print(
        f"| mode | {' | '.join(SHOWN)} | calls/s | -wal peak / p95 MB | -wal idle MB | left after exit | "
        "rejected unavailable | lost / duplicated |"
    )
    print("|---" * (len(SHOWN) + 7) + "|")
    for r in results:
        print(_row(r))
    for r in results:
        if r["failed"] or any(c != 0 for c in r["exit_codes"]):
            print(f"{r['mode']}: failed {r['failed']}, exit codes {r['exit_codes']}")
    if a.out:
        a.out.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
