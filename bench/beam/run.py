"""`python -m bench.beam` — ingest beam-dev into a fresh vault and rank messages for every question.

See bench/beam/__init__.py for what is measured and how.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import vaults
from bench.beam.data import CATEGORIES, KNOWLEDGE_UPDATE, BeamDataset, BeamQuestion, load
from bench.locomo import baselines, kaeru_side, metrics, pooled
from bench.locomo.data import DataError
from bench.locomo.run import add_embedding_cache, chosen_systems, embedding_cache, log, machine

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO_ROOT / "bench" / "data" / "beam-dev"
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "beam.json"
SYSTEMS = ("recall", "bm25")
SCHEMA_VERSION = 1
DEFAULT_SEED = 20251031


@dataclass
class System:
    name: str
    kind: str  # "service" or "baseline"
    call: str
    service_call: Callable[..., Any] | None = None
    channel: str | None = None  # the channel an ablation row disables
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    rankings: dict[str, list[str]] = field(default_factory=dict)
    current_first: dict[str, bool] = field(default_factory=dict)
    plan_channels: set[str] = field(default_factory=set)
    latencies_ns: list[int] = field(default_factory=list)
    cpu_ns: list[int] = field(default_factory=list)  # the calling thread's CPU time: steady on a busy machine
    foreign: int = 0
    indexed: dict[str, int] = field(default_factory=dict)  # a baseline's corpora: initiative → documents
    copied: bool = False  # an ablation row of a channel no plan used: the full recall's results

    def record(self, q: BeamQuestion, ranked: list[str]) -> None:
        self.rankings[q.key] = ranked
        self.scores[q.key] = metrics.score(ranked, q.evidence)
        if CATEGORIES[q.category] == KNOWLEDGE_UPDATE:
            self.current_first[q.key] = current_first(ranked, q)


def current_first(ranked: list[str], q: BeamQuestion) -> bool:
    """Whether the best updated message ranks strictly above the best original one (the README's
    definition, read literally: an updated message not returned is never first, an original one
    not returned ranks last, and where the data names the same message as both, it is not first)."""
    position = {t: i for i, t in enumerate(ranked)}
    updated = min((position[t] for t in q.evidence if t in position), default=None)
    if updated is None:
        return False
    original = min((position[t] for t in q.original if t in position), default=len(ranked))
    return updated < original


def _best_rank(ranked: list[str], wanted: tuple[str, ...]) -> int | None:
    return next((i for i, t in enumerate(ranked, 1) if t in wanted), None)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.beam", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the beam-dev folder")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N")
    parser.add_argument(
        "--conversation", default=None, metavar="K", help="only conversation K, alone in the vault (one initiative)"
    )
    parser.add_argument("--limit-questions", type=int, default=None, metavar="N", help="first N per conversation")
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), help=f"any of {', '.join(SYSTEMS)}")
    parser.add_argument("--no-ablation", action="store_true", help="recall without the per-channel rows")
    add_pooled(parser)
    parser.add_argument(
        "--repair-evidence",
        action="store_true",
        help="flatten the nested id lists of two questions (default: drop them, as the reference count of 203 does)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="node ids")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON report path")
    parser.add_argument("--workdir", type=Path, default=None, help="where the temporary vault is made")
    parser.add_argument("--keep-vault", action="store_true")
    vaults.add_backend_argument(parser)
    parser.add_argument(
        "--per-question",
        action="store_true",
        help="add each question's first evidence rank (update questions: the updated and original ranks)",
    )
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="enable the semantic channel (needs the [semantic] extra); vectors are computed after ingest",
    )
    add_embedding_cache(parser)
    args = parser.parse_args(argv)
    args.systems = chosen_systems(parser, args.systems, SYSTEMS)
    return args


def add_pooled(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pooled",
        action="store_true",
        help="every conversation in ONE initiative (a long memory); BM25 over the same pooled messages",
    )


def evaluate(system: System, vault: kaeru_side.Vault, data: BeamDataset, quiet: bool) -> None:
    t0 = time.perf_counter()
    by_index = {c.index: c for c in data.conversations}
    bm25: dict[int, baselines.BM25] = {}
    for q in data.questions:
        conv = by_index[q.conv_index]
        if system.service_call is not None:
            vault.clock.jump()
            ranked = kaeru_side.ask(vault, system.service_call, conv, q.text)
            system.latencies_ns.append(ranked.elapsed_ns)
            system.cpu_ns.append(ranked.cpu_ns)
            system.foreign += ranked.foreign
            system.plan_channels.update(ranked.channels or ())
            turns = ranked.turns
        else:
            if conv.index not in bm25:
                bm25[conv.index] = baselines.BM25(conv.turns)
                system.indexed[conv.initiative] = len(conv.turns)
            t1 = time.perf_counter_ns()
            turns = bm25[conv.index].rank(q.text)
            system.latencies_ns.append(time.perf_counter_ns() - t1)
        system.record(q, turns)
    log(quiet, f"  {system.name}: {len(system.scores)} questions in {time.perf_counter() - t0:.1f}s")


def summarise(system: System, data: BeamDataset, full: System | None) -> dict[str, Any]:
    keys = [q.key for q in data.questions]
    overall = metrics.mean_scores(system.scores[k] for k in keys)
    firsts = list(system.current_first.values())
    out: dict[str, Any] = {
        "kind": system.kind,
        "call": system.call,
        "disabled_channel": system.channel,
        "copied_from_recall": system.copied,
        "foreign_hits": system.foreign,
        "plan_channels": sorted(system.plan_channels) or None,
        "overall": overall,
        "current_first": {"n": len(firsts), "share": round(sum(firsts) / len(firsts), 4) if firsts else None},
        "by_category": {
            name: metrics.mean_scores(system.scores[q.key] for q in data.questions if q.category == number)
            for number, name in CATEGORIES.items()
        },
        "latency_ms": metrics.latency(system.latencies_ns),
        "cpu_ms": metrics.latency(system.cpu_ns),
        "indexed": system.indexed or None,
    }
    if full is not None and system.channel is not None:
        base = metrics.mean_scores(full.scores[k] for k in keys)
        base_first = list(full.current_first.values())
        out["vs_recall"] = {
            "delta": {m: round(overall[m] - base[m], 4) for m in metrics.METRICS},
            "current_first": round((sum(firsts) - sum(base_first)) / len(firsts), 4) if firsts else None,
        }
    return out


def _f(value: Any, width: int = 7) -> str:
    return "—".rjust(width) if value is None else f"{value:{width}.3f}"


def render(report: dict[str, Any]) -> str:
    counts = report["counts"]
    lines = [
        "",
        f"beam-dev retrieval — {counts['conversations']} conversations, {counts['turns']:,} messages, "
        f"{counts['questions_evaluated']} questions ({counts['knowledge_update']} knowledge_update)"
        + (f"; pooled: every message in one initiative ({report['pool']['initiative']})" if report.get("pool") else ""),
        "",
        f"{'system':<26}{'n':>5}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'MRR':>7}{'cur-1st':>8}{'p50 ms':>9}{'cpu p50':>9}"
        f"{'ΔR@10':>8}{'ΔMRR':>8}{'Δcur':>8}",
    ]
    for name, s in report["systems"].items():
        o = s["overall"]
        label = f"{name} (off=)" if s.get("copied_from_recall") else name
        delta = ""
        if s.get("vs_recall"):
            d = s["vs_recall"]
            delta = f"{d['delta']['recall@10']:>+8.3f}{d['delta']['mrr']:>+8.3f}{d['current_first'] or 0:>+8.3f}"
        lines.append(
            f"{label:<26}{o['n']:>5}{_f(o['recall@1'])}{_f(o['recall@5'])}{_f(o['recall@10'])}{_f(o['mrr'])}"
            f"{_f(s['current_first']['share'], 8)}{_f(s['latency_ms'].get('p50'), 9)}"
            f"{_f(s['cpu_ms'].get('p50'), 9)}{delta}"
        )
    lines.append(
        "R@k: share of a question's evidence messages in the top k; MRR: 1/rank of the first; cur-1st: "
        "knowledge_update questions whose best updated message ranks above the best original one; "
        "(off=): channel in no plan, results copied from recall."
    )
    main = [n for n, s in report["systems"].items() if not s.get("disabled_channel")]
    lines += ["", f"{'per category':<26}{'n':>5}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'MRR':>7}"]
    for name in CATEGORIES.values():
        if not report["counts"]["by_category"].get(name):
            continue
        lines.append(name)
        for system in main:
            o = report["systems"][system]["by_category"][name]
            lines.append(
                f"  {system:<24}{o['n']:>5}{_f(o['recall@1'])}{_f(o['recall@5'])}{_f(o['recall@10'])}{_f(o['mrr'])}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = datetime.now(UTC)
    data_dir = args.data.resolve()
    try:
        data = load(data_dir, args.limit_conversations, args.limit_questions, args.repair_evidence, args.conversation)
    except (DataError, OSError, ValueError, KeyError) as exc:
        print(f"beam: cannot use the data in {data_dir}: {exc}", file=sys.stderr)
        return 2
    print(
        f"data: {data_dir} (sha256 verified: {data.hashes['SHA256SUMS']['files_verified']} files); "
        f"{data.counts['conversations']} conversations, {data.counts['turns']:,} messages, "
        f"{data.counts['questions_evaluated']} scored questions; evidence: {data.evidence}"
    )
    pool: dict[str, Any] | None = None
    if args.pooled:
        one, data.questions = pooled.pool(data.conversations, data.questions, ("evidence", "original"))
        pool = pooled.describe(data.conversations, one)
        data.conversations = [one]
    try:
        database = vaults.run_database(args.backend, "beam", args.workdir, args.keep_vault)
    except vaults.BackendUnavailable as exc:
        print(f"beam: {exc}", file=sys.stderr)
        return 2
    base = Path(tempfile.mkdtemp(prefix="kaeru-beam-", dir=args.workdir))
    systems: list[System] = []
    try:
        start = kaeru_side.clock_start(list(data.conversations))
        cache = embedding_cache(args)
        url = database.database_url if database is not None else None
        with kaeru_side.open_vault(
            base, args.seed, start, semantic=args.semantic, database_url=url, embedding_cache=cache
        ) as vault:
            log(args.quiet, f"ingesting into {base} …")
            ingest = kaeru_side.IngestResult()
            for conv in data.conversations:
                kaeru_side.ingest(vault, conv, ingest)
            log(args.quiet, f"  {ingest.notes:,} notes in {ingest.seconds:.1f}s")
            if args.semantic:
                embed_started = time.perf_counter()
                vectors = vault.embed_all()
                log(args.quiet, f"  {vectors:,} vectors in {time.perf_counter() - embed_started:.1f}s")
            call = f'service.recall({{"query": q, "initiatives": [init], "limit": {kaeru_side.LIMIT}}})'
            full: System | None = None
            if "recall" in args.systems:
                full = System("recall", "service", call, kaeru_side.recall_call(frozenset()))
                systems.append(full)
                evaluate(full, vault, data, args.quiet)
                for channel in [] if args.no_ablation else kaeru_side.recall_channels(vault.service):
                    row = System(
                        f"recall -{channel}",
                        "service",
                        f"{call} with disabled={{{channel!r}}}",
                        kaeru_side.recall_call(frozenset({channel})),
                        channel=channel,
                    )
                    systems.append(row)
                    if channel not in full.plan_channels:
                        row.scores, row.rankings = full.scores, full.rankings
                        row.current_first, row.copied = full.current_first, True
                        continue
                    evaluate(row, vault, data, args.quiet)
            if "bm25" in args.systems:
                bm25 = System("bm25", "baseline", f"Okapi BM25 k1={baselines.BM25_K1} b={baselines.BM25_B}, messages")
                systems.append(bm25)
                evaluate(bm25, vault, data, args.quiet)
        finished = datetime.now(UTC)
        report: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "benchmark": "beam-dev-retrieval",
            "started_at": started.isoformat(),
            "finished_at": finished.isoformat(),
            "seconds": round((finished - started).total_seconds(), 2),
            "machine": machine(),
            "config": {
                "data_dir": str(data_dir),
                "limit_conversations": args.limit_conversations,
                "limit_questions": args.limit_questions,
                "systems": args.systems,
                "ablation": not args.no_ablation,
                "semantic": args.semantic,
                "seed": args.seed,
                "service_limit": kaeru_side.LIMIT,
                "evidence_repair": args.repair_evidence,
                "note_text": "'<role>: <content>' (markers kept)",
                "occurred_at": "the last time_anchor seen (the batch's date), + i seconds for the i-th message",
                "pooled": args.pooled,
                "vault": f"{args.backend}, one per run, "
                + (
                    "every conversation in one initiative (beam-pooled)"
                    if args.pooled
                    else "one initiative per conversation (beam-<number>)"
                ),
                "backend": args.backend,
            },
            "dataset": data.hashes,
            "counts": data.counts,
            "evidence": data.evidence,
            "pool": pool,
            "ingest": {
                "notes": ingest.notes,
                "failed": ingest.failed,
                "seconds": round(ingest.seconds, 3),
                "scopes": ingest.scopes,
            },
            "systems": {s.name: summarise(s, data, full) for s in systems},
        }
        if args.per_question:
            report["per_question"] = {
                q.key: {
                    "category": CATEGORIES[q.category],
                    "evidence": list(q.evidence),
                    "first_rank": {
                        s.name: next((i for i, t in enumerate(s.rankings[q.key], 1) if t in q.evidence), None)
                        for s in systems
                    },
                    **(
                        {
                            "current_first": {s.name: s.current_first[q.key] for s in systems},
                            # where the best updated and the best original message ranked (None:
                            # not returned), to see why an update question fails
                            "update_ranks": {
                                s.name: {
                                    "updated": _best_rank(s.rankings[q.key], q.evidence),
                                    "original": _best_rank(s.rankings[q.key], q.original),
                                }
                                for s in systems
                            },
                        }
                        if q.key in (full.current_first if full else {})
                        else {}
                    ),
                }
                for q in data.questions
            }
    finally:
        if args.keep_vault:
            print(f"vault kept at {database.database_url if database is not None else base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
        if database is not None:
            database.drop()
    print(render(report))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 1 if report["ingest"]["failed"] else 0
