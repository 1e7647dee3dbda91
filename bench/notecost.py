"""What one `note` costs on a `bench.million` vault: wall, the calling thread's CPU and, on
PostgreSQL on this machine, the server's (its backends' `/proc/<pid>/schedstat`), per note.

    python -m bench.notecost --vault DIR/kaeru-bench-… [--notes 300] [--kind long|short]

`long`: the corpus's fresh notes (~790 characters, `CorpusBuilder.fresh_note`); `short`: the
synthetic ~200-character notes `kaeru bench` writes (`cli/synthetic.py`), in the corpus's searched
initiative. Each note goes through `ToolRegistry.run` with a request id, after 30 uncounted ones.
To compare two commits, run each in turn on its own copy of the vault (`CREATE DATABASE … TEMPLATE`
when one migrates it), `PYTHONPATH=<tree>/src`, and alternate (decisions 16.L5, 16.L8).
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from pathlib import Path
from typing import Any

from bench.corpus import MAIN, CorpusBuilder
from bench.million import META, _Backends, _vault
from bench.stats import percentile

WARMUP = 30


def measure(vault_dir: Path, notes: int, kind: str) -> dict[str, dict[str, float]]:
    """p50 / p95 (ms) of each note's wall time, client CPU and, on PostgreSQL, server CPU."""
    from kaeru.cli.synthetic import Workload
    from kaeru.mcp.server import build_server
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    meta = json.loads((vault_dir / META).read_text())
    vault = _vault(meta, vault_dir)
    corpus = CorpusBuilder(meta["size"], meta["seed"])
    synthetic = Workload(7)
    store = open_store(vault.settings())
    registry = build_server(Service(store, vault.settings())).registry
    backends = _Backends(vault) if vault.backend == "postgres" else None
    samples: dict[str, list[float]] = {"wall": [], "client": [], "server": []}
    try:
        for i in range(WARMUP + notes):
            args: dict[str, Any] = corpus.fresh_note() if kind == "long" else {**synthetic.note(0), "initiative": MAIN}
            args["request_id"] = uuid.uuid4().hex
            s0 = backends.cpu_ns() if backends else {}
            c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
            envelope = registry.run("note", args)
            t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
            s1 = backends.cpu_ns() if backends else {}
            if envelope.get("state") not in ("ok", "applied"):
                raise RuntimeError(f"note: {envelope.get('state')} {envelope.get('issues')}")
            if i >= WARMUP:
                samples["wall"].append((t1 - t0) / 1e6)
                samples["client"].append((c1 - c0) / 1e6)
                samples["server"].append(_Backends.spent(s0, s1) / 1e6)
    finally:
        store.close()
        if backends:
            backends.close()
    return {
        name: {"p50": percentile(sorted(values), 50), "p95": percentile(sorted(values), 95)}
        for name, values in samples.items()
        if values and (name != "server" or backends)
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.notecost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, required=True, help="a vault `bench.million build` made")
    parser.add_argument("--notes", type=int, default=300, help="counted notes (after 30 uncounted)")
    parser.add_argument("--kind", choices=("long", "short"), default="long")
    args = parser.parse_args(argv)
    figures = measure(args.vault, args.notes, args.kind)
    print(
        f"{args.kind} note, {args.notes} notes, ms p50 / p95: "
        + ", ".join(f"{name} {row['p50']:.2f} / {row['p95']:.2f}" for name, row in figures.items())
    )


if __name__ == "__main__":
    main()
