"""A day of calls: one `kaeru serve` process answering a long, mixed session. A script, not a test.

    python -m bench.soak --calls 20000 [--transport stdio|http] [--database-url URL] [--window N]

Spawns `kaeru serve` (stdio, or `--http` on a loopback port) on a new vault (SQLite in a temporary
directory; with `--database-url`, a new PostgreSQL database made beside that one) and drives it
through the official MCP client (`mcp.Client`) with the workload an agent makes all day: mostly
`note`, `search`, `recall`, `read` and `context`; some `revise`, `link`, `task`, `task_update`,
`claim`; now and then `verdict`, `trail`, `timeline`, `current_state`, `initiatives`, `reflect`
(`MIX`). Six initiatives of unequal size (`bench.corpus`), bodies of 20–200 Zipf words; searches
for planted rare words, for common words and for ordinary ones, some following `continuation` to
the next page. The vault grows by about one note in three calls.

Every `--window` calls it records the server process's memory (`bench.rss`: `VmRSS`, `VmHWM`,
`RssAnon`, after the window's last answer, not idle), its open file descriptors and threads, the
vault's size (SQLite: the database file and its `-wal`; PostgreSQL: `pg_database_size`) and the
p50/p95 latency of each tool in that window (client side: the call sent → its answer). Then a new
server on the same vault answers one more window (`new` in the table): latency that comes back down
there came from the process's age, not from the vault's size. Prints a table by window and the
slope of resident memory over the last half of the windows (least squares, MiB per 10,000 calls)
with a verdict: it levels off when the last half's fitted growth is under 5% of the resident memory
at the half's start (the new server's window left out). `--out FILE` writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from bench import rss
from bench.corpus import CorpusBuilder
from bench.servers import spawn_http, wait_ready
from bench.startup import _kaeru_command
from bench.stats import percentile

#: The share of calls each tool gets (a call whose tool has nothing to act on yet is a `note`).
MIX: dict[str, float] = {
    "note": 0.26,
    "search": 0.20,
    "recall": 0.12,
    "read": 0.13,
    "context": 0.07,
    "revise": 0.04,
    "link": 0.04,
    "task": 0.03,
    "task_update": 0.02,
    "claim": 0.02,
    "verdict": 0.01,
    "trail": 0.02,
    "timeline": 0.01,
    "current_state": 0.01,
    "initiatives": 0.01,
    "reflect": 0.01,
}
#: The tools whose latency the table shows (every tool's is in `--out`).
SHOWN = ("note", "search", "recall", "read", "context")
INTENTS = ("resume_work", "explain_decision", "debug_failure", "apply_preference", "review_change")


@dataclass
class Window:
    """One window's figures."""

    calls: int
    seconds: float
    memory: dict[str, float]
    fds: int
    threads: int
    vault_bytes: dict[str, int]
    latency_ms: dict[str, dict[str, float]]
    states: dict[str, int]
    #: Answered by a new server on the vault the long session left (the last window).
    restarted: bool = False


@dataclass
class Workload:
    """Draws the next call from what the vault holds so far (ids harvested from the answers)."""

    seed: int
    size: int
    rng: random.Random = field(init=False)
    builder: CorpusBuilder = field(init=False)
    notes: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    tasks: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    claims: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    cursors: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    written: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    followed: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.builder = CorpusBuilder(self.size, self.seed)

    def _initiative(self) -> str:
        return self.builder.initiative_of(self.rng.randrange(self.size))

    def _words(self, low: int, high: int) -> str:
        return " ".join(self.builder.zipf_words(self.rng, self.rng.randint(low, high)))

    def _query(self) -> str:
        roll = self.rng.random()
        if roll < 0.3 and self.builder.corpus.selective:
            return self.rng.choice(list(self.builder.corpus.selective))
        if roll < 0.45:
            return self.rng.choice(self.builder.corpus.vocab[:8])
        return " ".join(self.rng.sample(self.builder.corpus.vocab[8:2000], self.rng.randint(1, 3)))

    def next(self) -> tuple[str, dict[str, Any]]:
        rng = self.rng
        tool = rng.choices(list(MIX), weights=list(MIX.values()))[0]
        where = self._initiative()
        notes, tasks, claims = self.notes[where], self.tasks[where], self.claims[where]
        if tool == "search" and self.cursors and rng.random() < 0.15:
            self.followed += 1
            return self.cursors.pop()
        if tool == "search":
            return "search", {"initiatives": [where], "text": self._query()}
        if tool == "recall":
            args: dict[str, Any] = {"initiatives": [where], "query": self._words(3, 8)}
            if rng.random() < 0.5:
                args["task_intent"] = rng.choice(INTENTS)
            return "recall", args
        if tool == "context":
            return "context", {"initiative": where}
        if tool == "initiatives":
            return "initiatives", {}
        if tool == "reflect":
            return "reflect", {"initiative": where}
        if tool == "timeline":
            return "timeline", {"initiatives": [where], "query": self._query()}
        if tool == "task":
            return "task", {"initiative": where, "text": self.builder.body()[:300], "tags": ["soak"]}
        if tool == "claim" and notes:
            text = "Maybe " + self._words(6, 14)
            return "claim", {"initiative": where, "text": text, "about": rng.choice(notes)}
        if tool == "task_update" and tasks:
            return "task_update", {"initiative": where, "task": tasks.pop(rng.randrange(len(tasks))), "status": "done"}
        if tool == "verdict" and claims:
            status = rng.choice(("supported", "refuted", "inconclusive"))
            return "verdict", {"initiative": where, "hypothesis": claims.pop(), "status": status}
        if len(notes) >= 2:
            node = rng.choice(notes)
            if tool == "read":
                return "read", {"initiative": where, "node": node, "neighbours": rng.random() < 0.3}
            if tool == "revise":
                return "revise", {"initiative": where, "node": node, "patch": {"body": self.builder.body()}}
            if tool == "link":
                other = rng.choice(notes)
                if other != node:
                    return "link", {
                        "initiative": where,
                        "from": node,
                        "to": other,
                        "edge_type": "refers_to",
                        "weight": 0.5,
                    }
            if tool == "trail":
                return "trail", {"initiative": where, "node": node, "kind": rng.choice(("history", "neighbours"))}
            if tool == "current_state":
                return "current_state", {"initiative": where, "node": node}
        spec = self.builder.note(self.written % self.size)
        self.written += 1
        args = spec.args()
        if notes and rng.random() < 0.1:
            args["link_to"] = rng.choice(notes)
        return "note", args

    def harvest(self, tool: str, args: dict[str, Any], envelope: dict[str, Any]) -> None:
        data = envelope.get("data") or {}
        primary = data.get("primary") or {}
        where = args.get("initiative", "")
        if tool in ("note", "task", "claim") and isinstance(primary.get("id"), str):
            {"note": self.notes, "task": self.tasks, "claim": self.claims}[tool][where].append(primary["id"])
        continuation = envelope.get("continuation")
        if tool == "search" and isinstance(continuation, dict) and continuation.get("next_arguments"):
            self.cursors = [*self.cursors[-20:], ("search", continuation["next_arguments"])]


@asynccontextmanager
async def serve(transport: str, env: dict[str, str], log: Path) -> AsyncIterator[tuple[Any, int]]:
    """A client session with `kaeru serve` and the server's process id."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    if transport == "stdio":
        command = _kaeru_command()
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        before = rss.children()
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), cache=None) as client:
                yield client, rss.server_pid(before)
        return
    from tests.wire.support import stop

    with log.open("wb") as out:
        proc, port = spawn_http(env, out)
    try:
        wait_ready(proc, port, log.read_text)
        async with Client(f"http://127.0.0.1:{port}/mcp", cache=None) as client:
            yield client, proc.pid
    finally:
        stop(proc)


def _first_code(envelope: dict[str, Any]) -> str:
    issues = envelope.get("issues") or [{}]
    return str(issues[0].get("code") if isinstance(issues[0], dict) else issues[0])


def _count(path: str) -> int:
    try:
        return len(os.listdir(path))
    except OSError:
        return -1


def vault_bytes(vault: Path, database_url: str | None) -> dict[str, int]:
    if database_url:
        import psycopg

        with psycopg.connect(database_url) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        return {"database": int(row[0]) if row else 0}
    db = vault / "vault.sqlite3"
    sizes = {"db": db, "wal": Path(f"{db}-wal")}
    return {k: (p.stat().st_size if p.exists() else 0) for k, p in sizes.items()}


async def session(
    workload: Workload,
    calls: tuple[int, int],
    window: int,
    transport: str,
    env: dict[str, str],
    vault: Path,
    database_url: str | None,
    restarted: bool = False,
    progress: bool = False,
) -> list[Window]:
    """One server process answering calls `calls[0]`+1 … `calls[1]` of the workload, a `Window` each
    `window` calls (and at the last)."""
    windows: list[Window] = []
    async with serve(transport, env, vault.parent / "server.log") as (client, pid):
        latencies: dict[str, list[float]] = defaultdict(list)
        states: Counter[str] = Counter()
        started = time.perf_counter()
        for done in range(calls[0] + 1, calls[1] + 1):
            tool, args = workload.next()
            sent = time.perf_counter_ns()
            result = await client.call_tool(tool, args)
            latencies[tool].append((time.perf_counter_ns() - sent) / 1e6)
            envelope = result.structured_content or {}
            state = str(envelope.get("state"))
            states[state] += 1
            if state == "rejected":
                workload.rejected[f"{tool}: {_first_code(envelope)}"] += 1
            issues = envelope.get("issues") or []
            if any(isinstance(i, dict) and i.get("code") == "internal" for i in issues) or state == "None":
                raise RuntimeError(f"{tool} {args}: {envelope or result.content}")
            workload.harvest(tool, args, envelope)
            if (done - calls[0]) % window == 0 or done == calls[1]:
                windows.append(
                    Window(
                        calls=done,
                        seconds=time.perf_counter() - started,
                        memory=rss.status(pid),
                        fds=_count(f"/proc/{pid}/fd"),
                        threads=_count(f"/proc/{pid}/task"),
                        vault_bytes=vault_bytes(vault, database_url),
                        latency_ms={
                            t: {"n": len(v), "p50": percentile(sorted(v), 50), "p95": percentile(sorted(v), 95)}
                            for t, v in latencies.items()
                        },
                        states=dict(states),
                        restarted=restarted,
                    )
                )
                if progress:
                    print(_row(windows[-1]), file=sys.stderr, flush=True)
                latencies, states = defaultdict(list), Counter()
    return windows


async def soak(
    calls: int,
    window: int,
    transport: str,
    env: dict[str, str],
    vault: Path,
    database_url: str | None,
    seed: int,
    progress: bool = False,
) -> tuple[list[Window], Workload]:
    """`calls` calls to one server, then one more `window` to a new server on the same vault: the
    restarted server's latency beside the last window's tells the vault's size from the process's age."""
    workload = Workload(seed, max(calls, 50))
    windows = await session(workload, (0, calls), window, transport, env, vault, database_url, progress=progress)
    windows += await session(
        workload, (calls, calls + window), window, transport, env, vault, database_url, True, progress
    )
    return windows, workload


def slope(windows: list[Window]) -> dict[str, float]:
    """Least squares of `VmRSS` over the calls in the last half of the windows (at least two)."""
    half = windows[len(windows) // 2 :] if len(windows) >= 4 else windows
    xs = [float(w.calls) for w in half]
    ys = [w.memory["VmRSS"] for w in half]
    if len(half) < 2:
        return {"mib_per_10k_calls": 0.0, "half_growth_mib": 0.0, "half_start_mib": ys[0] if ys else 0.0}
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    per_call = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return {
        "mib_per_10k_calls": per_call * 10_000,
        "half_growth_mib": per_call * (xs[-1] - xs[0]),
        "half_start_mib": ys[0],
    }


HEADER = (
    f"{'calls':>8} {'s':>6} {'RSS':>6} {'HWM':>6} {'anon':>6} {'fd':>4} {'thr':>4} {'db MiB':>7} {'wal':>6}  "
    + " ".join(f"{t + ' p50/p95':>17}" for t in SHOWN)
)


def _row(w: Window) -> str:
    sizes = [*w.vault_bytes.values(), 0]
    cells = []
    for tool in SHOWN:
        got = w.latency_ms.get(tool)
        cells.append(f"{got['p50']:>8.1f}/{got['p95']:<8.1f}" if got else f"{'-':>17}")
    return (
        f"{('new ' if w.restarted else '') + f'{w.calls:,}':>8} {w.seconds:>6.0f} {w.memory['VmRSS']:>6.1f} "
        f"{w.memory['VmHWM']:>6.1f} {w.memory['RssAnon']:>6.1f} {w.fds:>4} {w.threads:>4} "
        f"{sizes[0] / 2**20:>7.1f} {sizes[1] / 2**20:>6.1f}  " + " ".join(cells)
    )


def report(windows: list[Window], meta: dict[str, Any]) -> str:
    lines = [
        f"soak: {meta['calls']:,} calls, {meta['transport']}, {meta['backend']}; load average {meta['load']}",
        HEADER,
        *(_row(w) for w in windows),
    ]
    windows = [w for w in windows if not w.restarted]
    fit = slope(windows)
    levels = fit["half_growth_mib"] < 0.05 * fit["half_start_mib"]
    lines.append(
        f"RSS over the last half: {fit['mib_per_10k_calls']:+.2f} MiB per 10,000 calls "
        f"({fit['half_growth_mib']:+.1f} MiB from {fit['half_start_mib']:.1f}): "
        + ("levels off" if levels else "still growing")
    )
    states: Counter[str] = Counter()
    for w in windows:
        states.update(w.states)
    lines.append("states: " + ", ".join(f"{k} {v:,}" for k, v in sorted(states.items())))
    lines.append(f"search pages followed: {meta['pages_followed']:,}; rejected: {meta['rejected'] or 'none'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--window", type=int, default=0, help="calls per window (default: calls / 20)")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--database-url", default=None, help="PostgreSQL: a new database is made beside this one")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--progress", action="store_true", help="print each window's row as it ends (stderr)")
    args = parser.parse_args(argv)
    window = args.window or max(1, args.calls // 20)
    work = Path(tempfile.mkdtemp(prefix="kaeru-soak-"))
    database_url = None
    try:
        vault = work / "vault"
        env = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}
        repo = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH", "")) if p)
        env["KAERU_VAULT"] = str(vault)
        if args.database_url:
            from bench.scaleout import fresh_database

            database_url = fresh_database(args.database_url)
            env["KAERU_DATABASE_URL"] = database_url
        if args.progress:
            print(HEADER, file=sys.stderr, flush=True)
        windows, workload = anyio.run(
            soak, args.calls, window, args.transport, env, vault, database_url, args.seed, args.progress
        )
        meta = {
            "calls": args.calls,
            "window": window,
            "transport": args.transport,
            "backend": "postgres" if database_url else "sqlite",
            "seed": args.seed,
            "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "pages_followed": workload.followed,
            "rejected": dict(workload.rejected),
        }
        out = {
            "meta": meta,
            "windows": [w.__dict__ for w in windows],
            "slope": slope([w for w in windows if not w.restarted]),
        }
        if not args.quiet:
            print(report(windows, meta))
        if args.out:
            args.out.write_text(json.dumps(out, indent=1))
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if database_url:  # the database it made for the run, as the work folder
            from bench.vaults import drop_database

            drop_database(args.database_url, database_url.rpartition("/")[2])


if __name__ == "__main__":
    main()
