"""kaeru beside the official MCP `memory` server, through the same client and workload, one run.

    python -m bench.peers --memories 5000 [--starts 10] [--searches 100]

The official server (`@modelcontextprotocol/server-memory`) is installed with npm into
`~/.cache/kaeru-bench/peers` (or `--npm-dir`) when this runs — never by the tests — and started as
`node …/dist/index.js` with `MEMORY_FILE_PATH` in a temporary directory. kaeru is `kaeru serve`
on a new SQLite vault. The start-up floor is the bare SDK server of bench/startup.py (one tool).

Every server is driven by the same client: the `mcp` SDK's `Client` over its stdio transport.
The workload, mapped onto each server's own tools:

* **write** one short memory (a ~25-word Zipf sentence from the benchmark vocabulary, plus one
  marker word of its own): kaeru `note` {initiative, text}; official `create_entities` with one
  entity (a name, type `memory`, the text as its one observation). Every write is timed; the two
  servers' sessions are open side by side and the writes alternate, so noise lands on both.
* **find a marker word** (exactly one memory holds it): kaeru `search` {initiatives, text};
  official `search_nodes` {query}. **Common-word search**: one of the 8 most frequent words.
  Each server answers as an agent would call it (kaeru: its first page, 10 hits; the official
  server: every match, its only mode).
* **spawn → `initialize` answered**: the client's `initialize` handshake from just before the
  spawn, on an empty vault and again after the N memories (restart), rounds rotating over the
  bare SDK server, kaeru and the official server; also the first tool call after that restart.
* **data on disk** after the sessions closed (stdin EOF): the vault directory / the JSONL file.
* **memory held** (`bench.rss`: `/proc/<pid>/status` of the server process itself — `node`, the
  Python interpreter — found as the child the client spawned): resident (`VmRSS`), its anonymous
  part (`RssAnon`, not shared libraries) and the peak (`VmHWM`), MiB, once the server is idle
  (no CPU used for 0.3 s) after `initialize` on an empty vault, then after its first search
  (`--memory-rounds` sessions each, after the timed start-ups); and at the end of the workload, idle
  after the last search, in the sessions that wrote the N memories.

`--baseline SRC` adds kaeru run from another checkout's `src` directory to the start-up rounds
(on its own empty vault, then restarted on the vault this tree's kaeru wrote), to the memory
sessions and to the workload (on a vault of its own, its writes and searches alternating with the
others'), so two trees are measured in the same run; the paired differences are printed after the
table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from bench import rss
from bench.corpus import CorpusBuilder
from bench.startup import _kaeru_command, compile_kaeru
from bench.stats import percentile

PACKAGE = "@modelcontextprotocol/server-memory"
NPM_DIR = Path.home() / ".cache" / "kaeru-bench" / "peers"
INITIATIVE = "bench"
WORDS = (20, 30)
ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def install_official(npm_dir: Path) -> Path:
    """The official server's entry script, installed with npm into `npm_dir` if missing."""
    script = npm_dir / "node_modules" / PACKAGE / "dist" / "index.js"
    if not script.exists():
        npm_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(npm_dir), PACKAGE],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return script


def official_version(npm_dir: Path) -> str:
    manifest = npm_dir / "node_modules" / PACKAGE / "package.json"
    return str(json.loads(manifest.read_text()).get("version", "?"))


def marker(i: int) -> str:
    """A made-up word unique to memory `i`, of fixed length so no marker contains another."""
    letters = ""
    for _ in range(4):
        i, r = divmod(i, 26)
        letters += ALPHABET[r]
    return "qx" + letters


class Texts:
    def __init__(self, seed: int):
        self.builder = CorpusBuilder(50, seed)
        self.rng = random.Random(seed)
        self.common = list(self.builder.corpus.vocab[:8])

    def memory(self, i: int) -> str:
        words = self.rng.choices(self.builder.corpus.vocab, cum_weights=self.builder._cum, k=self.rng.randint(*WORDS))
        words.insert(self.rng.randrange(len(words) + 1), marker(i))
        return " ".join(words).capitalize() + "."


class Peer:
    """One server kind: how to start it on a data location, and its tool calls for the workload."""

    def __init__(
        self,
        label: str,
        command: list[str],
        env: Callable[[Path], dict[str, str]],
        write: Callable[[int, str], tuple[str, dict[str, Any]]] | None,
        search: Callable[[str], tuple[str, dict[str, Any]]] | None,
        disk: Callable[[Path], int] | None,
    ):
        self.label, self.command, self.env = label, command, env
        self.write, self.search, self.disk = write, search, disk

    def params(self, where: Path) -> Any:
        from mcp import StdioServerParameters

        return StdioServerParameters(command=self.command[0], args=self.command[1:], env=self.env(where))


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def baseline_peer(source: Path, base_env: dict[str, str]) -> Peer:
    """kaeru from another checkout's `src` (first on the path), started as this tree's kaeru is."""
    env = {**base_env, "PYTHONPATH": os.pathsep.join(p for p in (str(source.resolve()), base_env["PYTHONPATH"]) if p)}
    return Peer(
        "kaeru (baseline)",
        _kaeru_command(),
        lambda where: {**env, "KAERU_VAULT": str(where)},
        lambda i, text: ("note", {"initiative": INITIATIVE, "text": text}),
        lambda word: ("search", {"initiatives": [INITIATIVE], "text": word}),
        None,
    )


def peers(official_script: Path, base_env: dict[str, str]) -> list[Peer]:
    bare = Peer(
        "bare SDK server",
        [sys.executable, "-m", "bench.startup", "bare"],
        lambda where: dict(base_env),
        None,
        None,
        None,
    )
    kaeru = Peer(
        "kaeru",
        _kaeru_command(),
        lambda where: {**base_env, "KAERU_VAULT": str(where)},
        lambda i, text: ("note", {"initiative": INITIATIVE, "text": text}),
        lambda word: ("search", {"initiatives": [INITIATIVE], "text": word}),
        _dir_bytes,
    )
    official = Peer(
        "official memory",
        ["node", str(official_script)],
        lambda where: {**base_env, "MEMORY_FILE_PATH": str(where / "memory.jsonl")},
        lambda i, text: (
            "create_entities",
            {"entities": [{"name": f"memory-{i}", "entityType": "memory", "observations": [text]}]},
        ),
        lambda word: ("search_nodes", {"query": word}),
        _dir_bytes,
    )
    return [bare, kaeru, official]


async def _call(client: Any, name: str, args: dict[str, Any]) -> float:
    start = time.perf_counter_ns()
    result = await client.call_tool(name, args)
    elapsed = (time.perf_counter_ns() - start) / 1e6
    if result.is_error:
        raise RuntimeError(f"{name} failed: {result.content}")
    return elapsed


async def _start(peer: Peer, where: Path, errlog: Any, first: tuple[str, dict[str, Any]] | None) -> tuple[float, float]:
    """(spawn → initialize answered, spawn → first tool call answered) in ms; the session is closed."""
    from mcp import Client
    from mcp.client.stdio import stdio_client

    start = time.perf_counter_ns()
    async with Client(stdio_client(peer.params(where), errlog=errlog), cache=None) as client:
        initialized = (time.perf_counter_ns() - start) / 1e6
        if first is None:
            tools = await client.list_tools()
            first = (tools.tools[0].name, {"text": "hi"})
        await _call(client, *first)
        called = (time.perf_counter_ns() - start) / 1e6
    return initialized, called


async def _held(
    peer: Peer, where: Path, errlog: Any, first: tuple[str, dict[str, Any]] | None
) -> tuple[dict[str, float], dict[str, float], str]:
    """The server's memory (`bench.rss.status`) idle after `initialize`, then idle after its first
    call; and the program measured."""
    from mcp import Client
    from mcp.client.stdio import stdio_client

    before = rss.children()
    async with Client(stdio_client(peer.params(where), errlog=errlog), cache=None) as client:
        pid = rss.server_pid(before)
        await anyio.to_thread.run_sync(rss.wait_idle, pid)
        started = rss.status(pid)
        if first is None:
            tools = await client.list_tools()
            first = (tools.tools[0].name, {"text": "hi"})
        await _call(client, *first)
        await anyio.to_thread.run_sync(rss.wait_idle, pid)
        return started, rss.status(pid), rss.executable(pid)


def memory(group: list[Peer], where: dict[str, Path], rounds: int, errlog: Any, word: str) -> dict[str, dict[str, Any]]:
    """Per server: its memory idle after `initialize` and after the first search, `rounds` sessions."""
    out: dict[str, dict[str, Any]] = {p.label: {"initialize": [], "first_call": [], "program": ""} for p in group}
    for round_no in range(rounds):
        shift = round_no % len(group)
        for peer in group[shift:] + group[:shift]:
            first = peer.search(word) if peer.search else None
            started, called, program = anyio.run(_held, peer, where[peer.label], errlog, first)
            out[peer.label]["initialize"].append(started)
            out[peer.label]["first_call"].append(called)
            out[peer.label]["program"] = program
    return out


def startups(
    group: list[Peer], where: dict[str, Path], rounds: int, warmup: int, errlog: Any, word: str
) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {p.label: {"initialize": [], "first_call": []} for p in group}
    for round_no in range(warmup + rounds):
        shift = round_no % len(group)
        for peer in group[shift:] + group[:shift]:
            first = peer.search(word) if peer.search else None
            init, call = anyio.run(_start, peer, where[peer.label], errlog, first)
            if round_no >= warmup:
                out[peer.label]["initialize"].append(init)
                out[peer.label]["first_call"].append(call)
    return out


def workload(
    group: list[Peer], where: dict[str, Path], memories: int, searches: int, seed: int, errlog: Any
) -> tuple[dict[str, dict[str, list[float]]], dict[str, dict[str, float]]]:
    """Write `memories` memories to every peer (alternating), then time marker and common-word
    searches; and each server's memory, idle after the last search."""
    from contextlib import AsyncExitStack

    from mcp import Client
    from mcp.client.stdio import stdio_client

    texts = Texts(seed)
    rng = random.Random(seed + 1)
    out: dict[str, dict[str, list[float]]] = {p.label: {"write": [], "marker": [], "common": []} for p in group}
    held: dict[str, dict[str, float]] = {}

    async def main() -> None:
        async with AsyncExitStack() as stack:
            clients, pids = {}, {}
            for peer in group:
                before = rss.children()
                clients[peer.label] = await stack.enter_async_context(
                    Client(stdio_client(peer.params(where[peer.label]), errlog=errlog), cache=None)
                )
                pids[peer.label] = rss.server_pid(before)
            for i in range(memories):
                text = texts.memory(i)
                order = group if i % 2 == 0 else group[::-1]
                for peer in order:
                    assert peer.write is not None
                    out[peer.label]["write"].append(await _call(clients[peer.label], *peer.write(i, text)))
                if memories >= 10 and (i + 1) % (memories // 10) == 0:
                    print(f"  written {i + 1:,}/{memories:,}", file=sys.stderr, flush=True)
            for k in range(searches):
                found = marker(rng.randrange(memories))
                common = rng.choice(texts.common)
                order = group if k % 2 == 0 else group[::-1]
                for peer in order:
                    assert peer.search is not None
                    out[peer.label]["marker"].append(await _call(clients[peer.label], *peer.search(found)))
                    out[peer.label]["common"].append(await _call(clients[peer.label], *peer.search(common)))
            for peer in group:
                await anyio.to_thread.run_sync(rss.wait_idle, pids[peer.label])
                held[peer.label] = rss.status(pids[peer.label])

    anyio.run(main)
    return out, held


def _pp(values: list[float]) -> str:
    ordered = sorted(values)
    return f"{percentile(ordered, 50):,.1f} / {percentile(ordered, 95):,.1f}"


def _mem(samples: list[dict[str, float]] | dict[str, float]) -> str:
    """Resident · anonymous · peak, MiB (the median over sessions)."""
    rows = samples if isinstance(samples, list) else [samples]
    if not rows:
        return ""
    mid = [percentile(sorted(r[k] for r in rows), 50) for k in ("VmRSS", "RssAnon", "VmHWM")]
    return " · ".join(f"{v:,.1f}" for v in mid)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--starts", type=int, default=10, help="counted start-up rounds, each condition")
    parser.add_argument("--searches", type=int, default=100, help="marker and common-word searches per server")
    parser.add_argument(
        "--memory-rounds", type=int, default=3, help="sessions per server whose memory is read, on empty data"
    )
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--npm-dir", type=Path, default=NPM_DIR)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None, help="write the samples' summary as JSON here")
    parser.add_argument(
        "--baseline", type=Path, default=None, help="another checkout's src: its kaeru joins the start-up rounds"
    )
    args = parser.parse_args(argv)

    script = install_official(args.npm_dir)
    compile_kaeru()  # as its wheel would be installed, like the official server's package
    if args.baseline is not None:
        import compileall

        compileall.compile_dir(args.baseline / "kaeru", quiet=1)
    work = Path(tempfile.mkdtemp(prefix="kaeru-peers-", dir=args.workdir))
    try:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("KAERU_", "MEMORY_FILE_PATH"))}
        repo = str(Path(__file__).resolve().parent.parent)
        base["PYTHONPATH"] = os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH", "")) if p)
        group = peers(script, base)
        bare, kaeru, official = group
        starting = group if args.baseline is None else [*group, baseline_peer(args.baseline, base)]
        where = {p.label: work / p.label.replace(" ", "-").strip("()") for p in starting}
        for path in where.values():
            path.mkdir()
        word = "vault"
        with (work / "servers-stderr.log").open("a") as errlog:
            print("start-up on empty data …", file=sys.stderr, flush=True)
            # kaeru's first start creates and migrates the vault: a warm-up round, uncounted, as
            # bench.startup does; then every counted start opens an up-to-date empty vault.
            empty = startups(starting, where, args.starts, 1, errlog, word)
            print("memory on empty data …", file=sys.stderr, flush=True)
            held = memory(starting, where, args.memory_rounds, errlog, word)
            working = [kaeru, official, *starting[len(group) :]]
            for path in (where[p.label] for p in working):
                shutil.rmtree(path)
                path.mkdir()
            print(f"writing {args.memories:,} memories to each …", file=sys.stderr, flush=True)
            load, loaded = workload(working, where, args.memories, args.searches, args.seed, errlog)
            disk = {p.label: _dir_bytes(where[p.label]) for p in (kaeru, official)}
            files = {p.label: sorted(f.name for f in where[p.label].iterdir()) for p in (kaeru, official)}
            print("restarts on the written data …", file=sys.stderr, flush=True)
            if args.baseline is not None:  # the baseline restarts on the vault this tree wrote
                where[starting[-1].label] = where[kaeru.label]
            restart = startups(starting, where, args.starts, 1, errlog, marker(0))
        k, o = kaeru.label, official.label
        rows = [
            ("spawn → `initialize` answered, empty", empty, "initialize"),
            (f"restart on the {args.memories:,}-memory vault → `initialize`", restart, "initialize"),
            ("… → first search answered", restart, "first_call"),
        ]
        print(
            f"\n{args.memories:,} memories; {args.starts} start rounds; {args.searches} searches; "
            f"official memory {official_version(args.npm_dir)}; ms p50 / p95\n"
        )
        print("| measure | kaeru | official `memory` | bare SDK server (floor) |\n|---|---|---|---|")
        for title, table, key in rows:
            print(f"| {title} | {_pp(table[k][key])} | {_pp(table[o][key])} | {_pp(table[bare.label][key])} |")
        for title, key in (("write", "write"), ("find a marker word", "marker"), ("common-word search", "common")):
            print(f"| {title}, p50 / p95 | {_pp(load[k][key])} | {_pp(load[o][key])} | |")
        print(
            f"| data on disk after {args.memories:,} short memories | {disk[k] / 1e6:.2f} MB | "
            f"{disk[o] / 1e6:.2f} MB | |"
        )
        b = bare.label
        print(
            f"| memory idle after `initialize`, empty (MiB resident · anon · peak) | {_mem(held[k]['initialize'])} | "
            f"{_mem(held[o]['initialize'])} | {_mem(held[b]['initialize'])} |"
        )
        print(
            f"| … after the first search (its tool) | {_mem(held[k]['first_call'])} | {_mem(held[o]['first_call'])} "
            f"| {_mem(held[b]['first_call'])} |"
        )
        print(
            f"| … after {args.memories:,} writes and {2 * args.searches} searches | {_mem(loaded[k])} | "
            f"{_mem(loaded[o])} | |"
        )
        if args.baseline is not None:
            tree = starting[-1].label
            print(f"\n{tree}, the same rounds:")
            for title, key in (("write", "write"), ("find a marker word", "marker"), ("common-word search", "common")):
                print(f"| {title}, p50 / p95 | {_pp(load[tree][key])} |")
            print(f"| memory idle after `initialize`, empty | {_mem(held[tree]['initialize'])} |")
            print(f"| … after the first search | {_mem(held[tree]['first_call'])} |")
            print(f"| … after {args.memories:,} writes and {2 * args.searches} searches | {_mem(loaded[tree])} |")
        programs = ", ".join(f"{label} `{entry['program']}`" for label, entry in held.items())
        print(f"\nmemory read from the processes: {programs}; {args.memory_rounds} sessions each")
        print(f"\nfiles after the sessions closed: kaeru {files[k]}; official {files[o]}")
        pairs = [(k, bare.label), (o, bare.label)]
        if args.baseline is not None:
            pairs += [(starting[-1].label, bare.label), (k, starting[-1].label)]
        print("\npaired differences (per round), ms p50 / p95")
        for one, other in pairs:
            for title, table, key in rows:
                diffs = [a - b for a, b in zip(table[one][key], table[other][key], strict=True)]
                print(f"| {one} − {other} | {title} | {_pp(diffs)} |")
        if args.out:
            summary = {
                "memories": args.memories,
                "official_version": official_version(args.npm_dir),
                "empty": empty,
                "restart": restart,
                "load": load,
                "disk_bytes": disk,
                "memory_empty": held,
                "memory_loaded": loaded,
                "files": files,
            }
            args.out.write_text(json.dumps(summary))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
