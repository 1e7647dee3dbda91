"""Paging a read writes nothing (decision 15.P4): a long result list lives in the server process's
bounded memory, not in the vault, so `search` and `recall` never take the write lock; a token whose
list the process no longer holds is answered by ranking again and continuing at its position."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.service.outcomes import ReadOutcome
from tests.backends import VaultSpec

P = "paging-lab"
NOTES = 60
#: What a kept result list may hold an id, in bytes: the id's 36 characters joined into one string
#: with the others, and the list's share of its entry (decision 97; ~96 as a tuple of strings).
KEPT_BYTES_AN_ID = 64


def _ids(result: ReadOutcome) -> list[str]:
    return [h.node.id for h in result.hits]


@pytest.fixture
def filled(service: Service) -> Service:
    for n in range(NOTES):
        service.note(parse("note", {"initiative": P, "text": f"the heron number {n} waits by pond {n % 7}"}))
    return service


def _pages(service: Service, call: Any, args: dict[str, Any]) -> Iterator[ReadOutcome]:
    for _ in range(50):
        result = call(parse(call.__name__, args))
        yield result
        if result.continuation is None:
            return
        args = result.continuation.next_arguments


def test_a_list_this_process_no_longer_holds_is_ranked_again_at_the_same_position(filled: Service) -> None:
    args = {"initiatives": [P], "text": "heron", "limit": 10}
    whole = [i for page in _pages(filled, filled.search, args) for i in _ids(page)]
    assert len(whole) == NOTES and len(set(whole)) == NOTES

    first = filled.search(parse("search", args))
    assert first.continuation is not None
    second = filled.search(parse("search", first.continuation.next_arguments))
    assert _ids(second) == whole[10:20] and not second.issues
    filled.rt.cursor_lists.clear()  # as another server process on the vault, or a list evicted
    assert second.continuation is not None
    third = filled.search(parse("search", second.continuation.next_arguments))
    assert _ids(third) == whole[20:30]
    assert [(i.code, i.field) for i in third.issues] == [("cursor_invalid", "cursor")]
    assert third.continuation is not None
    rest = [i for page in _pages(filled, filled.search, third.continuation.next_arguments) for i in _ids(page)]
    assert whole[:30] + rest == whole

    recall_args = {"initiatives": [P], "query": "heron", "limit": 10, "token_budget": 20000}
    ranked = [i for page in _pages(filled, filled.recall, recall_args) for i in _ids(page)]
    first_recall = filled.recall(parse("recall", recall_args))
    assert first_recall.continuation is not None
    filled.rt.cursor_lists.clear()
    again = filled.recall(parse("recall", first_recall.continuation.next_arguments))
    assert _ids(again) == ranked[10:20]
    assert [i.code for i in again.issues] == ["cursor_invalid"]


def test_a_kept_result_list_holds_little_more_than_its_ids_characters(filled: Service) -> None:
    """A server runs all day and keeps up to `CACHED_ITEMS` ids for paging: each kept list is one
    string of its ids back to back, and a page split from it is the page the list ranked."""
    args = {"initiatives": [P], "text": "heron", "limit": 10}
    whole = [i for page in _pages(filled, filled.search, args) for i in _ids(page)]
    searches = 40
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(searches):  # each first page keeps a list of its own
            assert filled.search(parse("search", args)).continuation is not None
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held / (searches * NOTES) < KEPT_BYTES_AN_ID, f"{held / (searches * NOTES):.0f} bytes an id kept"
    first = filled.search(parse("search", args))
    assert first.continuation is not None
    assert _ids(filled.search(parse("search", first.continuation.next_arguments))) == whole[10:20]


def test_paging_needs_no_write_lock(filled: Service, vault: VaultSpec) -> None:
    """Another process holds the SQLite write lock the whole time: every page still answers at once
    (storing the list in the vault waited for the lock, then failed `unavailable`)."""
    if vault.backend != "sqlite":
        pytest.skip("the write lock of a SQLite file; PostgreSQL readers and writers never share one")
    import apsw

    holder = apsw.Connection(str(vault.settings().sqlite_path))
    # The store's checkpointer takes the write lock for a moment after the fixture's writes: wait
    # for it as any writer would, instead of failing "database is locked" at once.
    holder.set_busy_timeout(10_000)
    list(holder.execute("BEGIN IMMEDIATE"))
    try:
        for call, args in (
            (filled.search, {"initiatives": [P], "text": "heron", "limit": 5}),
            (filled.recall, {"initiatives": [P], "query": "heron", "limit": 5, "token_budget": 20000}),
        ):
            pages = list(_pages(filled, call, args))
            assert len(pages) > 2
            assert len({i for page in pages for i in _ids(page)}) == sum(len(page.hits) for page in pages)
    finally:
        list(holder.execute("ROLLBACK"))
        holder.close()
