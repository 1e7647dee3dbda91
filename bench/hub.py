"""A node that many notes link to: what each read that touches it costs, in time and in answer size.

Memory gathers around a few nodes — the design decision every later note refers to, the project's
entity. Each read that lists a node's links (`trail`, `read` with neighbours, `current_state`) or
follows them (`recall`'s graph channel) grew with their number (decisions 87, 88): this harness keeps
the measurement. It writes one hub and `--links` notes linking to it through the real `note` tool,
then times every read a few rounds and prints p50 wall time and the answer's size as JSON text.

    python -m bench.hub --links 10000 [--rounds 5] [--backend sqlite|postgres] [--out FILE]

`trail page=50` is the 50th page of a trail (100 entries a page), reached by its cursor: it costs a
page as the first does (decision 105). To compare with other code, run the same harness with that
code's `src` first on PYTHONPATH.

PostgreSQL needs `KAERU_BENCH_DATABASE_URL` (a database it may create databases on).
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench.vaults import new_vault, scratch_cli

#: The deep page timed (decision 105: a page costs a page, wherever it lies in the trail).
DEEP = 50

#: The reads timed, each as (tool, arguments beyond the initiative). `page`: not an argument — the
#: harness follows the trail's cursor to that page (untimed), then times the call that answers it.
READS: list[tuple[str, dict[str, Any]]] = [
    ("read", {"node": "hub"}),
    ("read", {"node": "hub", "neighbours": True}),
    ("trail", {"node": "hub"}),
    ("trail", {"node": "hub", "page": DEEP}),
    ("trail", {"node": "hub", "kind": "neighbours"}),
    ("trail", {"node": "hub", "kind": "neighbours", "page": DEEP}),
    ("current_state", {"node": "hub"}),
    ("context", {}),
    ("recall", {"query": "zanzibar protocol"}),
]
INITIATIVE = "hub-bench"


def measure(backend: str, links: int, rounds: int, workdir: Path) -> dict[str, Any]:
    from kaeru.mcp.server import build_server
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    vault = new_vault(backend, f"hub-{links}", workdir, keep=False)
    settings = vault.settings()
    store = open_store(settings)
    try:
        run = build_server(Service(store, settings)).registry.run
        started = time.perf_counter()
        hub = run("note", {"initiative": INITIATIVE, "text": "the zanzibar protocol decision", "name": "hub"})
        hub_id = hub["data"]["primary"]["id"]
        for i in range(links):
            run("note", {"initiative": INITIATIVE, "text": f"detail {i} of the rollout", "link_to": hub_id})
        built = time.perf_counter() - started
        results: dict[str, Any] = {}
        for tool, extra in READS:
            args = {"initiatives": [INITIATIVE]} if tool == "recall" else {"initiative": INITIATIVE}
            args.update({k: v for k, v in extra.items() if k != "page"})
            reached = 1
            for _ in range(int(extra.get("page", 1)) - 1):
                continued = run(tool, args).get("continuation")
                if not continued:
                    break  # a trail shorter than the page: its last page is timed (and named)
                args, reached = continued["next_arguments"], reached + 1
            shown = {**extra, "page": reached} if "page" in extra else extra
            label = tool + "".join(f" {k}={v}" for k, v in shown.items() if k not in ("node", "query"))
            times, answer = [], {}
            for _ in range(rounds):
                t0 = time.perf_counter()
                answer = run(tool, args)
                times.append((time.perf_counter() - t0) * 1000)
            results[label] = {
                "state": answer["state"],
                "p50_ms": round(statistics.median(times), 2),
                "bytes": len(json.dumps(answer, ensure_ascii=False)),
                "paged": bool(answer.get("continuation")),
            }
        return {"backend": backend, "links": links, "build_s": round(built, 1), "reads": results}
    finally:
        store.close()
        vault.drop()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args, report = scratch_cli(__doc__, "--links", 10_000, 5, "hub", argv, measure)
    if not report:
        return report
    if not args.quiet:
        print(f"{report['backend']}, a hub of {report['links']:,} links (built in {report['build_s']} s)")
        print("| read | state | p50 ms | answer bytes | paged |")
        print("|---|---|---:|---:|---|")
        for label, row in report["reads"].items():
            print(f"| {label} | {row['state']} | {row['p50_ms']} | {row['bytes']:,} | {row['paged']} |")
    return report


if __name__ == "__main__":
    main()
