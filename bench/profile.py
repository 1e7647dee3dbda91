"""`python -m bench.profile` — where one hot call spends its time, on a vault kept by `bench.run --keep`.

    python -m bench.run --sizes 100000 --ops 1 --no-stdio --keep --workdir /tmp/kb
    python -m bench.profile --vault /tmp/kb/kaeru-bench-sqlite-100000-xxxx --size 100000 --op search_selective

Runs `--n` in-process calls (`ToolRegistry.run`, as the MCP handler does) of one op on a copy of the
vault (the original is left untouched) and prints:

* SQL: every statement's total and mean time (SQLite's own profile hook), and its share of the
  wall time of the calls; with `--plans`, the query plan of each distinct statement;
* Python: the top functions by own time and by cumulative time (cProfile), unless `--no-cprofile`.

SQLite vaults only. `--size` and `--seed` must match the run that built the vault (they pick the
query words).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import re
import shutil
import tempfile
import time
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

import apsw

from bench.corpus import MAIN, CorpusBuilder
from bench.cpu import main_ids
from bench.measure import OPS, TOOL, Workload
from bench.stats import summarize


@lru_cache(maxsize=4096)
def _normalise(sql: str) -> str:
    sql = re.sub(r"\s+", " ", sql.strip())
    return re.sub(r"\?(,\s*\?)+", "?,…", sql)


class SqlProfile:
    def __init__(self, pragmas: list[str]) -> None:
        self.pragmas = pragmas
        self.total_ns: dict[str, int] = defaultdict(int)
        self.count: dict[str, int] = defaultdict(int)
        self.samples: dict[str, tuple[str, Any]] = {}
        self.enabled = False

    def hook(self, conn: apsw.Connection) -> None:
        for pragma in self.pragmas:
            list(conn.execute(f"PRAGMA {pragma}"))
        conn.set_profile(self._profile)
        conn.set_exec_trace(self._trace)

    def _profile(self, sql: str, ns: int) -> None:
        if self.enabled:
            key = _normalise(sql)
            self.total_ns[key] += ns
            self.count[key] += 1

    def _trace(self, cursor: Any, sql: str, bindings: Any) -> bool:
        if self.enabled:
            self.samples.setdefault(_normalise(sql), (sql, bindings))
        return True


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.split("\n\n")[0])
    p.add_argument("--vault", type=Path, required=True, help="a vault directory kept by bench.run --keep")
    p.add_argument("--size", type=int, required=True, help="the size the vault was built with")
    p.add_argument("--seed", type=int, default=20240601)
    p.add_argument("--op", choices=OPS, required=True)
    p.add_argument("--n", type=int, default=200, help="calls to profile (default 200)")
    p.add_argument("--plans", action="store_true", help="print EXPLAIN QUERY PLAN of each statement")
    p.add_argument("--no-cprofile", action="store_true")
    p.add_argument("--top", type=int, default=25)
    p.add_argument(
        "--pragma",
        action="append",
        default=[],
        help="experiment: a PRAGMA applied to every connection the store opens, e.g. mmap_size=268435456",
    )
    p.add_argument(
        "--fts-optimize", action="store_true", help="experiment: merge the FTS5 index into one segment first"
    )
    a = p.parse_args(argv)

    from kaeru.config import Settings
    from kaeru.mcp.server import build_server
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    work_dir = Path(tempfile.mkdtemp(prefix="kaeru-profile-"))
    try:
        vault = work_dir / "vault"
        shutil.copytree(a.vault, vault, ignore=shutil.ignore_patterns("*.log"))
        if a.fts_optimize:
            conn = apsw.Connection(str(vault / "vault.sqlite3"))
            list(conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES('optimize')"))
            conn.close()
        sql = SqlProfile(a.pragma)
        apsw.connection_hooks.append(sql.hook)
        settings = Settings.from_env({"KAERU_VAULT": str(vault)})
        store = open_store(settings)
        service = Service(store, settings)
        registry = build_server(service).registry
        builder = CorpusBuilder(a.size, a.seed)
        rows = main_ids(settings.sqlite_path, MAIN)  # through apsw: see bench.cpu
        work = Workload(builder, [r[0] for r in rows])
        calls = [work.for_call(a.op, work.args(a.op)) for _ in range(a.n + 10)]
        for args in calls[:10]:  # warm-up: caches, lazy imports, the hourly replay purge
            registry.run(TOOL[a.op], args)
        profiler = cProfile.Profile()
        sql.enabled = True
        start = time.perf_counter_ns()
        if not a.no_cprofile:
            profiler.enable()
        per_call: list[int] = []
        for args in calls[10:]:
            t0 = time.perf_counter_ns()
            envelope = registry.run(TOOL[a.op], args)
            per_call.append(time.perf_counter_ns() - t0)
            assert envelope["state"] in ("ok", "applied"), envelope["issues"]
        profiler.disable()
        wall_ns = time.perf_counter_ns() - start
        sql.enabled = False
        store.close()

        s = summarize(per_call, keep_samples=False)
        print(
            f"{a.op}: {a.n} calls, {wall_ns / a.n / 1e6:.3f} ms per call (wall, with profilers on); "
            f"per call p50 {s['p50']:.3f} p95 {s['p95']:.3f} p99 {s['p99']:.3f} max {s['max']:.3f} ms"
        )
        sql_ns = sum(sql.total_ns.values())
        print(
            f"SQL (sqlite profile hook): {sql_ns / a.n / 1e6:.3f} ms per call = {100 * sql_ns / wall_ns:.0f}% of wall"
        )
        print(f"{'total ms':>9} {'per call µs':>11} {'calls':>6}  statement")
        for key, ns in sorted(sql.total_ns.items(), key=lambda kv: -kv[1]):
            per_call = ns / a.n / 1e3
            print(f"{ns / 1e6:>9.1f} {per_call:>11.1f} {sql.count[key]:>6}  {key[:160]}")
        if a.plans:
            plan_conn = apsw.Connection(str(settings.sqlite_path))
            for key, (text, bindings) in sql.samples.items():
                if not text.lstrip().upper().startswith("SELECT"):
                    continue
                print(f"\nPLAN {key[:200]}")
                try:
                    for row in plan_conn.execute("EXPLAIN QUERY PLAN " + text, bindings):
                        print(f"   {row[0]:>3} {row[1]:>3}  {row[3]}")
                except apsw.Error as exc:
                    print(f"   (no plan: {exc})")
            plan_conn.close()
        if not a.no_cprofile:
            for order in ("tottime", "cumulative"):
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(a.top)
                print(f"\n--- Python, by {order} ---")
                print("\n".join(line for line in out.getvalue().splitlines()[6:] if line.strip()))
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
