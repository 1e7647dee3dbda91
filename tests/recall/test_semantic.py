"""The optional semantic channel: vectors are stored, refreshed by reindex, and used by recall.

A small deterministic embedder (a concept table) stands in for a model in the regular suite; the
real packaged MiniLM model is exercised only when the `[semantic]` extra is installed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from kaeru.api.requests import parse
from kaeru.domain.text import tokens
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec

CONCEPTS = {"car": 0, "automobile": 0, "vehicle": 0, "holiday": 1, "vacation": 1, "trip": 1, "database": 2}


class ConceptEmbedder:
    """Maps words to a few concept axes, so synonyms are close and unrelated words are not."""

    model_id = "test-concepts"

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        out = []
        for text in texts:
            vector = [0.0, 0.0, 0.0, 0.01]
            for token in tokens(text):
                if token in CONCEPTS:
                    vector[CONCEPTS[token]] += 1.0
            norm = math.sqrt(sum(v * v for v in vector))
            out.append([v / norm for v in vector])
        return out


@pytest.fixture
def semantic(store: Store, vault: VaultSpec) -> Service:
    return Service(store, vault.settings(), embedder=ConceptEmbedder())


def test_recall_finds_meaning_without_shared_words(semantic: Service) -> None:
    target, _ = semantic.note(parse("note", {"initiative": "s", "text": "we rented an automobile in Porto"}))
    for i in range(10):
        semantic.note(parse("note", {"initiative": "s", "text": f"database migration step {i}"}))
    assert target.primary is not None
    found = semantic.recall(parse("recall", {"initiatives": ["s"], "query": "which car did we drive"}))
    assert found.hits and found.hits[0].node.id == target.primary.id
    assert "semantic" in {c.name for c in found.plan.channels}
    lexical = semantic.recall(
        parse("recall", {"initiatives": ["s"], "query": "which car did we drive"}), disabled=frozenset({"semantic"})
    )
    assert target.primary.id not in [h.node.id for h in lexical.hits]


def test_a_memory_of_the_same_meaning_joins_the_word_matches(store: Store, vault: VaultSpec) -> None:
    """With the extra, a memory that shares no word with the query but means the same is among the
    hits beside the ones that share its words; without it (or with the channel switched off) the
    ranking is the lexical one, the same either way."""
    semantic = Service(store, vault.settings(), embedder=ConceptEmbedder())
    meaning, _ = semantic.note(parse("note", {"initiative": "s", "text": "we rented an automobile in Porto"}))
    for i in range(12):  # far from each other in time: no temporal neighbours of one another
        semantic.note(parse("note", {"initiative": "s", "text": f"database migration step {i}"}))
    words, _ = semantic.note(parse("note", {"initiative": "s", "text": "we drive to the office on Mondays"}))
    assert meaning.primary is not None and words.primary is not None
    query = parse("recall", {"initiatives": ["s"], "query": "which car did we drive on Mondays"})
    found = [h.node.id for h in semantic.recall(query).hits]
    assert meaning.primary.id in found and words.primary.id in found
    assert found.index(words.primary.id) == 0, "the memory that shares the rare query word stays first"
    plain = [h.node.id for h in Service(store, vault.settings()).recall(query).hits]
    switched_off = [h.node.id for h in semantic.recall(query, disabled=frozenset({"semantic"})).hits]
    assert meaning.primary.id not in plain
    assert plain == switched_off


def test_reindex_fills_missing_and_stale_vectors(store: Store, vault: VaultSpec) -> None:
    plain = Service(store, vault.settings())
    made, _ = plain.note(parse("note", {"initiative": "s", "text": "a long holiday by the sea"}))
    assert made.primary is not None
    embedder = ConceptEmbedder()
    semantic = Service(store, vault.settings(), embedder=embedder)
    assert semantic.reindex() == 1
    assert semantic.reindex() == 0, "nothing is stale any more"
    plain.revise(
        parse("revise", {"initiative": "s", "node": made.primary.id, "patch": {"body": "a vacation in the mountains"}})
    )
    assert semantic.reindex() == 1, "a changed text makes its vector stale"
    found = semantic.recall(parse("recall", {"initiatives": ["s"], "query": "trip"}))
    assert [h.node.id for h in found.hits] == [made.primary.id]


def test_without_an_embedder_recall_is_lexical_and_loads_nothing(service: Service) -> None:
    service.note(parse("note", {"initiative": "s", "text": "the database is PostgreSQL"}))
    answer = service.recall(parse("recall", {"initiatives": ["s"], "query": "database"}))
    assert "semantic" not in {c.name for c in answer.plan.channels}
    assert answer.hits


@pytest.mark.slow
def test_the_packaged_model_embeds_offline(store: Store, vault: VaultSpec) -> None:
    from kaeru import semantic

    if not semantic.available():
        pytest.skip("the [semantic] extra is not installed")
    service = Service(store, vault.settings(), embedder=semantic.MiniLMEmbedder())
    made, _ = service.note(
        parse("note", {"initiative": "s", "text": "We adopted a puppy from the shelter last spring"})
    )
    service.note(parse("note", {"initiative": "s", "text": "The build uses ruff and mypy in strict mode"}))
    assert made.primary is not None
    found = service.recall(parse("recall", {"initiatives": ["s"], "query": "getting a new dog"}))
    assert found.hits[0].node.id == made.primary.id


class RevisingEmbedder(ConceptEmbedder):
    """Revises a node the first time it embeds, as another writer does while `reindex` embeds a
    batch outside any transaction (for seconds, with a real model)."""

    def __init__(self, reviser: Service, node_id: str) -> None:
        super().__init__()
        self.reviser, self.node_id = reviser, node_id

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.calls == 0:
            patch = {"body": "a holiday by the sea, far from any database"}
            self.reviser.revise(parse("revise", {"initiative": "s", "node": {"id": self.node_id}, "patch": patch}))
        return super().embed(texts)


def test_reindex_never_replaces_a_newer_texts_vector(store: Store, vault: VaultSpec) -> None:
    """A `revise` that lands while `reindex` embeds stores its own text's vector; the reindex then
    wrote the older text's over it, unconditionally, and the node dropped out of semantic recall
    until the next reindex (the semantic probe of session 48). It writes only a vector whose text
    the node still says."""
    from kaeru.service.embedding import node_text, text_digest

    written, _ = Service(store, vault.settings()).note(
        parse("note", {"initiative": "s", "text": "we rented an automobile in Porto"})
    )
    assert written.primary is not None
    node_id = written.primary.id
    reviser = Service(store, vault.settings(), embedder=ConceptEmbedder())
    racing = Service(store, vault.settings(), embedder=RevisingEmbedder(reviser, node_id))
    from kaeru.service.recall.indexing import reindex

    assert reindex(racing.rt) == 0  # the one node it embedded was revised meanwhile
    with store.read() as session:
        node = session.get_node(node_id)
        assert node is not None
        assert session.vector_digests("test-concepts")[node_id] == text_digest(node_text(node))
    found = racing.recall(parse("recall", {"initiatives": ["s"], "query": "where did we go on vacation"}))
    assert [h.node.id for h in found.hits][:1] == [node_id]
