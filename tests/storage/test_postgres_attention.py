"""PostgreSQL's planner knows how few nodes hold a reminder or a hygiene report (decision 271).

`context` reads them through the partial index `nodes_attention`, each tested for membership of the
scope. Without statistics on the index's condition the planner guessed a third of the table for
each `strpos(…) > 0` test and merge-joined the guess with every membership of the scope: at 100k
nodes, 24 ms a call for 40 nodes. Migration 020 gives ANALYZE the two expressions to measure; after
it, the planner's estimate of the condition is the vault's count, not a share of the table.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.service import Service
from kaeru.storage.postgres.store import PostgresStore
from kaeru.storage.sql.dialect import PostgresDialect
from tests.backends import postgres_admin_url

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)

NOTES = 300
REMINDERS = 3


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[tuple[Service, str]]:
    from tests.pg import drop_database, fresh_database

    url = fresh_database()
    store = PostgresStore(url)
    try:
        yield Service(store, Settings(vault_dir=tmp_path / "vault", database_url=url, secret_policy="allow")), url
    finally:
        store.close()
        drop_database(url)


def _estimate(url: str, condition: str) -> tuple[float, int]:
    """The planner's row estimate for the nodes meeting `condition`, and their real count."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE nodes")
        plan = conn.execute(f"EXPLAIN (FORMAT JSON) SELECT seq FROM nodes WHERE {condition}").fetchone()
        real = conn.execute(f"SELECT count(*) FROM nodes WHERE {condition}").fetchone()
    assert plan is not None and real is not None
    found = plan[0] if isinstance(plan[0], list) else json.loads(plan[0])
    return float(found[0]["Plan"]["Plan Rows"]), int(real[0])


def test_the_planner_expects_as_many_attention_nodes_as_the_vault_holds(vault: tuple[Service, str]) -> None:
    service, url = vault
    ids = []
    for i in range(NOTES):
        outcome, _ = service.note(parse("note", {"initiative": "work", "text": f"note {i} about the harbour"}))
        assert outcome.primary is not None
        ids.append(outcome.primary.id)
    for node_id in ids[:REMINDERS]:
        service.revise(
            parse(
                "revise",
                {
                    "initiative": "work",
                    "node": {"id": node_id},
                    "patch": {"reminder": {"after": "2026-01-01", "window_days": 30}},
                },
            )
        )
    expected, real = _estimate(url, PostgresDialect.attention)
    assert real == REMINDERS
    # Guessed, it was about half the table (a third for each test, either of two): ~150 here.
    assert expected <= 4 * REMINDERS, f"the planner expects {expected} nodes with a reminder, the vault holds {real}"
