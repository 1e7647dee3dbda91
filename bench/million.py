"""A million nodes: build a big vault once, keep it, then measure the calls an agent makes on it.

Two steps, so the (long) build is paid once and the vault can be measured again, by another
commit's code too (`PYTHONPATH=<tree>/src`):

    python -m bench.million build --size 1000000 --workdir DIR [--backend postgres]
    python -m bench.million measure --vault DIR/kaeru-bench-… [--ops 60]
    python -m bench.startup --vault DIR/kaeru-bench-…       # start-up on it (SQLite)
    python -m bench.million drop --vault DIR/kaeru-bench-…  # delete it (and its database)
    python -m bench.million finish --vault DIR/kaeru-bench-… --size 1000000  # a build stopped early

A build stopped before its end (its own python process killed — not a wrapper shell, or it keeps
writing while you measure; the open batch rolls back) keeps every committed batch;
`finish` writes the `million.json` of what is there (`built` < `size`), and `measure` then uses
only the selective words planted in at least 3 of the notes that were built.

`build` fills a new vault from the benchmark corpus (bench/corpus.py, `bulk` mode: the real `note`
use case, 2,000 notes per transaction) and writes `million.json` beside the vault: the size, the
seed, the database URL (PostgreSQL), the build time, the bytes on disk and a sample of node ids of
the searched initiative for `read`. PostgreSQL needs `KAERU_BENCH_DATABASE_URL` (as bench.run).

`measure` times, in process through `ToolRegistry.run` (validation → service → envelope), in
shuffled order per round: `note` (fresh text, new request_id), `read` (a random node),
`search` with a selective word (5–20 hits) and a broad one (the most frequent words), `recall`
with a selective and a broad word, and `context` of the searched initiative. Wall and CPU
(the calling thread) p50/p95, ms; with `--server-cpu` (PostgreSQL on this machine), the CPU of the
database's server processes during each call too.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any

from bench.corpus import MAIN, CorpusBuilder
from bench.memory import rss_kib
from bench.stats import percentile
from bench.vaults import BenchVault, new_vault

META = "million.json"
OPS: dict[str, str] = {
    "note": "note",
    "read": "read",
    "search_selective": "search",
    "search_broad": "search",
    "recall_selective": "recall",
    "recall_broad": "recall",
    "context": "context",
}
READ_SAMPLE = 5_000


def _vault(meta: dict[str, Any], directory: Path) -> BenchVault:
    return BenchVault(meta["backend"], directory, meta.get("database_url"), keep=True)


def cmd_build(args: argparse.Namespace) -> None:
    from bench.build import build
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    vault = new_vault(args.backend, str(args.size), args.workdir, keep=True)
    print(f"vault: {vault.vault_dir} {vault.database_url or ''}", file=sys.stderr, flush=True)
    store = open_store(vault.settings())
    try:
        service = Service(store, vault.settings())
        corpus = CorpusBuilder(args.size, args.seed)
        started = time.perf_counter()
        ids = build(service, corpus, "bulk")
        seconds = time.perf_counter() - started
    finally:
        store.close()
    main_ids = [i for n, i in enumerate(ids) if corpus.initiative_of(n) == MAIN]
    meta = {
        "backend": args.backend,
        "size": args.size,
        "seed": args.seed,
        "database_url": vault.database_url,
        "build_seconds": round(seconds, 1),
        "notes_per_second": round(args.size / seconds, 1),
        "bytes": _bytes(vault),
        "read_ids": random.Random(3).sample(main_ids, min(READ_SAMPLE, len(main_ids))),
    }
    (vault.vault_dir / META).write_text(json.dumps(meta))
    print(
        f"built {args.size:,} notes in {seconds:.0f} s ({meta['notes_per_second']:,.0f}/s), "
        f"{(meta['bytes'] or 0) / 1e6:,.0f} MB: {vault.vault_dir}"
    )


def _main_ids(vault: BenchVault) -> tuple[int, list[str]]:
    """(nodes in the vault, a random sample of the searched initiative's node ids)."""
    count_sql = "SELECT count(*) FROM nodes"
    ids_sql = (
        "SELECT n.id FROM nodes n JOIN memberships m ON m.node_seq = n.seq JOIN initiatives i "
        "ON i.id = m.initiative_id WHERE i.name = {} ORDER BY random() LIMIT {}"
    )
    if vault.backend == "sqlite":
        import apsw

        conn = apsw.Connection(str(vault.sqlite_path))
        try:
            count = int(next(iter(conn.execute(count_sql)))[0])
            ids = [r[0] for r in conn.execute(ids_sql.format("?", READ_SAMPLE), (MAIN,))]
        finally:
            conn.close()
        return count, ids
    import psycopg

    with psycopg.connect(str(vault.database_url), autocommit=True) as pg:
        row = pg.execute(count_sql).fetchone()
        ids = [r[0] for r in pg.execute(ids_sql.format("%s", READ_SAMPLE), (MAIN,)).fetchall()]
    return int(row[0]) if row else 0, ids


def cmd_finish(args: argparse.Namespace) -> None:
    from bench.vaults import postgres_admin_url

    directory: Path = args.vault
    backend = "sqlite" if (directory / "vault.sqlite3").exists() else "postgres"
    url = None
    if backend == "postgres":
        admin = postgres_admin_url()
        assert admin and args.database, "PostgreSQL: KAERU_BENCH_DATABASE_URL and --database"
        from bench.vaults import _database_url

        url = _database_url(admin, args.database)
    vault = BenchVault(backend, directory, url, keep=True)
    built, ids = _main_ids(vault)
    meta = {
        "backend": backend,
        "size": args.size,
        "built": built,
        "seed": args.seed,
        "database_url": url,
        "build_seconds": args.seconds,
        "notes_per_second": round(built / args.seconds, 1) if args.seconds else None,
        "bytes": _bytes(vault),
        "read_ids": ids,
    }
    (directory / META).write_text(json.dumps(meta))
    print(f"{built:,} of {args.size:,} notes built; {(meta['bytes'] or 0) / 1e6:,.0f} MB: {directory}")


def _selective(corpus: CorpusBuilder, built: int) -> list[str]:
    """The selective words of a vault built to `built` notes: those planted in ≥ 3 of them."""
    if built >= corpus.size:
        return list(corpus.corpus.selective)
    hits: dict[str, int] = {}
    for index, words in corpus._planted.items():
        if index < built:
            for word in words:
                hits[word] = hits.get(word, 0) + 1
    return [word for word, n in hits.items() if n >= 3]


def _bytes(vault: BenchVault) -> int | None:
    if vault.backend == "sqlite":
        return vault.size_bytes()
    import psycopg

    with psycopg.connect(str(vault.database_url), autocommit=True) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else None


def _args(
    op: str, corpus: CorpusBuilder, selective: list[str], read_ids: list[str], rng: random.Random
) -> dict[str, Any]:
    broad = list(corpus.corpus.broad)
    if op == "note":
        import uuid

        return {**corpus.fresh_note(), "request_id": uuid.uuid4().hex}
    if op == "read":
        return {"initiative": MAIN, "node": rng.choice(read_ids)}
    if op.startswith("search"):
        return {"initiatives": [MAIN], "text": rng.choice(selective if op.endswith("selective") else broad)}
    if op.startswith("recall"):
        return {"initiatives": [MAIN], "query": rng.choice(selective if op.endswith("selective") else broad)}
    if op == "context":
        return {"initiative": MAIN}
    raise ValueError(op)


def cmd_measure(args: argparse.Namespace) -> dict[str, Any]:
    from kaeru.mcp.heap import settle_heap
    from kaeru.mcp.server import build_server
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    meta = json.loads((args.vault / META).read_text())
    vault = _vault(meta, args.vault)
    corpus = CorpusBuilder(meta["size"], meta["seed"])
    built = meta.get("built", meta["size"])
    selective = _selective(corpus, built)
    ops = [op for op in OPS if not args.only or op in args.only]
    started = time.perf_counter()
    store = open_store(vault.settings())
    service = Service(store, vault.settings())
    registry = build_server(service).registry
    opened_ms = (time.perf_counter() - started) * 1e3
    rng = random.Random(11)
    wall: dict[str, list[float]] = {op: [] for op in ops}
    cpu: dict[str, list[float]] = {op: [] for op in ops}
    server: dict[str, list[float]] = {op: [] for op in ops}
    backends = _Backends(vault) if args.server_cpu and vault.backend == "postgres" else None
    settle_heap()
    try:
        for round_no in range(args.warmup + args.ops):
            order = list(ops)
            random.Random(round_no).shuffle(order)
            for op in order:
                call = _args(op, corpus, selective, meta["read_ids"], rng)
                s0 = backends.cpu_ns() if backends else {}
                c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
                envelope = registry.run(OPS[op], call)
                t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
                s1 = backends.cpu_ns() if backends else {}
                if envelope.get("state") not in ("ok", "applied", "unchanged"):
                    raise RuntimeError(f"{op}: {envelope.get('state')} {envelope.get('issues')}")
                if round_no >= args.warmup:
                    wall[op].append((t1 - t0) / 1e6)
                    cpu[op].append((c1 - c0) / 1e6)
                    server[op].append(_Backends.spent(s0, s1) / 1e6)
        rss_mb = round(rss_kib() / 1024, 1)  # with the store's caches held (e.g. SQLite's phrase copies, 16.E1)
    finally:
        store.close()
        gc.unfreeze()
        if backends:
            backends.close()
    result: dict[str, Any] = {
        "backend": meta["backend"],
        "size": built,
        "selective_words": len(selective),
        "build_seconds": meta["build_seconds"],
        "bytes": meta["bytes"],
        "open_ms": round(opened_ms, 1),
        "rss_mb": rss_mb,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "ops": {},
    }
    print(f"{meta['backend']}, {built:,} nodes, {args.ops} rounds (+{args.warmup} warm-up); ms")
    extra = f" {'srv p50':>9} {'srv p95':>9}" if backends else ""
    print(f"{'op':<18} {'wall p50':>9} {'wall p95':>9} {'cpu p50':>9} {'cpu p95':>9}{extra}")
    for op in ops:
        w, c = sorted(wall[op]), sorted(cpu[op])
        row = {
            "p50": round(percentile(w, 50), 2),
            "p95": round(percentile(w, 95), 2),
            "cpu_p50": round(percentile(c, 50), 2),
            "cpu_p95": round(percentile(c, 95), 2),
        }
        line = f"{op:<18} {row['p50']:>9.2f} {row['p95']:>9.2f} {row['cpu_p50']:>9.2f} {row['cpu_p95']:>9.2f}"
        if backends:
            s = sorted(server[op])
            row["server_cpu_p50"] = round(percentile(s, 50), 2)
            row["server_cpu_p95"] = round(percentile(s, 95), 2)
            line += f" {row['server_cpu_p50']:>9.2f} {row['server_cpu_p95']:>9.2f}"
        result["ops"][op] = row
        print(line)
    print(f"process RSS {result['rss_mb']} MB after the rounds (peak {result['peak_rss_mb']} MB)")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    return result


class _Backends:
    """The CPU time of the server processes serving this vault's database (PostgreSQL on this
    machine): the `kaeru` connections' backends, found in `pg_stat_activity` by a connection of
    its own (not counted), their time on a CPU read from `/proc/<pid>/schedstat` (nanoseconds)."""

    def __init__(self, vault: BenchVault):
        import psycopg

        self._conn = psycopg.connect(str(vault.database_url), autocommit=True)

    def cpu_ns(self) -> dict[int, int]:
        """Each backend's CPU time now, by pid."""
        pids = self._conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'kaeru'"
        ).fetchall()
        times: dict[int, int] = {}
        for (pid,) in pids:
            try:
                times[pid] = int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pass  # ended, or not on this machine
        return times

    @staticmethod
    def spent(before: dict[int, int], after: dict[int, int]) -> int:
        """CPU the backends alive at both samples spent between them (a connection the pool closed
        or opened meanwhile would otherwise count its whole life, or less than nothing)."""
        return sum(after[pid] - before[pid] for pid in after.keys() & before.keys())

    def close(self) -> None:
        self._conn.close()


def cmd_drop(args: argparse.Namespace) -> None:
    meta = json.loads((args.vault / META).read_text())
    vault = _vault(meta, args.vault)
    vault.keep = False
    if meta["backend"] == "postgres":
        from bench.vaults import postgres_admin_url

        vault._admin_url = postgres_admin_url()
    vault.drop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--size", type=int, default=1_000_000)
    b.add_argument("--seed", type=int, default=20240601)
    b.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    b.add_argument("--workdir", type=Path, default=None)
    m = sub.add_parser("measure")
    m.add_argument("--vault", type=Path, required=True)
    m.add_argument("--ops", type=int, default=60, help="counted rounds (each calls every op once)")
    m.add_argument("--warmup", type=int, default=5)
    m.add_argument("--only", nargs="*", choices=tuple(OPS), help="only these ops")
    m.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    m.add_argument(
        "--server-cpu",
        action="store_true",
        help="PostgreSQL on this machine: also the server's CPU per call (its backends' /proc/<pid>/schedstat)",
    )
    f = sub.add_parser("finish")
    f.add_argument("--vault", type=Path, required=True)
    f.add_argument("--size", type=int, default=1_000_000, help="the size the build was started with")
    f.add_argument("--seed", type=int, default=20240601)
    f.add_argument("--seconds", type=float, default=None, help="how long the build ran")
    f.add_argument("--database", default=None, help="PostgreSQL: the database's name (printed by build)")
    d = sub.add_parser("drop")
    d.add_argument("--vault", type=Path, required=True)
    args = parser.parse_args(argv)
    {"build": cmd_build, "measure": cmd_measure, "finish": cmd_finish, "drop": cmd_drop}[args.cmd](args)


if __name__ == "__main__":
    main()
