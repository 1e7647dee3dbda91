"""A vector scan that fails costs recall its semantic channel, not its answer (decision 322's rule):
the lexical hits come back with a `semantic_unavailable` issue. On PostgreSQL the failed statement
aborted the recall's transaction: the whole recall answered `unavailable`, with no hits."""

from __future__ import annotations

import psycopg
import pytest

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.recall.test_semantic import ConceptEmbedder
from tests.recall.test_semantic_failures import codes


def _notes(service: Service) -> str:
    """A memory the query finds by its words, among others; its id."""
    made, _ = service.note(parse("note", {"initiative": "s", "text": "the billing database is PostgreSQL"}))
    service.note(parse("note", {"initiative": "s", "text": "we rented an automobile in Porto"}))
    assert made.primary is not None
    return made.primary.id


def test_a_vector_scan_past_the_statement_timeout_leaves_the_lexical_hits(vault: VaultSpec) -> None:
    """The scan waits on a lock another session holds on the vectors until the statement timeout
    cancels it (as a scan of a big scope runs past it); every other statement of the recall runs
    in that transaction after it, as without the channel."""
    if vault.backend != "postgres" or vault.database_url is None:
        pytest.skip("PostgreSQL's statement timeout")
    store = open_store(vault.settings(pg_statement_timeout_ms=2000, busy_timeout_ms=0))
    try:
        service = Service(store, vault.settings(), embedder=ConceptEmbedder())
        node = _notes(service)
        query = parse("recall", {"initiatives": ["s"], "query": "which database for billing"})
        with psycopg.connect(vault.database_url) as holder:
            holder.execute("LOCK TABLE node_vectors IN ACCESS EXCLUSIVE MODE")
            found = service.recall(query)
            holder.rollback()
        assert node in [h.node.id for h in found.hits]
        assert codes(found.issues) == ["semantic_unavailable"]
        assert "KAERU_PG_STATEMENT_TIMEOUT_MS" in found.issues[0].message
        assert "lexical channels only" in found.issues[0].message
        again = service.recall(query)  # the connection serves the next recall, with its channel
        assert codes(again.issues) == [] and node in [h.node.id for h in again.hits]
    finally:
        store.close()


def test_a_vector_the_scan_cannot_read_leaves_the_lexical_hits(store: Store, vault: VaultSpec) -> None:
    """A stored vector the scan fails on (one of another length under the model's name): the
    recall answers by its words and says the channel was not used."""
    service = Service(store, vault.settings(), embedder=ConceptEmbedder())
    node = _notes(service)
    other, _ = service.note(parse("note", {"initiative": "s", "text": "a vacation by the sea"}))
    assert other.primary is not None
    with store.write() as session:
        session.put_vector(other.primary.id, ConceptEmbedder.model_id, "0" * 16, b"\x00\x00\x80?" * 7)
    found = service.recall(parse("recall", {"initiatives": ["s"], "query": "which database for billing"}))
    assert node in [h.node.id for h in found.hits]
    if vault.backend == "sqlite":  # PostgreSQL's `unnest` pairs vectors of two lengths without failing
        assert codes(found.issues) == ["semantic_unavailable"]
