"""Two vaults of one backend sharing an export root, each spoken to as a tool call: shared by the
tests of what an archive exported from one says when imported into the other."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault

Run = Callable[[str, dict[str, Any]], dict[str, Any]]


@pytest.fixture
def runs(vault: VaultSpec, tmp_path: Path) -> Iterator[tuple[Run, Run]]:
    """The test's vault and another of its backend, sharing an export root."""
    other = new_vault(vault.backend, tmp_path)
    stores = []
    found = []
    for spec in (vault, other):
        settings = spec.settings(export_root=tmp_path / "exports")
        stores.append(open_store(settings))
        found.append(build_server(Service(stores[-1], settings)).registry.run)
    try:
        yield found[0], found[1]
    finally:
        for store in stores:
            store.close()
        drop_vault(other)
