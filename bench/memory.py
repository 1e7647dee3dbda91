"""Peak memory of archive export and import as the vault grows. A script, not a test.

For each size (`--sizes`, default 10,000 and 100,000 node revisions): a synthetic archive
(`bench.archives`) is imported into a fresh vault, the vault is exported to a new archive, then
copied (`kaeru copy`) into a new SQLite vault; each step runs in a process of its own, which reports its peak resident memory (`ru_maxrss`) above
what it held just before the step (the interpreter, kaeru and the open store). Flat figures from
10k to 100k mean the step streams; figures growing with the size mean it holds the vault.

    PYTHONPATH=src python -m bench.memory [--sizes 10000,100000] [--backend sqlite|postgres]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import archives
from bench.vaults import new_vault


def rss_kib() -> int:
    """This process's resident set now (Linux), KiB."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def _step(step: str, root: str) -> None:
    """One step in this process (run as `python -m bench.memory --step …` with the vault's env)."""
    from kaeru.config import Settings
    from kaeru.export import archive
    from kaeru.storage.factory import open_store

    settings = dataclasses.replace(Settings.from_env(dict(os.environ)), export_root=Path(root))
    store = open_store(settings)
    try:
        before = rss_kib()
        if step == "import":
            outcome = archive.import_(store, settings, {"action": "import", "path": "in.amg"})
            assert outcome.state == "applied", outcome
        elif step == "export":
            outcome = archive.export(store, settings, {"action": "export", "path": "out.amg"})
            assert outcome.state == "applied", outcome
        else:  # copy into a new SQLite vault beside the archives
            target = open_store(Settings(vault_dir=Path(root) / "copy"))
            try:
                archive.copy(store, target)
            finally:
                target.close()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    finally:
        store.close()
    print(json.dumps({"before_mib": round(before / 1024, 1), "peak_above_mib": round((peak - before) / 1024, 1)}))


def measure(nodes: int, backend: str) -> dict[str, Any]:
    vault = new_vault(backend, "memory", None, keep=False)
    root = Path(tempfile.mkdtemp(prefix="kaeru-bench-memory-"))
    try:
        archives.write(root / "in.amg", nodes)
        env = {**os.environ, **vault.env()}
        out: dict[str, Any] = {"backend": backend, "nodes": nodes}
        for step in ("import", "export", "copy"):
            done = subprocess.run(
                [sys.executable, "-m", "bench.memory", "--step", step, "--root", str(root)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            out[f"{step}_peak_mib"] = figures["peak_above_mib"]
        out["archive_mib"] = round((root / "in.amg").stat().st_size / 2**20, 1)
        return out
    finally:
        vault.drop()
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--step", choices=("import", "export", "copy"), help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    if ns.step:
        _step(ns.step, ns.root)
        return
    for size in (int(s) for s in ns.sizes.split(",")):
        print(json.dumps(measure(size, ns.backend)), flush=True)


if __name__ == "__main__":
    main()
