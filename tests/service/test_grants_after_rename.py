"""A token's grants name initiatives, and an initiative's name changes: a rename carries the grants
of its old name along (to them the new name holds only what the old one did), a merge moves none (its target
holds memories the tokens were never granted) and says so, and a token whose initiative moved out of
its grants is told so — never where — and its write under the old name is refused instead of
starting a second project there. Through the tools' handlers, as the HTTP transport calls them with
each token's stored grants; both backends."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.service.token_calls import as_token, initiative_names, messages, token

Run = Callable[[str, dict[str, Any]], dict[str, Any]]
MOVED_OUT = (
    "this initiative was renamed or merged into one your token has no grant for; ask the vault's owner "
    "to grant it (`kaeru token grant`)"
)


def test_a_rename_moves_the_grants_of_the_old_name_and_the_token_goes_on_writing(
    service: Service, store: Store
) -> None:
    run = build_server(service).registry.run
    assert run("note", {"initiative": "ren-old", "text": "the rensecret lives here"})["state"] == "applied"
    holder = token(service, "ren", ["ren-old"])
    other = token(service, "bystander", ["elsewhere"])

    renamed = run("initiative", {"initiative": "ren-old", "action": "rename", "to": "ren-new"})
    assert renamed["state"] == "applied"
    assert messages(renamed, "token_grants") == [
        "1 token granted 'ren-old' by name: its grant names 'ren-new' too now, which holds only what "
        "'ren-old' held (`kaeru token history` records each change)."
    ]

    found = as_token(service, store, holder, "search", {"initiatives": ["ren-new"], "text": "rensecret"})
    assert found["state"] != "rejected" and found["data"]["total"] == 1, found
    wrote = as_token(service, store, holder, "note", {"initiative": "ren-new", "text": "written after the rename"})
    assert wrote["state"] == "applied", wrote["issues"]
    old = as_token(service, store, holder, "note", {"initiative": "ren-old", "text": "to the old name"})
    assert old["state"] == "rejected" and "write to 'ren-new'" in old["issues"][0]["message"]
    assert initiative_names(service) == ["ren-new"]  # no second project under the old name
    # A token that did not name it is left as it was.
    assert as_token(service, store, other, "context", {"initiative": "ren-new"})["issues"][0]["code"] == "forbidden"


def test_a_merge_out_of_a_tokens_grants_refuses_its_write_and_never_says_where(service: Service, store: Store) -> None:
    run = build_server(service).registry.run
    for name in ("h1", "h2"):
        assert run("note", {"initiative": name, "text": f"{name} mergesecret"})["state"] == "applied"
    both = token(service, "mh", ["h1", "h2"])
    only = token(service, "mh2", ["h1"])

    merged = as_token(service, store, both, "initiative", {"initiative": "h1", "action": "merge", "to": "h2"})
    assert merged["state"] == "applied", merged["issues"]
    # The limited token that merged is told neither how many other tokens nor which (the admin is).
    [warned] = messages(merged, "token_grants")
    assert warned.startswith("At least one other token grants 'h1' by name and not 'h2': it no longer reaches")
    assert "mh2" not in warned and "kaeru token grant NAME --initiative h2" in warned

    read = as_token(service, store, only, "context", {"initiative": "h1"})
    assert read["state"] == "rejected"
    assert read["issues"][0]["message"] == f"no initiative named 'h1': {MOVED_OUT}"
    wrote = as_token(service, store, only, "note", {"initiative": "h1", "text": "after the merge"})
    assert wrote["state"] == "rejected" and wrote["issues"][0]["code"] == "forbidden"
    assert wrote["issues"][0]["message"] == f"no write to 'h1': {MOVED_OUT}"
    assert "h2" not in json.dumps([read, wrote])  # never where it went
    assert initiative_names(service) == ["h2"]  # no second 'h1'


def test_the_admins_merge_names_the_tokens_it_left_without_access_and_widens_none(
    service: Service, store: Store
) -> None:
    run = build_server(service).registry.run
    for name in ("mg-f", "mg-g"):
        assert run("note", {"initiative": name, "text": f"{name} content"})["state"] == "applied"
    cut = token(service, "carol", ["mg-f"])
    token(service, "dave", ["mg-f", "mg-g"])
    merged = run("initiative", {"initiative": "mg-f", "action": "merge", "to": "mg-g"})
    assert messages(merged, "token_grants") == [
        "1 token grant 'mg-f' by name and not 'mg-g' (carol): they no longer reach these memories, and their "
        "writes to 'mg-f' are refused. A merge moves no grant, since 'mg-g' holds memories they were never "
        "given; `kaeru token grant carol --initiative mg-g` gives one all of it."
    ]
    # Not widened: the target's own memories stay out of its reach.
    assert as_token(service, store, cut, "context", {"initiative": "mg-g"})["issues"][0]["code"] == "forbidden"
