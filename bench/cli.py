"""One `kaeru` command from a terminal, start to exit, beside the interpreter's own start. A script.

A person who reaches the vault only through a shell (or an agent whose only tool is a shell) pays
a whole process for every call: the interpreter, kaeru's imports, the vault opened, the call, the
vault closed. Nothing else measures that. Each round runs every command once, in an order that
rotates per round (drift on a shared machine lands on all of them):

* `python` — `python -c pass` with the same interpreter: the floor no command can go under;
* `import click` — the floor plus the command-line library;
* `--version`, then `note`, `search`, `recall`, `read` and `context` on a vault of `--notes` short
  notes (built in process first, not counted; each `note` writes a new text, so the vault grows
  by one note a round).

Prints, per command, wall p50 / p95 and the process's CPU (user + system, from `wait4`) p50, and
the wall p50 over the `python` floor measured in the same rounds.

    PYTHONPATH=src python -m bench.cli [--runs 20] [--notes 500] [--workdir DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.stats import percentile

INITIATIVE = "cli-bench"
WORDS = ("harbour", "ledger", "migration", "review", "deploy", "budget", "incident", "schema")


def commands(vault: Path, round_no: int) -> dict[str, list[str]]:
    """The measured commands of one round, by label (`note` writes a text of its own each round)."""
    kaeru = _kaeru()
    at = ["--vault", str(vault)]
    return {
        "python": [sys.executable, "-c", "pass"],
        "import click": [sys.executable, "-c", "import click"],
        "kaeru --version": [*kaeru, "--version"],
        "kaeru note": [*kaeru, *at, "note", "-i", INITIATIVE, f"round {round_no}: the harbour ledger was reviewed"],
        "kaeru search": [*kaeru, *at, "search", "-i", INITIATIVE, "ledger"],
        "kaeru recall": [*kaeru, *at, "recall", "-i", INITIATIVE, "what did we decide about the schema migration"],
        "kaeru read": [*kaeru, *at, "read", "-i", INITIATIVE, "first-note"],
        "kaeru context": [*kaeru, *at, "context", "-i", INITIATIVE],
    }


def _kaeru() -> list[str]:
    script = Path(sys.executable).with_name("kaeru")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kaeru.cli.app"]


def build(vault: Path, notes: int) -> None:
    """`notes` short notes in `INITIATIVE` (one named `first-note`, which `read` asks for)."""
    from kaeru.api.requests import parse
    from kaeru.config import Settings
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    settings = Settings.from_env({"KAERU_VAULT": str(vault)})
    service = Service(open_store(settings), settings)
    try:
        for i in range(notes):
            text = f"note {i}: {WORDS[i % len(WORDS)]} and {WORDS[(i * 3 + 1) % len(WORDS)]}, item {i * 7 % 101}"
            args: dict[str, Any] = {"initiative": INITIATIVE, "text": text, "kind": "observation"}
            if i == 0:
                args["name"] = "first-note"
            service.note(parse("note", args))
    finally:
        service.store.close()


def run(argv: list[str]) -> tuple[float, float]:
    """Wall ms and the process's CPU ms (user + system) of one command, which must succeed."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - started) * 1e3
    proc.returncode = os.waitstatus_to_exitcode(status)
    errors = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[1:]} exited {proc.returncode}: {errors.strip()[-400:]}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1e3


def measure(vault: Path, runs: int) -> dict[str, dict[str, float]]:
    """Every command `runs` times, rotating the order per round; p50/p95 wall, CPU p50, and the wall
    p50 over the `python` floor of the same rounds."""
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    for round_no in range(runs + 1):  # round 0 warms the file cache and the vault; not counted
        measured = commands(vault, round_no)
        labels = list(measured)
        shift = round_no % len(labels)
        for label in labels[shift:] + labels[:shift]:
            wall, cpu = run(measured[label])
            if round_no:
                walls.setdefault(label, []).append(wall)
                cpus.setdefault(label, []).append(cpu)
    floor = percentile(sorted(walls["python"]), 50)
    out = {}
    for label, values in walls.items():
        ordered = sorted(values)
        out[label] = {
            "wall_p50": round(percentile(ordered, 50), 1),
            "wall_p95": round(percentile(ordered, 95), 1),
            "cpu_p50": round(percentile(sorted(cpus[label]), 50), 1),
            "over_python_p50": round(percentile(ordered, 50) - floor, 1),
        }
    return out


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20, help="counted rounds (each runs every command once)")
    parser.add_argument("--notes", type=int, default=500, help="short notes in the vault before the rounds")
    parser.add_argument("--workdir", type=Path, default=None, help="where the scratch vault goes (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=None, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kaeru-cli-bench-", dir=args.workdir) as scratch:
        vault = Path(scratch) / "vault"
        build(vault, args.notes)
        figures = measure(vault, args.runs)
    print(f"kaeru commands from a shell, {args.runs} rounds, vault of {args.notes} notes (ms)")
    print("| command | wall p50 | wall p95 | CPU p50 | wall p50 over `python` |")
    print("|---|---|---|---|---|")
    for label, f in figures.items():
        print(f"| {label} | {f['wall_p50']} | {f['wall_p95']} | {f['cpu_p50']} | {f['over_python_p50']} |")
    if args.out:
        args.out.write_text(json.dumps({"runs": args.runs, "notes": args.notes, "commands": figures}, indent=2))
    return figures


if __name__ == "__main__":
    main()
