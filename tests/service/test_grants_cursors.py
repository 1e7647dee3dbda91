"""A cursor belongs to the grant it was made under (grants probe, session 41; decision 364).

A list is ranked for its caller: the admin's recall of `pub` reaches a `secret-proj` node through a
link, and its search of audit records holds records that name `secret-proj`. Replayed by a token
limited to `pub`, the admin's cursor served that text. Now such a cursor is refused, the limited
token's own cursors page as before, and a node moved out of its grant between two of its pages is
not shown on the later one. Both backends."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service, grants

Run = Callable[[str, dict[str, Any]], dict[str, Any]]

SECRET_TEXT = "Zebulon launch codeword xylophage"
LIMITED = grants.Principal("lim", frozenset({"pub"}))

#: First pages whose list, ranked for the admin, holds what `lim` may not see.
FIRST_PAGES: list[tuple[str, dict[str, Any]]] = [
    ("recall", {"initiatives": ["pub"], "query": "cart", "limit": 1}),
    ("search", {"initiatives": ["pub"], "filters": {"types": ["audit_event"]}, "limit": 1}),
    ("search", {"initiatives": ["pub"], "text": "cart", "limit": 1}),
]


@pytest.fixture
def world(service: Service) -> tuple[Run, str]:
    """`pub`'s cart notes, one linked to a note only in `secret-proj`; (run, the secret node's id)."""
    run: Run = build_server(service).registry.run
    secret = run("note", {"initiative": "secret-proj", "text": SECRET_TEXT})["data"]["primary"]["id"]
    linked = {"initiative": "pub", "text": "the cart rounds half up", "link_to": secret, "weight": 0.9}
    assert run("note", linked)["state"] == "applied"
    for i in range(3):
        assert run("note", {"initiative": "pub", "text": f"cart note number {i}"})["state"] == "applied"
    return run, secret


def _leaks(answer: dict[str, Any], secret: str) -> bool:
    said = json.dumps(answer)
    return "xylophage" in said or "secret-proj" in said or secret in said


def _pages(run: Run, tool: str, first: dict[str, Any]) -> list[dict[str, Any]]:
    answers = [run(tool, first)]
    while answers[-1].get("continuation"):
        answers.append(run(tool, answers[-1]["continuation"]["next_arguments"]))
    return answers


@pytest.mark.parametrize(("tool", "first"), FIRST_PAGES, ids=["recall", "search-audit", "search-text"])
def test_the_admins_cursor_is_refused_to_a_limited_token(
    world: tuple[Run, str], tool: str, first: dict[str, Any]
) -> None:
    run, secret = world
    admin_pages = _pages(run, tool, first)
    assert len(admin_pages) > 1
    for page in admin_pages[:-1]:
        with grants.acting(LIMITED):
            replayed = run(tool, page["continuation"]["next_arguments"])
        assert replayed["state"] == "rejected", replayed
        assert [(i["code"], i["field"]) for i in replayed["issues"]] == [("cursor_invalid", "cursor")]
        assert not _leaks(replayed, secret)
    # The admin's own cursors still page (the same pages again).
    assert [p["data"]["hits"] for p in _pages(run, tool, first)] == [p["data"]["hits"] for p in admin_pages]


@pytest.mark.parametrize(("tool", "first"), FIRST_PAGES, ids=["recall", "search-audit", "search-text"])
def test_a_limited_tokens_own_cursors_page_to_the_end_and_show_nothing_hidden(
    world: tuple[Run, str], tool: str, first: dict[str, Any]
) -> None:
    run, secret = world
    with grants.acting(LIMITED):
        pages = _pages(run, tool, first)
    assert all(p["state"] in ("ok", "applied") for p in pages), [p["issues"] for p in pages]
    ids = [h["id"] for p in pages for h in p["data"]["hits"]]
    assert ids and len(ids) == len(set(ids)) and not any(_leaks(p, secret) for p in pages)


@pytest.mark.parametrize("tool", ["recall", "search"])
def test_a_node_moved_out_of_the_grant_between_pages_is_not_shown(world: tuple[Run, str], tool: str) -> None:
    run, secret = world
    first = {"initiatives": ["pub"], "limit": 1, **({"query": "cart"} if tool == "recall" else {"text": "cart"})}
    with grants.acting(LIMITED):
        page = run(tool, first)
    shown = {h["id"] for h in page["data"]["hits"]}
    found = run("search", {"initiatives": ["pub"], "text": "cart", "limit": 50})["data"]["hits"]
    moved = [h["id"] for h in found if h["id"] not in shown]
    assert moved and page.get("continuation")
    for node in moved:  # the admin moves every other cart note to `secret-proj`
        assert run("initiative", {"initiative": "secret-proj", "action": "attach", "node": node})["state"] == "applied"
        assert run("initiative", {"initiative": "pub", "action": "detach", "node": node})["state"] == "applied"
    with grants.acting(LIMITED):
        rest = _pages(run, tool, page["continuation"]["next_arguments"])
    assert not {h["id"] for p in rest for h in p["data"]["hits"]} & set(moved)
    assert not any(_leaks(p, secret) for p in rest)


def test_a_limited_token_cannot_replay_the_admins_request_id(world: tuple[Run, str]) -> None:
    """The admin's stored answer may name what the token may not see (attaching a `secret-proj`
    node to `pub` answers both names): the same call with the admin's request id is refused as
    another call's, not replayed; the token's own request ids replay for it (decision 373)."""
    run, secret = world
    call = {"initiative": "pub", "action": "attach", "node": secret, "request_id": "r-1"}
    first = run("initiative", call)
    assert first["state"] == "applied" and "secret-proj" in json.dumps(first)
    with grants.acting(LIMITED):
        same = run("initiative", call)
        own = {"initiative": "pub", "text": "the cart keeps its items", "request_id": "r-2"}
        made, again = run("note", own), run("note", own)
    assert same["state"] == "rejected" and not same["replayed"] and "secret-proj" not in json.dumps(same)
    assert same["issues"][0]["code"] == "request_id_reused"
    assert made["state"] == "applied" and again["replayed"] and again["data"] == made["data"]
