"""What a token limited to some initiatives is shown of the vault's initiatives, and what is read to
show it.

`reflect`'s merge suggestions, `resources/list` and the completion of initiative names show such a
token its granted initiatives only; they read every initiative's row to keep those few, so each
call cost as much as the vault had initiatives. They now read the granted ones alone. A search of
the audit log must name every initiative it hides, but reads their names alone, as `reflect` does
for a caller who sees every initiative (its merge suggestions compare all names).
"""

from __future__ import annotations

from kaeru.mcp import resources
from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.sqlite.store import SqliteStore
from tests.backends import VaultSpec
from tests.service.test_new_names_read_narrow import beyond_a_few, read_by

#: Initiatives in the vault: far more than any answer for a token granted a few needs to read.
MANY = 300
STAMP = "2026-11-01T00:00:00.000000Z"


def _merges(envelope: dict[str, object]) -> list[str]:
    """The initiatives a `reflect` answer suggests merging into the one it reviewed."""
    data = envelope["data"]
    assert isinstance(data, dict), envelope
    return [
        item["fix"]["arguments"]["initiative"] for item in data["items"] if item["kind"] == "near_duplicate_initiative"
    ]


def test_a_limited_token_is_offered_merges_with_its_granted_initiatives_only(service: Service) -> None:
    run = build_server(service).registry.run
    for name in ("web-shop", "webshop", "Web_Shop", "payroll"):
        assert run("note", {"initiative": name, "text": f"zebracode fact of {name}"})["state"] == "applied"
    # The admin is offered both look-alikes; a token granted one of them, that one alone — however
    # it spells its grant, and whether or not it also names an initiative that does not exist.
    assert sorted(_merges(run("reflect", {"initiative": "web-shop"}))) == ["Web_Shop", "webshop"]
    carol = grants.Principal("carol", frozenset({"web-shop", "webshop", "web-shop-old"}))
    with grants.acting(carol):
        assert _merges(run("reflect", {"initiative": "web-shop"})) == ["webshop"]
    with grants.acting(grants.Principal("dave", frozenset({"web-shop", "payroll"}))):
        assert _merges(run("reflect", {"initiative": "web-shop"})) == []


def test_a_limited_token_lists_its_granted_initiatives_most_active_first(service: Service) -> None:
    registry = build_server(service).registry
    for name in ("alpha", "bravo", "charlie", "delta", "echo", "bravo"):  # bravo written to last
        assert registry.run("note", {"initiative": name, "text": f"zebracode {name}"})["state"] == "applied"
    with grants.acting(None):
        assert resources.recent_names(registry) == ["bravo", "echo", "delta", "charlie", "alpha"]
    with grants.acting(grants.Principal("carol", frozenset({"delta", "bravo", "alpha", "missing"}))):
        assert resources.recent_names(registry) == ["bravo", "delta", "alpha"]
        assert resources.initiative_names(registry) == ["bravo", "delta", "alpha"]
        assert resources.initiative_names(registry, "D") == ["delta"]
        assert resources.initiative_names(registry, "echo") == []


def test_a_limited_token_reads_its_granted_initiatives_not_every_one(sqlite_vault: VaultSpec) -> None:
    """Of 300 initiatives, no statement of a limited token's `reflect`, `resources/list` or
    completion returns more than a few rows; its audit search, and the admin's `reflect`, read the
    names alone (one value a row) and nothing else beyond a few rows."""
    settings = sqlite_vault.settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    try:
        registry = build_server(service).registry
        run = registry.run
        for name in ("web", "shop"):
            assert run("note", {"initiative": name, "text": f"zebracode {name}"})["state"] == "applied"
        with store.write() as session:
            for i in range(MANY - 2):
                session.create_initiative(f"project-{i:03d}", STAMP)
        audit = {"initiatives": ["web"], "text": "note", "filters": {"types": ["audit_event"]}}
        assert run("search", audit)["data"]["total"] == 1  # the search below has a record to check
        carol = grants.Principal("carol", frozenset({"web", "shop"}))

        def as_carol(call: str) -> object:
            with grants.acting(carol):
                if call == "reflect":
                    return run("reflect", {"initiative": "web"})
                if call == "audit search":
                    return run("search", audit)
                if call == "resources/list":
                    return resources.recent_names(registry)
                return resources.initiative_names(registry, "")

        calls = ("reflect", "resources/list", "completion", "audit search")
        found = {call: beyond_a_few(read_by(store, lambda call=call: as_carol(call))) for call in calls}
        found["admin reflect"] = beyond_a_few(read_by(store, lambda: run("reflect", {"initiative": "web"})))
        names_alone = [("names alone", MANY)]
        assert found == {
            "reflect": [],
            "resources/list": [],
            "completion": [],
            "audit search": names_alone,
            "admin reflect": names_alone,
        }
    finally:
        store.close()
