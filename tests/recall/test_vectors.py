"""Semantic recall's top-k is computed in the database (decision 17.V1): the in-database ranking of
`Session.nearest_vectors` equals the exact ranking computed here, on random vectors, on both
backends — scope and forgotten nodes respected, ties by node id."""

from __future__ import annotations

import itertools
import math
import random

import apsw
import pytest

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.service.embedding import pack
from kaeru.storage.base import Store
from kaeru.storage.sqlite import vectors as sqlite_vectors
from tests.backends import VaultSpec

MODEL = "random-test"
TOL = 1e-5


def unit(rng: random.Random, dims: int) -> list[float]:
    values = [rng.gauss(0.0, 1.0) for _ in range(dims)]
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def as_float32(vector: list[float]) -> list[float]:
    """The values as stored (float32), so the reference ranking sees what the database sees."""
    import struct

    return list(struct.unpack(f"<{len(vector)}f", pack(vector)))


@pytest.fixture
def nodes(service: Service) -> dict[str, list[str]]:
    """Thirty notes in `a` (one of them forgotten), ten in `b`."""
    made: dict[str, list[str]] = {"a": [], "b": []}
    for initiative, count in (("a", 30), ("b", 10)):
        for i in range(count):
            out, _ = service.note(parse("note", {"initiative": initiative, "text": f"note {initiative} {i}"}))
            assert out.primary is not None
            made[initiative].append(out.primary.id)
    service.forget(parse("forget", {"initiative": "a", "node": {"id": made["a"][3]}, "reason": "test"}))
    return made


def check_top_k(
    store: Store, nodes: dict[str, list[str]], scope: list[str], dims: int, k: int, seed: int
) -> list[tuple[str, float]]:
    rng = random.Random(seed)
    stored = {n: as_float32(unit(rng, dims)) for ids in nodes.values() for n in ids}
    # Two nodes share one vector: their order is the node id's.
    twin_a, twin_b = nodes["a"][5], nodes["a"][7]
    stored[twin_b] = stored[twin_a]
    query = as_float32(unit(rng, dims))
    with store.write() as session:
        for node_id, vector in stored.items():
            session.put_vector(node_id, MODEL, "digest", pack(vector))
    with store.read() as session:
        scope_ids = [session.initiative_by_name(name).id for name in scope]  # type: ignore[union-attr]
        found = session.nearest_vectors(scope_ids, MODEL, pack(query), k)
    live = [n for name in scope for n in nodes[name] if n != nodes["a"][3]]
    exact = {n: sum(p * q for p, q in zip(stored[n], query, strict=True)) for n in live}
    assert len(found) == min(k, len(live))
    assert len({n for n, _ in found}) == len(found)
    for node_id, sim in found:
        assert node_id in exact, "only live members of the scope"
        assert sim == pytest.approx(exact[node_id], abs=TOL)
    for (first, s1), (second, s2) in itertools.pairwise(found):
        assert s1 >= s2 - TOL
        if stored[first] == stored[second]:
            assert first < second, "ties by node id"
    left_out = set(exact) - {n for n, _ in found}
    if found and left_out:
        assert max(exact[n] for n in left_out) <= found[-1][1] + TOL, "nothing better was left out"
    reference = sorted(exact, key=lambda n: (-exact[n], n))[:k]
    gaps = sorted(abs(exact[a] - exact[b]) for a in exact for b in exact if a < b and stored[a] != stored[b])
    if not gaps or gaps[0] > 10 * TOL:
        assert [n for n, _ in found] == reference
    return found


@pytest.mark.parametrize("seed", range(4))
def test_in_database_top_k_equals_the_exact_ranking(store: Store, nodes: dict[str, list[str]], seed: int) -> None:
    dims = [384, 16, 3, 1][seed]
    check_top_k(store, nodes, ["a"], dims, 10, seed)
    check_top_k(store, nodes, ["a", "b"], dims, 25, seed + 100)
    found = check_top_k(store, nodes, ["b"], dims, 50, seed + 200)
    assert len(found) == 10, "a scope smaller than k gives all of it"


def test_twins_rank_by_node_id(store: Store, nodes: dict[str, list[str]]) -> None:
    rng = random.Random(7)
    vector = as_float32(unit(rng, 8))
    twins = sorted(nodes["b"][:4])
    with store.write() as session:
        for node_id in twins:
            session.put_vector(node_id, MODEL, "digest", pack(vector))
    with store.read() as session:
        scope = [session.initiative_by_name("b").id]  # type: ignore[union-attr]
        found = session.nearest_vectors(scope, MODEL, pack(vector), 3)
        other_model = session.nearest_vectors(scope, "another-model", pack(vector), 3)
    assert [n for n, _ in found] == twins[:3]
    assert all(s == pytest.approx(1.0, abs=TOL) for _, s in found)
    assert other_model == [], "only the vectors of the embedder's model"


def test_the_python_stand_in_computes_what_sqlite_vec_does() -> None:
    rng = random.Random(3)
    pairs = [(pack(unit(rng, d)), pack([v * 3.0 for v in unit(rng, d)])) for d in (1, 2, 384, 768)]
    stand_in = apsw.Connection(":memory:")
    assert sqlite_vectors.install(stand_in, native=False) is False
    got = [next(stand_in.execute("SELECT vec_distance_cosine(?, ?)", pair))[0] for pair in pairs]
    if not sqlite_vectors.native_available():
        pytest.skip("sqlite-vec (the [semantic] extra) is not installed")
    native = apsw.Connection(":memory:")
    assert sqlite_vectors.install(native) is True
    want = [next(native.execute("SELECT vec_distance_cosine(?, ?)", pair))[0] for pair in pairs]
    assert got == pytest.approx(want, abs=TOL)


def test_a_vault_with_the_semantic_extra_uses_sqlite_vec(tmp_path: object, vault: VaultSpec, store: Store) -> None:
    if vault.backend != "sqlite":
        pytest.skip("sqlite-vec is SQLite's")
    if not sqlite_vectors.native_available():
        pytest.skip("sqlite-vec (the [semantic] extra) is not installed")
    with store.read() as session:
        (version,) = session._db.one("SELECT vec_version()", ())  # type: ignore[attr-defined,misc]
    assert str(version).startswith("v")


@pytest.mark.slow
def test_a_query_is_embedded_on_one_thread_with_the_same_vector() -> None:
    from kaeru import semantic

    if not semantic.available():
        pytest.skip("the [semantic] extra is not installed")
    import torch

    embedder = semantic.MiniLMEmbedder()
    threads = torch.get_num_threads()
    alone = embedder.embed(["we adopted a puppy from the shelter"])
    assert torch.get_num_threads() == threads, "torch's thread count is restored"
    batch = embedder.embed(["we adopted a puppy from the shelter", *[f"filler text {i}" for i in range(semantic.FEW)]])
    assert alone[0] == pytest.approx(batch[0], abs=1e-4), "one thread or many, the same vector"


@pytest.mark.slow
def test_one_text_is_embedded_by_the_traced_model_as_sentence_transformers_does() -> None:
    """Decision 17.Y2: one text goes through MiniLM traced into one TorchScript graph; its vector is
    `encode`'s (on the same single thread) within `AGREE`, for texts short, long, truncated, blank."""
    from kaeru import semantic

    if not semantic.available():
        pytest.skip("the [semantic] extra is not installed")
    import torch

    embedder = semantic.MiniLMEmbedder()
    embedder.embed(["warm up"])
    assert embedder._traced not in (None, False), "the packaged MiniLM is traced"
    model = embedder._load()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for text in ["x", "  spaces around  ", "ünïcödé 日本語 text", "a " * 300, "", "how did we migrate billing?"]:
            (want,) = model.encode([text], normalize_embeddings=True, show_progress_bar=False)
            (got,) = embedder.embed([text])
            assert max(abs(a - float(b)) for a, b in zip(got, want, strict=True)) <= semantic.AGREE, text
    finally:
        torch.set_num_threads(threads)
