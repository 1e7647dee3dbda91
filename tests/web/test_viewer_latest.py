"""The viewer's way to recent memory (decision 473): the timeline and the graph's windows started at
the oldest node — a 5,000-node initiative's newest were 100 "later →" clicks away — with no since/until
box, and a node's history showed its oldest entries with no way to its latest change but page after
page. In process, on both backends: the viewer as `kaeru serve --http` mounts it, asked over ASGI
with the admin's bearer token (as tests/web/test_viewer_paging_and_refusals.py does)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape

import pytest
from starlette.testclient import TestClient

from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.web.graph import LIMIT
from kaeru.web.pages import TRAIL_PAGE
from tests.backends import VaultSpec
from tests.web.inprocess import hit_ids, viewer_client, written

ADMIN = "latest-admin-token-d1"
#: A timeline page's items, as its page says ("50 a page").
PAGE = 50
#: More nodes than two timeline pages and one graph window hold.
NODES = max(2 * PAGE, LIMIT) + 5


@pytest.fixture
def client(service: Service, store: Store, vault: VaultSpec) -> Iterator[TestClient]:
    with viewer_client(service, store, vault, ADMIN) as asking:
        yield asking


def _link(page: str, anchor: str) -> str | None:
    found = re.search(rf'<a id="{anchor}" href="([^"]+)">', page)
    return unescape(found.group(1)) if found else None


def _get(client: TestClient, where: str | None) -> str:
    assert where is not None
    answer = client.get(where)
    assert answer.status_code == 200, answer.text
    return answer.text


@pytest.fixture
def walk(service: Service) -> list[str]:
    """`NODES` notes in initiative `walk`, oldest first."""
    return [written(service, "note", {"initiative": "walk", "text": f"entry number {n}"}) for n in range(NODES)]


def test_the_timeline_links_to_its_latest_page_and_back_through_earlier_ones(
    client: TestClient, walk: list[str]
) -> None:
    first = _get(client, "/ui/timeline?i=walk")
    assert f"{PAGE} a page" in first
    assert hit_ids(first) == walk[:PAGE], "the first page is still the oldest"
    latest = _get(client, _link(first, "latest-page"))
    assert hit_ids(latest) == walk[-PAGE:], "the latest page ends with the newest node"
    assert _link(latest, "next-page") is None and _link(latest, "latest-page") is None
    earlier = _get(client, _link(latest, "earlier-page"))
    assert hit_ids(earlier) == walk[-2 * PAGE : -PAGE], "the page before holds the nodes just before, none twice"
    onward = _get(client, _link(earlier, "next-page"))
    assert hit_ids(onward) == walk[-PAGE:], "its later page leads back to the newest"
    oldest = _get(client, _link(earlier, "first-page"))
    assert hit_ids(oldest) == walk[:PAGE]


def test_the_timeline_shows_a_since_until_window(client: TestClient, service: Service) -> None:
    days = {"2021-03-01": "", "2022-03-01": "", "2023-03-01": ""}
    for day in days:
        at = f"{day}T12:00:00Z"
        days[day] = written(service, "note", {"initiative": "dated", "text": f"held on {day}", "occurred_at": at})
    page = _get(client, "/ui/timeline?i=dated&since=2022-01-01&until=2022-12-31")
    assert hit_ids(page) == [days["2022-03-01"]]
    assert 'name="since" id="since" value="2022-01-01"' in page and 'name="until" id="until" value="2022-12-31"' in page
    latest = _get(client, "/ui/timeline?i=dated&until=2022-12-31&latest=1")
    assert hit_ids(latest) == [days["2021-03-01"], days["2022-03-01"]], "the latest page within the window"


def test_the_graph_links_to_its_newest_window(client: TestClient, walk: list[str]) -> None:
    first = _get(client, "/ui/graph?i=walk")
    assert f'data-id="{walk[-1]}"' not in first, "the first window holds the oldest nodes"
    newest = _get(client, _link(first, "latest-window"))
    drawn = set(re.findall(r'<li data-id="([^"]+)">', newest))
    assert drawn == set(walk[-LIMIT:]), "the newest window draws the newest nodes"
    assert _link(newest, "next-window") is None and _link(newest, "first-window") is not None


def test_a_node_page_links_to_its_historys_latest_changes(client: TestClient, service: Service) -> None:
    note = written(service, "note", {"initiative": "log", "name": "Release log", "text": "Release 0."})
    revisions = TRAIL_PAGE + 5
    for n in range(1, revisions):
        written(service, "revise", {"initiative": "log", "node": note, "patch": {"body": f"Release {n}."}})
    page = _get(client, f"/ui/node?i=log&id={note}")
    assert f"<ins>{revisions - 1}.</ins>" not in page
    latest = _get(client, _link(page, "trail-newest"))
    assert f"<ins>{revisions - 1}.</ins>" in latest, "the latest change is on the page the link opens"
    shown = re.search(r'<span id="trail-shown">([^<]*)</span>', latest)
    assert shown is not None and shown.group(1) == f"entries {TRAIL_PAGE + 1}–{revisions} of {revisions}"
    assert _link(latest, "trail-next") is None and _link(latest, "trail-first") is not None
