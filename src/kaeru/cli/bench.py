"""`kaeru bench`: how fast the calls an agent makes are on this machine and this backend.

A person deciding where to run the server, or wondering whether a slow answer is the server's,
gets a table of percentiles from one command, with nothing to install or download. The calls run
on a scratch vault (decision 70): a temporary directory, or a scratch database on the configured
PostgreSQL server, filled with `--notes` synthetic memories (`cli/synthetic.py`) and removed
afterwards. The real vault is never opened: `note` would add to it and `context` writes too.

Each call goes through the tools' own path (`ToolRegistry.run`: validation, the use case, the
envelope), in process, as the MCP handlers run it; the transport's share is left out. Every round
calls each operation once, in a shuffled order, so a machine that slows down during the run slows
every operation alike. Wall time and the calling thread's CPU time are both reported: on a busy
machine the first grows and the second does not.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import time
from typing import Any

import click

from kaeru import __version__
from kaeru.cli.common import (
    cli,
    echo_json,
    fail,
    open_service,
    open_store_at,
    progress_bar,
    settings_of,
    wants_json,
)
from kaeru.cli.synthetic import MAIN, OPERATIONS, Workload

#: Calls of each operation made before the counted ones: first-use work (compiled validators,
#: statement caches, the copies a common word is ranked from) is not what a percentile should show.
WARMUP = 3
_DONE = ("ok", "applied", "unchanged")


def _percentiles(samples: list[float]) -> dict[str, float]:
    """p50 / p95 / p99 of `samples` (ms), interpolated between the nearest ranks."""
    if len(samples) == 1:
        return {"p50_ms": samples[0], "p95_ms": samples[0], "p99_ms": samples[0]}
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return {"p50_ms": cuts[49], "p95_ms": cuts[94], "p99_ms": cuts[98]}


def _fill(ctx: click.Context, registry: Any, workload: Workload, notes: int) -> float:
    """Write the scratch vault's notes through the `note` tool; seconds taken."""
    started = time.perf_counter()
    with progress_bar(ctx) as progress:
        task = progress.add_task(f"writing {notes:,} synthetic notes", total=notes)
        for index in range(notes):
            args = workload.note(index)
            envelope = registry.run("note", args)
            if envelope["state"] not in _DONE:
                fail(ctx, "internal", f"a synthetic note was not written: {envelope['issues']}")
            if args["initiative"] == MAIN:
                workload.main_ids.append(envelope["data"]["primary"]["id"])
            progress.advance(task)
    return time.perf_counter() - started


def _measure(ctx: click.Context, registry: Any, workload: Workload, calls: int) -> dict[str, dict[str, float]]:
    """`calls` rounds of every operation (after `WARMUP` uncounted ones): percentiles per operation."""
    wall: dict[str, list[float]] = {op: [] for op in OPERATIONS}
    cpu: dict[str, list[float]] = {op: [] for op in OPERATIONS}
    #: How many nodes each search matched: what makes one rare and the other common, shown.
    matched: dict[str, list[int]] = {op: [] for op in OPERATIONS if op.startswith("search")}
    with progress_bar(ctx) as progress:
        task = progress.add_task(f"measuring {calls:,} rounds of {len(OPERATIONS)} calls", total=WARMUP + calls)
        for round_no in range(WARMUP + calls):
            order = list(OPERATIONS)
            random.Random(round_no).shuffle(order)
            for op in order:
                tool, args = workload.call(op)
                c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
                envelope = registry.run(tool, args)
                t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
                if envelope["state"] not in _DONE:
                    fail(ctx, "internal", f"{op} failed on the scratch vault: {envelope['issues']}")
                if round_no >= WARMUP:
                    wall[op].append((t1 - t0) / 1e6)
                    cpu[op].append((c1 - c0) / 1e6)
                    if op in matched:
                        matched[op].append(envelope["data"]["total"])
            progress.advance(task)
    figures: dict[str, dict[str, float]] = {}
    for op in OPERATIONS:
        row = {**_percentiles(wall[op]), "cpu_p50_ms": statistics.median(cpu[op])}
        figures[op] = {k: round(v, 3) for k, v in row.items()} | {"calls": len(wall[op])}
        if op in matched:
            figures[op]["matched_p50"] = statistics.median(matched[op])
    return figures


def _environment(store: Any) -> dict[str, Any]:
    """Versions and machine: what a figure depends on besides the code (the engine's own version)."""
    engine = {k: v for k, v in store.describe().items() if k in ("sqlite", "postgresql")}
    return {
        "kaeru": __version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        **engine,
    }


def _print_table(document: dict[str, Any]) -> None:
    env = document["environment"]
    click.echo(
        f"kaeru {env['kaeru']} on a scratch {document['backend']} vault of {document['notes']:,} synthetic notes "
        f"(written in {document['build_seconds']:.1f} s); {document['calls']:,} calls an operation, in process "
        f"(Python {env['python']}, {env['cpus']} CPUs)"
    )
    click.echo(f"{'operation':<15}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'CPU p50':>9}  matched")
    for op, row in document["operations"].items():
        matches = f"  {row['matched_p50']:,.0f}" if "matched_p50" in row else ""
        click.echo(
            f"{op:<15}{row['p50_ms']:>9.2f}{row['p95_ms']:>9.2f}{row['p99_ms']:>9.2f}{row['cpu_p50_ms']:>9.2f}{matches}"
        )
    click.echo("rare: a word in a few notes; common: one of the 8 most frequent words (matched: median nodes found).")


@cli.command()
@click.option(
    "--notes", default=2000, show_default=True, type=click.IntRange(10, 1_000_000), help="Scratch vault size."
)
@click.option(
    "--calls", default=100, show_default=True, type=click.IntRange(1, 100_000), help="Counted calls an operation."
)
@click.option("--sqlite", "sqlite", is_flag=True, help="A scratch SQLite vault even when KAERU_DATABASE_URL is set.")
@click.option("--seed", default=20261202, show_default=True, type=int, help="The synthetic text's seed.")
@click.pass_context
def bench(ctx: click.Context, notes: int, calls: int, sqlite: bool, seed: int) -> None:
    """Time the calls an agent makes (note, read, search, recall, context) on a scratch vault.

    The scratch vault is on this vault's backend (a temporary SQLite directory, or a scratch database
    on the same PostgreSQL server: the role needs CREATEDB) and is removed afterwards; the vault
    itself is not opened. --json: {"ok": true, "backend", "notes", "calls", "build_seconds",
    "operations": {op: {"p50_ms", "p95_ms", "p99_ms", "cpu_p50_ms", "calls"[, "matched_p50"]}},
    "environment"}.
    """
    from kaeru.mcp.server import build_server
    from kaeru.storage.factory import scratch_vault, settle

    with scratch_vault(settings_of(ctx), sqlite=sqlite) as scratch:
        store = open_store_at(ctx, scratch)
        try:
            registry = build_server(open_service(scratch, store)).registry
            workload = Workload(seed)
            built = _fill(ctx, registry, workload, notes)
            settle(scratch)
            operations = _measure(ctx, registry, workload, calls)
            document = {
                "ok": True,
                "backend": store.backend,
                "notes": notes,
                "calls": calls,
                "build_seconds": round(built, 3),
                "operations": operations,
                "environment": _environment(store),
            }
        finally:
            store.close()
    if wants_json(ctx):
        echo_json(document)
    else:
        _print_table(document)
