"""`kaeru copy` carries the semantic channel's stored vectors: a vault moved between backends recalls
by meaning in its new home as it did in the old, without `kaeru reindex` (decision 322 left this
open: the copy moved every record through an archive, which holds no vectors, so every copied
memory dropped out of semantic recall). A vector lands only on a live node that says the text it
was computed from: a merge never gives a node another text's vector."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.service.embedding import pack
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault, postgres_admin_url
from tests.cli.support import kaeru, write_notes
from tests.recall.test_semantic import ConceptEmbedder

pytestmark = pytest.mark.timeout(300)


class OtherModel(ConceptEmbedder):
    """A second model's vectors in the same vault (a vault embedded by two models keeps both)."""

    model_id = "test-concepts-other"


def _where(spec: VaultSpec) -> str:
    return spec.database_url or str(spec.vault_dir)


def _all_vectors(store: Store) -> list[tuple[str, str, str, bytes]]:
    """Every stored vector, read a small page at a time."""
    found: list[tuple[str, str, str, bytes]] = []
    with store.read() as session:
        while page := session.stored_vectors((found[-1][0], found[-1][1]) if found else None, 3):
            found.extend(page)
    return found


@pytest.fixture(params=[("sqlite", "postgres"), ("postgres", "sqlite")], ids=["sqlite-to-pg", "pg-to-sqlite"])
def across(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[VaultSpec, VaultSpec]]:
    if not postgres_admin_url():
        pytest.skip("PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (make test starts one)")
    source, target = (new_vault(backend, tmp_path / backend) for backend in request.param)
    yield source, target
    drop_vault(source)
    drop_vault(target)


def test_a_copy_between_backends_keeps_recall_by_meaning(across: tuple[VaultSpec, VaultSpec]) -> None:
    source, target = across
    store = open_store(source.settings())
    try:
        semantic = Service(store, source.settings(), embedder=ConceptEmbedder())
        made, _ = semantic.note(parse("note", {"initiative": "s", "text": "we rented an automobile in Porto"}))
        for i in range(10):
            semantic.note(parse("note", {"initiative": "s", "text": f"database migration step {i}"}))
        assert made.primary is not None
        car = parse("recall", {"initiatives": ["s"], "query": "which car did we drive"})
        assert semantic.recall(car).hits[0].node.id == made.primary.id
        assert Service(store, source.settings(), embedder=OtherModel()).reindex() == 11
        with store.read() as session:
            digests = {m: session.vector_digests(m) for m in (ConceptEmbedder.model_id, OtherModel.model_id)}
        stored = _all_vectors(store)
    finally:
        store.close()
    assert len(stored) == 22 and stored == sorted(stored)

    copied = kaeru({}, "copy", "--from", _where(source), "--to", _where(target), as_json=True)
    assert copied.code == 0, (copied.stdout, copied.stderr)

    store = open_store(target.settings())
    try:
        with store.read() as session:
            assert {m: session.vector_digests(m) for m in digests} == digests
        assert _all_vectors(store) == stored, "the same float32 bytes, whichever backend keeps them"
        found = Service(store, target.settings(), embedder=ConceptEmbedder()).recall(car)
        assert found.hits and found.hits[0].node.id == made.primary.id
        assert "semantic" in {c.name for c in found.plan.channels}
    finally:
        store.close()
    assert copied.json()["copied"]["vectors"] == 22

    again = kaeru({}, "copy", "--from", _where(source), "--to", _where(target), "--force")
    assert again.code == 0, again.stderr
    assert "audit records, 0 vectors;" in again.stdout, "the vectors the target holds are not written again"


def test_a_merge_gives_no_vector_to_a_node_that_says_another_text(vault: VaultSpec, tmp_path: Path) -> None:
    rented, holiday = write_notes(vault, "s", "we rented an automobile in Porto", "a long holiday by the sea")
    target = new_vault(vault.backend, tmp_path)
    try:
        first = kaeru({}, "copy", "--from", _where(vault), "--to", _where(target))
        assert first.code == 0, first.stderr
        store = open_store(target.settings())
        try:  # the target's memory of the same node moves on: it says another text now
            patch = {"body": "we sold it again"}
            Service(store, target.settings()).revise(
                parse("revise", {"initiative": "s", "node": rented, "patch": patch})
            )
        finally:
            store.close()
        store = open_store(vault.settings())
        try:  # the source is embedded after the first copy
            assert Service(store, vault.settings(), embedder=ConceptEmbedder()).reindex() == 2
            with store.read() as session:
                source_digests = session.vector_digests(ConceptEmbedder.model_id)
        finally:
            store.close()

        merged = kaeru({}, "copy", "--from", _where(vault), "--to", _where(target), "--force", as_json=True)
        assert merged.code == 0, (merged.stdout, merged.stderr)

        store = open_store(target.settings())
        try:
            with store.read() as session:
                assert session.vector_digests(ConceptEmbedder.model_id) == {holiday: source_digests[holiday]}
            trip = parse("recall", {"initiatives": ["s"], "query": "vacation"})
            found = Service(store, target.settings(), embedder=ConceptEmbedder()).recall(trip)
            assert found.hits and found.hits[0].node.id == holiday, "found by meaning: no word is shared"
        finally:
            store.close()
        assert merged.json()["copied"]["vectors"] == 1
    finally:
        drop_vault(target)


def test_stored_vectors_are_read_in_pages_in_node_and_model_order(store: Store, service: Service) -> None:
    """What the copy reads from either backend: every vector once, in (node id, model) order, as
    the float32 little-endian bytes `pack` makes, a page at a time."""
    ids = []
    for text in ("alpha", "beta", "gamma"):
        made, _ = service.note(parse("note", {"initiative": "s", "text": text}))
        assert made.primary is not None
        ids.append(made.primary.id)
    put = {}
    with store.write() as session:
        for n, node_id in enumerate(ids):
            for model in ("model-b", "model-a"):
                vector = pack([0.1 * n, -0.5, 1.0 / 3.0, 0.25 + n])
                session.put_vector(node_id, model, f"digest-{n}", vector)
                put[node_id, model] = (f"digest-{n}", vector)
    expected = [(node_id, model, *put[node_id, model]) for node_id, model in sorted(put)]
    assert _all_vectors(store) == expected
    with store.read() as session:
        assert session.stored_vectors(None, 100) == expected
        assert session.stored_vectors((expected[-1][0], expected[-1][1]), 100) == []


def test_a_merge_refused_as_diverged_still_carries_the_vectors_of_what_it_merged(
    vault: VaultSpec, tmp_path: Path
) -> None:
    """Both vaults revised one node after they parted: `copy --force` merges the rest, keeps the
    target's record and exits `copy_not_verified` (decision 463). Its vectors were never copied, and
    running it again diverged again: the merged memory stayed out of recall by meaning."""
    rented, holiday = write_notes(vault, "s", "we rented an automobile in Porto", "a long holiday by the sea")
    target = new_vault(vault.backend, tmp_path)
    try:
        assert kaeru({}, "copy", "--from", _where(vault), "--to", _where(target)).code == 0
        for spec, body in ((target, "we sold it again"), (vault, "we drove it to Lisbon")):
            store = open_store(spec.settings())
            try:
                patch = {"body": body}
                Service(store, spec.settings()).revise(
                    parse("revise", {"initiative": "s", "node": rented, "patch": patch})
                )
            finally:
                store.close()
        store = open_store(vault.settings())
        try:
            assert Service(store, vault.settings(), embedder=ConceptEmbedder()).reindex() == 2
            with store.read() as session:
                source_digests = session.vector_digests(ConceptEmbedder.model_id)
        finally:
            store.close()
        merged = kaeru({}, "copy", "--from", _where(vault), "--to", _where(target), "--force", as_json=True)
        assert merged.code == 1 and merged.json()["error"]["code"] == "copy_not_verified", merged.stdout
        store = open_store(target.settings())
        try:
            with store.read() as session:
                assert session.vector_digests(ConceptEmbedder.model_id) == {holiday: source_digests[holiday]}
        finally:
            store.close()
    finally:
        drop_vault(target)
