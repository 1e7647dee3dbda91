"""Every scenario through an in-process SDK client, on SQLite and PostgreSQL.

After every step that may change the vault, the vault is exported to amg, imported into a fresh
vault, re-exported (byte-identical) and asked the same `read`, `search` and `trail` questions. The
per-step copy is a SQLite vault; a PostgreSQL scenario is also copied into a fresh PostgreSQL vault
at its end.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kaeru.service import Service
from tests.scenarios.driver import Recorder
from tests.scenarios.runner import params, run_in_process
from tests.scenarios.scenarios import Scenario

pytestmark = [pytest.mark.anyio]


@pytest.mark.parametrize("item", params())
async def test_scenario(item: Scenario, service: Service, backend: str, tmp_path: Path) -> None:
    await run_in_process(item, service, tmp_path, Recorder(), backend=backend)
