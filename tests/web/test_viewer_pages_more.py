"""The recall page said "not shown: 47 hits (limit)" and led to none of them; the reviews page printed a
contradicting node's body as if it were a review's reason; the recall box repeated the search box's
words (decision 469). In process, on both backends: the viewer as `kaeru serve --http` mounts it,
asked over ASGI with the admin's bearer token (as tests/web/test_viewer_paging_and_refusals.py
does)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape

import pytest
from starlette.testclient import TestClient

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.web.inprocess import hit_ids, viewer_client, written

ADMIN = "pages-more-admin-token-d1"
#: More notes than a page of recall holds (10), over more than two pages.
NOTES = 25


@pytest.fixture
def client(service: Service, store: Store, vault: VaultSpec) -> Iterator[TestClient]:
    with viewer_client(service, store, vault, ADMIN) as asking:
        yield asking


def _next(page: str) -> str | None:
    found = re.search(r'<a id="next-page" href="([^"]+)">', page)
    return unescape(found.group(1)) if found else None


def test_recall_pages_on_to_every_hit(client: TestClient, service: Service) -> None:
    made = [
        written(service, "note", {"initiative": "birds", "text": f"the heron waits, day {n}"}) for n in range(NOTES)
    ]
    where: str | None = "/ui/recall?i=birds&q=heron"
    pages: list[str] = []
    while where is not None and len(pages) <= NOTES:
        answer = client.get(where)
        assert answer.status_code == 200, answer.text
        pages.append(answer.text)
        where = _next(answer.text)
    assert f'id="total">{NOTES} hit(s)' in pages[0]
    assert len(pages) > 1, "a recall longer than its page links to the next"
    shown = [node for page in pages for node in hit_ids(page)]
    assert sorted(shown) == sorted(made), "every hit once, over the pages"


def test_a_contradicting_node_is_named_not_read_as_a_review_reason(client: TestClient, service: Service) -> None:
    claim = written(service, "note", {"initiative": "facts", "name": "Herons are fish", "text": "Herons are fish."})
    counter = written(
        service, "note", {"initiative": "facts", "name": "Herons are birds", "text": "Herons have feathers."}
    )
    edge = {"initiative": "facts", "from": {"id": counter}, "to": {"id": claim}, "edge_type": "contradicts"}
    assert build_server(service).registry.run("link", {**edge, "weight": 0.9})["state"] != "rejected"
    review = written(
        service, "review", {"initiative": "facts", "action": "flag", "target": claim, "reason": "check it"}
    )
    page = client.get("/ui/reviews?i=facts")
    assert page.status_code == 200, page.text
    reasons = page.text.split(f'data-id="{claim}"', 1)[1].split('<ul class="reasons">', 1)[1].split("</ul>", 1)[0]
    items = re.findall(r'<li class="(reason[^"]*)">(.*?)</li>', reasons, re.S)
    contradiction = [inside for kind, inside in items if kind == "reason contradiction"]
    assert len(contradiction) == 1 and contradiction[0].startswith("contradicted by ")
    assert f'data-id="{counter}"' in contradiction[0] and "Herons are birds" in contradiction[0]
    assert "Herons have feathers" not in reasons, "its body is not a review's reason"
    reviewed = [inside for kind, inside in items if kind == "reason"]
    assert len(reviewed) == 1 and f"id={review}" in reviewed[0] and reviewed[0].endswith(": check it")


def test_each_box_shows_its_own_words(client: TestClient, service: Service) -> None:
    written(service, "note", {"initiative": "birds", "text": "the heron waits by the weir"})

    def boxes(where: str) -> tuple[str, str]:
        page = client.get(where)
        assert page.status_code == 200, page.text
        search = re.search(r'id="search-box"[^>]*value="([^"]*)"', page.text)
        recall = re.search(r'id="recall-box"[^>]*value="([^"]*)"', page.text)
        assert search is not None and recall is not None
        return search.group(1), recall.group(1)

    assert boxes("/ui/search?i=birds&q=weir") == ("weir", "")
    assert boxes("/ui/recall?i=birds&q=heron") == ("", "heron")
    assert boxes("/ui/board?i=birds&q=weir") == ("", "")
