"""`python -m bench.broad` — broad (common-word) search: in memory, top-k plan, exhaustive plan.

    python -m bench.broad --sizes 10000,100000                 # build the vaults, measure, drop them
    python -m bench.broad --sizes 100000 --keep --workdir /tmp/kb
    python -m bench.broad --vault /tmp/kb/kaeru-bench-sqlite-100000-xxxx --sizes 100000   # reuse one
    python -m bench.broad --vault … --sizes 100000 --write-every 1   # a note before every round

SQLite (decisions 16.B1, 16.B4). On the `bench.run` corpus it asks `--queries` broad queries from the
corpus's most frequent words (single words, then pairs of them with `match any`), in the searched
initiative, and reports:

* **agreement**: the share of queries whose top 10 from the store's search ranked in memory
  (decision 16.B4) equals the exhaustive bm25 ranking (ids and scores, in order) — against the
  store's exhaustive plan (`FtsSearch.top_k = False`, superseded matches omitted as `search` does),
  against SQL's top-k plan (`FtsSearch.text_cache = False`, 16.B1), and (ids) against a raw
  statement written here (every match in scope, `ORDER BY bm25, seq DESC LIMIT 10`, nothing
  omitted), each query in one read snapshot; and the thread CPU of each query's first search,
  which reads the in-memory copies of its words (the cold cost, paid once a process);
* **latency**: `search` through `ToolRegistry.run` (validation, service, envelope: the MCP handler
  minus transport, default limit and budget), wall and thread-CPU p50/p95, ranked in memory, by
  SQL's top-k plan and by the exhaustive plan, alternating query by query in the same run (`--ops`
  calls each); with `--write-every N`, a `note` of common words in the searched initiative every N
  rounds (not timed), so the timed searches bring the copies up to date as an agent's would.

* **recall, common words** (decision 16.K1): `recall` of two of the corpus's broad words of the
  searched initiative (as `bench.reentry`'s `recall_common`), through the service, wall and
  thread-CPU p50/p95 (`--recall-ops` calls; 0 skips it): its lexical channels and per-word counts
  are the same full-text statements;
* the load average (`os.getloadavg`) before and after, since the machine is usually shared.

Benchmarks are not tests: nothing here asserts on a timing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from bench.build import build
from bench.corpus import MAIN, CorpusBuilder
from bench.measure import _check_envelope, _timed
from bench.stats import summarize
from bench.vaults import BenchVault, new_vault

TOP = 10
_WEIGHTS = "4.0, 2.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0"


def broad_queries(builder: CorpusBuilder, count: int) -> list[str]:
    """`count` queries of the corpus's commonest words: the words alone, then pairs (match any)."""
    vocab = builder.corpus.vocab
    singles = vocab[: count // 2]
    pairs = [f"{a} {b}" for a, b in itertools.combinations(vocab[:40], 2)]
    return (singles + pairs)[:count]


def _exhaustive_sql(session: Any, initiative_id: int, text: str) -> list[str]:
    """The exhaustive bm25 ranking, written here: every match in scope ranked, the best TOP ids."""
    from kaeru.domain.text import query_tokens
    from kaeru.storage.sqlite.matching import fts_match

    match = fts_match(query_tokens(text), False, False)
    rows = session._db.rows(
        f"SELECT n.id FROM nodes_fts JOIN nodes n ON n.seq = nodes_fts.rowid "
        "WHERE nodes_fts MATCH ? AND n.retracted = 0 AND n.node_type <> 'audit_event' "
        "AND EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq AND m.initiative_id = ?) "
        f"ORDER BY bm25(nodes_fts, {_WEIGHTS}), n.seq DESC LIMIT {TOP}",
        [match, initiative_id],
    )
    return [str(r[0]) for r in rows]


def agreement(store: Any, queries: list[str]) -> dict[str, Any]:
    """Top 10 of the ranking in memory (decision 16.B4) against the store's exhaustive plan, SQL's
    top-k plan and a raw bm25 statement, each query in one read snapshot; and the thread CPU of each
    query's first search in memory, which reads the copies of its words (the cold cost)."""
    from kaeru.domain.text import query_tokens
    from kaeru.storage.base import SearchQuery

    same_plan = same_sql = same_raw = 0
    matches: list[int] = []
    differ: list[str] = []
    cold: list[int] = []
    for text in queries:
        with store.read() as session:
            scope = session.initiative_by_name(MAIN)

            def top(
                plan: str, omit_superseded: bool = True, scope: Any = scope, text: str = text
            ) -> tuple[list[Any], int]:
                session.top_k, session.text_cache = PLANS[plan]
                asked = SearchQuery(
                    initiative_ids=[scope.id], tokens=query_tokens(text), omit_superseded=omit_superseded
                )
                rows, total, _ = session.search(asked)
                return [(r.id, r.score) for r in rows[:TOP]], total

            _, used, (fast, total) = _timed(top, "memory")
            cold.append(used)
            same = fast == top("exhaustive")[0]  # ids, order and scores
            same_plan += same
            same_sql += fast == top("top_k")[0]
            same_raw += [i for i, _ in top("memory", omit_superseded=False)[0]] == _exhaustive_sql(
                session, scope.id, text
            )
            if not same:
                differ.append(text)
            matches.append(total)
    n = len(queries)
    return {
        "queries": n,
        "top10_equal_exhaustive_plan": round(same_plan / n, 4),
        "top10_equal_sql_top_k_plan": round(same_sql / n, 4),
        "top10_equal_raw_bm25": round(same_raw / n, 4),
        "differing_queries": differ[:20],
        "matches_in_scope_min_median_max": [min(matches), sorted(matches)[n // 2], max(matches)],
        "first_search_cpu": summarize(cold, keep_samples=False),
    }


#: The plans `latency` alternates: the ranking in memory (decision 16.B4), SQL's top-k plan (16.B1,
#: 16.K1) and the exhaustive plan, as (`FtsSearch.top_k`, `FtsSearch.text_cache`).
PLANS = {"memory": (True, True), "top_k": (True, False), "exhaustive": (False, False)}


def _plan(name: str) -> None:
    from kaeru.storage.sqlite.search import FtsSearch

    FtsSearch.top_k, FtsSearch.text_cache = PLANS[name]


def latency(
    registry: Any, queries: list[str], ops: int, seed: int, write_every: int = 0, vocab: list[str] | None = None
) -> dict[str, Any]:
    """`ops` rounds of one `search` per plan (order alternating), a random query each; with
    `write_every`, a `note` of common words in the searched initiative every that many rounds (an
    agent writes between searches: the in-memory copies are then brought up to date, and that is
    what is timed, not a read-only cache). The notes are not timed."""
    rng = random.Random(seed)
    samples: dict[str, tuple[list[int], list[int]]] = {plan: ([], []) for plan in PLANS}
    order = list(PLANS)
    words = (vocab or [])[:40]
    for text in queries[:8]:  # warm-up: each plan once on a few words
        for plan in order:
            _plan(plan)
            registry.run("search", {"initiatives": [MAIN], "text": text})
    notes = 0
    try:
        for i in range(ops):
            if write_every and words and i % write_every == 0:
                body = " ".join(rng.choice(words) for _ in range(rng.randint(4, 24)))
                envelope = registry.run("note", {"initiative": MAIN, "text": body, "kind": "observation"})
                _check_envelope("note", "in_process", envelope)
                notes += 1
            text = rng.choice(queries)
            for plan in order if i % 2 else reversed(order):
                _plan(plan)
                wall, cpu, envelope = _timed(registry.run, "search", {"initiatives": [MAIN], "text": text})
                _check_envelope("search_broad", "in_process", envelope)
                samples[plan][0].append(wall)
                samples[plan][1].append(cpu)
    finally:
        _plan("memory")
    out: dict[str, Any] = {"notes_written": notes, "write_every": write_every}
    for plan, (walls, cpus) in samples.items():
        out[plan] = {"wall": summarize(walls, keep_samples=False), "cpu": summarize(cpus, keep_samples=False)}
    for q in ("p50", "p95"):
        out[f"ratio_{q}_cpu"] = round(out["memory"]["cpu"][q] / out["exhaustive"]["cpu"][q], 3)
        out[f"ratio_{q}_wall"] = round(out["memory"]["wall"][q] / out["exhaustive"]["wall"][q], 3)
    return out


def recall_common(service: Any, builder: CorpusBuilder, ops: int, seed: int) -> dict[str, Any]:
    """`recall` of two broad words of the searched initiative, `ops` times after three warm-ups."""
    from kaeru.api.requests import parse

    for _ in builder.notes():  # the corpus's word lists are known once its notes are drawn
        pass
    common = list(builder.corpus.broad_main)
    rng = random.Random(seed)
    wall: list[int] = []
    cpu: list[int] = []
    for i in range(ops + 3):
        query = " ".join(rng.sample(common, 2))
        elapsed, used, _ = _timed(service.recall, parse("recall", {"initiatives": [MAIN], "query": query}))
        if i >= 3:
            wall.append(elapsed)
            cpu.append(used)
    return {"wall": summarize(wall, keep_samples=False), "cpu": summarize(cpu, keep_samples=False)}


def run_size(size: int, args: argparse.Namespace) -> dict[str, Any]:
    from kaeru.mcp.heap import settle_heap
    from kaeru.mcp.server import build_server
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    builder = CorpusBuilder(size, args.seed)
    if args.vault:
        vault = BenchVault("sqlite", args.vault, keep=True)  # built by an earlier run: not built again
    else:
        vault = new_vault("sqlite", str(size), args.workdir, args.keep)
    store = open_store(vault.settings())
    try:
        service = Service(store, vault.settings())
        if not args.vault:
            print(f"[{size:,}] building in {vault.vault_dir}", file=sys.stderr, flush=True)
            build(service, builder, "bulk", quiet=False)
        queries = broad_queries(builder, args.queries)
        server = build_server(service)
        settle_heap()  # as `kaeru serve` does before serving: a full collection then skips the start-up heap
        print(f"[{size:,}] agreement over {len(queries)} queries", file=sys.stderr, flush=True)
        agreed = agreement(store, queries)
        print(f"[{size:,}] latency, {args.ops} calls per plan", file=sys.stderr, flush=True)
        load = [os.getloadavg()[0]]
        timed = latency(server.registry, queries, args.ops, args.seed, args.write_every, builder.corpus.vocab)
        load.append(os.getloadavg()[0])
        result = {"size": size, "vault_dir": str(vault.vault_dir), "agreement": agreed, "latency": timed}
        if args.recall_ops:
            print(f"[{size:,}] recall of common words, {args.recall_ops} calls", file=sys.stderr, flush=True)
            result["recall_common"] = recall_common(service, CorpusBuilder(size, args.seed), args.recall_ops, args.seed)
            load.append(os.getloadavg()[0])
        result["load_average"] = [round(x, 2) for x in load]
        return result
    finally:
        store.close()
        vault.drop()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="python -m bench.broad", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--queries", type=int, default=240, help="broad queries for the agreement (default 240)")
    p.add_argument("--ops", type=int, default=200, help="timed calls per plan (default 200)")
    p.add_argument("--recall-ops", type=int, default=30, help="timed common-word recalls (default 30; 0: none)")
    p.add_argument(
        "--write-every", type=int, default=0, help="a note in the searched initiative every N rounds (0: none)"
    )
    p.add_argument("--seed", type=int, default=20240601)
    p.add_argument("--vault", type=Path, default=None, help="reuse a vault kept by --keep (one size only)")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--workdir", type=Path, default=None)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.vault and len(sizes) != 1:
        p.error("--vault needs exactly one size (the one it was built with)")
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    runs = [run_size(size, args) for size in sizes]
    result = {"started": started, "runs": runs}
    for run in runs:
        a, t = run["agreement"], run["latency"]
        print(
            f"{run['size']:>7,}: top-10 = exhaustive plan {a['top10_equal_exhaustive_plan']:.1%}, "
            f"= raw bm25 {a['top10_equal_raw_bm25']:.1%} ({a['queries']} queries, matches {a['matches_in_scope_min_median_max']})"
        )
        c0 = a["first_search_cpu"]
        print(f"         first search of a query (copies read): CPU p50 {c0['p50']:.2f} p95 {c0['p95']:.2f} ms")
        print(
            f"         top-10 = SQL top-k plan {a['top10_equal_sql_top_k_plan']:.1%}; notes written {t['notes_written']}"
        )
        for plan in PLANS:
            w, c = t[plan]["wall"], t[plan]["cpu"]
            print(
                f"         {plan:>10}: wall p50 {w['p50']:.2f} p95 {w['p95']:.2f} ms, CPU p50 {c['p50']:.2f} p95 {c['p95']:.2f} ms"
            )
        print(f"         memory / exhaustive CPU: p50 {t['ratio_p50_cpu']}, p95 {t['ratio_p95_cpu']}")
        if "recall_common" in run:
            w, c = run["recall_common"]["wall"], run["recall_common"]["cpu"]
            print(
                f"         recall, common words: wall p50 {w['p50']:.2f} p95 {w['p95']:.2f} ms, "
                f"CPU p50 {c['p50']:.2f} p95 {c['p95']:.2f} ms"
            )
        print(f"         load average: {run['load_average']}")
    out = args.out or Path("bench/results") / f"broad-{started.replace(':', '')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"results: {out}")
    return result


if __name__ == "__main__":
    main()
