"""`python -m bench.cpu` — one hot call's main-thread CPU time, on a copy of a vault kept by `bench.run --keep`.

    python -m bench.run --sizes 10000 --ops 1 --no-stdio --keep --workdir /tmp/kb
    python -m bench.cpu --vault /tmp/kb/kaeru-bench-sqlite-10000-xxxx --op note --runs 5

Wall-clock percentiles on a shared machine move with the other processes and with the background
WAL checkpointer; the calling thread's CPU time (`time.thread_time_ns`) does not, which is what an
old-commit-against-new comparison of one operation needs (run it from a `git archive` of each commit
with `PYTHONPATH=<tree>/src:<tree>`, on one vault built by the older commit). Each run is a fresh
process on a fresh copy; the median of the runs' p50 is printed. SQLite vaults only.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import apsw


def main_ids(path: Path, initiative: str) -> list[tuple[str]]:
    """The live nodes of `initiative`, read through apsw: the SQLite the store runs on. A second
    SQLite library in the process (the standard `sqlite3`) does not see the store's locks, takes
    itself for the file's first user and truncates its `-shm` under the store's mapping, which
    killed an occasional run with SIGBUS."""
    conn = apsw.Connection(str(path))
    try:
        return list(
            conn.execute(
                "SELECT n.id FROM nodes n JOIN memberships m ON m.node_seq = n.seq JOIN initiatives i "
                "ON i.id = m.initiative_id WHERE i.name = ? AND n.retracted = 0",
                (initiative,),
            )
        )
    finally:
        conn.close()


def _one_run(vault_dir: Path, op: str, n: int, size: int, seed: int) -> float:
    from bench.corpus import MAIN, CorpusBuilder
    from bench.measure import TOOL, Workload
    from kaeru.config import Settings
    from kaeru.mcp.server import build_server
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    work = Path(tempfile.mkdtemp(prefix="kaeru-cpu-"))
    try:
        vault = work / "vault"
        shutil.copytree(vault_dir, vault, ignore=shutil.ignore_patterns("*.log"))
        settings = Settings.from_env({"KAERU_VAULT": str(vault)})
        store = open_store(settings)
        registry = build_server(Service(store, settings)).registry
        ids = [r[0] for r in main_ids(settings.sqlite_path, MAIN)]
        work_load = Workload(CorpusBuilder(size, seed), ids)
        calls = [work_load.for_call(op, work_load.args(op)) for _ in range(n + 20)]
        for args in calls[:20]:  # warm-up: caches, lazy imports
            registry.run(TOOL[op], args)
        spent: list[int] = []
        for args in calls[20:]:
            t0 = time.thread_time_ns()
            registry.run(TOOL[op], args)
            spent.append(time.thread_time_ns() - t0)
        store.close()
        return statistics.median(spent) / 1e6
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.cpu", description=__doc__.split("\n\n")[0])
    p.add_argument("--vault", type=Path, required=True, help="a vault directory kept by bench.run --keep")
    p.add_argument("--op", default="note", help="an operation of bench.measure (default note)")
    p.add_argument("--n", type=int, default=1500, help="timed calls per run (default 1500)")
    p.add_argument("--runs", type=int, default=5, help="fresh processes (default 5)")
    p.add_argument("--size", type=int, default=10000, help="the size the vault was built with")
    p.add_argument("--seed", type=int, default=20240601)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        print(f"{_one_run(a.vault, a.op, a.n, a.size, a.seed):.4f}")
        return
    cmd = [sys.executable, "-m", "bench.cpu", "--child", "--vault", str(a.vault), "--op", a.op, "--n", str(a.n)]
    cmd += ["--size", str(a.size), "--seed", str(a.seed)]
    runs = [float(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout) for _ in range(a.runs)]
    print(f"{a.op}: main-thread CPU p50 {statistics.median(runs):.4f} ms (runs: {', '.join(f'{r:.4f}' for r in runs)})")


if __name__ == "__main__":
    main()
