"""`python -m bench.beam.ablation` — every recall channel switched off one at a time, on LoCoMo and
beam-dev, side by side.

Runs both harnesses (recall with its ablation rows, and BM25) unless `--from-reports` names two
reports already written, then prints, per channel, what disabling it changes on each set (ablation
row minus full recall, on the same questions) and whether the channel earns its place by the
issue's rule: it helps on both sets, or on one without hurting the other. A channel "helps" a set
when switching it off loses more than `EPSILON` of R@10 + MRR (averaged), "hurts" when it gains as
much. A channel in no plan of a set has no effect there.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.beam import run as beam_run
from bench.locomo import run as locomo_run

EPSILON = 0.002
RESULTS = beam_run.REPO_ROOT / "bench" / "results"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.beam.ablation", description=__doc__)
    parser.add_argument("--from-reports", nargs=2, type=Path, metavar=("LOCOMO_JSON", "BEAM_JSON"), default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "ablation.json")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--locomo-conversations", type=int, default=None, metavar="N")
    parser.add_argument("--beam-conversations", type=int, default=None, metavar="N")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--pooled", action="store_true", help="both sets pooled: every conversation in one initiative")
    parser.add_argument("--semantic", action="store_true", help="both sets with the semantic channel")
    parser.add_argument("--embedding-cache", type=Path, default=None, metavar="FILE", help="as bench.locomo's")
    return parser.parse_args(argv)


def effect(report: dict[str, Any], channel: str) -> dict[str, Any] | None:
    """What switching `channel` off does on one set (None when that set has no row for it)."""
    row = report["systems"].get(f"recall -{channel}")
    if row is None:
        return None
    versus = row.get("vs_recall") or {}
    delta = versus.get("delta") or {}
    r10, mrr = delta.get("recall@10", 0.0), delta.get("mrr", 0.0)
    gain = -(r10 + mrr) / 2  # what the channel contributes
    verdict = "helps" if gain > EPSILON else "hurts" if gain < -EPSILON else "neutral"
    out = {"delta_recall@10": r10, "delta_mrr": mrr, "contribution": round(gain, 4), "verdict": verdict}
    if versus.get("current_first") is not None:
        out["delta_current_first"] = versus["current_first"]
    return out


def keep(effects: list[dict[str, Any] | None]) -> str:
    verdicts = [e["verdict"] if e else "neutral" for e in effects]
    if "hurts" in verdicts:
        return "drop (hurts one set)" if "helps" not in verdicts else "mixed (helps one, hurts the other)"
    if "helps" in verdicts:
        return "keep"
    return "no effect"


def combine(locomo: dict[str, Any], beam: dict[str, Any]) -> dict[str, Any]:
    channels = [n.removeprefix("recall -") for n in [*locomo["systems"], *beam["systems"]] if n.startswith("recall -")]
    table: dict[str, Any] = {}
    for channel in dict.fromkeys(channels):
        effects = [effect(locomo, channel), effect(beam, channel)]
        table[channel] = {"locomo": effects[0], "beam": effects[1], "decision": keep(effects)}
    headline = {
        name: {
            system: {
                "recall@10": report["systems"][system]["overall"]["recall@10"],
                "mrr": report["systems"][system]["overall"]["mrr"],
            }
            for system in ("recall", "bm25")
            if system in report["systems"]
        }
        for name, report in (("locomo", locomo), ("beam", beam))
    }
    cur = beam["systems"].get("recall", {}).get("current_first")
    pooled = {
        name: bool(report.get("config", {}).get("pooled")) for name, report in (("locomo", locomo), ("beam", beam))
    }
    return {"headline": headline, "beam_current_first": cur, "channels": table, "epsilon": EPSILON, "pooled": pooled}


def render(result: dict[str, Any]) -> str:
    lines = [""]
    if any(result.get("pooled", {}).values()):
        lines.append(f"pooled (every conversation in one initiative): {result['pooled']}")
    for name, systems in result["headline"].items():
        cells = "   ".join(f"{s} R@10 {v['recall@10']:.3f} MRR {v['mrr']:.3f}" for s, v in systems.items())
        lines.append(f"{name:<8}{cells}")
    if result["beam_current_first"]:
        lines.append(f"beam current-first: {result['beam_current_first']['share']}")
    lines += [
        "",
        f"{'channel off':<14}{'LoCoMo ΔR@10':>13}{'ΔMRR':>8}{'beam ΔR@10':>12}{'ΔMRR':>8}{'Δcur':>8}   decision",
    ]
    for channel, row in result["channels"].items():
        lo, be = row["locomo"] or {}, row["beam"] or {}
        lines.append(
            f"{channel:<14}{lo.get('delta_recall@10', 0.0):>+13.3f}{lo.get('delta_mrr', 0.0):>+8.3f}"
            f"{be.get('delta_recall@10', 0.0):>+12.3f}{be.get('delta_mrr', 0.0):>+8.3f}"
            f"{be.get('delta_current_first') or 0.0:>+8.3f}   {row['decision']}"
        )
    lines.append("Δ: recall with the channel off minus full recall (negative: the channel helps).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.from_reports:
        locomo_path, beam_path = args.from_reports
    else:
        suffix = "-pooled" if args.pooled else ""
        locomo_path, beam_path = RESULTS / f"locomo-ablation{suffix}.json", RESULTS / f"beam-ablation{suffix}.json"
        extra = (["--workdir", str(args.workdir)] if args.workdir else []) + (["--quiet"] if args.quiet else [])
        extra += ["--pooled"] if args.pooled else []
        if args.semantic:
            extra += ["--semantic"] + (["--embedding-cache", str(args.embedding_cache)] if args.embedding_cache else [])
        limit = ["--limit-conversations", str(args.locomo_conversations)] if args.locomo_conversations else []
        code = locomo_run.main(["--systems", "recall,bm25", *limit, *extra, "--out", str(locomo_path)])
        limit = ["--limit-conversations", str(args.beam_conversations)] if args.beam_conversations else []
        code |= beam_run.main([*limit, *extra, "--out", str(beam_path)])
        if code:
            print("ablation: a benchmark run failed", file=sys.stderr)
            return code
    result = combine(json.loads(locomo_path.read_text()), json.loads(beam_path.read_text()))
    print(render(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
