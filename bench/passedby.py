"""A project others were written past: what coming back to it costs (decisions 145–147).

    python -m bench.passedby [--project 500] [--since 60000] [--questions 40] [--workdir DIR] [--out FILE]

Every other harness spreads its initiatives evenly through the vault, so each one's newest notes are
near the vault's newest. An agent often comes back to a project that others have been written past:
its notes are all old, and a statement that walks the vault in time or seq order until it has found
enough of the project's members passes every node written since. This builds that vault once —
`--project` notes of `old-project` through the real `note` use case, then `--since` notes of the
benchmark corpus (`bench.build`'s bulk mode) — and times, on `old-project`, main-thread CPU p50 /
p95 / max of each call a returning agent makes: `recall` of two words drawn from the project's 20
newest notes, asked for the first time (`recall_cold`) and again (`recall_warm`); `timeline`
anchored at its newest note; `reflect`; `search` of one type and no text; `context`. Run it from
two trees (`PYTHONPATH=<tree>/src:<tree>`) on the same kept vault (`--workdir`, built once) to
compare them. SQLite only: PostgreSQL plans these from its per-value statistics (decision 147).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.build import build
from bench.corpus import CorpusBuilder
from kaeru.config import Settings
from kaeru.domain.text import content_tokens
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import SearchQuery
from kaeru.storage.factory import open_store

PROJECT = "old-project"
#: The project's newest notes the questions are drawn from: what a returning agent asks about first.
NEWEST = 20


def build_vault(vault: Path, project: int, since: int) -> None:
    """`project` notes of `PROJECT`, then `since` notes of the benchmark corpus in other initiatives."""
    settings = Settings.from_env({"KAERU_VAULT": str(vault)})
    store = open_store(settings)
    try:
        service = Service(store, settings)
        run = build_server(service).registry.run
        for spec in list(CorpusBuilder(max(project, 100)).notes())[:project]:
            args = {**spec.args(), "initiative": PROJECT}
            args.pop("link_to", None)
            assert run("note", args)["state"] == "applied"
        build(service, CorpusBuilder(since), "bulk", quiet=True)
    finally:
        store.close()


def _timed(call: Callable[[], Any], count: int, warmup: int = 3) -> dict[str, float]:
    cpu = []
    for i in range(warmup + count):
        start = time.thread_time()
        call()
        if i >= warmup:
            cpu.append((time.thread_time() - start) * 1000)
    return _summary(cpu)


def _summary(cpu: list[float]) -> dict[str, float]:
    cpu.sort()
    return {
        "n": len(cpu),
        "p50": round(statistics.median(cpu), 2),
        "p95": round(cpu[min(len(cpu) - 1, int(0.95 * len(cpu)))], 2),
        "max": round(cpu[-1], 2),
    }


def measure(vault: Path, questions: int, seed: int = 9) -> dict[str, dict[str, float]]:
    settings = Settings.from_env({"KAERU_VAULT": str(vault)})
    store = open_store(settings)
    try:
        run = build_server(Service(store, settings)).registry.run
        with store.read() as session:
            scope = session.initiative_by_name(PROJECT)
            assert scope is not None, f"{vault} holds no {PROJECT}: build it first"
            rows, _, _ = session.search(
                SearchQuery(initiative_ids=[scope.id], omit_superseded=False, window=NEWEST, count_total=False)
            )
            newest = [r.id for r in rows]
            bodies = [n.body or n.name for n in session.nodes_by_ids(newest).values()]
        rng = random.Random(seed)
        asked = [" ".join(rng.sample(content_tokens(b), 2)) for b in (rng.choice(bodies) for _ in range(questions))]
        out: dict[str, dict[str, float]] = {}
        for kind in ("recall_cold", "recall_warm"):
            cpu = []
            for query in asked:
                start = time.thread_time()
                run("recall", {"initiatives": [PROJECT], "query": query})
                cpu.append((time.thread_time() - start) * 1000)
            out[kind] = _summary(cpu)  # the second pass asks the same questions again
        calls: dict[str, tuple[str, dict[str, Any]]] = {
            "timeline_at_newest": ("timeline", {"initiatives": [PROJECT], "anchor": {"id": newest[0]}}),
            "reflect": ("reflect", {"initiative": PROJECT}),
            "search_type_no_text": ("search", {"initiatives": [PROJECT], "filters": {"types": ["episode"]}}),
            "context": ("context", {"initiative": PROJECT}),
        }
        for label, (tool, args) in calls.items():
            assert run(tool, args)["state"] == "ok", label
            out[label] = _timed(lambda tool=tool, args=args: run(tool, args), questions)
        return out
    finally:
        store.close()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="python -m bench.passedby", description=__doc__.split("\n")[0])
    p.add_argument("--project", type=int, default=500, help="notes of the project come back to")
    p.add_argument("--since", type=int, default=60_000, help="notes of other projects written after it")
    p.add_argument("--questions", type=int, default=40)
    p.add_argument("--workdir", type=Path, default=None, help="keep the vault here (built once, reused)")
    p.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    args = p.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="kaeru-passedby-"))
    vault = workdir / f"passedby-{args.project}-{args.since}"
    if not (vault / "vault.sqlite3").exists():
        started = time.perf_counter()
        build_vault(vault, args.project, args.since)
        print(f"built {vault} in {time.perf_counter() - started:.0f} s")
    figures = measure(vault, args.questions)
    print(f"{PROJECT}: {args.project} notes, then {args.since:,} elsewhere; main-thread CPU ms")
    print("| call | p50 | p95 | max |\n|---|---:|---:|---:|")
    for label, row in figures.items():
        print(f"| {label} | {row['p50']} | {row['p95']} | {row['max']} |")
    report = {"project": args.project, "since": args.since, "questions": args.questions, "cpu_ms": figures}
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
