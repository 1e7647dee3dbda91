"""Scale-out throughput: 1, 2 and 3 `kaeru serve --http` processes over one PostgreSQL database.

Eight client workers (spread over the servers) run a bounded mixed workload — 70 % `note` with a
`request_id`, 20 % `search`, 10 % `read` — and the harness reports calls per second and per-call
latency for each server count, measured in the same run. Everything stays on 127.0.0.1.

    pg_virtualenv -t bash -c 'KAERU_BENCH_DATABASE_URL="postgresql://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$PGDATABASE" \
        .venv/bin/python -m bench.scaleout'
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio

from bench.servers import spawn_http, wait_ready
from bench.vaults import drop_database

ROOT = Path(__file__).resolve().parents[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def fresh_database(admin_url: str) -> str:
    import psycopg

    name = f"kaeru_scale_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = admin_url.rpartition("/")
    return f"{base}/{name}"


def start_servers(count: int, url: str, log_dir: Path) -> list[tuple[subprocess.Popen[bytes], int]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}
    env.update({"KAERU_DATABASE_URL": url, "KAERU_VAULT": str(log_dir / "vault")})
    servers = []
    for i in range(count):
        log = log_dir / f"server-{i}.log"
        with log.open("wb") as out:
            servers.append((*spawn_http(env, out), log))
    for proc, port, log in servers:
        wait_ready(proc, port, log.read_text)
    return [(proc, port) for proc, port, _ in servers]


async def workload(ports: list[int], workers: int, calls: int) -> tuple[float, dict[str, list[float]], int]:
    from mcp import Client

    latencies: dict[str, list[float]] = {"note": [], "search": [], "read": []}
    errors = 0

    async def worker(index: int) -> None:
        nonlocal errors
        rng = random.Random(index)
        ids: list[str] = []
        async with Client(f"http://127.0.0.1:{ports[index % len(ports)]}/mcp") as client:
            for n in range(calls):
                roll = rng.random()
                if roll < 0.7 or not ids:
                    tool, args = (
                        "note",
                        {
                            "initiative": "scale",
                            "text": f"worker {index} note {n} word{rng.randrange(500)}",
                            "request_id": f"w{index}-{n}",
                        },
                    )
                elif roll < 0.9:
                    tool, args = "search", {"initiatives": ["scale"], "text": f"word{rng.randrange(500)}"}
                else:
                    tool, args = "read", {"initiative": "scale", "node": rng.choice(ids)}
                started = time.perf_counter()
                result = await client.call_tool(tool, args)
                latencies[tool].append(time.perf_counter() - started)
                envelope = result.structured_content or {}
                if envelope.get("state") == "rejected":
                    errors += 1
                elif tool == "note":
                    ids.append(envelope["data"]["primary"]["id"])

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for index in range(workers):
            group.start_soon(worker, index)
    return time.perf_counter() - started, latencies, errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", default="1,2,3")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--calls", type=int, default=150, help="calls per worker")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "scaleout.json")
    args = parser.parse_args(argv)
    admin = os.environ.get("KAERU_BENCH_DATABASE_URL") or os.environ.get("KAERU_TEST_DATABASE_URL")
    if not admin:
        print("set KAERU_BENCH_DATABASE_URL (see the module docstring)", file=sys.stderr)
        return 2
    rows = []
    for count in [int(c) for c in args.servers.split(",")]:
        url = fresh_database(admin)
        with tempfile.TemporaryDirectory() as tmp:
            servers = start_servers(count, url, Path(tmp))
            try:
                elapsed, latencies, errors = anyio.run(workload, [p for _, p in servers], args.workers, args.calls)
            finally:
                for proc, _ in servers:
                    proc.terminate()
                    proc.wait(timeout=20)
                drop_database(admin, url.rpartition("/")[2])
        total = sum(len(v) for v in latencies.values())
        row = {
            "servers": count,
            "workers": args.workers,
            "calls": total,
            "errors": errors,
            "seconds": round(elapsed, 3),
            "calls_per_second": round(total / elapsed, 1),
            **{f"{tool}_p50_ms": round(percentile(v, 0.5) * 1000, 2) for tool, v in latencies.items()},
            **{f"{tool}_p95_ms": round(percentile(v, 0.95) * 1000, 2) for tool, v in latencies.items()},
        }
        rows.append(row)
        print(
            f"{count} server(s): {row['calls_per_second']:>7} calls/s  note p50 {row['note_p50_ms']} ms "
            f"p95 {row['note_p95_ms']} ms  search p50 {row['search_p50_ms']} ms  errors {errors}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"cpu_count": os.cpu_count(), "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
