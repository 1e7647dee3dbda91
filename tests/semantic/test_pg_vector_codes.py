"""PostgreSQL's semantic candidates from codes held in memory (`storage/postgres/vectorcodes.py`).

A store keeps each model's one-bit codes by node seq and ranks only the candidates' vectors
exactly. The copy must never miss a vector another server wrote into the same database after it
was read — a new one, or one rewritten — and must answer as the exact scan in SQL does.
"""

from __future__ import annotations

import random

import pytest

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.service.embedding import pack
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from kaeru.storage.sql import codes
from tests.backends import VaultSpec
from tests.semantic.test_vector_index import DIMS, MODEL, as_float32, exact_ranking, near, store_vectors, unit

pytest.importorskip("numpy")


@pytest.fixture
def backend() -> str:
    return "postgres"


@pytest.fixture
def few_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codes, "OVERSAMPLE", 1)
    monkeypatch.setattr(codes, "MIN_CANDIDATES", 8)


def _notes(service: Service, count: int) -> list[str]:
    made = []
    for i in range(count):
        out, _ = service.note(parse("note", {"initiative": "a", "text": f"note {i}"}))
        assert out.primary is not None
        made.append(out.primary.id)
    return made


def _nearest(store: Store, query: list[float], k: int) -> list[str]:
    with store.read() as session:
        scope = [session.initiative_by_name("a").id]  # type: ignore[union-attr]
        return [n for n, _ in session.nearest_vectors(scope, MODEL, pack(query), k)]


@pytest.mark.usefixtures("few_candidates")
def test_a_vector_another_server_writes_after_the_codes_were_read_is_found(
    store: Store, service: Service, vault: VaultSpec
) -> None:
    rng = random.Random(5)
    query = unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])
    ids = _notes(service, 120)
    stored = {n: as_float32(unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])) for n in ids[:100]}
    for i, n in enumerate(ids[10:16]):
        stored[n] = as_float32(near(rng, query, 0.5 + 0.05 * i))
    store_vectors(store, stored)
    assert _nearest(store, query, 5) == [n for n, _ in exact_ranking(stored, query, list(stored), 5)]
    codes_of = store.vector_codes  # type: ignore[attr-defined]
    assert codes_of.loads == 1
    other = open_store(vault.settings())  # another server on the same database
    try:
        new, moved = ids[110], ids[3]
        later = {new: as_float32(near(rng, query, 0.95)), moved: as_float32(near(rng, query, 0.9))}
        store_vectors(other, later)
    finally:
        other.close()
    stored.update(later)
    found = _nearest(store, query, 5)
    assert found[:2] == [new, moved]
    assert found == [n for n, _ in exact_ranking(stored, query, list(stored), 5)]
    assert codes_of.loads == 1, "brought up to date from the change log, not read again whole"
    # A rewritten vector that moved away is no longer found near the query.
    far = {new: as_float32(near(rng, [-q for q in query], 0.9))}
    store_vectors(store, far)
    stored.update(far)
    assert new not in _nearest(store, query, 5)
    assert _nearest(store, query, 5) == [n for n, _ in exact_ranking(stored, query, list(stored), 5)]


@pytest.mark.parametrize("seed", range(3))
def test_candidates_by_code_answer_as_the_exact_scan(store: Store, service: Service, seed: int) -> None:
    """Many candidates (every vector) and few: the same top k, similarities, and order as SQL's scan."""
    rng = random.Random(seed)
    query = unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])
    ids = _notes(service, 80)
    stored = {n: as_float32(unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])) for n in ids}
    for n in rng.sample(ids, 6):
        stored[n] = as_float32(near(rng, query, rng.uniform(0.4, 0.9)))
    store_vectors(store, stored)
    with store.read() as session:
        scope = [session.initiative_by_name("a").id]  # type: ignore[union-attr]
        by_codes = session.nearest_vectors(scope, MODEL, pack(query), 10)
        exact = session._exact(scope, MODEL, pack(query), 10)  # type: ignore[attr-defined]
    assert store.vector_codes.loads == 1  # type: ignore[attr-defined]
    assert [n for n, _ in by_codes] == [n for n, _ in exact]
    assert [s for _, s in by_codes] == pytest.approx([s for _, s in exact], abs=1e-9)
