"""Three leftovers of the grants probe (decision 15.K2: a token limited to some initiatives learns
nothing of the others). A stale `expected_revision` is answered with the revisions the token may
see only; its history pages read a page of the node's log however long the log is; and a hit gone
from a resumed `search` or `recall` page is said to be no longer visible, not retracted, whether it
was forgotten or moved out of the grant. Both backends."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.postgres.db import PgDb
from kaeru.storage.sqlite.session import SqliteDb
from tests.service.support import Clock

PUB = "pub"
SECRET = "secret-proj"
LIMITED = grants.Principal("lim", frozenset({PUB}))
#: A writer granted `SECRET` alone: its name is one the limited token may not learn.
INSIDER = grants.Principal("zebulon-writer", frozenset({SECRET}))


class Tools:
    """The tools' handlers on a vault whose clock moves ten seconds before every call."""

    def __init__(self, service: Service, clock: Clock):
        self.registry = build_server(service).registry
        self.clock = clock

    def call(self, tool: str, principal: grants.Principal | None = None, **args: Any) -> dict[str, Any]:
        self.clock.tick()
        with grants.acting(principal):
            envelope: dict[str, Any] = self.registry.run(tool, args)
        return envelope

    def ok(self, tool: str, principal: grants.Principal | None = None, **args: Any) -> dict[str, Any]:
        envelope = self.call(tool, principal, **args)
        assert envelope["state"] in ("ok", "applied"), envelope["issues"]
        return envelope

    def write(self, tool: str, **args: Any) -> str:
        node_id: str = self.ok(tool, **args)["data"]["primary"]["id"]
        return node_id

    def move(self, node: str, to: str, away: str) -> None:
        self.ok("initiative", initiative=to, action="attach", node={"id": node})
        self.ok("initiative", initiative=away, action="detach", node={"id": node})

    def history(self, node: str, principal: grants.Principal | None, limit: int) -> list[dict[str, Any]]:
        """The node's whole `trail kind=history`, page by page."""
        pages = [self.ok("trail", principal, initiative=PUB, node={"id": node}, kind="history", limit=limit)]
        while pages[-1].get("continuation"):
            pages.append(self.ok("trail", principal, **pages[-1]["continuation"]["next_arguments"]))
        return pages


@pytest.fixture
def tools(timed: Service, clock: Clock) -> Tools:
    return Tools(timed, clock)


def _revisions(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for page in pages for e in page["data"]["entries"] if e["kind"] == "revision"]


# --- 1. a stale expected_revision ----------------------------------------------------------------
def test_a_stale_revision_tells_a_limited_token_only_of_the_revisions_it_may_see(tools: Tools) -> None:
    node = tools.write("note", initiative=PUB, name="ferry plan", text="the ferry leaves at nine")
    seen = tools.ok("read", LIMITED, initiative=PUB, node={"id": node})["data"]["hits"][0]["revision"]
    tools.move(node, SECRET, PUB)
    tools.ok("revise", INSIDER, initiative=SECRET, node={"id": node}, patch={"body": "codeword xylophage"})
    tools.ok("revise", INSIDER, initiative=SECRET, node={"id": node}, patch={"description": "walrus route"})
    tools.move(node, PUB, SECRET)
    every = _revisions(tools.history(node, None, 50))
    hidden = [e["node"]["revision"] for e in every if PUB not in e["node"]["initiatives"]]
    shown = [e["node"]["revision"] for e in every if PUB in e["node"]["initiatives"]]
    assert len(hidden) == 3 and len(shown) == 4  # the detach from PUB and the insider's two revisions

    patch = {"body": "the ferry leaves at ten"}
    stale = tools.call("revise", LIMITED, initiative=PUB, node={"id": node}, patch=patch, expected_revision=seen)
    assert stale["state"] == "rejected"
    [issue] = stale["issues"]
    assert issue["code"] == "revision_conflict" and issue["field"] == "expected_revision"
    message = issue["message"]
    assert f"is at revision {shown[-1]!r}, not {seen!r}" in message
    assert not [r for r in hidden if r in message] and "zebulon" not in message
    assert all(r in message for r in shown[1:])  # each revision it may see since its own
    # The revision after the unseen ones is compared with the last one the token saw.
    assert f"{shown[2]} by " in message and " differs in body, description, tags" in message
    # A revision it may not see is no revision it knows of.
    guessed = tools.call("revise", LIMITED, initiative=PUB, node={"id": node}, patch=patch, expected_revision=hidden[1])
    unknown = tools.call("revise", LIMITED, initiative=PUB, node={"id": node}, patch=patch, expected_revision="9-0")
    assert guessed["issues"][0]["message"].replace(hidden[1], "<r>") == unknown["issues"][0]["message"].replace(
        "9-0", "<r>"
    )
    # The admin is told of every revision, the insider's by name, as before.
    admin = tools.call("revise", initiative=PUB, node={"id": node}, patch=patch, expected_revision=seen)
    said = admin["issues"][0]["message"]
    assert all(r in said for r in hidden) and "zebulon-writer changed body, tags" in said


# --- 2. a history page reads a page --------------------------------------------------------------
@contextmanager
def _rows_read() -> Iterator[list[int]]:
    """How many rows the store's statements return, counted as they pass (both engines' `Db`)."""
    counted = [0]
    patched = []
    for cls in (SqliteDb, PgDb):
        one, rows = cls.one, cls.rows

        def counted_one(self: Any, sql: str, params: Any = (), _one: Any = one) -> Any:
            row = _one(self, sql, params)
            counted[0] += row is not None
            return row

        def counted_rows(self: Any, sql: str, params: Any = (), _rows: Any = rows) -> Any:
            found = _rows(self, sql, params)
            counted[0] += len(found)
            return found

        patched.append((cls, one, rows))
        cls.one, cls.rows = counted_one, counted_rows  # type: ignore[method-assign]
    try:
        yield counted
    finally:
        for cls, one, rows in patched:
            cls.one, cls.rows = one, rows  # type: ignore[method-assign]


def _long_node(tools: Tools, name: str, each: int) -> str:
    """A node written in PUB, moved to SECRET for `each` revisions, back in PUB for `each` more."""
    node = tools.write("note", initiative=PUB, name=name, text="first")
    tools.move(node, SECRET, PUB)
    for i in range(each):
        tools.ok("revise", initiative=SECRET, node={"id": node}, patch={"body": f"unseen {i} " + "x" * 400})
    tools.move(node, PUB, SECRET)
    for i in range(each):
        tools.ok("revise", initiative=PUB, node={"id": node}, patch={"body": f"seen {i}"})
    return node


def test_a_limited_tokens_history_page_reads_a_page_however_long_the_log(tools: Tools) -> None:
    short, long = _long_node(tools, "short log", 4), _long_node(tools, "long log", 60)
    read = {}
    for node in (short, long):
        with _rows_read() as counted:
            first = tools.ok("trail", LIMITED, initiative=PUB, node={"id": node}, kind="history", limit=3)
            tools.ok("trail", LIMITED, **first["continuation"]["next_arguments"])
        read[node] = counted[0]
    # The same pages (the first three shown revisions, then three more) read as many rows: none of
    # the 112 more revisions of the long log.
    assert read[long] == read[short], read


def test_a_limited_tokens_pages_show_what_its_whole_history_shows(tools: Tools) -> None:
    node = _long_node(tools, "log", 5)
    edge_to = tools.write("note", initiative=PUB, name="timetable", text="the timetable")
    tools.ok("link", initiative=PUB, action="add", **{"from": node}, to=edge_to, edge_type="refers_to", weight=0.5)
    whole = tools.history(node, LIMITED, 50)
    assert len(whole) == 1 and whole[0]["data"]["total"] == 10  # 9 revisions in PUB, the link
    assert not [i for i in range(4) if f"unseen {i} " in json.dumps(whole)]  # (the 5th is the attach's body)
    for limit in (1, 2, 4):
        pages = tools.history(node, LIMITED, limit)
        assert [p["data"]["total"] for p in pages] == [10] * len(pages)
        # Each entry as the whole history shows it: a page's first revision after the unseen ones is
        # compared with the last revision the token saw, on another page.
        assert [e for p in pages for e in p["data"]["entries"]] == whole[0]["data"]["entries"]
    entries = _revisions(whole)
    back = entries[2]  # the attach that brought it back to PUB, after the revisions in SECRET
    assert {c["field"]: c["before"] for c in back["changes"]}["body"] == "first"


# --- 3. a hit gone from a resumed page -----------------------------------------------------------
@pytest.mark.parametrize("tool", ["search", "recall"])
def test_a_hit_moved_away_or_forgotten_is_no_longer_visible_on_a_resumed_page(tools: Tools, tool: str) -> None:
    notes = [tools.write("note", initiative=PUB, text=f"cart note number {i}") for i in range(5)]
    asked = {"initiatives": [PUB], "limit": 1, **({"text": "cart"} if tool == "search" else {"query": "cart"})}
    first = tools.ok(tool, LIMITED, **asked)
    left = [n for n in notes if n not in {h["id"] for h in first["data"]["hits"]}]
    tools.move(left[0], SECRET, PUB)
    tools.ok("forget", initiative=PUB, node={"id": left[1]}, reason="not needed")
    pages = [first]
    while pages[-1].get("continuation"):
        pages.append(tools.ok(tool, LIMITED, **pages[-1]["continuation"]["next_arguments"]))
    omitted = [o for p in pages[1:] for o in p["coverage"]["omitted"] if o["reason"] != "limit"]
    # Both said alike, as live hits it no longer sees: not "retracted" (the moved one is live).
    assert omitted and all(o["reason"] == "no longer visible" for o in omitted), omitted
    assert sum(o["count"] for o in omitted) == 2
    shown = {h["id"] for p in pages for h in p["data"]["hits"]}
    assert shown == set(notes) - {left[0], left[1]}


@pytest.mark.parametrize("tool", ["search", "recall"])
def test_the_admins_resumed_page_still_says_a_forgotten_hit_is_retracted(tools: Tools, tool: str) -> None:
    notes = [tools.write("note", initiative=PUB, text=f"cart note number {i}") for i in range(3)]
    asked = {"initiatives": [PUB], "limit": 1, **({"text": "cart"} if tool == "search" else {"query": "cart"})}
    first = tools.ok(tool, **asked)
    left = [n for n in notes if n not in {h["id"] for h in first["data"]["hits"]}]
    tools.ok("forget", initiative=PUB, node={"id": left[0]}, reason="not needed")
    pages = [first]
    while pages[-1].get("continuation"):
        pages.append(tools.ok(tool, **pages[-1]["continuation"]["next_arguments"]))
    omitted = [o for p in pages[1:] for o in p["coverage"]["omitted"] if o["reason"] != "limit"]
    assert omitted == [{"section": "hits", "count": 1, "reason": "retracted"}]
