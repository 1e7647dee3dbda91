"""Retrieval metrics over evidence turns, and latency summaries."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

KS = (1, 5, 10)
MRR_DEPTH = 50


def score(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    """One question: evidence recall@k, all-evidence hit@k, reciprocal rank (top MRR_DEPTH and top 10)."""
    wanted = set(evidence)
    out: dict[str, float] = {}
    for k in KS:
        found = len(wanted.intersection(ranked[:k]))
        out[f"recall@{k}"] = found / len(wanted)
        out[f"hit@{k}"] = float(found == len(wanted))
    first = next((i for i, turn in enumerate(ranked[:MRR_DEPTH], start=1) if turn in wanted), None)
    out["mrr"] = 1.0 / first if first else 0.0
    out["mrr@10"] = 1.0 / first if first and first <= 10 else 0.0
    return out


METRICS = tuple([*(f"recall@{k}" for k in KS), *(f"hit@{k}" for k in KS), "mrr", "mrr@10"])


def mean_scores(rows: Iterable[dict[str, float]]) -> dict[str, Any]:
    rows = list(rows)
    if not rows:
        return {"n": 0, **{m: None for m in METRICS}}
    return {"n": len(rows), **{m: round(sum(r[m] for r in rows) / len(rows), 4) for m in METRICS}}


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) of sorted values, linearly interpolated."""
    if not sorted_values:
        return math.nan
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def latency(samples_ns: Sequence[int]) -> dict[str, Any]:
    ms = sorted(s / 1e6 for s in samples_ns)
    if not ms:
        return {"n": 0}
    return {
        "n": len(ms),
        "mean": round(sum(ms) / len(ms), 3),
        "p50": round(percentile(ms, 50), 3),
        "p95": round(percentile(ms, 95), 3),
        "p99": round(percentile(ms, 99), 3),
        "max": round(ms[-1], 3),
    }
