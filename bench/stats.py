"""Latency samples → summaries (milliseconds)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) of already sorted values, linearly interpolated."""
    if not sorted_values:
        return math.nan
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(samples_ns: Sequence[int], *, keep_samples: bool = True) -> dict[str, Any]:
    """n, mean, min, p50, p95, p99, max in ms (and the samples themselves, in ms to 1 µs)."""
    ms = sorted(s / 1e6 for s in samples_ns)
    out: dict[str, Any] = {
        "n": len(ms),
        "mean": sum(ms) / len(ms) if ms else math.nan,
        "min": ms[0] if ms else math.nan,
        "p50": percentile(ms, 50),
        "p95": percentile(ms, 95),
        "p99": percentile(ms, 99),
        "max": ms[-1] if ms else math.nan,
    }
    out = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}
    if keep_samples:
        out["samples_ms"] = [round(s / 1e6, 3) for s in samples_ns]
    return out
