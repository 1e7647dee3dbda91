"""PostgreSQL's semantic codes while a restore in place has made the trigger that logs node writes
but not yet the one that logs vector writes (`pg_restore` makes triggers one by one, post-data;
decision 518): a vector written meanwhile is named by no change log, so the codes must not answer
until both triggers fire, and are read anew once the restore has made the second."""

from __future__ import annotations

import random

import psycopg
import pytest

from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.semantic.test_pg_vector_codes import _nearest, _notes, _written_by_sql
from tests.semantic.test_vector_index import DIMS, as_float32, exact_ranking, near, store_vectors, unit

pytest.importorskip("numpy")


@pytest.fixture
def backend() -> str:
    return "postgres"


def test_a_vector_written_while_its_trigger_is_missing_is_found(
    store: Store, service: Service, vault: VaultSpec
) -> None:
    rng = random.Random(12)
    query = unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])
    ids = _notes(service, 30)
    stored = {n: as_float32(unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])) for n in ids[:20]}
    store_vectors(store, stored)
    assert _nearest(store, query, 5) == [n for n, _ in exact_ranking(stored, query, list(stored), 5)]
    codes_of = store.vector_codes  # type: ignore[attr-defined]
    assert codes_of.loads == 1
    with psycopg.connect(vault.database_url, autocommit=True) as conn:
        (made,) = conn.execute(
            "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'node_vectors_text_changes'"
        ).fetchone() or ("",)
        conn.execute("DROP TRIGGER node_vectors_text_changes ON node_vectors")  # the restore's state then
    later = {ids[25]: as_float32(near(rng, query, 0.95))}
    _written_by_sql(vault.database_url, later)  # logged by no trigger
    stored.update(later)
    found = _nearest(store, query, 5)
    assert found[0] == ids[25], "the codes answered from a copy no change log could bring up to date"
    assert found == [n for n, _ in exact_ranking(stored, query, list(stored), 5)]
    assert codes_of.loads == 1  # the exact scan answered: nothing read while writes go unlogged

    with psycopg.connect(vault.database_url, autocommit=True) as conn:
        conn.execute(made)  # the restore makes the trigger last
    assert _nearest(store, query, 5) == found
    assert codes_of.loads == 2, "read anew once the trigger is made: its oid is part of the codes' origin"
