"""A board column lists its newest tasks a page at a time: a task long overdue was the column's oldest,
past its first page, while the board said "1 overdue" above columns that marked none and "11 more not
shown" led nowhere (decision 469). Now a column's overdue tasks come first, marked, and its "more"
link pages the rest through the search's continuation, each task once. In process, on both
backends: the viewer as `kaeru serve --http` mounts it, asked over ASGI with the admin's bearer
token (as tests/web/test_viewer_paging_and_refusals.py does)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape

import pytest
from starlette.testclient import TestClient

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.web.pages import CARDS
from tests.backends import VaultSpec
from tests.web.inprocess import viewer_client

ADMIN = "board-overdue-admin-token-d1"
#: Tasks newer than the overdue one: a first page of the column, and some.
NEWER = CARDS + 10
CARD = re.compile(r'<li class="card" id="card-[^"]*" tabindex="-1" data-id="([^"]+)">(.*?)</form></li>', re.S)
MORE = re.compile(r'<a class="more" href="([^"]+)">more')


@pytest.fixture
def client(service: Service, store: Store, vault: VaultSpec) -> Iterator[TestClient]:
    with viewer_client(service, store, vault, ADMIN) as asking:
        yield asking


def _column(page: str, status: str) -> str:
    return page.split(f'<div class="column" data-status="{status}">', 1)[1].split('<div class="column"', 1)[0]


def test_an_old_overdue_task_heads_its_column_and_more_pages_the_rest(client: TestClient, service: Service) -> None:
    run = build_server(service).registry.run

    def task(**args: str) -> str:
        made = run("task", {"initiative": "chores", **args})
        assert made["state"] != "rejected", made
        node: str = made["data"]["primary"]["id"]
        return node

    late = task(name="Renew the lease", text="Renew the lease.", due="2020-01-01")
    newer = [task(name=f"chore {n:02d}", text=f"Chore number {n}.") for n in range(NEWER)]
    done = task(name="Sweep", text="Sweep the yard.", status="done")

    first = client.get("/ui/board?i=chores")
    assert first.status_code == 200, first.text
    assert '<p class="coverage">1 overdue</p>' in first.text
    open_column = _column(first.text, "open")
    cards = CARD.findall(open_column)
    assert cards[0][0] == late, "the overdue task comes first in its column"
    assert [node for node, inside in cards if '<span class="state">overdue</span>' in inside] == [late]
    assert len(cards) == CARDS + 1 and len({node for node, _ in cards}) == len(cards)
    shown_first = {node for node, _ in cards}
    assert f'<li class="coverage">{NEWER + 1 - len(cards)} more not shown</li>' in open_column
    assert [node for node, _ in CARD.findall(_column(first.text, "done"))] == [done]

    # "more" pages the open column on, the other columns staying at their first page.
    links = MORE.findall(open_column)
    assert len(links) == 1 and not MORE.findall(_column(first.text, "done"))
    rest = client.get(unescape(links[0]))
    assert rest.status_code == 200, rest.text
    paged = _column(rest.text, "open")
    later = [node for node, _ in CARD.findall(paged)]
    assert f"tasks {CARDS + 1}–{NEWER + 1} of {NEWER + 1}, newest first" in paged
    assert not MORE.findall(paged), "the last page links to no further one"
    assert late in later, "the column's own order reaches the overdue task too"
    assert shown_first | set(later) == {late, *newer}
    assert [node for node, _ in CARD.findall(_column(rest.text, "done"))] == [done]
