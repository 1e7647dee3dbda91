"""A benchmark's vault built once and kept, so two commits are measured on the same one."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.stats import percentile
from kaeru.config import Settings
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store


@contextmanager
def kept_vault(workdir: Path | None, label: str, build: Callable[[Path], None]) -> Iterator[Path]:
    """The folder `workdir/label`, made by `build(folder)` the first time only.

    `build` fills a sibling folder that is renamed into place once it returns, so a build that
    failed leaves nothing a later run would take for a vault and measure (a PostgreSQL database it
    wrote into is not undone: start again from an empty one). Without `workdir`, the vault is built
    in a temporary folder removed afterwards.
    """
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix=f"kaeru-{label}-") as scratch:
            folder = Path(scratch) / label
            folder.mkdir()
            build(folder)
            yield folder
        return
    folder = workdir / label
    if not folder.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=f".{label}-", dir=workdir))
        try:
            build(partial)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        partial.rename(folder)
    yield folder


@contextmanager
def tools(env: dict[str, str]) -> Iterator[Callable[[str, dict[str, Any]], dict[str, Any]]]:
    """The tool registry's `run` on the vault `env` names (`KAERU_VAULT`, `KAERU_DATABASE_URL`), in
    process, with the store closed afterwards."""
    settings = Settings.from_env(env)
    store = open_store(settings)
    try:
        yield build_server(Service(store, settings)).registry.run
    finally:
        store.close()


def timed(
    run: Callable[[str, dict[str, Any]], dict[str, Any]],
    tool: str,
    args: dict[str, Any],
    rounds: int,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[dict[str, Any], dict[str, float]]:
    """One call's envelope (a warm-up), then `rounds` more timed by `clock` (seconds): p50 and max in
    ms, and the envelope's size in bytes."""
    envelope = run(tool, args)
    took: list[float] = []
    for _ in range(rounds):
        started = clock()
        run(tool, args)
        took.append((clock() - started) * 1000)
    took.sort()
    figures = {"p50": round(percentile(took, 50), 2), "max": round(took[-1], 2), "bytes": len(json.dumps(envelope))}
    return envelope, figures
