"""A session's first calls on a new stdio server: the re-entry an agent makes. A script, not a test.

`bench.reentry` times warm calls in one process; an agent's client starts a new `kaeru serve` at
every session start, and its first calls pay what the process has not read yet (imports, the row
sizes of the in-memory copies, each word's copy). Each run spawns a server on a copy of a kept
benchmark corpus vault (`bench.million build` or `bench.reentry --keep`), answers `initialize` and
`tools/list`, then asks `context` and `--recalls` recalls of 3–8 words drawn by the corpus's Zipf
frequencies (a new sentence each), waiting `--think` seconds before each call as an agent reads
and thinks. `--sessions N` starts N servers one after the other on the same copy, each asking new
sentences: an agent's next sessions on its project (a server keeps its latest rankings in the
vault for the next one's warm-up, decision 270). Prints each call's wall p50 / p95 (ms, from its
request to its answer) by session and position.

With `--baseline SRC` (another checkout's `src`, e.g. a `git archive` unpacked) every run starts
one server of each tree, in alternating order, on its own copy of the vault. Both trees are compiled
to bytecode first, as an installed server is (`bench.startup.compile_kaeru`): with
PYTHONDONTWRITEBYTECODE set, a tree without it compiles its modules in every new process.

    PYTHONPATH=src:. python -m bench.first_calls --vault <kept 100k vault> --size 100000 [--runs 5]
        [--think 1.0] [--recalls 5] [--sessions 2] [--initiative kaeru-core] [--baseline OTHER/src] [--out FILE]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.corpus import MAIN, CorpusBuilder
from bench.measure import KAERU_SERVE, RawStdioClient
from bench.startup import compile_kaeru
from bench.stats import percentile


def calls(
    builder: CorpusBuilder, rng: random.Random, initiative: str, recalls: int
) -> list[tuple[str, str, dict[str, Any]]]:
    """One session's calls after `tools/list`: `(label, tool, arguments)`."""
    asked = [("context", "context", {"initiative": initiative})]
    for i in range(1, recalls + 1):
        words = builder.zipf_words(rng, rng.randint(3, 8))
        asked.append((f"recall {i}", "recall", {"initiatives": [initiative], "query": " ".join(words)}))
    return asked


def session(
    vault: Path, src: str | None, asked: list[tuple[str, str, dict[str, Any]]], think: float
) -> dict[str, float]:
    """One new server on `vault` (this tree's kaeru, or `src`'s): each milestone's wall ms."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}
    env["KAERU_VAULT"] = str(vault)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    started = time.perf_counter()
    client = RawStdioClient(env, sys.stderr, KAERU_SERVE)
    out = {"initialize": (time.perf_counter() - started) * 1000}
    try:
        client.request("tools/list", {})
        for label, tool, arguments in asked:
            time.sleep(think)
            t = time.perf_counter()
            answer = client.call_tool(tool, arguments)
            out[label] = (time.perf_counter() - t) * 1000
            if answer.get("isError"):
                raise RuntimeError(f"{tool} failed: {answer}")
    finally:
        client.close()
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, required=True, help="a kept benchmark corpus vault (SQLite)")
    parser.add_argument("--size", type=int, required=True, help="its corpus size (the words are drawn from it)")
    parser.add_argument("--initiative", default=MAIN)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--recalls", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=2, help="servers one after the other on one copy")
    parser.add_argument("--think", type=float, default=1.0, help="seconds before each call")
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout's src, in the same runs")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    compile_kaeru()  # as an installed server is (`bench.startup`); the baseline too
    if args.baseline is not None:
        compileall.compile_dir(args.baseline / "kaeru", quiet=1)
    builder = CorpusBuilder(args.size)
    for _ in builder.notes():  # the words are known once the notes are drawn
        pass
    rng = random.Random(7)
    trees: list[tuple[str, str | None]] = [("this tree", None)]
    if args.baseline is not None:
        trees.append(("baseline", str(args.baseline.resolve())))
    walls: dict[str, dict[str, list[float]]] = {tree: {} for tree, _ in trees}
    with tempfile.TemporaryDirectory(prefix="kaeru-first-calls-", dir=args.workdir) as scratch:
        for run in range(args.runs):
            asked = [calls(builder, rng, args.initiative, args.recalls) for _ in range(args.sessions)]
            order = trees if run % 2 == 0 else trees[::-1]
            for tree, src in order:
                vault = Path(scratch) / f"vault-{run}-{tree.replace(' ', '-')}"
                shutil.copytree(args.vault, vault)
                for number, questions in enumerate(asked, 1):
                    for label, ms in session(vault, src, questions, args.think).items():
                        walls[tree].setdefault(f"session {number}: {label}", []).append(ms)
                shutil.rmtree(vault)
    figures = {
        tree: {
            label: {"p50": round(percentile(sorted(v), 50), 1), "p95": round(percentile(sorted(v), 95), 1)}
            for label, v in rows.items()
        }
        for tree, rows in walls.items()
    }
    print(f"a new server's first calls, {args.runs} runs, {args.think} s before each call (wall ms, p50 / p95)")
    print("| call | " + " | ".join(tree for tree, _ in trees) + " |")
    print("|---|" + "---|" * len(trees))
    for label in figures["this tree"]:
        cells = [f"{figures[tree][label]['p50']} / {figures[tree][label]['p95']}" for tree, _ in trees]
        print(f"| {label} | " + " | ".join(cells) + " |")
    if args.out:
        args.out.write_text(json.dumps({"runs": args.runs, "think": args.think, "figures": figures}, indent=2))
    return figures


if __name__ == "__main__":
    main()
