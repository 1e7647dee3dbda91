"""A token's grants name initiatives, and each request finds what those names are as it runs, on
both backends: a rename or a merge between two requests of the same token shows in the second (the
web viewer keeps one principal for a token across its requests); within one transaction an
initiative created or renamed into the grants counts from then on; an initiative an older kaeru
stored under both Unicode forms is granted whole (decision 184)."""

from __future__ import annotations

import unicodedata
from typing import Any

from kaeru.mcp.server import build_server
from kaeru.service import Service, grants

STAMP = "2026-11-01T00:00:00.000000Z"


def _seen(run: Any, ids: dict[str, str], granted: str) -> set[str]:
    """The notes of `ids` (label → node id) the running principal can read (naming `granted`, one
    of its grants, whether or not an initiative holds that name now)."""
    return {
        label
        for label, node in ids.items()
        if run("read", {"initiative": granted, "node": {"id": node}})["state"] == "ok"
    }


def test_a_rename_or_merge_between_two_requests_shows_in_the_second(service: Service) -> None:
    run = build_server(service).registry.run
    ids = {
        name: run("note", {"initiative": name, "text": f"zebracode fact of {name}"})["data"]["primary"]["id"]
        for name in ("webshop", "payroll", "legacy")
    }
    carol = grants.Principal("carol", frozenset({"webshop", "shop"}))  # one object for all her requests

    def request() -> set[str]:
        with grants.acting(carol):
            return _seen(run, ids, "webshop")

    assert request() == {"webshop"}
    assert run("initiative", {"initiative": "webshop", "action": "rename", "to": "private"})["state"] == "applied"
    assert request() == set()  # renamed out of the grants that named it (decision 15.K2)
    assert run("initiative", {"initiative": "private", "action": "rename", "to": "shop"})["state"] == "applied"
    assert request() == {"webshop"}  # its new name is granted
    assert run("initiative", {"initiative": "legacy", "action": "merge", "to": "shop"})["state"] == "applied"
    assert request() == {"webshop", "legacy"}  # merged into a granted initiative
    assert run("initiative", {"initiative": "shop", "action": "merge", "to": "payroll"})["state"] == "applied"
    assert request() == set()  # merged out of the grants
    with grants.acting(grants.Principal("dave", frozenset({"payroll"}))):
        assert _seen(run, ids, "payroll") == {"webshop", "payroll", "legacy"}


def test_within_a_transaction_an_initiative_created_or_renamed_into_the_grants_counts(service: Service) -> None:
    with service.store.write() as session:
        web = session.create_initiative("web", STAMP)
        other = session.create_initiative("other", STAMP)
    with grants.acting(grants.Principal("carol", frozenset({"web", "fresh", "later"}))):
        with service.store.write() as session:
            assert grants.granted_ids(session) == {web.id}
            fresh = session.create_initiative("fresh", STAMP)
            assert grants.granted_ids(session) == {web.id, fresh.id}
            session.rename_initiative(other.id, "later", "2026-11-02T00:00:00.000000Z")
            assert grants.granted_ids(session) == {web.id, fresh.id, other.id}
        with grants.acting(None), service.store.write() as session:  # the owner, between two transactions
            session.rename_initiative(fresh.id, "elsewhere", "2026-11-03T00:00:00.000000Z")
        with service.store.read() as session:  # the next transaction of the same request asks again
            assert grants.granted_ids(session) == {web.id, other.id}
    with grants.acting(None), service.store.read() as session:
        assert grants.granted_ids(session) is None  # the local admin: every initiative


def test_a_grant_admits_both_initiatives_an_older_kaeru_split_by_unicode_form(service: Service) -> None:
    composed, decomposed = (unicodedata.normalize(form, "café") for form in ("NFC", "NFD"))
    with service.store.write() as session:  # one project stored as two initiatives (before decision 184)
        twins = {session.create_initiative(name, STAMP).id for name in (decomposed, composed)}
        session.create_initiative("cafe", STAMP)
    for granted in (composed, decomposed):
        carol = grants.Principal("carol", frozenset({unicodedata.normalize("NFC", granted)}))
        with grants.acting(carol), service.store.read() as session:
            assert grants.granted_ids(session) == twins
