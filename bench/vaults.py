"""Fresh benchmark vaults per backend: a temporary SQLite file, or a throwaway PostgreSQL database."""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
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
            _drop_database(self._admin_url, urlsplit(self.database_url).path.lstrip("/"))
        shutil.rmtree(self.vault_dir, ignore_errors=True)


def new_vault(backend: str, label: str, workdir: Path | None, keep: bool) -> BenchVault:
    """A fresh, empty vault.

    Raises:
        BackendUnavailable: PostgreSQL is not configured or not reachable.
    """
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


def _drop_database(admin: str, name: str) -> None:
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
