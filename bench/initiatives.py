"""A vault of many initiatives: what listing them costs, in time and in answer size.

`initiatives` answered every initiative in one envelope (decision 100): this harness keeps the
measurement. It writes `--initiatives` initiatives through the real `note` tool (one note each,
every tenth also holding a slot), then times the first page (the call as a client makes it, no
arguments), the first page of those a prefix matches (a third of 3,000) and a walk through every
page by `continuation.next_arguments`, and prints p50 wall time and the answers' size as JSON text.
Run against code without pages, a call answers the whole list and the walk is that one call.

    python -m bench.initiatives --initiatives 3000 [--rounds 7] [--backend sqlite|postgres] [--out FILE]

PostgreSQL needs `KAERU_BENCH_DATABASE_URL` (a database it may create databases on).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.vaults import new_vault, scratch_cli

#: A prefix that 1,000 of 3,000 initiatives start with (`project-00000` … `project-00999`): its
#: first page is timed, in capitals (matched case-insensitively).
PREFIX = "PROJECT-00"
Run = Callable[[str, dict[str, Any]], dict[str, Any]]


def _walk(run: Run) -> tuple[int, int, int]:
    """Every page of `initiatives` from the first: (pages, initiatives listed, answer bytes)."""
    pages, listed, size = 0, 0, 0
    args: dict[str, Any] = {}
    while True:
        answer = run("initiatives", args)
        pages += 1
        listed += len(answer["data"]["initiatives"])
        size += len(json.dumps(answer, ensure_ascii=False))
        if not answer.get("continuation"):
            return pages, listed, size
        args = answer["continuation"]["next_arguments"]


def measure(backend: str, count: int, rounds: int, workdir: Path) -> dict[str, Any]:
    from kaeru.mcp.server import build_server
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    vault = new_vault(backend, f"initiatives-{count}", workdir, keep=False)
    settings = vault.settings()
    store = open_store(settings)
    try:
        run = build_server(Service(store, settings)).registry.run
        started = time.perf_counter()
        for i in range(count):
            options = {"slot": "handoff"} if i % 10 == 0 else {}
            run("note", {"initiative": f"project-{i:05d}", "text": f"kick-off of project {i}", "options": options})
        built = time.perf_counter() - started
        first_ms, walk_ms, prefix_ms = [], [], []
        first: dict[str, Any] = {}
        prefixed: dict[str, Any] = {}
        walk = (0, 0, 0)
        for _ in range(rounds):
            t0 = time.perf_counter()
            first = run("initiatives", {})
            first_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            prefixed = run("initiatives", {"prefix": PREFIX})
            prefix_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            walk = _walk(run)
            walk_ms.append((time.perf_counter() - t0) * 1000)
        return {
            "backend": backend,
            "initiatives": count,
            "build_s": round(built, 1),
            "first_page": {
                "state": first["state"],
                "listed": len(first["data"]["initiatives"]),
                "total": first["data"]["total"],
                "p50_ms": round(statistics.median(first_ms), 2),
                "bytes": len(json.dumps(first, ensure_ascii=False)),
            },
            "prefix": {
                "listed": len(prefixed["data"]["initiatives"]),
                "total": prefixed["data"]["total"],
                "p50_ms": round(statistics.median(prefix_ms), 2),
                "bytes": len(json.dumps(prefixed, ensure_ascii=False)),
            },
            "walk": {
                "pages": walk[0],
                "listed": walk[1],
                "p50_ms": round(statistics.median(walk_ms), 2),
                "bytes": walk[2],
            },
        }
    finally:
        store.close()
        vault.drop()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args, report = scratch_cli(__doc__, "--initiatives", 3000, 7, "initiatives", argv, measure)
    if not report:
        return report
    if not args.quiet:
        first, prefix, walk = report["first_page"], report["prefix"], report["walk"]
        print(f"{report['backend']}, {report['initiatives']:,} initiatives (built in {report['build_s']} s)")
        print("| call | listed | p50 ms | answer bytes |")
        print("|---|---:|---:|---:|")
        print(f"| first page | {first['listed']:,} of {first['total']:,} | {first['p50_ms']} | {first['bytes']:,} |")
        print(
            f"| prefix {PREFIX} | {prefix['listed']:,} of {prefix['total']:,} | {prefix['p50_ms']} | {prefix['bytes']:,} |"
        )
        print(f"| every page ({walk['pages']}) | {walk['listed']:,} | {walk['p50_ms']} | {walk['bytes']:,} |")
    return report


if __name__ == "__main__":
    main()
