"""Shared fixtures: every vault-backed test runs once per backend (SQLite, PostgreSQL)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from tests.backends import BACKENDS, VaultSpec, drop_vault, new_vault, postgres_admin_url

# Where KAERU_TIMEZONE is unset, "today" is the machine's calendar day (decision 188): the suite's
# pinned clocks mean UTC's, wherever it runs. Tests of other zones set KAERU_TIMEZONE (or TZ) themselves.
os.environ["TZ"] = "UTC"
time.tzset()

#: The published contract, vendored unmodified (contract/README.md says where it comes from).
CONTRACT_DIR = Path(__file__).resolve().parents[1] / "contract" / "published"


def pytest_report_header(config: pytest.Config) -> str:
    url = postgres_admin_url()
    if url:
        return f"kaeru backends: sqlite, postgres ({url.split('@')[-1]})"
    return "kaeru backends: sqlite only — POSTGRESQL TESTS WILL BE SKIPPED (KAERU_TEST_DATABASE_URL unset)"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not postgres_admin_url():
        terminalreporter.write_line(
            "WARNING: the PostgreSQL half of the suite was SKIPPED: no KAERU_TEST_DATABASE_URL. "
            "Run the README's test command (it starts a throwaway PostgreSQL).",
            red=True,
            bold=True,
        )


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    if name == "postgres" and not postgres_admin_url():
        pytest.skip("PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (make test starts one)")
    return name


@pytest.fixture
def vault(backend: str, tmp_path: Path) -> Iterator[VaultSpec]:
    spec = new_vault(backend, tmp_path)
    yield spec
    drop_vault(spec)


@pytest.fixture
def twin(backend: str, tmp_path: Path) -> Iterator[tuple[VaultSpec, VaultSpec]]:
    """Two fresh, equal vaults on `backend`: the zygote's parity tests run the same calls forked on
    one and spawned on the other (`tests/cli/test_zygote.py`, `tests/wire/test_forked_server.py`)."""
    pair = (new_vault(backend, tmp_path / "forked"), new_vault(backend, tmp_path / "spawned"))
    yield pair
    for spec in pair:
        drop_vault(spec)


@pytest.fixture
def store(vault: VaultSpec) -> Iterator[Store]:
    opened = open_store(vault.settings())
    yield opened
    opened.close()


@pytest.fixture
def service(store: Store, vault: VaultSpec) -> Service:
    return Service(store, vault.settings())


@pytest.fixture
def sqlite_vault(tmp_path: Path) -> VaultSpec:
    """A SQLite vault, for tests about the embedded file itself (several processes on one file)."""
    return new_vault("sqlite", tmp_path)


@pytest.fixture(scope="session")
def contract_dir() -> Path:
    assert CONTRACT_DIR.is_dir(), f"vendored contract not found at {CONTRACT_DIR}"
    return CONTRACT_DIR
