"""Every scenario against a real `kaeru serve` subprocess: SQLite over stdio, PostgreSQL over HTTP.

One server per runner runs the whole session (every scenario, each in its own initiatives); each
scenario is then reported as its own test. The round trip runs once at the end of each scenario:
the server exports the scenario's initiatives through the `archive` tool, and the file imported
into a fresh vault on the same backend must reproduce the server's answers to `read`, `search` and
`trail`.
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from tests.backends import drop_vault, new_vault, postgres_admin_url
from tests.scenarios.runner import params, run_session
from tests.scenarios.scenarios import Scenario
from tests.wire.support import connect, subprocess_env

pytestmark = [pytest.mark.slow]

RUNNERS = {"sqlite-stdio": ("sqlite", "stdio"), "postgres-http": ("postgres", "http")}


@pytest.fixture(scope="module", params=sorted(RUNNERS))
def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Exception | None]]:
    """Each scenario's failure (or None) after one session against a real server."""
    backend, transport = RUNNERS[request.param]
    if backend == "postgres" and not postgres_admin_url():
        pytest.skip("PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (make test starts one)")
    workdir = tmp_path_factory.mktemp(request.param)
    spec = new_vault(backend, workdir)

    async def main() -> dict[str, Exception | None]:
        async with connect(transport, subprocess_env(spec.env()), workdir) as client:
            return await run_session(client, spec.vault_dir, workdir, backend)

    try:
        yield anyio.run(main)
    finally:
        drop_vault(spec)


@pytest.mark.parametrize("item", params())
def test_scenario_over_the_wire(item: Scenario, session: dict[str, Exception | None]) -> None:
    failure = session[item.name]
    if failure is not None:
        raise failure
