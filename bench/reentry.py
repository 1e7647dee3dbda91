"""Re-entry at scale: `context`, `recall` and `reflect` on the benchmark corpus, in process.

The corpus is `bench/corpus.py`'s (the searched initiative, `kaeru-core`, holds 40 % of the nodes),
built in bulk, plus what re-entry reads besides plain notes, in the searched initiative: 20 rules,
60 open tasks (a third overdue), 30 open claims, 40 reminders (half due) and 10 doubted notes.
`recall_selective` / `recall_common` ask two planted rare words / two of the commonest;
`recall_resume` asks no words, `task_intent` resume_work (an agent picking its work up again);
`recall_sentence` 3–8 words drawn by the corpus's Zipf frequencies, a new combination each time
(an agent's question); `recall_paragraph` 50 such words (a pasted paragraph, decision 168). Each round times every op once, in shuffled order, after warm-up rounds;
p50/p95 of wall time and of the calling thread's CPU time, ms. The heap is settled (collected, then frozen) once the service is open and
again, untimed, after an op that imported modules, as `kaeru serve` settles its own (decision 267). `context_hygiene` is `context` as `KAERU_HYGIENE=1` serves it,
`hygiene` one pass by hand (the first pass, in the warm-up, does any moving).

    python -m bench.reentry --sizes 10000,100000 [--backend sqlite|postgres|both] [--ops 40]
    python -m bench.reentry --sizes 100000 --keep --workdir /tmp/w     # keep the vault
    python -m bench.reentry --vault /tmp/w/kaeru-bench-sqlite-100000-…  # measure a kept vault again

Before/after in one run: build with `--keep`, then alternate `PYTHONPATH=<other tree>/src` and this
tree on copies of the kept vault (`--vault` copies it first unless `--in-place`): the older code
cannot open a vault a newer migration touched, the newer one migrates an older vault when it opens.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import build as builder_mod
from bench.corpus import MAIN, CorpusBuilder
from bench.vaults import BackendUnavailable, BenchVault, new_vault

#: `context_hygiene` is `context` with `KAERU_HYGIENE=1` (a hygiene pass first, at most hourly per
#: initiative); `hygiene` is one pass asked for by hand (`kaeru hygiene`), which always runs.
#: `recall_sentence` asks 3–8 words drawn by the corpus's own Zipf frequencies (as `bench.soak` does):
#: an agent's question is a sentence, mostly common words, each combination new (decision 126);
#: `recall_paragraph` 50 of them, a paragraph pasted as the question (decision 168).
OPS = (
    "context",
    "context_hygiene",
    "hygiene",
    "recall_selective",
    "recall_common",
    "recall_resume",
    "recall_sentence",
    "recall_paragraph",
    "reflect",
)
#: The ops a run times unless `--only` names others: a paragraph's words are new every call and read
#: whole, which a full run's rounds would be dominated by.
DEFAULT_OPS = tuple(op for op in OPS if op != "recall_paragraph")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def decorate(service: Any, rng: random.Random) -> None:
    """What re-entry shows besides notes: rules, tasks, claims, reminders, doubts (in MAIN)."""
    from kaeru.api.requests import parse

    def call(tool: str, args: dict[str, Any]) -> str:
        outcome, _ = getattr(service, tool)(parse(tool, {"initiative": MAIN, **args}))
        assert outcome.primary is not None, outcome.issues
        return str(outcome.primary.id)

    for i in range(20):
        call("note", {"kind": "rule", "text": f"Rule {i}: always run the migrations twice before release {i}."})
    for i in range(60):
        due = f"2020-01-{1 + i % 28:02d}" if i % 3 == 0 else f"2099-01-{1 + i % 28:02d}"
        call("task", {"text": f"Task {i}: port the cache layer step {i}", "due": due})
    for i in range(30):
        call("claim", {"text": f"Claim {i}: the cache misses come from eviction {i}"})
    for i in range(40):
        node = call("note", {"kind": "observation", "text": f"Remember to check the dashboards {i}"})
        after = "2020-01-01" if i % 2 == 0 else "2099-01-01"
        call("revise", {"node": {"id": node}, "patch": {"reminder": {"after": after, "window_days": 36500}}})
    for i in range(10):
        node = call("note", {"kind": "decision", "text": f"Decision {i}: keep the old index {rng.random()}"})
        doubt = call("note", {"kind": "observation", "text": f"Doubt {i}: the old index is too slow"})
        call("link", {"from": {"id": doubt}, "to": {"id": node}, "edge_type": "contradicts", "weight": 0.5})


def make_vault(backend: str, size: int, workdir: Path | None, keep: bool) -> tuple[BenchVault, float]:
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    vault = new_vault(backend, f"{size}", workdir, keep)
    settings = vault.settings()
    store = open_store(settings)
    try:
        service = Service(store, settings)
        t0 = time.perf_counter()
        builder_mod.build(service, CorpusBuilder(size), "bulk")
        decorate(service, random.Random(size))
        return vault, time.perf_counter() - t0
    finally:
        store.close()


def measure(vault: BenchVault, size: int, ops: int, warmup: int, only: tuple[str, ...] = DEFAULT_OPS) -> dict[str, Any]:
    from kaeru.api.requests import parse
    from kaeru.mcp.heap import settle_heap
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    builder = CorpusBuilder(size)
    for _ in builder.notes():  # the query words are known once the notes are drawn
        pass
    selective = list(builder.corpus.selective)
    common = list(builder.corpus.broad_main)
    settings = vault.settings()
    store = open_store(settings)
    rng = random.Random(11)
    samples: dict[str, list[float]] = {op: [] for op in only}
    cpu: dict[str, list[float]] = {op: [] for op in only}
    extra: dict[str, Any] = {}
    try:
        service = Service(store, settings)
        tidying = Service(store, replace(settings, hygiene=True))
        settle_heap()  # as `kaeru serve` does before serving, and again (untimed) after a call imports
        settled = len(sys.modules)

        def run(op: str) -> Any:
            if op == "context":
                return service.context(parse("context", {"initiative": MAIN}))
            if op == "context_hygiene":
                return tidying.context(parse("context", {"initiative": MAIN}))
            if op == "hygiene":
                return service.hygiene(MAIN)
            if op == "reflect":
                return service.reflect(parse("reflect", {"initiative": MAIN}))
            if op == "recall_resume":
                return service.recall(parse("recall", {"initiatives": [MAIN], "task_intent": "resume_work"}))
            if op == "recall_sentence":
                words = builder.zipf_words(rng, rng.randint(3, 8))
            elif op == "recall_paragraph":
                words = builder.zipf_words(rng, 50)
            else:
                words = rng.sample(selective, 2) if op == "recall_selective" else rng.sample(common, 2)
            return service.recall(parse("recall", {"initiatives": [MAIN], "query": " ".join(words)}))

        for round_no in range(warmup + ops):
            order = list(only)
            rng.shuffle(order)
            for op in order:
                c0, t0 = time.thread_time(), time.perf_counter()
                outcome = run(op)
                t1, c1 = time.perf_counter(), time.thread_time()
                if len(sys.modules) > settled:
                    settle_heap()
                    settled = len(sys.modules)
                if round_no >= warmup:
                    samples[op].append((t1 - t0) * 1000)
                    cpu[op].append((c1 - c0) * 1000)
                elif round_no == 0 and op == "context":
                    extra["context_sections"] = {s.name: [len(s.views), s.total] for s in outcome.sections}
                    extra["context_omitted"] = [[o.section, o.count, o.reason] for o in outcome.coverage.omitted]
                elif round_no == 0 and op == "reflect":
                    extra["reflect_counts"] = outcome.counts
    finally:
        store.close()
        gc.unfreeze()  # the next size's heap is its own
    out: dict[str, Any] = {}
    for op in only:
        out[op] = {
            "p50": round(statistics.median(samples[op]), 2),
            "p95": round(_pct(samples[op], 0.95), 2),
            "cpu_p50": round(statistics.median(cpu[op]), 2),
            "cpu_p95": round(_pct(cpu[op], 0.95), 2),
        }
    return {"ops": out, **extra}


def _copy(vault: BenchVault, workdir: Path | None) -> BenchVault:
    if vault.backend != "sqlite":
        raise BackendUnavailable("--vault copies SQLite vaults only; use --in-place for PostgreSQL")
    target = Path(tempfile.mkdtemp(prefix="kaeru-reentry-copy-", dir=workdir))
    shutil.rmtree(target)
    shutil.copytree(vault.vault_dir, target)
    return BenchVault("sqlite", target)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="python -m bench.reentry", description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--backend", default="sqlite", choices=("sqlite", "postgres", "both"))
    p.add_argument("--ops", type=int, default=40)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--keep", action="store_true")
    p.add_argument("--workdir", type=Path, default=None)
    p.add_argument("--vault", type=Path, default=None, help="measure this kept SQLite vault (a copy of it)")
    p.add_argument("--database-url", default=None, help="measure this kept PostgreSQL vault (in place)")
    p.add_argument("--size", type=int, default=None, help="the corpus size of --vault/--database-url")
    p.add_argument("--in-place", action="store_true", help="with --vault: no copy")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument(
        "--only",
        default=",".join(DEFAULT_OPS),
        help="the ops to time, comma-separated (default: all but recall_paragraph)",
    )
    a = p.parse_args(argv)
    only = tuple(op for op in a.only.split(",") if op)
    if set(only) - set(OPS):
        p.error(f"unknown ops: {', '.join(sorted(set(only) - set(OPS)))}")
    results: list[dict[str, Any]] = []
    import kaeru

    code = str(Path(kaeru.__file__).parent)
    if a.vault is not None or a.database_url is not None:
        if a.size is None:
            p.error("--size is required with --vault/--database-url")
        if a.database_url is not None:
            kept = BenchVault("postgres", a.vault or Path(tempfile.mkdtemp()), a.database_url, keep=True)
            vault = kept
        else:
            kept = BenchVault("sqlite", a.vault, keep=True)
            vault = kept if a.in_place else _copy(kept, a.workdir)
        try:
            run = measure(vault, a.size, a.ops, a.warmup, only)
        finally:
            if vault is not kept:
                shutil.rmtree(vault.vault_dir, ignore_errors=True)
        results.append({"backend": vault.backend, "size": a.size, "code": code, **run})
    else:
        backends = ("sqlite", "postgres") if a.backend == "both" else (a.backend,)
        for backend in backends:
            for size in [int(s) for s in a.sizes.split(",")]:
                try:
                    vault, build_s = make_vault(backend, size, a.workdir, a.keep)
                except BackendUnavailable as exc:
                    print(f"skipped: {exc}", file=sys.stderr)
                    continue
                try:
                    run = measure(vault, size, a.ops, a.warmup, only)
                finally:
                    vault.drop()
                kept_at = str(vault.database_url or vault.vault_dir) if a.keep else None
                results.append(
                    {
                        "backend": backend,
                        "size": size,
                        "code": code,
                        "build_s": round(build_s, 1),
                        "vault": kept_at,
                        **run,
                    }
                )
    for r in results:
        print(f"\n{r['backend']} {r['size']:,} nodes ({r['code']}){' vault ' + r['vault'] if r.get('vault') else ''}")
        print("| op | p50 | p95 | CPU p50 | CPU p95 |\n|---|---:|---:|---:|---:|")
        for op, s in r["ops"].items():
            print(f"| {op} | {s['p50']} | {s['p95']} | {s['cpu_p50']} | {s['cpu_p95']} |")
        print("context sections (shown, total):", r.get("context_sections"))
        print("reflect counts:", r.get("reflect_counts"))
    if a.out is not None:
        a.out.write_text(json.dumps(results, indent=2))
    return {"runs": results}


if __name__ == "__main__":
    main()
