"""`python -m bench.importers` — time `kaeru import-from memory-jsonl` on a generated official-memory file.

Generates a `memory.jsonl` in the official MCP memory server's format (`--entities` entities with
three observations each, as many relations, entity and relation types drawn from a few), then runs
the real command (`python -m kaeru --json import-from memory-jsonl FILE --initiative bench`) twice on
a fresh vault of each backend and prints the wall time and counts of both runs. The target
(issue 19): the first import of 5,000 entities takes < 30 s, and the second reports 0 changes.
Timings are printed, never asserted in tests.

    PYTHONPATH=src python -m bench.importers [--entities 5000] [--backend sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.vaults import BackendUnavailable, new_vault

TARGET_S = 30.0
ENTITY_TYPES = ("person", "organization", "project", "tool", "place", "event")
RELATION_TYPES = ("works_at", "part_of", "knows", "uses", "depends_on", "located_in", "causes")


def generate(path: Path, entities: int, seed: int = 19) -> None:
    """A `memory.jsonl` as the official server writes it: entities first, then relations."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(entities):
            observations = [
                f"Observation {j} about entity {i}: prefers option {rng.randrange(1000)} since {2000 + rng.randrange(25)}"
                for j in range(3)
            ]
            record = {
                "type": "entity",
                "name": f"Entity_{i}",
                "entityType": rng.choice(ENTITY_TYPES),
                "observations": observations,
            }
            out.write(json.dumps(record) + "\n")
        for i in range(entities):
            target = rng.randrange(entities - 1)
            target += target >= i
            relation = {
                "type": "relation",
                "from": f"Entity_{i}",
                "to": f"Entity_{target}",
                "relationType": rng.choice(RELATION_TYPES),
            }
            out.write(json.dumps(relation) + "\n")


def timed_import(env: dict[str, str], source: Path) -> tuple[float, dict[str, Any]]:
    argv = [
        sys.executable,
        "-m",
        "kaeru",
        "--json",
        "import-from",
        "memory-jsonl",
        str(source),
        "--initiative",
        "bench",
    ]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, check=False, timeout=600)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"import failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
    return elapsed, json.loads(done.stdout)


def run(backend: str, entities: int, workdir: Path | None) -> dict[str, Any] | None:
    try:
        vault = new_vault(backend, "import", workdir, keep=False)
    except BackendUnavailable as exc:
        print(exc)
        return None
    try:
        source = vault.vault_dir / "memory.jsonl"
        generate(source, entities)
        env = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")} | vault.env()
        first_s, first = timed_import(env, source)
        second_s, second = timed_import(env, source)
    finally:
        vault.drop()
    row = {
        "backend": backend,
        "entities": entities,
        "first_s": round(first_s, 2),
        "first": {k: first[k] for k in ("created", "edges_added", "changes")},
        "second_s": round(second_s, 2),
        "second_changes": second["changes"],
        "meets_target": first_s < TARGET_S and second["changes"] == 0,
    }
    print(json.dumps(row))
    return row


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=5000)
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    workdir = args.workdir or Path(tempfile.gettempdir())
    rows = [row for b in backends if (row := run(b, args.entities, workdir)) is not None]
    return rows


if __name__ == "__main__":
    main()
