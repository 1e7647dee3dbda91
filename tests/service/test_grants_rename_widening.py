"""A rename onto a name other tokens are granted opens the renamed initiative's memories to them:
a token granted `ynew` before any initiative went by it, or one that kept `proj` when `proj` was
renamed away, reaches what the renamed initiative held. The admin's rename says so and names them;
a limited token's rename is refused, since only the vault's owner opens memories to another token.
A merge into an initiative other tokens are granted, and not the merged one, opens the merged
one's memories to them alike: the admin's merge names them, a limited token's is refused before a
node moves. Only the admin is told how many other tokens a rename or merge touched, and which. A
grant an older kaeru stored decomposed follows a rename as a composed one does. Through the tools'
handlers, as the HTTP transport calls them with each token's stored grants; both backends."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service, grants, initiatives, token_grants
from kaeru.storage.base import Store, TokenRecord
from tests.service.token_calls import as_token, initiative_names, messages, token


def _finds(service: Service, store: Store, secret: str, initiative: str, text: str) -> int:
    found = as_token(service, store, secret, "search", {"initiatives": [initiative], "text": text})
    return int(found["data"]["total"]) if found["state"] != "rejected" else 0


def _admins(service: Service, action: str) -> tuple[dict[str, Any], str]:
    """The admin's `action` (rename or merge) of `xsecret` onto `ynew`, which the token t2 is granted
    before it: the answer, and t2's secret."""
    waiting = token(service, "t2", ["ynew"])
    moved = build_server(service).registry.run("initiative", {"initiative": "xsecret", "action": action, "to": "ynew"})
    assert moved["state"] == "applied"
    return moved, waiting


def test_a_limited_tokens_rename_onto_a_name_another_token_holds_is_refused(service: Service, store: Store) -> None:
    run = build_server(service).registry.run
    assert run("note", {"initiative": "xsecret", "text": "the zebrapassword is here"})["state"] == "applied"
    renamer = token(service, "t1", ["xsecret", "ynew"])
    waiting = token(service, "t2", ["ynew"])  # granted before any initiative goes by the name

    refused = as_token(
        service, store, renamer, "initiative", {"initiative": "xsecret", "action": "rename", "to": "ynew"}
    )
    assert refused["state"] == "rejected"
    [issue] = refused["issues"]
    assert issue["code"] == "forbidden" and issue["field"] == "to"
    assert "another token is granted 'ynew' by name" in issue["message"] and "t2" not in issue["message"]
    assert initiative_names(service) == ["xsecret"]  # nothing renamed
    assert _finds(service, store, waiting, "ynew", "zebrapassword") == 0
    # A name no other token holds stays free to take.
    third = token(service, "t3", ["xsecret", "zfree"])
    moved = as_token(service, store, third, "initiative", {"initiative": "xsecret", "action": "rename", "to": "zfree"})
    assert moved["state"] == "applied", moved["issues"]


def test_the_admins_rename_onto_a_name_another_token_holds_names_it(service: Service, store: Store) -> None:
    run = build_server(service).registry.run
    assert run("note", {"initiative": "xsecret", "text": "the zebrapassword is here"})["state"] == "applied"
    token(service, "t1", ["xsecret", "ynew"])
    renamed, waiting = _admins(service, "rename")
    assert messages(renamed, "token_grants") == [
        "1 token granted 'ynew' by name (t2) reaches this initiative now, with the memories it held as 'xsecret', "
        "which it was never given; `kaeru token grant t2 --remove ynew` takes that back if it was not meant."
    ]
    assert _finds(service, store, waiting, "ynew", "zebrapassword") == 1  # as the owner was told


def test_a_rename_onto_a_former_name_tokens_kept_says_so_or_is_refused(service: Service, store: Store) -> None:
    run = build_server(service).registry.run
    run("note", {"initiative": "proj", "text": "old project"})
    old = token(service, "t1", ["proj"])
    assert run("initiative", {"initiative": "proj", "action": "rename", "to": "proj2"})["state"] == "applied"
    run("note", {"initiative": "tmpx", "text": "brand new hushhush plan"})

    # A limited token granted both names may not hand `proj`'s old holders the new project.
    mover = token(service, "t9", ["tmpx", "proj"])
    refused = as_token(service, store, mover, "initiative", {"initiative": "tmpx", "action": "rename", "to": "proj"})
    assert refused["state"] == "rejected" and refused["issues"][0]["code"] == "forbidden"
    assert _finds(service, store, old, "proj", "hushhush") == 0

    reused = run("initiative", {"initiative": "tmpx", "action": "rename", "to": "proj"})
    assert reused["state"] == "applied"
    [warned] = messages(reused, "token_grants")
    assert warned.startswith("1 token granted 'proj' by name (t1) reaches this initiative now")


def test_a_limited_caller_is_told_no_count_of_other_tokens(service: Service, store: Store) -> None:
    run = build_server(service).registry.run
    for name in ("aa", "bb", "cc"):
        run("note", {"initiative": name, "text": f"{name} text"})
    for i in range(3):
        token(service, f"w{i}", ["aa", "cc"])
    limited = token(service, "t1", ["aa", "aa2", "bb", "cc"])

    renamed = as_token(service, store, limited, "initiative", {"initiative": "aa", "action": "rename", "to": "aa2"})
    assert messages(renamed, "token_grants") == [
        "Every token granted 'aa' by name: their grants name 'aa2' too now, which holds only what 'aa' held "
        "(`kaeru token history` records each change)."
    ]
    merged = as_token(service, store, limited, "initiative", {"initiative": "cc", "action": "merge", "to": "bb"})
    [cut] = messages(merged, "token_grants")
    assert cut.startswith("At least one other token grants 'cc' by name and not 'bb': it no longer reaches")
    assert not any(c.isdigit() for c in cut) and "w0" not in cut
    # The admin is told how many, and which.
    run("note", {"initiative": "dd", "text": "dd text"})
    token(service, "w9", ["dd"])
    admin = run("initiative", {"initiative": "dd", "action": "merge", "to": "bb"})
    assert messages(admin, "token_grants")[0].startswith("1 token grant 'dd' by name and not 'bb' (w9)")


def test_a_decomposed_grant_of_an_older_kaeru_follows_a_rename(service: Service, store: Store) -> None:
    composed, decomposed = (unicodedata.normalize(form, "café") for form in ("NFC", "NFD"))
    run = build_server(service).registry.run
    assert run("note", {"initiative": composed, "text": "the espressocode"})["state"] == "applied"
    secret = "kaeru_olderkaerutoken"
    with store.write() as session:  # as an older kaeru stored it: the name as given
        stamp = "2026-01-01T00:00:00.000000Z"
        session.add_token(TokenRecord("old", grants.digest(secret), (decomposed,), False, stamp))

    renamed = run("initiative", {"initiative": composed, "action": "rename", "to": "bistro"})
    assert messages(renamed, "token_grants")[0].startswith("1 token granted 'café' by name")
    assert _finds(service, store, secret, "bistro", "espressocode") == 1


def test_a_limited_tokens_merge_into_a_name_another_token_holds_is_refused(
    service: Service, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(initiatives, "CHUNK", 2)  # a merge of more nodes moves them in chunks first
    run = build_server(service).registry.run
    for i in range(5):
        assert run("note", {"initiative": "xsecret", "text": f"the zebrapassword {i}"})["state"] == "applied"
    assert run("note", {"initiative": "ynew", "text": "shared plans"})["state"] == "applied"
    merger = token(service, "t1", ["xsecret", "ynew"])
    waiting = token(service, "t2", ["ynew"])  # never given `xsecret`

    refused = as_token(service, store, merger, "initiative", {"initiative": "xsecret", "action": "merge", "to": "ynew"})
    assert refused["state"] == "rejected"
    [issue] = refused["issues"]
    assert issue["code"] == "forbidden" and issue["field"] == "to"
    assert "another token is granted 'ynew' by name and not 'xsecret'" in issue["message"]
    assert "t2" not in issue["message"] and not any(c.isdigit() for c in issue["message"])
    assert initiative_names(service) == ["xsecret", "ynew"]  # nothing merged, no chunk moved
    assert _finds(service, store, merger, "xsecret", "zebrapassword") == 5
    assert _finds(service, store, waiting, "ynew", "zebrapassword") == 0
    # Once the owner gives that token `xsecret` too, the merge opens nothing new and is the token's to make.
    token_grants.grant_token(service.rt, "t2", ["xsecret"], (), False, "owner")
    merged = as_token(service, store, merger, "initiative", {"initiative": "xsecret", "action": "merge", "to": "ynew"})
    assert merged["state"] == "applied", merged["issues"]
    assert _finds(service, store, waiting, "ynew", "zebrapassword") == 5


def test_the_admins_merge_into_a_name_another_token_holds_names_it(service: Service, store: Store) -> None:
    run = build_server(service).registry.run
    assert run("note", {"initiative": "xsecret", "text": "the zebrapassword is here"})["state"] == "applied"
    assert run("note", {"initiative": "ynew", "text": "shared plans"})["state"] == "applied"
    token(service, "t1", ["xsecret"])
    merged, waiting = _admins(service, "merge")
    assert messages(merged, "token_grants") == [
        # Tokens granted the merged initiative lose it (kept from before) ...
        "1 token grant 'xsecret' by name and not 'ynew' (t1): they no longer reach these memories, and their "
        "writes to 'xsecret' are refused. A merge moves no grant, since 'ynew' holds memories they were never "
        "given; `kaeru token grant t1 --initiative ynew` gives one all of it.",
        # ... and those granted the target come to reach its memories.
        "1 token granted 'ynew' by name and not 'xsecret' (t2) reaches the memories 'xsecret' held now, which it "
        "was never given; `kaeru token grant t2 --remove ynew` takes that back, with the rest of 'ynew', if it "
        "was not meant.",
    ]
    assert _finds(service, store, waiting, "ynew", "zebrapassword") == 1  # as the owner was told
