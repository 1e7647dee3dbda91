"""Start-up of `kaeru serve` (stdio) beside a bare SDK server with one tool. A script, not a test.

Each run spawns a server process with pipes, writes `initialize` at once and times, from just
before the spawn: the `initialize` answer, then (after `notifications/initialized`) the first
`tools/list` answer, then the first `tools/call` answer. The servers:

* `bare` — `mcp.server.lowlevel.Server` with one tool, served by the SDK's `stdio_server`, started
  as `python -m bench.startup bare` (the same interpreter, the same way);
* `kaeru-empty` — `kaeru serve` on a new empty SQLite vault (made by the first run; its migrations
  run once, so every counted run opens a vault that is up to date);
* `kaeru-built` — `kaeru serve` on `--vault DIR` (e.g. one `python -m bench.run` kept, or one built
  here with `--notes N`).

Runs are paired: each round starts every server once, in an order that rotates per round, so drift
on a shared machine lands on all of them. Prints p50/p95 per server and milestone, and the paired
differences kaeru − bare (p50/p95 of the per-round differences), and each server process's CPU time
(user + system, spawn to exit: the wall times above are shared with whatever else the machine runs).
Then the memory each server process holds (`bench.rss`, MiB): resident (`VmRSS`) as `initialize` is
answered (before `notifications/initialized`, so before kaeru builds its tools) and as the first
`tools/call` is answered, the anonymous part of the latter (`RssAnon`: not shared libraries) and the
peak (`VmHWM`) then.

`--baseline SRC` adds the same kaeru servers run from another checkout's `src` directory (e.g. a
`git archive main` unpacked), compiled to bytecode as this one is, so that two trees are measured
in the same rounds; with it every kaeru server is started as `python -m kaeru serve`, and the paired
differences this tree − baseline are printed too.

    PYTHONPATH=src python -m bench.startup [--runs 20] [--vault DIR [--database-url URL] | --notes 10000]
        [--baseline OTHER/src]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import rss
from bench.stats import percentile

MILESTONES = ("initialize", "tools/list", "tools/call")
#: Per run, beside the milestones: the first call's own wait (its answer after the `tools/list`
#: answer: what a lazy server's first call pays for building what it needs), and the server
#: process's CPU time, spawn to exit (ms).
CALL_AFTER_LIST = "call − list"
CPU = "process CPU"
#: Memory (MiB, `bench.rss`): resident as `initialize` is answered; resident, its anonymous part and
#: the peak as the first `tools/call` is answered.
MEMORY = ("RSS at initialize", "RSS at tools/call", "anon RSS at tools/call", "peak RSS at tools/call")
INIT_PARAMS = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "kaeru-startup-bench", "version": "0"},
}


def _serve_bare() -> None:
    """The baseline: the SDK's low-level server with one tool, over the SDK's stdio transport."""
    from typing import Any as _Any

    import anyio
    import mcp_types as types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    tool = types.Tool(
        name="echo",
        description="Echo the text back.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )

    async def list_tools(
        ctx: ServerRequestContext[_Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: ServerRequestContext[_Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        text = str((params.arguments or {}).get("text", ""))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    server: Server[_Any] = Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


def compile_kaeru() -> None:
    """Compile kaeru's modules to bytecode, as installing its wheel does (pip compiles at install).

    The SDK and every other dependency in site-packages were compiled when installed; an editable
    checkout is compiled at its first import, unless PYTHONDONTWRITEBYTECODE is set (it is on the
    machines these figures come from): then every start would compile kaeru from source, a cost
    (~90 ms of CPU to the first `tools/list`) no installed server pays.
    """
    import compileall

    import kaeru

    compileall.compile_dir(Path(kaeru.__file__).parent, quiet=1)


class Server:
    """One kind of server: how to start it and which tool call to make first."""

    def __init__(self, label: str, command: list[str], env: dict[str, str], call: dict[str, Any]):
        self.label, self.command, self.env, self.call = label, command, env, call

    def run_once(self) -> dict[str, float]:
        """Spawn, initialize, list, call; the milliseconds from the spawn to each answer."""
        start = time.perf_counter_ns()
        proc = subprocess.Popen(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env
        )
        assert proc.stdin is not None and proc.stdout is not None
        out: dict[str, float] = {}
        try:

            def ask(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(
                    json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()
                )
                proc.stdin.write(b"\n")
                proc.stdin.flush()
                while True:
                    line = proc.stdout.readline()
                    if not line:
                        raise RuntimeError(f"{self.label}: the server exited (code {proc.poll()}) during {method}")
                    message = json.loads(line)
                    if message.get("id") == ident:
                        if "error" in message:
                            raise RuntimeError(f"{self.label}: {method} failed: {message['error']}")
                        result: dict[str, Any] = message["result"]
                        return result

            ask(1, "initialize", INIT_PARAMS)
            out["initialize"] = (time.perf_counter_ns() - start) / 1e6
            out[MEMORY[0]] = rss.status(proc.pid)["VmRSS"]
            proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            listed = ask(2, "tools/list", {})
            out["tools/list"] = (time.perf_counter_ns() - start) / 1e6
            if not listed.get("tools"):
                raise RuntimeError(f"{self.label}: tools/list returned no tools")
            answer = ask(3, "tools/call", self.call)
            out["tools/call"] = (time.perf_counter_ns() - start) / 1e6
            held = rss.status(proc.pid)
            out[MEMORY[1]], out[MEMORY[2]], out[MEMORY[3]] = held["VmRSS"], held["RssAnon"], held["VmHWM"]
            if not answer.get("content"):
                raise RuntimeError(f"{self.label}: the tool call returned no content")
        finally:
            proc.stdin.close()
            # The server exits at the end of its input; its CPU time is read as it is reaped (killed
            # after 30 s, as before).
            deadline = time.monotonic() + 30
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > deadline:
                    proc.kill()
                    _, status, usage = os.wait4(proc.pid, 0)
                    break
                time.sleep(0.005)
            proc.returncode = os.waitstatus_to_exitcode(status)
        out[CALL_AFTER_LIST] = out["tools/call"] - out["tools/list"]
        out[CPU] = (usage.ru_utime + usage.ru_stime) * 1e3
        return out


def _kaeru_command() -> list[str]:
    script = Path(sys.executable).with_name("kaeru")
    return [str(script), "serve"] if script.exists() else [sys.executable, "-m", "kaeru.cli.app", "serve"]


def _module_command() -> list[str]:
    return [sys.executable, "-m", "kaeru", "serve"]


def _build(directory: Path, notes: int) -> None:
    from bench.build import build
    from bench.corpus import CorpusBuilder
    from kaeru.config import Settings
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    settings = Settings.from_env({"KAERU_VAULT": str(directory)})
    service = Service(open_store(settings), settings)
    try:
        started = time.perf_counter()
        build(service, CorpusBuilder(notes), "bulk")
        print(f"built {notes:,} notes in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    finally:
        service.store.close()


def _row(label: str, values: list[float], width: int = 34) -> str:
    ordered = sorted(values)
    return f"{label:<{width}} {percentile(ordered, 50):>9.1f} {percentile(ordered, 95):>9.1f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", nargs="?", choices=("bench", "bare"), default="bench")
    parser.add_argument("--runs", type=int, default=20, help="counted rounds (each starts every server once)")
    parser.add_argument("--warmup", type=int, default=2, help="rounds not counted, first")
    parser.add_argument("--vault", type=Path, help="a built SQLite vault directory for kaeru-built")
    parser.add_argument("--notes", type=int, default=0, help="build a vault of this many notes for kaeru-built")
    parser.add_argument(
        "--source",
        action="store_true",
        help="leave kaeru's bytecode uncompiled (by default it is compiled first, see compile_kaeru)",
    )
    parser.add_argument(
        "--database-url",
        default=None,
        help="kaeru-built on this PostgreSQL database (with --vault, e.g. bench.million's)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="another checkout's src directory: its kaeru servers are measured in the same rounds",
    )
    args = parser.parse_args(argv)
    if args.mode == "bare":
        _serve_bare()
        return

    if not args.source:
        compile_kaeru()
        if args.baseline is not None:
            import compileall

            compileall.compile_dir(args.baseline / "kaeru", quiet=1)
    work = Path(tempfile.mkdtemp(prefix="kaeru-startup-"))
    try:
        base = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}
        repo = str(Path(__file__).resolve().parent.parent)
        base["PYTHONPATH"] = os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH", "")) if p)
        word = {"initiatives": ["kaeru-core"], "text": "vault"}
        servers = [
            Server(
                "bare",
                [sys.executable, "-m", "bench.startup", "bare"],
                base,
                {"name": "echo", "arguments": {"text": "hi"}},
            )
        ]
        built = args.vault
        if built is None and args.notes:
            built = work / "built"
            _build(built, args.notes)
        trees = [("kaeru", _kaeru_command() if args.baseline is None else _module_command(), base)]
        if args.baseline is not None:
            other = os.pathsep.join(p for p in (str(args.baseline.resolve()), base["PYTHONPATH"]) if p)
            trees.append(("base", _module_command(), {**base, "PYTHONPATH": other}))
        for tree, command, env in trees:
            servers.append(
                Server(
                    f"{tree}-empty",
                    command,
                    {**env, "KAERU_VAULT": str(work / f"{tree}-empty")},
                    {"name": "search", "arguments": word},
                )
            )
            if built is not None:
                servers.append(
                    Server(
                        f"{tree}-built",
                        command,
                        {**env, "KAERU_VAULT": str(built)}
                        | ({"KAERU_DATABASE_URL": args.database_url} if args.database_url else {}),
                        {"name": "search", "arguments": word},
                    )
                )
        times: dict[str, dict[str, list[float]]] = {
            s.label: {m: [] for m in (*MILESTONES, CALL_AFTER_LIST, CPU, *MEMORY)} for s in servers
        }
        for round_no in range(args.warmup + args.runs):
            shift = round_no % len(servers)
            for server in servers[shift:] + servers[:shift]:
                got = server.run_once()
                if round_no >= args.warmup:
                    for milestone, ms in got.items():
                        times[server.label][milestone].append(ms)
        print(f"start-up, ms from spawn to each answer; {args.runs} paired rounds (+{args.warmup} warm-up)")
        print(f"{'server / milestone':<34} {'p50':>9} {'p95':>9}")
        for server in servers:
            for milestone in (*MILESTONES, CALL_AFTER_LIST, CPU):
                print(_row(f"{server.label} → {milestone}", times[server.label][milestone]))
        pairs = [(server.label, "bare") for server in servers[1:]]
        if args.baseline is not None:
            pairs += [(s.label, "base" + s.label.removeprefix("kaeru")) for s in servers if s.label.startswith("kaeru")]
        for label, other in pairs:
            for milestone in (*MILESTONES, CALL_AFTER_LIST, CPU):
                diffs = [a - b for a, b in zip(times[label][milestone], times[other][milestone], strict=True)]
                print(_row(f"{label} − {other}, {milestone}", diffs))
        print(f"\nmemory, MiB (/proc/<pid>/status); {args.runs} paired rounds")
        print(f"{'server / when':<50} {'p50':>9} {'p95':>9}")
        for server in servers:
            for what in MEMORY:
                print(_row(f"{server.label} → {what}", times[server.label][what], 50))
        for label, other in pairs:
            for what in MEMORY:
                diffs = [a - b for a, b in zip(times[label][what], times[other][what], strict=True)]
                print(_row(f"{label} − {other}, {what}", diffs, 50))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
