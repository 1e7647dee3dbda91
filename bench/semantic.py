"""`python -m bench.semantic` — semantic `recall` at scale: latency and memory per query (decisions 17.V4, 17.X3, 17.Y3).

Builds the synthetic corpus (`bench.corpus`, bulk mode) once per size, stores a random unit vector
of 384 dimensions for every note under the packaged model's id (embedding 100k notes with MiniLM on
a shared CPU takes too long, and a scan costs the same whatever the vectors hold), then asks
`recall` with the semantic channel over every initiative, the query embedded by the real packaged
model. Measured per query, on the same vault and queries:

* `recall` — the whole call, as a client sees it (query embedding included);
* `channel` — the vector step alone: `Session.nearest_vectors` (candidates by code — the codes
  scanned in memory on SQLite, 17.Y1 — ranked exactly in the database, decision 17.X1), the exact
  scan it falls back to (`channel_exact_scan`),
  and, unless `--skip-old`, the Python scan of before 17.V1;
* `thread_cpu` is the calling thread's CPU time, `process_cpu` the whole process's (the query's
  embedding and first candidates run on a worker thread: decision 17.X2);
* `peak` — the Python heap's high-water mark during one call (tracemalloc, a separate pass);
* `--agreement N` — how often the candidates' top 10 and top 100 are the exact scan's, on the
  queries and N random ones, over all initiatives and over one.

`--keep` leaves the vault (and prints where) and `--vault DIR` reuses it, so each size is built once.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.build import build
from bench.corpus import INITIATIVES, CorpusBuilder
from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.service import Service
from kaeru.service.embedding import pack
from kaeru.storage.factory import open_store

DIMS = 384
SCOPE = [name for name, _ in INITIATIVES]
CANDIDATES = 100
QUERIES = [
    "how did we migrate the billing database",
    "what went wrong with the mobile release",
    "notes about the cache invalidation bug",
    "who owns the infrastructure budget",
    "a holiday trip with the family",
    "performance regression in search",
    "the decision about authentication tokens",
    "deployment checklist for staging",
]


def _settings(vault: Path, database_url: str | None) -> Settings:
    env = {"KAERU_VAULT": str(vault)}
    if database_url:
        env["KAERU_DATABASE_URL"] = database_url
    return Settings.from_env(env)


def _fill_vectors(service: Service, model_id: str, seed: int) -> int:
    """A random unit vector per live node (batches of 2,000 per transaction)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    store = service.store
    after, written = 0, 0
    while True:
        with store.read() as session:
            nodes = session.live_node_batch(after, 2_000)
        if not nodes:
            return written
        after = nodes[-1].seq
        matrix = rng.standard_normal((len(nodes), DIMS)).astype("<f4")
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        with store.write() as session:
            for node, row in zip(nodes, matrix, strict=True):
                session.put_vector(node.id, model_id, "bench", row.tobytes())
        written += len(nodes)


def _old_scan(session: Any, scope_ids: list[int], model: str, query: bytes) -> list[tuple[str, float]]:
    """The scan `nearest_vectors` replaced: every vector in scope into Python, ranked with numpy."""
    import numpy as np

    scope, params = session._member_of(scope_ids)
    stored = [
        (r[0], bytes(r[1]))
        for r in session._db.rows(
            "SELECT v.node_id, v.vector FROM node_vectors v JOIN nodes n ON n.id = v.node_id "
            f"WHERE v.model = ? AND n.retracted = {session._d.false} AND {scope} ORDER BY v.node_id",
            [model, *params],
        )
    ]
    matrix = np.frombuffer(b"".join(blob for _, blob in stored), dtype="<f4").reshape(len(stored), -1)
    sims = matrix @ np.frombuffer(query, dtype="<f4")
    top = np.argsort(-sims, kind="stable")[:CANDIDATES]
    return [(stored[i][0], float(sims[i])) for i in top]


def _time(fn: Callable[[], object], rounds: int, cpu: list[float], process: list[float] | None = None) -> list[float]:
    """Wall-clock milliseconds per call; this thread's CPU milliseconds appended to `cpu` (SQLite runs
    in the calling thread: on a loaded machine, the steadier figure) and, when given, the whole
    process's to `process` (the query's embedding runs on a worker thread: decision 17.X2)."""
    out = []
    for _ in range(rounds):
        start, start_cpu, start_process = time.perf_counter(), time.thread_time(), time.process_time()
        fn()
        out.append((time.perf_counter() - start) * 1000)
        cpu.append((time.thread_time() - start_cpu) * 1000)
        if process is not None:
            process.append((time.process_time() - start_process) * 1000)
    return out


def _agreement(session: Any, scopes: dict[str, list[int]], model: str, queries: list[bytes]) -> dict[str, Any]:
    """How often `nearest_vectors` (candidates by code, exact rescoring: decision 17.X1) returns what
    the exact scan of every vector returns, per scope: the same top 10 in the same order, and how
    many of the exact top 100 it keeps."""
    out: dict[str, Any] = {}
    for name, scope_ids in scopes.items():
        same_10, kept = 0, []
        for query in queries:
            got = [i for i, _ in session.nearest_vectors(scope_ids, model, query, CANDIDATES)]
            exact = [i for i, _ in session._exact(scope_ids, model, query, CANDIDATES)]
            same_10 += got[:10] == exact[:10]
            kept.append(len(set(got) & set(exact)) / max(1, len(exact)))
        out[name] = {
            "queries": len(queries),
            "same_top_10": same_10,
            "top_100_kept_mean": round(statistics.mean(kept), 4),
            "top_100_kept_min": round(min(kept), 4),
        }
    return out


def _summary(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
        "n": len(ordered),
    }


def _peak(fn: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.semantic", description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--vault", type=Path, help="reuse this vault directory (built by an earlier --keep run)")
    parser.add_argument("--database-url", help="PostgreSQL vault database (default: SQLite in the vault directory)")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--rounds", type=int, default=5, help="times each query is asked")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--skip-old", action="store_true", help="do not time the replaced Python scan")
    parser.add_argument(
        "--agreement",
        type=int,
        default=0,
        metavar="N",
        help="also compare the candidates' top 100 with the exact scan's on the queries and N random ones (SQLite)",
    )
    args = parser.parse_args(argv)

    from kaeru import semantic

    if not semantic.available():
        print("the [semantic] extra is not installed", file=sys.stderr)
        return 2
    embedder = semantic.MiniLMEmbedder()
    vault = args.vault
    if vault is None:
        import tempfile

        vault = Path(tempfile.mkdtemp(prefix=f"kaeru-bench-semantic-{args.nodes}-", dir=args.workdir))
    settings = _settings(vault, args.database_url)
    store = open_store(settings)
    service = Service(store, settings, embedder=embedder)
    report: dict[str, Any] = {"nodes": args.nodes, "backend": store.backend, "vault": str(vault)}
    with store.read() as session:
        scope_ids = [i.id for name in SCOPE if (i := session.initiative_by_name(name)) is not None]
    if not scope_ids:
        start = time.perf_counter()
        build(Service(store, settings), CorpusBuilder(args.nodes), "bulk")
        written = _fill_vectors(service, embedder.model_id, 17)
        report["build_s"] = round(time.perf_counter() - start, 1)
        print(f"built {args.nodes:,} notes, {written:,} vectors in {report['build_s']}s: {vault}", file=sys.stderr)
        with store.read() as session:
            scope_ids = [i.id for name in SCOPE if (i := session.initiative_by_name(name)) is not None]
    with store.read() as session:
        report["vectors"] = session._db.one("SELECT count(*) FROM node_vectors")[0]  # type: ignore[attr-defined]
    embedder.embed(["warm up"])
    vectors = {q: pack(embedder.embed([q])[0]) for q in QUERIES}

    def recall(query: str) -> object:
        return service.recall(parse("recall", {"initiatives": SCOPE, "query": query, "limit": 10}))

    def nearest(query: str) -> object:
        with store.read() as session:
            return session.nearest_vectors(scope_ids, embedder.model_id, vectors[query], CANDIDATES)

    def exact(query: str) -> object:
        with store.read() as session:
            return session._exact(scope_ids, embedder.model_id, vectors[query], CANDIDATES)  # type: ignore[attr-defined]

    def old(query: str) -> object:
        with store.read() as session:
            return _old_scan(session, scope_ids, embedder.model_id, vectors[query])

    with store.read() as session:
        has_nearest = hasattr(session, "nearest_vectors")  # False under the code before decision 17.V1
        has_exact = hasattr(session, "_exact")  # SQLite since decision 17.X1: the exact scan kept as a fallback
    names = ["recall", "channel_in_database", "channel_exact_scan", "channel_old_python_scan"]
    measured: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    process: list[float] = []
    has_old = not args.skip_old and store.backend == "sqlite"
    for query in QUERIES:
        recall(query)  # warm: caches, plan
        measured["recall"] += _time(lambda q=query: recall(q), args.rounds, cpu["recall"], process)  # type: ignore[misc]
        if has_exact:
            measured["channel_exact_scan"] += _time(
                lambda q=query: exact(q),  # type: ignore[misc]
                args.rounds,
                cpu["channel_exact_scan"],
            )
        if has_nearest:
            measured["channel_in_database"] += _time(
                lambda q=query: nearest(q),  # type: ignore[misc]
                args.rounds,
                cpu["channel_in_database"],
            )
        if has_old:
            measured["channel_old_python_scan"] += _time(
                lambda q=query: old(q),  # type: ignore[misc]
                args.rounds,
                cpu["channel_old_python_scan"],
            )
    report["latency"] = {k: _summary(v) for k, v in measured.items() if v}
    report["thread_cpu"] = {k: _summary(v) for k, v in cpu.items() if v}
    report["process_cpu"] = {"recall": _summary(process)}
    report["load_average"] = [round(x, 1) for x in os.getloadavg()]
    report["peak_mib"] = {"recall": round(_peak(lambda: recall(QUERIES[0])), 2)}
    if has_nearest:
        report["peak_mib"]["channel_in_database"] = round(_peak(lambda: nearest(QUERIES[0])), 2)
    if has_old:
        report["peak_mib"]["channel_old_python_scan"] = round(_peak(lambda: old(QUERIES[0])), 2)
        same = [nearest(q) for q in QUERIES[:3]] if has_nearest else [], [old(q) for q in QUERIES[:3]]
        report["same_top_ids"] = not has_nearest or all(
            [i for i, _ in a] == [i for i, _ in b] for a, b in zip(same[0], same[1], strict=True)
        )
    if args.agreement and has_exact:
        import numpy as np

        rng = np.random.default_rng(args.agreement)
        randoms = rng.standard_normal((args.agreement, DIMS)).astype("<f4")
        randoms /= np.linalg.norm(randoms, axis=1, keepdims=True)
        queries = [vectors[q] for q in QUERIES] + [row.tobytes() for row in randoms]
        with store.read() as session:
            report["agreement"] = _agreement(
                session, {"all": scope_ids, "one_initiative": scope_ids[:1]}, embedder.model_id, queries
            )
    store.close()
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    if not args.keep and args.vault is None:
        import shutil

        shutil.rmtree(vault, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
