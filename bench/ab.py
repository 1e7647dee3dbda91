"""`python -m bench.ab` — the same `bench.run` workload on an older commit and on this tree, in turn.

Each round runs `python -m bench.run` once for the base commit and once for the new one (each a
`git archive` of the commit, its own `src` and `bench` first on the path), alternating which goes first; per operation
it prints each side's median of the rounds' in-process p50s (the `service` layer, in ms) and the
median of the per-round ratios new/base, so a machine that drifts during the call moves both.

    python -m bench.ab --base cad13e1 --new HEAD --backend sqlite --rounds 5
    (PostgreSQL: inside pg_virtualenv, with KAERU_BENCH_DATABASE_URL set; --backend postgres)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
OPS = ("note", "read", "search_selective", "search_broad")


def _export(commit: str, into: Path) -> Path:
    """The tree of `commit`, unpacked into `into` (nothing in this repository's worktrees changes)."""
    archive = subprocess.run(["git", "-C", str(HERE), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _run(tree: Path, args: argparse.Namespace, out: Path) -> dict[str, float]:
    """One `bench.run` of `tree`: p50 (ms) per operation, in process through the service."""
    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}{os.pathsep}{tree}"}
    cmd = [sys.executable, "-m", "bench.run", "--backend", args.backend, "--sizes", str(args.size)]
    cmd += ["--ops", str(args.ops), "--no-stdio", "--quiet", "--out", str(out)]
    subprocess.run(cmd, cwd=tree, env=env, check=True)
    run = json.loads(out.read_text())["runs"][0]
    return {op: float(run["ops"][op]["service"]["p50"]) for op in OPS if op in run["ops"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__.split("\n\n")[0])
    p.add_argument("--base", default="cad13e1", help="the older commit (default cad13e1)")
    p.add_argument("--new", default="HEAD", help="the newer commit (default HEAD)")
    p.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    p.add_argument("--size", type=int, default=10_000, help="vault size in nodes (default 10000)")
    p.add_argument("--ops", type=int, default=300, help="samples per operation (default 300)")
    p.add_argument("--rounds", type=int, default=5, help="runs of each side (default 5)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kaeru-ab-") as tmp:
        trees: dict[str, Path] = {}
        for side, commit in (("base", args.base), ("new", args.new)):
            (Path(tmp) / side).mkdir()
            trees[side] = _export(commit, Path(tmp) / side)
        sides: dict[str, list[dict[str, float]]] = {"base": [], "new": []}
        for r in range(args.rounds):
            for name in ("base", "new") if r % 2 == 0 else ("new", "base"):
                sides[name].append(_run(trees[name], args, Path(tmp) / f"{name}-{r}.json"))
            print(
                f"round {r + 1}: " + "  ".join(f"{op} {sides['new'][-1][op] / sides['base'][-1][op]:.3f}" for op in OPS)
            )
    print(
        f"{args.base} → {args.new}: {args.backend}, {args.size:,} nodes, {args.rounds} rounds of {args.ops} samples; p50 ms, in process"
    )
    print(f"{'op':<18}{'base':>10}{'new':>10}{'new/base':>10}")
    for op in OPS:
        b = statistics.median(s[op] for s in sides["base"])
        n = statistics.median(s[op] for s in sides["new"])
        ratio = statistics.median(x[op] / y[op] for x, y in zip(sides["new"], sides["base"], strict=True))
        print(f"{op:<18}{b:>10.3f}{n:>10.3f}{ratio:>10.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
