"""`python -m bench.fusion_sweep VARIANTS.json [locomo,beam]` — both sets ingested and embedded once
(vectors from the bench's embedding cache under $SWEEP_WORK, default /tmp/F-work), then every question
asked under each variant of the semantic channel's fusion: a variant names module constants to set
(`kaeru.domain.plans.SEMANTIC_WEIGHT`, or a bare name of `service/recall/channels.py`) and channels to
switch off (`"only_semantic"`: every other one). `SWEEP_STRIDE=3` asks every third question,
`SWEEP_MODEL=mpnet` uses all-mpnet-base-v2 unpacked at /tmp/F-mpnet-model (decision 17.F1).
The nearest vectors of a query are computed once per run (they do not depend on the knobs)."""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.beam import data as beam_data
from bench.beam.run import current_first
from bench.locomo import data as locomo_data
from bench.locomo import kaeru_side, metrics
from kaeru.domain.plans import CHANNELS
from kaeru.service.recall import channels as ch

WORK = Path(os.environ.get("SWEEP_WORK", "/tmp/F-work"))
CACHE = WORK / "embedding-cache.sqlite"


class Mpnet:
    model_id = "all-mpnet-base-v2"

    def __init__(self) -> None:
        from kaeru.semantic import MiniLMEmbedder

        self.inner = MiniLMEmbedder()
        self.inner.model_id = self.model_id  # type: ignore[misc]

        def load() -> Any:
            from sentence_transformers import SentenceTransformer

            if self.inner._model is None:
                path = "/tmp/F-mpnet-model/all-mpnet-base-v2"
                self.inner._model = SentenceTransformer(path, device="cpu", local_files_only=True)
            return self.inner._model

        self.inner._load = load  # type: ignore[method-assign]

    def embed(self, texts: Any) -> list[list[float]]:
        return self.inner.embed(texts)


def setup(which: str, semantic: bool = True) -> tuple[Any, Any, Any]:
    if which == "locomo":
        data = locomo_data.load(Path("bench/data/locomo").resolve())
        convs = data.conversations
    else:
        data = beam_data.load(Path("bench/data/beam-dev").resolve())
        convs = list(data.conversations)
    base = Path(tempfile.mkdtemp(prefix=f"sweep-{which}-", dir=WORK))
    start = kaeru_side.clock_start(convs)
    cm = kaeru_side.open_vault(base, 20240229 if which == "locomo" else 20251031, start, semantic, None, CACHE)
    vault = cm.__enter__()
    res = kaeru_side.IngestResult()
    t0 = time.perf_counter()
    for conv in convs:
        kaeru_side.ingest(vault, conv, res)
    print(f"{which}: {res.notes} notes in {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
    if semantic and os.environ.get("SWEEP_MODEL") == "mpnet":
        vault.embedder = kaeru_side.CachedEmbedder(Mpnet(), CACHE)
    if semantic:
        t0 = time.perf_counter()
        n = vault.embed_all()
        print(f"{which}: {n} vectors in {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
    return data, vault, cm


def run(which: str, data: Any, vault: Any, disabled: frozenset[str]) -> dict[str, Any]:
    by_index = {c.index: c for c in data.conversations}
    call = kaeru_side.recall_call(disabled)
    scores = []
    firsts = []
    cpu = []
    ranks: dict[str, list[str]] = {}
    stride = int(os.environ.get("SWEEP_STRIDE", "1"))
    for n, q in enumerate(x for x in data.questions if x.evidence):
        if n % stride:
            continue
        conv = by_index[q.conv_index]
        vault.clock.jump()
        r = kaeru_side.ask(vault, call, conv, q.text)
        cpu.append(r.cpu_ns)
        scores.append(metrics.score(r.turns, q.evidence))
        ranks[q.key] = r.turns
        if which == "beam" and getattr(q, "original", ()):
            firsts.append(current_first(r.turns, q))
    dump = os.environ.get("SWEEP_DUMP")
    if dump:
        evidence = {q.key: list(q.evidence) for q in data.questions if q.key in ranks}
        cats = {q.key: q.category for q in data.questions if q.key in ranks}
        path = Path(dump) / f"{which}-{abs(hash(disabled)) % 10**6}-{len(ranks)}-{time.time_ns() % 10**6}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"ranks": ranks, "evidence": evidence, "cats": cats}))
        print(f"dumped {path}", file=sys.stderr, flush=True)
    m = metrics.mean_scores(scores)
    out = {
        "R@10": round(m["recall@10"], 4),
        "MRR": round(m["mrr"], 4),
        "cpu_p50": metrics.latency(cpu).get("p50"),
    }
    if which == "beam":
        ku = [q for q in data.questions if beam_data.CATEGORIES[q.category] == beam_data.KNOWLEDGE_UPDATE]
        firsts = [current_first(ranks[q.key], q) for q in ku if q.key in ranks]
        out["cur1st"] = round(sum(firsts) / len(firsts), 3) if firsts else None
    return out


def module_of(knob: str) -> tuple[Any, str]:
    """`NAME` is the semantic channel's module's; `package.module.NAME` names its module."""
    if "." not in knob:
        return ch, knob
    module, attr = knob.rsplit(".", 1)
    return importlib.import_module(module), attr


def apply(knobs: dict[str, Any]) -> dict[str, Any]:
    old = {}
    for k, v in knobs.items():
        mod, attr = module_of(k)
        old[k] = getattr(mod, attr)  # an unknown knob is an error, not a silent new attribute
        setattr(mod, attr, v)
    return old


ONLY_SEMANTIC = frozenset(c for c in CHANNELS if c != "semantic")


def memoise_vectors() -> None:
    """The candidates do not depend on the fusion knobs: each query's are computed once."""
    from kaeru.storage.sqlite.vectors import SqliteVectors

    near = SqliteVectors.nearest_vectors
    memo: dict[Any, Any] = {}

    def nearest(self: Any, scope: Any, model: str, vector: bytes, limit: int, first: Any = None) -> Any:
        key = (tuple(scope), model, vector, limit)
        if key not in memo:
            memo[key] = near(self, scope, model, vector, limit, first)
        return memo[key]

    SqliteVectors.nearest_vectors = nearest  # type: ignore[method-assign]
    SqliteVectors.vector_candidates = lambda self, model, vector, limit: None  # type: ignore[method-assign]


def main() -> None:
    memoise_vectors()
    kaeru_side.LIMIT = int(os.environ.get("SWEEP_LIMIT", "10"))
    WORK.mkdir(parents=True, exist_ok=True)
    variants: list[tuple[str, dict[str, Any], frozenset[str]]] = json_variants(sys.argv[1])
    sets = sys.argv[2].split(",") if len(sys.argv) > 2 else ["locomo", "beam"]
    results: dict[str, dict[str, Any]] = {}
    for which in sets:
        data, vault, cm = setup(which)
        for name, knobs, disabled in variants:
            missing = [k for k in knobs if not hasattr(module_of(k)[0], module_of(k)[1])]
            if missing:  # the measuring knobs of decision 17.F1 exist only at commit 15417f4
                print(f"{which:7} {name:40} skipped: no knob {', '.join(missing)} in this tree", flush=True)
                continue
            old = apply(knobs)
            try:
                t0 = time.perf_counter()
                r = run(which, data, vault, disabled)
                r["s"] = round(time.perf_counter() - t0)
                results.setdefault(name, {})[which] = r
                print(f"{which:7} {name:40} {json.dumps(r)}  load {os.getloadavg()[0]:.1f}", flush=True)
            finally:
                apply(old)
        cm.__exit__(None, None, None)
    print(json.dumps(results, indent=1))


def json_variants(path: str) -> list[tuple[str, dict[str, Any], frozenset[str]]]:
    raw = json.loads(Path(path).read_text())
    out = []
    for v in raw:
        dis = v.get("disabled", [])
        disabled = ONLY_SEMANTIC if dis == "only_semantic" else frozenset(dis)
        out.append((v["name"], v.get("knobs", {}), disabled))
    return out


if __name__ == "__main__":
    main()
