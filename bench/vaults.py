"""Fresh benchmark vaults per backend: a temporary SQLite file, or a throwaway PostgreSQL database."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from kaeru.config import Settings

PG_URL_VARS = ("KAERU_BENCH_DATABASE_URL", "KAERU_TEST_DATABASE_URL")


class BackendUnavailable(Exception):
    """The backend cannot be benchmarked here (the message says why)."""


def postgres_admin_url() -> str | None:
    for name in PG_URL_VARS:
        if os.environ.get(name):
            return os.environ[name]
    return None


@dataclass
class BenchVault:
    backend: str
    vault_dir: Path
    database_url: str | None = None
    keep: bool = False
    _admin_url: str | None = None

    def env(self) -> dict[str, str]:
        """Environment for a `kaeru serve` subprocess on this vault."""
        env = {"KAERU_VAULT": str(self.vault_dir)}
        if os.environ.get("KAERU_SEARCH_CACHE_MB"):  # the one tuning a benchmark may be asked to vary
            env["KAERU_SEARCH_CACHE_MB"] = os.environ["KAERU_SEARCH_CACHE_MB"]
        if self.database_url:
            env["KAERU_DATABASE_URL"] = self.database_url
        return env

    def settings(self) -> Settings:
        return Settings.from_env(self.env())

    @property
    def sqlite_path(self) -> Path:
        return self.settings().sqlite_path

    def size_bytes(self) -> int | None:
        if self.backend != "sqlite":
            return None
        return sum(p.stat().st_size for p in self.vault_dir.glob("vault.sqlite3*") if p.is_file())

    def drop(self) -> None:
        if self.keep:
            return
        if self.backend == "postgres" and self._admin_url and self.database_url:
            drop_database(self._admin_url, urlsplit(self.database_url).path.lstrip("/"))
        shutil.rmtree(self.vault_dir, ignore_errors=True)


def new_vault(backend: str, label: str, workdir: Path | None, keep: bool) -> BenchVault:
    """A fresh, empty vault.

    Raises:
        BackendUnavailable: PostgreSQL is not configured or not reachable.
    """
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)  # `--workdir /tmp/kb` as the docstrings show it
    base = Path(tempfile.mkdtemp(prefix=f"kaeru-bench-{backend}-{label}-", dir=workdir))
    if backend == "sqlite":
        return BenchVault("sqlite", base, keep=keep)
    if backend != "postgres":
        raise ValueError(backend)
    admin = postgres_admin_url()
    if admin is None:
        shutil.rmtree(base, ignore_errors=True)
        raise BackendUnavailable(f"PostgreSQL skipped: set {' or '.join(PG_URL_VARS)} to a server the bench may use")
    name = f"kaeru_bench_{label}_{uuid.uuid4().hex[:8]}".lower()
    try:
        _create_database(admin, name)
    except Exception as exc:
        shutil.rmtree(base, ignore_errors=True)
        raise BackendUnavailable(f"PostgreSQL skipped: cannot create a database on the server ({exc})") from exc
    return BenchVault("postgres", base, _database_url(admin, name), keep=keep, _admin_url=admin)


def _database_url(admin: str, name: str) -> str:
    """`admin` pointing at database `name` (user, password, host and query kept)."""
    parts = urlsplit(admin)
    return urlunsplit(parts._replace(path=f"/{name}"))


def _create_database(admin: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(admin: str, name: str) -> None:
    try:
        import psycopg

        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    except Exception as exc:  # cleanup must not hide the results
        print(f"warning: could not drop benchmark database {name}: {exc}")


def add_backend_argument(parser: argparse.ArgumentParser) -> None:
    """`--backend sqlite|postgres` for a harness that fills one vault per run (LoCoMo, beam-dev)."""
    parser.add_argument(
        "--backend",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="where the vault lives; postgres makes a database on the server of KAERU_BENCH_DATABASE_URL "
        "or KAERU_TEST_DATABASE_URL (dropped afterwards unless --keep-vault)",
    )


def run_database(backend: str, label: str, workdir: Path | None, keep: bool) -> BenchVault | None:
    """The PostgreSQL database of a harness's run (None on SQLite, whose vault is a folder).

    Raises:
        BackendUnavailable: PostgreSQL is not configured or not reachable.
    """
    return new_vault("postgres", label, workdir, keep) if backend == "postgres" else None


def scratch_cli(
    doc: str | None,
    size_flag: str,
    size_default: int,
    rounds_default: int,
    label: str,
    argv: list[str] | None,
    measure: Callable[[str, int, int, Path], dict[str, Any]],
) -> tuple[argparse.Namespace, dict[str, Any]]:
    """The command line of a benchmark on one scratch vault (`bench.hub`, `bench.initiatives`): its size,
    rounds, backend, `--out` and `--quiet`; `measure(backend, size, rounds, workdir)` runs in a
    temporary directory, a backend that is not here is skipped (an empty report), the report is
    written to `--out`. The caller prints its own table unless `--quiet`."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(size_flag, type=int, default=size_default)
    p.add_argument("--rounds", type=int, default=rounds_default)
    p.add_argument("--backend", default="sqlite", choices=("sqlite", "postgres"))
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix=f"kaeru-{label}-") as tmp:
        try:
            report = measure(args.backend, getattr(args, size_flag.lstrip("-")), args.rounds, Path(tmp))
        except BackendUnavailable as exc:
            print(f"skipped: {exc}", file=sys.stderr)
            return args, {}
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))
    return args, report
