"""One question across many projects: `search`, `recall` and `timeline` over 1 … N initiatives at once.

    python -m bench.scopes [--initiatives 1000] [--per 20] [--workdir DIR] [--database-url URL]

Every other harness asks within one initiative or a few (the corpus has six). A user with a
project per repository keeps hundreds, and an agent looking for a preference or a fix it made
"somewhere" names them all. This builds `--initiatives` projects of `--per` notes each (the benchmark
corpus's bodies, through the real tool registry; kept under `--workdir` and measured again on later
runs), then asks over the first 1, 10, 100 and all of them: a rare word, a common word, a five-word
`recall` and a `timeline` window. Wall p50 / max ms after one warm-up (`--rounds` calls) and the
answer's bytes. With `--database-url` (an empty database the first time) the vault is PostgreSQL.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.corpus import CorpusBuilder
from bench.kept import kept_vault, timed, tools


def _name(i: int) -> str:
    return f"proj-{i:04d}"


def build(run: Any, initiatives: int, per: int) -> None:
    for i, spec in enumerate(CorpusBuilder(initiatives * per, seed=3).notes()):
        args = {**spec.args(), "initiative": _name(i % initiatives)}
        args.pop("link_to", None)
        if run("note", args)["state"] != "applied":
            raise RuntimeError(f"note {i} was not applied")


def questions(vocab: list[str], names: list[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        "search rare": ("search", {"initiatives": names, "text": vocab[1500]}),
        "search common": ("search", {"initiatives": names, "text": vocab[3]}),
        "recall": ("recall", {"initiatives": names, "query": " ".join(vocab[200:205])}),
        "timeline": ("timeline", {"initiatives": names, "since": "2000-01-01"}),
    }


def measure(run: Any, initiatives: int, rounds: int) -> dict[str, dict[str, float]]:
    vocab = CorpusBuilder(200, seed=3).corpus.vocab
    out: dict[str, dict[str, float]] = {}
    for k in sorted({1, min(10, initiatives), min(100, initiatives), initiatives}):
        for label, (tool, args) in questions(vocab, [_name(i) for i in range(k)]).items():
            envelope, out[f"{label} × {k}"] = timed(run, tool, args, rounds)
            if envelope["state"] != "ok":
                raise RuntimeError(f"{label} over {k}: {envelope['issues']}")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.scopes", description=__doc__.split("\n\n")[0])
    p.add_argument("--initiatives", type=int, default=1000, help="projects (default 1000)")
    p.add_argument("--per", type=int, default=20, help="notes in each (default 20)")
    p.add_argument("--rounds", type=int, default=8, help="timed calls of each question (default 8)")
    p.add_argument("--workdir", type=Path, default=None, help="keep the vault here (built once)")
    p.add_argument("--database-url", default=None, help="PostgreSQL: an empty database the first time")
    p.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    a = p.parse_args(argv)
    label = f"scopes-{a.initiatives}x{a.per}"
    if a.database_url:
        label += "-pg-" + hashlib.sha256(a.database_url.encode()).hexdigest()[:8]
    database = {"KAERU_DATABASE_URL": a.database_url} if a.database_url else {}

    def made(folder: Path) -> None:
        with tools({"KAERU_VAULT": str(folder), **database}) as run:
            started = time.perf_counter()
            build(run, a.initiatives, a.per)
            (folder / "built").write_text("1")
            print(f"built {label} in {time.perf_counter() - started:.1f} s", file=sys.stderr)

    with kept_vault(a.workdir, label, made) as vault, tools({"KAERU_VAULT": str(vault), **database}) as run:
        figures = measure(run, a.initiatives, a.rounds)
    print(f"\n{a.initiatives} initiatives × {a.per} notes ({'PostgreSQL' if a.database_url else 'SQLite'}); wall ms")
    print("| question × initiatives asked | p50 | max | answer bytes |\n|---|---:|---:|---:|")
    for name, f in figures.items():
        print(f"| {name} | {f['p50']} | {f['max']} | {f['bytes']:,} |")
    if a.out:
        a.out.write_text(
            json.dumps({"initiatives": a.initiatives, "per": a.per, "questions": figures}, indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
