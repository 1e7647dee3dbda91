"""A project years old: the reads an agent makes on it, timed, and the size of each answer.

    python -m bench.aged [--age 3000] [--workdir DIR] [--rounds 15] [--database-url URL] [--out FILE]

Every other harness grows a vault by adding notes. A project that lives for years also *repeats*
itself: one document revised at every change, a `handoff` slot taken by a new note at the end of
every session, a fact (`prod-state`) superseded at every deploy, a board whose tasks are mostly done,
rules and open hypotheses piling up. With `--age N`, one project holds all of it: a node revised N
times, a slot retaken N times, a supersede chain N long, N tasks (49 in 50 done), N/10 rules, N/5
open claims and N plain notes — through the real tool registry, in process.

Then each read an agent makes there is timed (`--rounds` calls after one warm-up; CPU of the calling
thread, p50 / max, ms) and its answer's size measured (bytes of the JSON envelope): an answer that
grows with the project's age costs the agent its context window however fast it comes. The vault
is built once per `--age` under `--workdir` and measured again on later runs (each tree with
`PYTHONPATH=<tree>/src`), so two commits compare on the same vault. With `--database-url` (an empty
database the first time) the vault is PostgreSQL.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.kept import kept_vault, timed, tools

PROJECT = "aged"
Run = Callable[[str, dict[str, Any]], dict[str, Any]]


def _done(envelope: dict[str, Any]) -> dict[str, Any]:
    if envelope["state"] not in ("ok", "applied", "unchanged"):
        raise RuntimeError(f"{envelope['operation']} was {envelope['state']}: {envelope['issues']}")
    return envelope


def _made(run: Run, tool: str, args: dict[str, Any]) -> str:
    return str(_done(run(tool, {"initiative": PROJECT, **args}))["data"]["primary"]["id"])


def build(run: Run, age: int) -> dict[str, str]:
    """The project's history; returns the nodes the reads ask about."""
    doc = _made(run, "note", {"text": "the deploy runbook, first version", "name": "deploy-runbook"})
    for i in range(age):
        _done(
            run(
                "revise",
                {"initiative": PROJECT, "node": doc, "patch": {"body": f"the deploy runbook, version {i + 2}"}},
            )
        )
    for i in range(age):
        _made(run, "note", {"text": f"handoff {i}: next session starts at step {i}", "options": {"slot": "handoff"}})
    first = head = _made(run, "note", {"text": "prod runs release 0", "name": "prod-state"})
    for i in range(age):
        head = _made(run, "evolve", {"mode": "supersede", "source": head, "new_body": f"prod runs release {i + 1}"})
    for i in range(age):
        task = _made(run, "task", {"text": f"task {i}: fix the flaky shaver test number {i}"})
        if i % 50:
            _done(run("task_update", {"initiative": PROJECT, "task": task, "status": "done"}))
    for i in range(age // 10):
        _made(run, "note", {"kind": "rule", "text": f"rule {i}: run the linter with profile {i} before a commit"})
    for i in range(age // 5):
        _done(
            run("claim", {"initiative": PROJECT, "text": f"maybe cache {i} causes the flake", "initial_status": "open"})
        )
    for i in range(age):
        _made(run, "note", {"text": f"observation {i} about the build farm"})
    return {"runbook": doc, "oldest_state": first, "state": head}


def reads(nodes: dict[str, str]) -> dict[str, tuple[str, dict[str, Any]]]:
    p = {"initiative": PROJECT}
    return {
        "context": ("context", p),
        "current_state slot": ("current_state", {**p, "slot": "handoff"}),
        "current_state newest": ("current_state", {**p, "node": nodes["state"]}),
        "current_state oldest": ("current_state", {**p, "node": nodes["oldest_state"]}),
        "read revised node": ("read", {**p, "node": nodes["runbook"]}),
        "trail history": ("trail", {**p, "node": nodes["runbook"], "kind": "history"}),
        "search superseded fact": ("search", {"initiatives": [PROJECT], "text": "prod release"}),
        "search tasks": ("search", {"initiatives": [PROJECT], "text": "flaky shaver"}),
        "recall what is left": (
            "recall",
            {"initiatives": [PROJECT], "query": "what is left to do", "task_intent": "resume_work"},
        ),
        "recall rules": ("recall", {"initiatives": [PROJECT], "query": "which rules apply before a commit"}),
        "timeline at state": ("timeline", {"initiatives": [PROJECT], "anchor": nodes["state"]}),
        "reflect": ("reflect", p),
    }


def measure(run: Run, nodes: dict[str, str], rounds: int) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for label, (tool, args) in reads(nodes).items():
        envelope, figures = timed(run, tool, args, rounds, time.thread_time)
        _done(envelope)
        out[label] = {**figures, "complete": bool((envelope.get("coverage") or {}).get("complete", True))}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.aged", description=__doc__.split("\n\n")[0])
    p.add_argument("--age", type=int, default=3000, help="repetitions of each kind of history (default 3000)")
    p.add_argument("--workdir", type=Path, default=None, help="keep the vault here (built once per --age)")
    p.add_argument("--rounds", type=int, default=15, help="timed calls of each read (default 15)")
    p.add_argument("--database-url", default=None, help="PostgreSQL: an empty database the first time")
    p.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    a = p.parse_args(argv)
    label = f"aged-{a.age}" + (
        f"-pg-{hashlib.sha256(a.database_url.encode()).hexdigest()[:8]}" if a.database_url else ""
    )
    database = {"KAERU_DATABASE_URL": a.database_url} if a.database_url else {}

    def made(folder: Path) -> None:
        with tools({"KAERU_VAULT": str(folder), **database}) as run:
            started = time.perf_counter()
            (folder / "nodes.json").write_text(json.dumps(build(run, a.age)))
            print(f"built {label} in {time.perf_counter() - started:.1f} s", file=sys.stderr)

    with kept_vault(a.workdir, label, made) as vault, tools({"KAERU_VAULT": str(vault), **database}) as run:
        figures = measure(run, json.loads((vault / "nodes.json").read_text()), a.rounds)
    print(f"\nproject age {a.age}: CPU ms p50 / max, answer bytes")
    print("| read | p50 | max | answer | complete |\n|---|---:|---:|---:|---|")
    for label, f in figures.items():
        print(f"| {label} | {f['p50']} | {f['max']} | {f['bytes']:,} | {'yes' if f['complete'] else 'no'} |")
    if a.out:
        a.out.write_text(json.dumps({"age": a.age, "reads": figures}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
