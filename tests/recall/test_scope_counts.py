"""Recall's per-word counts in its scope (`scope_idf`): a word in few rows of the vault is counted
by the full-text index alone when that holds exactly the scope's live members (decision 246) — the
scope's own rows only, a forgotten note not, several initiatives together, and past
`PROBED_SCOPES` initiatives through the nodes' memberships as before."""

from __future__ import annotations

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.storage.records import SearchQuery
from kaeru.storage.sql.db import PROBED_SCOPES
from tests.recall.helpers import note


def test_a_rare_word_is_counted_in_its_scope_only(service: Service) -> None:
    for i in range(3):
        note(service, f"the quokka report {i}", initiative="count-a")
    for i in range(5):
        note(service, f"another quokka sighting {i}", initiative="count-b")
    gone = note(service, "a quokka note to forget", initiative="count-a")
    service.forget(parse("forget", {"initiative": "count-a", "node": {"id": gone}, "reason": "test"}))
    others = [f"count-other-{i}" for i in range(PROBED_SCOPES)]
    for name in others:
        note(service, f"nothing about that animal in {name}", initiative=name)
    with service.rt.store.read() as session:
        ids = {name: session.initiative_by_name(name) for name in ("count-a", "count-b", *others)}
        scope = {name: found.id for name, found in ids.items() if found is not None}

        def count(*names: str) -> int:
            query = SearchQuery(initiative_ids=[scope[n] for n in names], tokens=["quokka"], stemmed=True)
            return session.count_matches(query)

        assert (count("count-a"), count("count-b"), count("count-a", "count-b")) == (3, 5, 8)
        assert count("count-a", *others) == 3  # more initiatives than are probed one by one
        assert count(*others) == 0
