"""Test vaults on every backend: a fresh, empty vault per test, described by `VaultSpec`.

SQLite vaults are temporary directories. PostgreSQL vaults are fresh databases on the server named
by `KAERU_TEST_DATABASE_URL` (the README's test command starts a throwaway cluster and sets it);
without one, the PostgreSQL half of every parametrised test is skipped with the reason, loudly.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from kaeru.config import Settings

BACKENDS = ("sqlite", "postgres")


def postgres_admin_url() -> str | None:
    """The server to create test databases on, or None when no PostgreSQL is configured."""
    return os.environ.get("KAERU_TEST_DATABASE_URL") or None


@dataclass
class VaultSpec:
    """Where one test vault lives, and how to point settings or a subprocess at it."""

    backend: str
    vault_dir: Path
    database_url: str | None = None
    _cleanup: list[object] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        """Environment variables that point a `kaeru` subprocess at this vault."""
        env = {"KAERU_VAULT": str(self.vault_dir)}
        if self.database_url:
            env["KAERU_DATABASE_URL"] = self.database_url
        return env

    def settings(self, **overrides: object) -> Settings:
        return Settings.from_env(self.env(), **overrides)


def new_vault(backend: str, tmp_path: Path) -> VaultSpec:
    """A fresh empty vault on `backend`.

    Raises:
        RuntimeError: the backend is not available here.
    """
    vault_dir = tmp_path / f"vault-{uuid.uuid4().hex[:8]}"
    if backend == "sqlite":
        return VaultSpec("sqlite", vault_dir)
    if backend == "postgres":
        from tests.pg import fresh_database

        return VaultSpec("postgres", vault_dir, fresh_database())
    raise ValueError(backend)


def drop_vault(spec: VaultSpec) -> None:
    if spec.backend == "postgres" and spec.database_url:
        from tests.pg import drop_database

        drop_database(spec.database_url)
