"""PostgreSQL's semantic candidates from codes held in memory (`storage/postgres/vectorcodes.py`).

A store keeps each model's one-bit codes by node seq and ranks only the candidates' vectors
exactly. The copy must never miss a vector another server wrote into the same database after it
was read — a new one, or one rewritten — and must answer as the exact scan in SQL does.
"""

from __future__ import annotations

import random

import psycopg
import pytest

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.service.embedding import pack
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from kaeru.storage.sql import codes
from tests.backends import VaultSpec
from tests.semantic.test_vector_index import DIMS, MODEL, as_float32, exact_ranking, near, store_vectors, unit
from tests.storage.test_postgres_copies import _compare, _ids, _noted, _query, fresh  # noqa: F401 (a fixture)

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


def _written_by_sql(url: str, rows: dict[str, list[float]]) -> None:
    """Vectors written as a writer that logs nothing itself does (an older kaeru, direct SQL): one
    statement a vector, from a connection of its own."""
    with psycopg.connect(url, autocommit=True) as conn:
        for node_id, vector in rows.items():
            conn.execute(
                "INSERT INTO node_vectors (node_id, model, text_sha, embedding) VALUES (%s, %s, 'old', %s::real[]) "
                "ON CONFLICT (node_id, model) DO UPDATE SET embedding = excluded.embedding",
                (node_id, MODEL, vector),
            )


def test_a_vector_an_older_writer_adds_to_a_small_vault_is_found(
    store: Store, service: Service, vault: VaultSpec
) -> None:
    """Every code is a candidate in a small vault, so the ranking is taken as the exact one: a
    vector written by SQL that logs nothing itself after the codes were read must be among them."""
    rng = random.Random(7)
    query = unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])
    ids = _notes(service, 30)
    stored = {n: as_float32(unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])) for n in ids[:20]}
    store_vectors(store, stored)
    assert _nearest(store, query, 5) == [n for n, _ in exact_ranking(stored, query, list(stored), 5)]
    later = {ids[25]: as_float32(near(rng, query, 0.95))}
    _written_by_sql(vault.database_url, later)
    stored.update(later)
    found = _nearest(store, query, 5)
    assert found[0] == ids[25]
    assert found == [n for n, _ in exact_ranking(stored, query, list(stored), 5)]


@pytest.mark.usefixtures("few_candidates")
def test_a_vector_an_older_writer_rewrites_is_found(store: Store, service: Service, vault: VaultSpec) -> None:
    """A vector rewritten by SQL near the query, whose old code was far from it: found, and the
    codes brought up to date from the change log rather than read again whole."""
    rng = random.Random(8)
    query = unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])
    ids = _notes(service, 100)
    stored = {n: as_float32(near(rng, [-q for q in query], 0.5)) for n in ids[:10]}
    stored.update({n: as_float32(unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])) for n in ids[10:]})
    stored.update({n: as_float32(near(rng, query, 0.5 + 0.05 * i)) for i, n in enumerate(ids[10:16])})
    store_vectors(store, stored)
    _nearest(store, query, 5)
    later = {ids[0]: as_float32(near(rng, query, 0.95))}
    _written_by_sql(vault.database_url, later)
    stored.update(later)
    found = _nearest(store, query, 5)
    assert found[0] == ids[0]
    assert found == [n for n, _ in exact_ranking(stored, query, list(stored), 5)]
    assert store.vector_codes.loads == 1  # type: ignore[attr-defined]


def test_codes_past_their_bound_are_never_read_query_after_query(store: Store, service: Service) -> None:
    """A model whose codes would not fit is left to the exact scan: its vectors are not read again
    at every query only to be given up."""
    rng = random.Random(9)
    query = unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])
    ids = _notes(service, 40)
    stored = {n: as_float32(unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])) for n in ids}
    store_vectors(store, stored)
    codes_of = store.vector_codes  # type: ignore[attr-defined]
    codes_of.max_bytes = 100
    for _ in range(3):
        assert _nearest(store, query, 5) == [n for n, _ in exact_ranking(stored, query, list(stored), 5)]
    assert codes_of.rows_read <= len(ids)  # at most once


def test_codes_grown_past_their_bound_are_given_up(store: Store, service: Service) -> None:
    """Codes that fit when read and grow past the bound by later writes are dropped (the exact
    scan answers), and not read again whole at each query."""
    rng = random.Random(10)
    query = unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])
    ids = _notes(service, 80)
    stored = {n: as_float32(unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])) for n in ids[:40]}
    store_vectors(store, stored)
    codes_of = store.vector_codes  # type: ignore[attr-defined]
    codes_of.max_bytes = 40 * (8 + -(-DIMS // 64) * 8)  # these 40 codes exactly
    _nearest(store, query, 5)
    assert codes_of.loads == 1
    more = {n: as_float32(unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])) for n in ids[40:]}
    store_vectors(store, more)
    stored.update(more)
    read = codes_of.rows_read
    for _ in range(3):
        assert _nearest(store, query, 5) == [n for n, _ in exact_ranking(stored, query, list(stored), 5)]
    assert codes_of.loads == 1 and codes_of.rows_read - read <= len(more)
    assert all(c.nbytes <= codes_of.max_bytes for c in codes_of._held.models.values())


def test_a_reindex_of_the_vectors_alone_leaves_the_search_copies_current(fresh: Service) -> None:  # noqa: F811
    """The search copies read back only the nodes whose rows changed: vectors written for more
    nodes than they read back do not make them read whole again."""
    store = _noted(fresh, "vectors", [f"alpha beta {i}" for i in range(12)])
    first = _compare(store, "vectors", _query())
    store.copies.refresh_rows = 4
    loads = store.copies.loads
    rng = random.Random(11)
    store_vectors(store, {n: as_float32(unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])) for n in _ids(first)})
    assert _compare(store, "vectors", _query()) == first
    assert store.copies.loads == loads
