"""`search` past its window: a word matching more than `WINDOW` nodes is paged through all of
them — the page that reaches the ranked window's end ranks the next — and every page counts them
all, on both backends (at the real window; `test_search_paging_window` lowers it).

An agent that searches a word every note holds must learn how many there are (`total`, the rest
counted as `limit`: the next pages hold them), and the pages it is given must hold each match
exactly once and then stop, saying complete."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kaeru.api.requests import parse
from kaeru.export import amg
from kaeru.export.vault_io import read_archive, write_archive
from kaeru.service import Service
from kaeru.service.search import WINDOW
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from tests.backends import drop_vault, new_vault

#: Past the window by a few, so the omitted count is exact and small.
OVER = 7
P = "windowed"


@pytest.fixture(scope="module")
def archive_lines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """`WINDOW + OVER` notes holding the word `lantern`, and one that does not, written once by
    `note` on SQLite and exported: each backend's vault imports them (a bulk write) instead of
    taking ~5,000 `note` calls."""
    spec = new_vault("sqlite", tmp_path_factory.mktemp("window"))
    store = open_store(spec.settings())
    try:
        service = Service(store, spec.settings())
        for i in range(WINDOW + OVER):
            service.note(parse("note", {"initiative": P, "text": f"lantern number {i} lit"}))
        service.note(parse("note", {"initiative": P, "text": "a candle, unlit"}))
        yield list(read_archive(store).lines())
    finally:
        store.close()
        drop_vault(spec)


@pytest.fixture
def filled(store: Store, archive_lines: list[str]) -> Store:
    write_archive(store, amg.parse(archive_lines))
    return store


def test_a_word_past_the_window_pages_through_every_match_and_counts_them(filled: Store, service: Service) -> None:
    args = {"initiatives": [P], "text": "lantern", "limit": 50}
    first = service.search(parse("search", args))
    assert first.total == WINDOW + OVER
    assert first.coverage.complete is False
    assert [(o.section, o.count, o.reason) for o in first.coverage.omitted] == [("hits", WINDOW + OVER - 50, "limit")]

    seen: list[str] = []
    result = first
    for _ in range(2 * WINDOW // 50):  # a page may defer hits to the next (its budget)
        seen.extend(h.node.id for h in result.hits)
        assert result.total == WINDOW + OVER
        if result.continuation is None:
            break
        result = service.search(parse("search", result.continuation.next_arguments))
    else:
        raise AssertionError("paging did not end")
    assert len(seen) == WINDOW + OVER and len(set(seen)) == WINDOW + OVER  # each match once, then the end
    assert result.coverage.complete is True and result.coverage.omitted == []
    assert all("lantern" in (h.node.body or "") for h in first.hits)

    inside = service.search(parse("search", {"initiatives": [P], "text": "candle"}))  # beside it, a word
    assert inside.total == 1 and inside.coverage.complete is True  # the window does not touch
    assert not [o for o in inside.coverage.omitted if o.reason == "window"]
