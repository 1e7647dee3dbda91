"""Hits a page could not hold and lists a server could not keep: said, and paged on without a gap.

`recall` with a small `token_budget` shows the hits that fit and defers the rest: the coverage
says how many (`budget`) and the continuation starts at the first hit not shown. A server keeps the
result lists of its cursors in memory up to a bound of items in all; past it, the least recently
used list goes (and a list longer than the whole bound is never kept), and that list's next page
is ranked again and says so — the pages still follow on. `explore_history` past its window of
revisions says how many it left out. Both backends (the window: SQLite only)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kaeru.domain.model import revision_token
from kaeru.domain.timefmt import fmt, parse_ts
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.service.cursors import INLINE_ITEMS, ResultLists
from kaeru.service.recall.history import HISTORY_REVISIONS
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec

P = "deferred"
#: More hits than a token can carry inline, so that paging keeps the list in memory.
HITS = INLINE_ITEMS + 16


def _fill(service: Service, word: str, count: int = HITS) -> None:
    run = build_server(service).registry.run
    for i in range(count):
        text = f"the {word} number {i} waits by pond {i % 7}, " + "watching the reeds sway in the wind " * 4
        assert run("note", {"initiative": P, "text": text})["state"] == "applied"


def _ids(answer: dict[str, Any]) -> list[str]:
    return [h["id"] for h in answer["data"]["hits"]]


def test_hits_past_the_token_budget_are_said_and_the_next_page_starts_at_the_first_of_them(service: Service) -> None:
    run = build_server(service).registry.run
    _fill(service, "heron", 20)
    args = {"initiatives": [P], "query": "heron", "limit": 20, "token_budget": 128}
    first = run("recall", args)
    assert first["state"] == "ok", first
    shown = _ids(first)
    assert 0 < len(shown) < 20
    deferred = [o for o in first["coverage"]["omitted"] if o["reason"] == "budget"]
    assert deferred == [{"section": "hits", "count": 20 - len(shown), "reason": "budget"}]
    assert first["coverage"]["complete"] is False
    seen = list(shown)
    answer = first
    while answer["continuation"] is not None:
        answer = run("recall", answer["continuation"]["next_arguments"])
        assert answer["state"] == "ok", answer
        seen += _ids(answer)
    whole = run("recall", {**args, "token_budget": 20000})
    assert not whole["coverage"]["omitted"] and seen == _ids(whole), "each page starts at the first hit not shown"


def test_a_list_past_the_servers_bound_is_ranked_again_and_said_and_the_pages_follow_on(service: Service) -> None:
    """With room for 60 items, a second 40-hit list pushes the first out: the first's page two is
    ranked again (the `cursor_invalid` warning on `cursor`), the second's is read from memory (no
    warning); a list of 40 under a bound of 35 is never kept. Each search's pages, whole, list
    every hit once either way."""
    _fill(service, "heron")
    _fill(service, "egret")
    run = build_server(service).registry.run

    def page_two(word: str) -> tuple[list[str], dict[str, Any]]:
        first = run("search", {"initiatives": [P], "text": word, "limit": 10})
        assert first["state"] == "ok" and first["continuation"] is not None, first
        return _ids(first), first["continuation"]["next_arguments"]

    def warned(answer: dict[str, Any]) -> list[tuple[str, str]]:
        return [(i["code"], i["field"]) for i in answer["issues"]]

    def rest(answer: dict[str, Any]) -> list[str]:
        found = _ids(answer)
        while answer["continuation"] is not None:
            answer = run("search", answer["continuation"]["next_arguments"])
            found += _ids(answer)
        return found

    service.rt.cursor_lists = ResultLists(60)
    heron_first, heron_next = page_two("heron")
    egret_first, egret_next = page_two("egret")  # 80 items held: the heron list goes
    heron = run("search", heron_next)
    assert warned(heron) == [("cursor_invalid", "cursor")]
    egret = run("search", egret_next)
    assert warned(egret) == []
    for first, page in ((heron_first, heron), (egret_first, egret)):
        whole = first + rest(page)
        assert len(whole) == HITS and len(set(whole)) == HITS

    service.rt.cursor_lists = ResultLists(35)  # smaller than one list: none is kept
    first, following = page_two("heron")
    again = run("search", following)
    assert warned(again) == [("cursor_invalid", "cursor")]
    whole = first + rest(again)
    assert len(whole) == HITS and len(set(whole)) == HITS


def test_explore_history_past_its_window_of_revisions_says_how_many_it_left_out(sqlite_vault: VaultSpec) -> None:
    """`explore_history` lists at most `HISTORY_REVISIONS` revisions of the matches; one more is
    left out and said (`window`), the listing marked incomplete. The revisions are written straight
    to the store in one transaction (a thousand `revise` calls would cost seconds for the same
    rows); SQLite only: the count is the service's, not the backend's."""
    settings = sqlite_vault.settings()
    store = open_store(settings)
    try:
        service = Service(store, settings)
        run = build_server(service).registry.run
        written = run("note", {"initiative": P, "text": "the heron logbook, kept by the hour"})
        node_id = written["data"]["primary"]["id"]
        with store.write() as session:
            node = session.get_node(node_id, for_update=True)
            assert node is not None
            first = parse_ts(node.recorded_at)
            for rev_no in range(2, HISTORY_REVISIONS + 2):
                at = fmt(first + timedelta(seconds=rev_no))
                node = node.evolve(
                    body=f"the heron logbook, hour {rev_no}",
                    rev_no=rev_no,
                    revision=revision_token(node_id, rev_no, at),
                    recorded_at=at,
                )
                session.put_node(node, request_id=None, actor="test")
        answer = run("recall", {"initiatives": [P], "query": "heron logbook", "task_intent": "explore_history"})
        assert answer["state"] == "ok", answer
        assert {"section": "hits", "count": 1, "reason": "window"} in answer["coverage"]["omitted"]
        assert answer["coverage"]["complete"] is False
    finally:
        store.close()
