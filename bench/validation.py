"""What validating a tool call's arguments costs, per call, before and after typed requests (issue 14).
A script, not a test.

For a few tools, with the arguments an agent typically sends, times in the same run, rotating the
order every round so drift on a shared machine lands on all of them:

* `before` — the compiled input schema's verdict only (`jsonschema_rs` `is_valid`): the adapter's
  path before issue 14, which handed the service the argument dict;
* `after` — the same verdict, then the request model built without validating again
  (`Request.trusted`, pydantic's `model_construct`): the path kept (`api/requests.py`);
* `after+wire` — `after`, then `wire()` (the arguments as sent, which a mutation hashes for replay
  and a paged read for its cursor);
* `construct` — the verdict, then pydantic's own `model_construct` (what `trusted` replaces: its
  per-field work cost more than validating);
* `pydantic` — pydantic's own `model_validate` of the same arguments instead of the schema: the
  alternative measured and not taken (it does not check the schemas' conditional rules, and its
  errors do not name the field as the schema's refusals do).

Prints p50/p95 in µs per tool and path, and the paired p50 difference after − before.

    PYTHONPATH=src python -m bench.validation [--rounds 30] [--calls 2000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from bench.stats import percentile
from kaeru.api.requests import RequestParser
from kaeru.api.schemas import input_for
from kaeru.service.requests import REQUESTS

CALLS: dict[str, dict[str, Any]] = {
    "note": {
        "initiative": "kaeru",
        "text": "The WAL checkpoint runs every 1000 pages; a long reader delays it.",
        "kind": "decision",
        "tags": ["storage", "sqlite"],
        "link_to": {"initiative": "kaeru", "name": "wal-policy"},
        "weight": 0.8,
        "request_id": "c0ffee-1",
    },
    "search": {
        "initiatives": ["kaeru"],
        "text": "checkpoint reader",
        "filters": {"types": ["concept", "episode"], "current": "preferred"},
        "limit": 10,
    },
    "read": {"initiative": "kaeru", "node": "wal-policy", "budget_chars": 4000},
    "recall": {"initiatives": ["kaeru"], "query": "why does the WAL grow", "task_intent": "explain_decision"},
    "link": {"initiative": "kaeru", "from": "wal-policy", "to": {"id": "n-42"}, "edge_type": "causal", "weight": 0.9},
    "context": {"initiative": "kaeru", "budget_chars": 8000},
}


def _paths(tool: str) -> dict[str, Callable[[], object]]:
    parser = RequestParser(tool, input_for(tool))
    parser.problem(CALLS[tool])  # builds the compiled validator
    fast, model, args = parser._fast, parser.model, CALLS[tool]
    assert fast.is_valid(args)

    def after() -> object:
        return fast.is_valid(args) and model.trusted(args)

    def after_wire() -> object:
        return fast.is_valid(args) and model.trusted(args).wire()

    return {
        "before": lambda: fast.is_valid(args),
        "after": after,
        "after+wire": after_wire,
        "construct": lambda: fast.is_valid(args) and model.model_construct(**args),
        "pydantic": lambda: model.model_validate(args),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--calls", type=int, default=2000, help="calls per path, tool and round")
    opts = parser.parse_args()
    paths = {tool: _paths(tool) for tool in CALLS}
    names = list(next(iter(paths.values())))
    samples: dict[tuple[str, str], list[float]] = {(t, n): [] for t in CALLS for n in names}
    diffs: dict[str, list[float]] = {t: [] for t in CALLS}
    clock = time.perf_counter_ns
    for round_no in range(opts.rounds):
        for tool, table in paths.items():
            order = names[round_no % len(names) :] + names[: round_no % len(names)]
            medians: dict[str, float] = {}
            for name in order:
                call = table[name]
                times = []
                for _ in range(opts.calls):
                    start = clock()
                    call()
                    times.append((clock() - start) / 1000)
                samples[(tool, name)].extend(times)
                medians[name] = percentile(sorted(times), 50)
            diffs[tool].append(medians["after"] - medians["before"])
    print(f"{'tool':8} " + " ".join(f"{n + ' p50/p95':>20}" for n in names) + "   after−before p50")
    for tool in CALLS:
        cells = []
        for name in names:
            got = sorted(samples[(tool, name)])
            cells.append(f"{percentile(got, 50):>9.2f}/{percentile(got, 95):<9.2f}")
        print(f"{tool:8} " + " ".join(f"{c:>20}" for c in cells) + f"   {percentile(sorted(diffs[tool]), 50):+.2f} µs")
    assert set(CALLS) <= set(REQUESTS)


if __name__ == "__main__":
    main()
