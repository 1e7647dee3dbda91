"""`python -m bench.locomo` — ingest LoCoMo into a fresh vault and rank turns for every question.

See bench/locomo/__init__.py for what is measured and how.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import vaults
from bench.locomo import baselines, ingests, kaeru_side, mcp_side, metrics, pooled
from bench.locomo.data import CATEGORIES, Conversation, DataError, Dataset, Question, load

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO_ROOT / "bench" / "data" / "locomo"
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "locomo.json"
SYSTEMS = ("recall", "search", "bm25", "grep", "random")
SCHEMA_VERSION = 1
DEFAULT_SEED = 20240229
#: About this many questions, spread over the data, check an ablation row for an inactive channel.
ABLATION_SAMPLE = 40


@dataclass
class System:
    name: str
    kind: str  # "service", "mcp" (through `kaeru serve` over stdio) or "baseline"
    call: str  # how it is invoked, for the report
    mrr_depth: int
    # service systems: the service call; baselines: a per-conversation ranker factory.
    service_call: Callable[..., Any] | None = None
    ranker: Callable[[Conversation], Callable[[Question], list[str]]] | None = None
    # mcp systems: the ingest they write with, and (once its server runs) the call that asks.
    ingest: str | None = None
    mcp_call: Callable[[Conversation, str], kaeru_side.Ranked] | None = None
    mcp_report: dict[str, Any] | None = None
    main: bool = True  # shown in the per-category table (ablation rows are not)
    channel: str | None = None  # the channel an ablation row disables
    plan_channels: set[str] = field(default_factory=set)
    rankings: dict[str, list[str]] = field(default_factory=dict)
    shortcut: dict[str, Any] | None = None
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    first_rank: dict[str, int | None] = field(default_factory=dict)
    latencies_ns: list[int] = field(default_factory=list)
    cpu_ns: list[int] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    foreign: int = 0
    indexed: dict[str, int] = field(default_factory=dict)  # a baseline's corpora: initiative → turns
    error: str | None = None

    def reset(self) -> None:
        self.scores, self.first_rank, self.rankings = {}, {}, {}
        self.latencies_ns, self.cpu_ns, self.lengths, self.foreign, self.plan_channels = [], [], [], 0, set()

    def record(self, q: Question, turns: list[str]) -> None:
        self.rankings[q.key] = turns
        self.lengths.append(len(turns))
        self.scores[q.key] = metrics.score(turns, q.evidence)
        wanted = set(q.evidence)
        self.first_rank[q.key] = next((i for i, t in enumerate(turns, start=1) if t in wanted), None)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.locomo", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="directory with locomo10.json, errors.json")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N")
    parser.add_argument(
        "--limit-questions", type=int, default=None, metavar="N", help="first N questions (cat. 1–4) per conversation"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON report path")
    parser.add_argument(
        "--systems",
        nargs="+",
        default=list(SYSTEMS),
        help=f"any of {', '.join(SYSTEMS)} (space or comma separated); recall brings its ablation rows",
    )
    parser.add_argument(
        "--ingest",
        choices=ingests.INGESTS,
        default="harness",
        help="how the in-process vault writes each turn (bench/locomo/ingests.py); default harness",
    )
    parser.add_argument(
        "--mcp",
        nargs="+",
        default=[],
        metavar="INGEST",
        help=f"also run recall through MCP (`kaeru serve` over stdio), one vault per ingest: any of "
        f"{', '.join(ingests.INGESTS)} (space or comma separated; bench/locomo/ingests.py says what each writes)",
    )
    parser.add_argument("--no-ablation", action="store_true", help="recall without the per-channel rows")
    parser.add_argument(
        "--pooled",
        action="store_true",
        help="every conversation in ONE initiative (a long memory); the baselines over the same pooled turns",
    )
    parser.add_argument(
        "--full-ablation",
        action="store_true",
        help="run every ablation row in full, even for channels recall's plan does not use",
    )
    parser.add_argument(
        "--ablation-questions",
        type=int,
        default=None,
        metavar="N",
        help="ablation rows on N evenly spread questions (paired with recall on the same ones); default all",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random baseline and node ids")
    parser.add_argument(
        "--strict-evidence",
        action="store_true",
        help="do not repair malformed evidence ids (e.g. 'D8:6; D9:17', 'D30:05'); drop them",
    )
    parser.add_argument(
        "--no-clock-jump",
        action="store_true",
        help="ask every question at once instead of each on its own day (paging lists then pile up)",
    )
    parser.add_argument("--workdir", type=Path, default=None, help="where the temporary vault is made")
    parser.add_argument("--keep-vault", action="store_true")
    vaults.add_backend_argument(parser)
    parser.add_argument(
        "--per-question",
        action="store_true",
        help="add each question's text, evidence, first evidence rank and each main system's ranked turns",
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
    args.mcp = chosen_systems(parser, args.mcp, ingests.INGESTS) if args.mcp else []
    return args


def add_embedding_cache(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--embedding-cache",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --semantic: keep the model's vectors in FILE (keyed by model id and text hash; the bench's "
        "own file, never read by the product), so a re-run embeds only new texts; default "
        "<workdir>/embedding-cache.sqlite when --workdir is given",
    )


def embedding_cache(args: argparse.Namespace) -> Path | None:
    if not args.semantic:
        return None
    if args.embedding_cache is not None:
        return Path(args.embedding_cache)
    return Path(args.workdir) / "embedding-cache.sqlite" if args.workdir is not None else None


def chosen_systems(parser: argparse.ArgumentParser, given: list[str], known: Sequence[str]) -> list[str]:
    """The `--systems` values (space- or comma-separated), in the harness's own order; an unknown
    name is a usage error."""
    wanted = [s for item in given for s in item.split(",") if s]
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        parser.error(f"unknown systems {', '.join(unknown)}; choose from {', '.join(known)}")
    return [s for s in known if s in wanted]


def log(quiet: bool, message: str) -> None:
    if not quiet:
        print(message, file=sys.stderr, flush=True)


# --- systems ------------------------------------------------------------------------------------


def build_systems(
    names: list[str], vault: kaeru_side.Vault, ablation: bool, seed: int
) -> tuple[list[System], dict[str, str]]:
    systems: list[System] = []
    skipped: dict[str, str] = {}
    limit = kaeru_side.LIMIT
    if "recall" in names:
        if kaeru_side.recall_available(vault.service):
            call = f'service.recall({{"query": q, "initiatives": [init], "limit": {limit}}}, disabled=...)'
            systems.append(System("recall", "service", call, limit, kaeru_side.recall_call(frozenset())))
            channels = kaeru_side.recall_channels(vault.service)
            if not channels:
                skipped["recall ablation"] = "service.recall_channels() does not exist (or is empty)"
            for channel in channels if ablation else []:
                systems.append(
                    System(
                        f"recall -{channel}",
                        "service",
                        f"{call} with disabled={{{channel!r}}}",
                        limit,
                        kaeru_side.recall_call(frozenset({channel})),
                        main=False,
                        channel=channel,
                    )
                )
        else:
            skipped["recall"] = "Service has no `recall` yet; rows skipped (picked up automatically once it exists)"
    if "search" in names:
        call = f'service.search({{"initiatives": [init], "text": q, "limit": {limit}, "match": "any"}})'
        systems.append(System("search", "service", call, limit, kaeru_side.search_call))
    depth = baselines.DEPTH
    if "bm25" in names:

        def bm25(conv: Conversation) -> Callable[[Question], list[str]]:
            index = baselines.BM25(conv.turns)
            return lambda q: index.rank(q.text)

        call = f"Okapi BM25 k1={baselines.BM25_K1} b={baselines.BM25_B}, idf=ln(1+(N-df+.5)/(df+.5)), single turns"
        systems.append(System("bm25", "baseline", call, depth, ranker=bm25))
    if "grep" in names:

        def grep(conv: Conversation) -> Callable[[Question], list[str]]:
            index = baselines.Grep(conv.turns)
            return lambda q: index.rank(q.text)

        call = "distinct question words (stop words removed) contained, ties by turn order"
        systems.append(System("grep", "baseline", call, depth, ranker=grep))
    if "random" in names:

        def shuffled(conv: Conversation) -> Callable[[Question], list[str]]:
            ranking = baselines.RandomRanking(conv.turns, seed)
            return lambda q: ranking.rank(q.key)

        systems.append(System("random", "baseline", f"random order of all turns, seed {seed}", depth, ranker=shuffled))
    return systems, skipped


def evaluate(
    system: System,
    vault: kaeru_side.Vault,
    data: Dataset,
    clock_jump: bool,
    quiet: bool,
    only: set[str] | None = None,
) -> None:
    """Rank turns for every scored question (or the keys in `only`), recording scores and timings."""
    t0 = time.perf_counter()
    by_index = {c.index: c for c in data.conversations}
    rankers: dict[int, Callable[[Question], list[str]]] = {}
    for q in data.questions:
        if not q.evidence or (only is not None and q.key not in only):
            continue
        conv = by_index[q.conv_index]
        try:
            if system.service_call is not None or system.mcp_call is not None:
                if system.mcp_call is not None:
                    ranked = system.mcp_call(conv, q.text)
                else:
                    assert system.service_call is not None
                    if clock_jump:
                        vault.clock.jump()
                    ranked = kaeru_side.ask(vault, system.service_call, conv, q.text)
                system.latencies_ns.append(ranked.elapsed_ns)
                system.cpu_ns.append(ranked.cpu_ns)
                system.foreign += ranked.foreign
                system.plan_channels.update(ranked.channels or ())
                turns = ranked.turns
            else:
                assert system.ranker is not None
                if conv.index not in rankers:
                    rankers[conv.index] = system.ranker(conv)  # index building is not timed
                    system.indexed[conv.initiative] = len(conv.turns)
                t1 = time.perf_counter_ns()
                turns = rankers[conv.index](q)[: system.mrr_depth]
                system.latencies_ns.append(time.perf_counter_ns() - t1)
        except Exception as exc:
            system.error = f"{type(exc).__name__}: {exc} (question {q.key})"
            log(False, f"  {system.name}: FAILED — {system.error}\n{traceback.format_exc()}")
            return
        system.record(q, turns)
    log(quiet, f"  {system.name}: {len(system.scores)} questions in {time.perf_counter() - t0:.1f}s")


def spread(keys: list[str], n: int) -> list[str]:
    """About `n` of `keys`, evenly spaced (all of them when n ≥ len(keys))."""
    if n >= len(keys):
        return list(keys)
    return [keys[(i * len(keys)) // n] for i in range(n)]


def evaluate_ablation(
    system: System, full: System | None, vault: kaeru_side.Vault, data: Dataset, args: argparse.Namespace
) -> None:
    """An ablation row, on every question or on `--ablation-questions` of them (evenly spread).

    When the channel appeared in none of the full recall's plans, disabling it cannot change a
    ranking: a sample is ranked first, and if it equals the full recall's rankings the row takes the
    full recall's results (marked, timings from the sample) instead of spending another pass.
    `--full-ablation` always runs the pass.
    """
    clock_jump = not args.no_clock_jump
    keys = [q.key for q in data.questions if q.evidence]
    if args.ablation_questions:
        keys = spread(keys, args.ablation_questions)
    only = set(keys)
    inactive = (
        full is not None
        and not full.error
        and bool(full.plan_channels)
        and system.channel not in full.plan_channels
        and not args.full_ablation
    )
    if not inactive:
        evaluate(system, vault, data, clock_jump, args.quiet, only=only)
        return
    assert full is not None
    sample = set(spread(keys, ABLATION_SAMPLE))
    evaluate(system, vault, data, clock_jump, True, only=sample)
    if system.error or any(system.rankings[k] != full.rankings[k] for k in sample):
        log(args.quiet, f"  {system.name}: sample differs from recall; running the whole pass")
        system.reset()
        evaluate(system, vault, data, clock_jump, args.quiet, only=only)
        return
    for key in keys:
        system.scores[key], system.first_rank[key] = full.scores[key], full.first_rank[key]
        system.rankings[key] = full.rankings[key]
    system.lengths = [len(full.rankings[k]) for k in keys]
    system.shortcut = {
        "reason": "channel in no plan of the full recall; rankings copied from `recall`",
        "verified_questions": len(sample),
        "identical": True,
        "latency_from": "the verified sample",
    }
    log(args.quiet, f"  {system.name}: channel off in every plan; {len(sample)} sampled rankings identical to recall")


def summarise(system: System, data: Dataset, full: System | None) -> dict[str, Any]:
    evaluated = [q for q in data.questions if q.evidence]
    by_category = {
        str(c): metrics.mean_scores(
            system.scores[q.key] for q in evaluated if q.category == c and q.key in system.scores
        )
        for c in CATEGORIES
    }
    lengths = system.lengths
    return {
        "kind": system.kind,
        "available": True,
        "call": system.call,
        "error": system.error,
        "mrr_depth": system.mrr_depth,
        "mrr_note": f"MRR over the top {system.mrr_depth} returned (mrr@10 over the top 10)",
        "returned": {
            "mean": round(sum(lengths) / len(lengths), 2) if lengths else None,
            "max": max(lengths, default=0),
            "empty": sum(1 for n in lengths if n == 0),
        },
        "foreign_hits": system.foreign,
        "indexed": system.indexed or None,
        "plan_channels": sorted(system.plan_channels) or None,
        "disabled_channel": system.channel,
        "channel_in_full_plan": (system.channel in full.plan_channels)
        if system.channel and full is not None and full.plan_channels
        else None,
        "vs_recall": _versus(system, full) if system.channel else None,
        "shortcut": system.shortcut,
        "overall": metrics.mean_scores(system.scores[q.key] for q in evaluated if q.key in system.scores),
        "by_category": by_category,
        "latency_ms": metrics.latency(system.latencies_ns),
        "cpu_ms": metrics.latency(system.cpu_ns),
        "latency_note": {
            "service": "per service call, in process; cpu: the calling thread's",
            "mcp": "per tool call, round trip over stdio; cpu: the server's (all threads) during the call",
        }.get(system.kind, "per ranking in the harness (index built per conversation, not timed)"),
        "mcp": system.mcp_report,
    }


def _versus(system: System, full: System | None) -> dict[str, Any] | None:
    """The ablation row minus the full recall, on the same questions (paired)."""
    if full is None or full.error or not system.scores:
        return None
    keys = [k for k in system.scores if k in full.scores]
    mine = metrics.mean_scores(system.scores[k] for k in keys)
    base = metrics.mean_scores(full.scores[k] for k in keys)
    return {
        "n": len(keys),
        "recall": base,
        "delta": {m: round(mine[m] - base[m], 4) for m in metrics.METRICS},
    }


def run_mcp(ingest: str, base: Path, vault: kaeru_side.Vault, data: Dataset, args: argparse.Namespace) -> System:
    """recall through MCP: `kaeru serve` on a vault of its own, filled with `ingest`'s notes, then asked
    every question; the server is stopped before the next ingest."""
    where = base / f"mcp-{ingest}"
    where.mkdir()
    call = f"recall {json.dumps(mcp_side.recall_arguments(data.conversations[0], 'q'))} over stdio"
    system = System(f"mcp {ingest}", "mcp", call.replace('"q"', "q"), kaeru_side.LIMIT, ingest=ingest)
    stats = mcp_side.IngestStats()
    with (where / "server-stderr.log").open("a") as errlog, mcp_side.McpVault(ingest, where, errlog) as server:
        log(args.quiet, f"mcp {ingest}: ingesting through `kaeru serve` (pid {server.pid}) …")
        for conv in data.conversations:
            server.ingest(conv, stats)
        log(args.quiet, f"  {stats.notes:,} notes in {stats.seconds:.1f}s")
        system.mcp_call = server.ask
        evaluate(system, vault, data, False, args.quiet)
        system.mcp_call = None
    system.mcp_report = {
        "ingest": ingest,
        "note_example": ingests.note_arguments(data.conversations[0], data.conversations[0].turns[0], ingest),
        "notes": stats.notes,
        "failed": stats.failed,
        "seconds": round(stats.seconds, 3),
        "ms_per_note": round(1000 * stats.seconds / max(stats.notes, 1), 3),
        "server_cpu_ms_per_note": round(stats.server_cpu_ns / 1e6 / max(stats.notes, 1), 3),
        "text_block_mismatches": server.text_mismatches,
        "budget_truncated_answers": server.truncated,
    }
    return system


# --- output -------------------------------------------------------------------------------------


def _f(value: Any, width: int = 7, digits: int = 3) -> str:
    if value is None:
        return "—".rjust(width)
    return f"{value:{width}.{digits}f}"


def render(report: dict[str, Any]) -> str:
    counts = report["counts"]
    lines = [
        "",
        f"LoCoMo retrieval — {counts['conversations']} conversations, {counts['turns']:,} turns, "
        f"{counts['questions_evaluated']:,} questions (categories 1–4 with evidence)"
        + (f"; pooled: every turn in one initiative ({report['pool']['initiative']})" if report.get("pool") else ""),
        f"ingest: {report['ingest']['notes']:,} notes in {report['ingest']['seconds']:.1f}s "
        f"({report['ingest']['ms_per_note']:.2f} ms/note)",
        "",
        f"{'system':<24}{'n':>6}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'hit@10':>8}{'MRR':>7}{'depth':>6}"
        f"{'MRR@10':>8}{'p50 ms':>9}{'p95 ms':>9}{'ΔR@10':>8}{'ΔMRR':>8}",
    ]
    for name, s in report["systems"].items():
        if not s.get("available", False):
            continue
        o, lat = s["overall"], s["latency_ms"]
        if s.get("channel_in_full_plan") is False:
            name = f"{name} (off{'=' if s.get('shortcut') else ''})"
        timing = f"{_f(lat.get('p50'), 9, 2)}{_f(lat.get('p95'), 9, 2)}" if s["kind"] != "baseline" else ""
        versus = s.get("vs_recall")
        if versus:
            timing += f"{versus['delta']['recall@10']:>+8.3f}{versus['delta']['mrr']:>+8.3f}"
        lines.append(
            f"{name:<24}{o['n']:>6}{_f(o['recall@1'])}{_f(o['recall@5'])}{_f(o['recall@10'])}{_f(o['hit@10'], 8)}"
            f"{_f(o['mrr'])}{s['mrr_depth']:>6}{_f(o['mrr@10'], 8)}{timing}"
            + (f"   FAILED: {s['error']}" if s.get("error") else "")
        )
    lines.append(
        "R@k: share of a question's evidence turns in the top k (mean); hit@10: all evidence in the top 10; "
        "MRR: 1/rank of the first evidence turn within the top `depth` returned; "
        "Δ: ablation row minus recall on the same questions."
    )
    if any(s.get("channel_in_full_plan") is False for s in report["systems"].values()):
        lines.append(
            "(off): the channel is in none of recall's plans here; disabling it cannot change a ranking "
            "(rows marked = were checked on a sample and copied from recall, timings from the sample)."
        )
    main = [n for n, s in report["systems"].items() if s.get("available") and s.get("main")]
    if main:
        lines += ["", f"{'per category':<24}{'n':>6}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'hit@10':>8}{'MRR':>7}"]
        for c, label in CATEGORIES.items():
            lines.append(f"{c} {label}")
            for name in main:
                o = report["systems"][name]["by_category"][str(c)]
                lines.append(
                    f"  {name:<22}{o['n']:>6}{_f(o['recall@1'])}{_f(o['recall@5'])}{_f(o['recall@10'])}"
                    f"{_f(o['hit@10'], 8)}{_f(o['mrr'])}"
                )
    for name, why in report["skipped"].items():
        lines.append(f"note: {name}: {why}")
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
    }
    try:
        import apsw

        info["sqlite_version"] = apsw.sqlite_lib_version()
    except Exception:
        pass
    try:
        info["git_commit"] = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except Exception:
        pass
    return info


# --- main ---------------------------------------------------------------------------------------


def _exit_on_term(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # so the temporary vault is still removed


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _exit_on_term)
    started = datetime.now(UTC)
    data_dir = args.data.resolve()
    try:
        data = load(
            data_dir,
            limit_conversations=args.limit_conversations,
            limit_questions=args.limit_questions,
            repair_evidence=not args.strict_evidence,
        )
    except (DataError, OSError, ValueError, KeyError) as exc:
        print(f"locomo: cannot use the data in {data_dir}: {exc}", file=sys.stderr)
        return 2
    corr, ev, counts = data.corrections, data.evidence, data.counts
    print(
        f"data: {data_dir} (sha256 verified: {', '.join(data.hashes)}); "
        f"{counts['conversations']} conversations, {counts['turns']:,} turns, "
        f"{counts['questions_selected']:,} questions of categories 1–4"
    )
    print(
        f"corrections: {corr['applied']} WRONG_CITATION corrections applied "
        f"({corr['wrong_citation_entries']} in errors.json, {corr['matched_by_text']} matched by conversation + "
        f"question text, {corr['agree_with_question_id_index']} agree with the question_id index, "
        f"{corr['applicable_in_loaded_conversations']} apply to the loaded conversations)"
    )
    print(
        f"evidence: {ev['repaired_strings']} malformed ids repaired in {ev['repaired_questions']} questions, "
        f"{ev['dropped_ids']} ids dropped (no such turn); "
        f"{counts['questions_without_evidence']} questions without evidence are not scored"
    )

    pool: dict[str, Any] | None = None
    if args.pooled:
        one, data.questions = pooled.pool(data.conversations, data.questions)
        pool = pooled.describe(data.conversations, one)
        data.conversations = [one]
    try:
        database = vaults.run_database(args.backend, "locomo", args.workdir, args.keep_vault)
    except vaults.BackendUnavailable as exc:
        print(f"locomo: {exc}", file=sys.stderr)
        return 2
    base = Path(tempfile.mkdtemp(prefix="kaeru-locomo-", dir=args.workdir))
    report: dict[str, Any] = {}
    try:
        start = kaeru_side.clock_start(data.conversations)
        url = database.database_url if database is not None else None
        with kaeru_side.open_vault(
            base, args.seed, start, semantic=args.semantic, database_url=url, embedding_cache=embedding_cache(args)
        ) as vault:
            ingest = kaeru_side.IngestResult()
            if args.systems != ["bm25"] and args.systems:  # an in-process system needs the vault filled
                log(args.quiet, f"ingesting into {base} …")
                for conv in data.conversations:
                    kaeru_side.ingest(vault, conv, ingest, args.ingest)
            log(args.quiet, f"  {ingest.notes:,} notes in {ingest.seconds:.1f}s")
            if args.semantic:
                embed_started = time.perf_counter()
                vectors = vault.embed_all()
                log(args.quiet, f"  {vectors:,} vectors in {time.perf_counter() - embed_started:.1f}s")
            systems, skipped = build_systems(args.systems, vault, not args.no_ablation, args.seed)
            for name, why in skipped.items():
                print(f"note: {name}: {why}")
            full = next((s for s in systems if s.name == "recall"), None)
            for system in systems:
                if system.channel is not None:
                    evaluate_ablation(system, full, vault, data, args)
                else:
                    evaluate(system, vault, data, not args.no_clock_jump, args.quiet)
            for ingest_name in args.mcp:
                system = run_mcp(ingest_name, base, vault, data, args)
                systems.append(system)
                if system.mcp_report and system.mcp_report["failed"]:
                    ingest.failed.extend(system.mcp_report["failed"])
        finished = datetime.now(UTC)
        summaries: dict[str, Any] = {}
        for system in systems:
            summaries[system.name] = {**summarise(system, data, full), "main": system.main}
        if "recall" in skipped:
            summaries["recall"] = {"available": False, "note": skipped["recall"]}
        report = {
            "schema_version": SCHEMA_VERSION,
            "benchmark": "locomo-retrieval",
            "started_at": started.isoformat(),
            "finished_at": finished.isoformat(),
            "seconds": round((finished - started).total_seconds(), 2),
            "machine": machine(),
            "config": {
                "data_dir": str(data_dir),
                "limit_conversations": args.limit_conversations,
                "limit_questions": args.limit_questions,
                "systems": args.systems,
                "mcp_ingests": args.mcp,
                "mcp_call": mcp_side.recall_arguments.__doc__,
                "ablation": not args.no_ablation,
                "full_ablation": args.full_ablation,
                "ablation_questions": args.ablation_questions,
                "ablation_shortcut_sample": ABLATION_SAMPLE,
                "seed": args.seed,
                "categories": {str(k): v for k, v in CATEGORIES.items()},
                "service_limit": kaeru_side.LIMIT,
                "mrr_depth_cap": metrics.MRR_DEPTH,
                "evidence_repair": not args.strict_evidence,
                "stop_words": "NLTK English list (179 words)",
                "tokeniser": "kaeru.domain.text.tokens",
                "bm25": {"k1": baselines.BM25_K1, "b": baselines.BM25_B, "idf": "ln(1 + (N - df + 0.5)/(df + 0.5))"},
                "ingest": args.ingest,
                "note_text": "'<speaker>: <text>' + ' [image: <blip_caption>]' when the turn has one",
                "occurred_at": "session date_time as UTC, + i seconds for the i-th turn of the session"
                if args.ingest == "harness"
                else f"as the ingest {args.ingest!r} writes it (bench/locomo/ingests.py)",
                "clock": "pinned: starts the day after the data's last session, +1 ms per reading"
                + ("" if args.no_clock_jump else ", +25 h before each service call"),
                "pooled": args.pooled,
                "vault": f"{args.backend}, one per run, "
                + (
                    "every conversation in one initiative (locomo-pooled)"
                    if args.pooled
                    else "one initiative per conversation (locomo-<sample_id>)"
                ),
                "backend": args.backend,
            },
            "dataset": data.hashes,
            "counts": data.counts,
            "corrections": data.corrections,
            "evidence": data.evidence,
            "ingest": {
                "notes": ingest.notes,
                "failed": ingest.failed,
                "seconds": round(ingest.seconds, 3),
                "ms_per_note": round(1000 * ingest.seconds / max(ingest.notes, 1), 3),
                "scopes": ingest.scopes,
            },
            "pool": pool,
            "skipped": skipped,
            "systems": summaries,
        }
        if args.per_question:
            report["per_question"] = {
                q.key: {
                    "category": q.category,
                    "evidence_turns": len(q.evidence),
                    "first_rank": {s.name: s.first_rank.get(q.key) for s in systems},
                    "evidence": list(q.evidence),
                    "text": q.text,
                    "top": {s.name: s.rankings.get(q.key) for s in systems if s.main},
                }
                for q in data.questions
                if q.evidence
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
    return 1 if any(s.error for s in systems) or report["ingest"]["failed"] else 0
