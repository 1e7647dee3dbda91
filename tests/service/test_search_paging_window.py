"""`search` pages past its ranked window: a word matching more nodes than `WINDOW` is paged to its
last hit, and every page's `total`, omissions and `complete` say how many hits there are and how
many are still to come, on both backends.

Paging stopped at the window (5,000) and its last page said `complete: true` with `total: 5000`,
though 2,002 more nodes matched: an agent reading to the end concluded it had seen every hit. The
window is lowered here (the module reads it at each call) so a few dozen notes pass it."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.service import Service, search
from kaeru.service.outcomes import ReadOutcome

P = "paged-window"
#: The ranked window of these tests, and the notes that match: past two windows and a bit.
SMALL_WINDOW = 10
MATCHING = 27


@pytest.fixture
def windowed(service: Service, monkeypatch: pytest.MonkeyPatch) -> Service:
    monkeypatch.setattr(search, "WINDOW", SMALL_WINDOW)
    for i in range(MATCHING):
        # Some say the word more often, so the ranking is not just the order of writing.
        service.note(parse("note", {"initiative": P, "text": f"lantern number {i} lit" + " lantern" * (i % 4)}))
    service.note(parse("note", {"initiative": P, "text": "a candle, unlit"}))
    return service


def _search(service: Service, args: dict[str, Any]) -> ReadOutcome:
    return service.search(parse("search", args))


def _pages(service: Service, args: dict[str, Any], between: Any = None) -> list[ReadOutcome]:
    pages = [_search(service, args)]
    while pages[-1].continuation is not None:
        assert len(pages) < 4 * MATCHING, "paging did not end"
        if between is not None:
            between(len(pages))
        pages.append(_search(service, pages[-1].continuation.next_arguments))
    return pages


def _said(page: ReadOutcome) -> list[tuple[str, int, str]]:
    return [(o.section, o.count, o.reason) for o in page.coverage.omitted]


@pytest.mark.parametrize("limit", [4, 5, 10])  # pages that end inside a window, at its end, as long as it
def test_paging_reaches_every_hit_past_the_window_and_each_page_says_what_is_left(
    windowed: Service, limit: int
) -> None:
    args = {"initiatives": [P], "text": "lantern", "limit": limit}
    pages = _pages(windowed, args)
    seen = [h.node.id for page in pages for h in page.hits]
    assert len(seen) == MATCHING and len(set(seen)) == MATCHING, "every hit once, past the window too"
    shown = 0
    for page in pages[:-1]:
        shown += len(page.hits)
        assert page.total == MATCHING
        assert page.coverage.complete is False
        assert _said(page) == [("hits", MATCHING - shown, "limit")], "the rest, all reachable by paging"
    last = pages[-1]
    assert last.total == MATCHING and last.continuation is None
    assert last.coverage.complete is True and last.coverage.omitted == []

    # The order is the ranking's: the same as one list ranked whole.
    whole = _search_whole(windowed, {"initiatives": [P], "text": "lantern", "limit": 50})
    assert seen == whole


def _search_whole(service: Service, args: dict[str, Any]) -> list[str]:
    mp = pytest.MonkeyPatch()
    mp.setattr(search, "WINDOW", 5000)
    try:
        return [h.node.id for h in _search(service, args).hits]
    finally:
        mp.undo()


def test_a_list_no_longer_held_pages_on_past_the_window(windowed: Service) -> None:
    """A token whose list this server does not hold (another process, or evicted) ranks the windows
    up to its position again and goes on: past the window too."""
    args = {"initiatives": [P], "text": "lantern", "limit": 4}
    pages = _pages(windowed, args, between=lambda _: windowed.rt.cursor_lists.clear())
    seen = [h.node.id for page in pages for h in page.hits]
    assert sorted(seen) == sorted(set(seen)) and len(seen) == MATCHING
    assert pages[-1].coverage.complete is True and pages[-1].total == MATCHING


def test_hits_written_between_pages_do_not_push_the_first_pages_hits_out_of_reach(windowed: Service) -> None:
    """Notes that rank first, written after the first page, come before the rest in the window the
    next list's end ranks: each hit that existed at the first page is still reached, once."""
    args = {"initiatives": [P], "text": "lantern", "limit": 4}
    first = _search(windowed, args)
    before = set(_search_whole(windowed, {**args, "limit": 50}))
    assert len(before) == MATCHING

    def write(page: int) -> None:
        if page == 1:
            for i in range(SMALL_WINDOW + 3):
                windowed.note(parse("note", {"initiative": P, "text": f"lantern lantern lantern lantern late {i}"}))

    pages = [first]
    while pages[-1].continuation is not None:
        assert len(pages) < 4 * MATCHING, "paging did not end"
        write(len(pages))
        pages.append(_search(windowed, pages[-1].continuation.next_arguments))
    seen = [h.node.id for page in pages for h in page.hits]
    assert len(seen) == len(set(seen)), "no hit twice"
    assert before <= set(seen), "no hit of the first page's vault skipped"
    assert pages[-1].coverage.complete is True and pages[-1].total >= MATCHING


def test_a_page_that_ends_at_the_window_still_continues(windowed: Service) -> None:
    """Ten hits a page and a window of ten: the first page ends exactly at the ranked list's end."""
    first = _search(windowed, {"initiatives": [P], "text": "lantern", "limit": SMALL_WINDOW})
    assert len(first.hits) == SMALL_WINDOW and first.total == MATCHING
    assert first.continuation is not None and first.coverage.complete is False


# --- superseded matches, lists ranked again, audit events (decision 490's review) ---------------


def _superseded_every_third(service: Service) -> None:
    """A later note supersedes every third matching note; the successors do not say "lantern"."""
    from kaeru.mcp.server import build_server

    run = build_server(service).registry.run
    texts = [f"lantern number {i} lit" + " lantern" * (i % 4) for i in range(MATCHING)]
    ids = [run("note", {"initiative": P, "text": text})["data"]["primary"]["id"] for text in texts]
    for i in range(0, MATCHING, 3):
        run("note", {"initiative": P, "text": f"torch replacing {i}", "link_to": ids[i], "edge_type": "supersedes"})


@pytest.mark.parametrize("cleared", ["never", "once", "always"])
@pytest.mark.parametrize("limit", [3, 4, 10])
def test_successors_of_superseded_matches_page_in_rank_order_held_or_ranked_again(
    service: Service, monkeypatch: pytest.MonkeyPatch, limit: int, cleared: str
) -> None:
    """With superseded matches the successors join the list where their matches ranked. A list
    that a server no longer holds (evicted, or another server behind a balancer) is ranked again
    and must be the same list: the first window placed the successors of matches ranked past it at
    its end, the rerun's larger window where they belong, so a page after the rerun repeated a hit
    and the last said complete with one never shown."""
    _superseded_every_third(service)
    monkeypatch.setattr(search, "WINDOW", SMALL_WINDOW)
    args = {"initiatives": [P], "text": "lantern", "limit": limit}

    def evict(page: int) -> None:
        if cleared == "always" or (cleared == "once" and page == 4):
            service.rt.cursor_lists.clear()

    pages = _pages(service, args, between=evict)
    seen = [h.node.id for page in pages for h in page.hits]
    whole = _search_whole(service, {**args, "limit": 50})
    assert len(whole) == MATCHING, "18 current matches and the 9 successors of the superseded ones"
    assert seen == whole, "every hit once, in the order of one list ranked whole"
    assert all(page.total == MATCHING for page in pages)
    assert pages[-1].coverage.complete is True and pages[-1].continuation is None


@pytest.mark.parametrize("limit", [3, 10])
def test_audit_events_page_the_same_held_or_ranked_again_and_say_older_records_are_not_read(
    windowed: Service, limit: int
) -> None:
    """Audit events come after the node hits, from the newest `WINDOW` audit records whatever the
    window ranked: a list ranked again on another server is the one the first server held. The
    scope holds more audit records than that, so every page says at least one more may match
    (`{hits, 1, window}`) and none claims to be complete."""
    # "note" is in every note's audit record (its operation), "lantern" in the notes.
    types = {"types": ["episode", "audit_event"]}
    args = {"initiatives": [P], "text": "lantern note", "match": "any", "limit": limit, "filters": types}
    held = _pages(windowed, args)
    again = _pages(windowed, args, between=lambda _: windowed.rt.cursor_lists.clear())
    ids = [[h.node.id for h in page.hits] for page in held]
    assert ids == [[h.node.id for h in page.hits] for page in again]
    assert [p.total for p in held] == [p.total for p in again]
    seen = [i for page in ids for i in page]
    kinds = [h.node.node_type.value for page in held for h in page.hits]
    assert len(seen) == len(set(seen)) and kinds == ["episode"] * MATCHING + ["audit_event"] * SMALL_WINDOW
    for page in held + again:
        assert ("hits", 1, "window") in _said(page) and page.coverage.complete is False
    assert held[-1].continuation is None and held[-1].total == MATCHING + SMALL_WINDOW


def test_one_deep_list_does_not_push_out_every_other_callers_list() -> None:
    """The cache holds `CACHED_ITEMS` ids in all: one search paged to that depth took all of it,
    and every other caller's next page had to rank its query again."""
    from kaeru.service.cursors import CACHED_ITEMS, LIST_ITEMS, ResultLists

    lists = ResultLists(CACHED_ITEMS)
    other = [f"{i:036d}" for i in range(100)]
    lists.put("other", other)
    lists.put("deep", [f"{i:036d}" for i in range(CACHED_ITEMS)])
    assert lists.get("other") == other and lists.get("deep") is None
    lists.put("deep", [f"{i:036d}" for i in range(LIST_ITEMS)])
    assert lists.get("other") == other and lists.get("deep") is not None


def test_a_list_grown_by_two_pages_at_once_is_served_as_kept() -> None:
    """Two pages at one list's end both extend it; the first kept stays, and the second page is
    served from it (its token names it), not from its own version."""
    from kaeru.service.cursors import ResultLists

    lists = ResultLists(1000)
    first, second = ["a" * 36, "b" * 36, "c" * 36], ["a" * 36, "b" * 36, "d" * 36]
    assert lists.grow("list", first) == first
    assert lists.grow("list", second) == first
    assert lists.get("list") == first
