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

With `--vault DIR --initiative NAME` the commands run on a copy of a kept vault instead (a
benchmark corpus vault of 100k nodes, say): `recall` asks the first eight words of the newest note
of the initiative, `search` its first word, `read` its name — words the vault holds, common and rare
as its texts mix them.

Prints, per command, wall p50 / p95 and the process's CPU (user + system, from `wait4`) p50, and
the wall p50 over the `python` floor measured in the same rounds.

    PYTHONPATH=src python -m bench.cli [--runs 20] [--notes 500] [--workdir DIR] [--out FILE]
    PYTHONPATH=src python -m bench.cli --vault <kept vault> --initiative kaeru-core [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.stats import percentile

INITIATIVE = "cli-bench"
WORDS = ("harbour", "ledger", "migration", "review", "deploy", "budget", "incident", "schema")


@dataclass(frozen=True)
class Asked:
    """What the commands ask: the initiative, a sentence for `recall`, a word for `search`, a node
    name for `read`."""

    initiative: str = INITIATIVE
    sentence: str = "what did we decide about the schema migration"
    word: str = "ledger"
    name: str = "first-note"


def commands(vault: Path, round_no: int, asked: Asked = Asked()) -> dict[str, list[str]]:
    """The measured commands of one round, by label (`note` writes a text of its own each round)."""
    kaeru = _kaeru()
    at = ["--vault", str(vault)]
    i = asked.initiative
    return {
        "python": [sys.executable, "-c", "pass"],
        "import click": [sys.executable, "-c", "import click"],
        "kaeru --version": [*kaeru, "--version"],
        "kaeru note": [*kaeru, *at, "note", "-i", i, f"round {round_no}: the harbour ledger was reviewed"],
        "kaeru search": [*kaeru, *at, "search", "-i", i, asked.word],
        "kaeru recall": [*kaeru, *at, "recall", "-i", i, asked.sentence],
        "kaeru read": [*kaeru, *at, "read", "-i", i, asked.name],
        "kaeru context": [*kaeru, *at, "context", "-i", i],
    }


def asked_of(vault: Path, initiative: str) -> Asked:
    """The questions for a kept vault (read-only): from the newest live node of `initiative` whose
    body has 200 characters or more — a note's text, not a task's title."""
    import apsw

    db = apsw.Connection(str(vault / "vault.sqlite3"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        row = db.execute(
            "SELECT n.name, n.body FROM nodes n JOIN initiatives i ON i.name = ? "
            "JOIN memberships m ON m.initiative_id = i.id AND m.node_seq = n.seq "
            "WHERE n.retracted = 0 AND length(n.body) >= 200 ORDER BY n.seq DESC LIMIT 1",
            (initiative,),
        ).fetchone()
    finally:
        db.close()
    if row is None:
        raise SystemExit(f"no live node with a body of 200 characters or more in initiative {initiative!r} of {vault}")
    words = [w for w in str(row[1]).split() if w.isalpha()]
    return Asked(initiative, " ".join(words[:8]), words[0], str(row[0]))


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


def measure(vault: Path, runs: int, asked: Asked = Asked()) -> dict[str, dict[str, float]]:
    """Every command `runs` times, rotating the order per round; p50/p95 wall, CPU p50, and the wall
    p50 over the `python` floor of the same rounds."""
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    for round_no in range(runs + 1):  # round 0 warms the file cache and the vault; not counted
        measured = commands(vault, round_no, asked)
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
    parser.add_argument("--vault", type=Path, default=None, help="run on a copy of this kept SQLite vault")
    parser.add_argument("--initiative", default=None, help="with --vault: the initiative the commands ask")
    args = parser.parse_args(argv)
    if (args.vault is None) != (args.initiative is None):
        parser.error("--vault and --initiative go together")
    with tempfile.TemporaryDirectory(prefix="kaeru-cli-bench-", dir=args.workdir) as scratch:
        vault = Path(scratch) / "vault"
        if args.vault is None:
            build(vault, args.notes)
            asked, label = Asked(), f"vault of {args.notes} notes"
        else:
            shutil.copytree(args.vault, vault)
            asked = asked_of(vault, args.initiative)
            label = f"a copy of {args.vault}; recall {asked.sentence!r}, search {asked.word!r}"
        figures = measure(vault, args.runs, asked)
    print(f"kaeru commands from a shell, {args.runs} rounds, {label} (ms)")
    print("| command | wall p50 | wall p95 | CPU p50 | wall p50 over `python` |")
    print("|---|---|---|---|---|")
    for label, f in figures.items():
        print(f"| {label} | {f['wall_p50']} | {f['wall_p95']} | {f['cpu_p50']} | {f['over_python_p50']} |")
    if args.out:
        setup = {"notes": args.notes} if args.vault is None else {"vault": str(args.vault), "asked": asdict(asked)}
        args.out.write_text(json.dumps({"runs": args.runs, **setup, "commands": figures}, indent=2))
    return figures


if __name__ == "__main__":
    main()
