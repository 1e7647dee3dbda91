"""The viewer on a node thousands of notes link to, and on long walks: what a page says it left
out must be one count, true, and the way to the latest entries must reach them.

- A node's "latest changes" walked its history's pages from the first, at most 200: a history of
  more pages stopped short and offered "latest changes" again, landing on the same page.
- The graph centred on a hub drew `read`'s newest 100 links and said "1 edges lead to nodes not
  drawn" of 53,000.
- A hub's node page said "not shown: 12900 edges (limit)" and "40 more edges not listed".
- The timeline's newest page said "200 before (limit), 1 before (window)" of 24,000 earlier nodes.

In process, on both backends (as tests/web/test_viewer_latest.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape

import pytest
from starlette.testclient import TestClient

from kaeru.service import Service
from kaeru.service.read import READ_EDGES
from kaeru.storage.base import Store
from kaeru.web.graph import LIMIT
from kaeru.web.pages import EDGES_SHOWN
from tests.backends import VaultSpec
from tests.web.inprocess import viewer_client, written

ADMIN = "hub-counts-admin-token-d1"
#: Links to the hub: more than `read` lists.
SPOKES = READ_EDGES + 110


@pytest.fixture
def client(service: Service, store: Store, vault: VaultSpec) -> Iterator[TestClient]:
    with viewer_client(service, store, vault, ADMIN) as asking:
        yield asking


def _get(client: TestClient, where: str) -> str:
    answer = client.get(where)
    assert answer.status_code == 200, answer.text
    return answer.text


def _link(page: str, anchor: str) -> str | None:
    found = re.search(rf'<a id="{anchor}" href="([^"]+)">', page)
    return unescape(found.group(1)) if found else None


@pytest.fixture
def hub(service: Service) -> str:
    """A note `SPOKES` other notes link to."""
    hub = written(service, "note", {"initiative": "hub", "name": "The hub", "text": "everyone cites this"})
    for n in range(SPOKES):
        written(service, "note", {"initiative": "hub", "text": f"spoke {n}", "link_to": {"id": hub}})
    return hub


def test_a_hubs_page_counts_the_links_it_does_not_list_once(client: TestClient, hub: str) -> None:
    page = _get(client, f"/ui/node?i=hub&id={hub}")
    assert "edges (limit)" not in page, "the links not listed are said once, in the list"
    said = re.findall(r'<li class="coverage">(\d+) more edges not listed', page)
    assert said == [str(SPOKES - EDGES_SHOWN)]


def test_the_graph_centred_on_a_hub_counts_the_links_it_does_not_draw(client: TestClient, hub: str) -> None:
    graph = _get(client, f"/ui/graph?i=hub&focus={hub}")
    left_out = re.search(r'<p class="coverage" id="not-shown">not shown: ([^<]*)</p>', graph)
    assert left_out is not None
    drawn = LIMIT - 1  # the hub and 99 spokes, each spoke's link to it drawn
    assert f"at least {SPOKES - drawn} edges are not drawn" in left_out.group(1), left_out.group(1)
    assert "at least 1 more nodes" in left_out.group(1)


def test_the_timelines_newest_page_says_its_earlier_nodes_as_a_lower_bound(
    client: TestClient, service: Service
) -> None:
    for n in range(260):
        written(service, "note", {"initiative": "walk", "text": f"entry number {n}"})
    latest = _get(client, "/ui/timeline?i=walk&latest=1")
    said = re.search(r'<p class="coverage">not shown: ([^<]*)</p>', latest)
    assert said is not None and said.group(1) == "200+ earlier", said


def test_latest_changes_reach_the_end_of_a_history_of_hundreds_of_pages(client: TestClient, service: Service) -> None:
    long = "word " * 4000  # each revision's texts fill a history page: one entry a page
    revisions = 205
    note = written(service, "note", {"initiative": "log", "name": "Long log", "text": f"Release 0. {long}"})
    for n in range(1, revisions):
        written(service, "revise", {"initiative": "log", "node": note, "patch": {"body": f"Release {n}. {long}"}})
    first = _get(client, f"/ui/node?i=log&id={note}")
    latest = _get(client, _link(first, "trail-newest") or "")
    listed = re.findall(r'<li class="revision" data-revision="(\d+)-', latest)
    assert listed == [str(revisions)], "the latest change is on the page the link opens"
    shown = re.search(r'<span id="trail-shown">([^<]*)</span>', latest)
    assert shown is not None and shown.group(1) == f"entries {revisions}–{revisions} of {revisions}"
    assert _link(latest, "trail-newest") is None and _link(latest, "trail-next") is None
