"""What a person meets in the viewer past its first page, and what it refuses: the timeline's and a
search's "next page" links lead to the rest (each item once), a board column longer than it shows
says how many more there are, an empty search or recall box asks for words, a page without an
initiative or of a node there is not says so with its status, a filter that hides nodes says how
many; a read sent from another site's page, and an edit form larger than the viewer reads, are
refused. In process: the viewer as `kaeru serve --http` mounts it (`mcp/ui.viewer`, over the
server's own tools and token check), asked over ASGI — no server is started."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape

import pytest
from starlette.testclient import TestClient

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.web.guard import BODY_LIMIT
from kaeru.web.pages import CARDS
from tests.backends import VaultSpec
from tests.web.inprocess import BASE, hit_ids, viewer_client

ADMIN = "paging-admin-token-7q"
#: One more open task than a page of the timeline, of a search and a board column holds.
TASKS = CARDS + 1


@pytest.fixture
def client(service: Service, store: Store, vault: VaultSpec) -> Iterator[TestClient]:
    with viewer_client(service, store, vault, ADMIN) as asking:
        yield asking


@pytest.fixture
def tasks(service: Service) -> list[str]:
    """`TASKS` open tasks in initiative `many`, each holding the word "flaky"."""
    made = []
    for n in range(TASKS):
        outcome, _ = service.task(parse("task", {"initiative": "many", "text": f"fix flaky test number {n}"}))
        assert outcome.primary is not None
        made.append(outcome.primary.id)
    return made


def _next(page: str) -> str | None:
    found = re.search(r'<a id="next-page" href="([^"]+)">([^<]*)</a>', page)
    return unescape(found.group(1)) if found else None


def test_the_timeline_and_a_search_page_on_and_a_board_says_what_it_leaves_out(
    client: TestClient, tasks: list[str]
) -> None:
    for first_url, link_text in (("/ui/timeline?i=many", "later →"), ("/ui/search?i=many&q=flaky", "more hits →")):
        first = client.get(first_url)
        assert first.status_code == 200, first.text
        assert link_text in first.text
        following = _next(first.text)
        assert following is not None and "cursor=" in following, first_url
        rest = client.get(following)
        assert rest.status_code == 200, rest.text
        assert _next(rest.text) is None, "the last page links to no further one"
        shown = hit_ids(first.text) + hit_ids(rest.text)
        assert sorted(shown) == sorted(tasks), (first_url, len(shown))
    assert f"{TASKS} hit(s) for “flaky”" in client.get("/ui/search?i=many&q=flaky").text
    # A board column shows `CARDS` tasks and says how many more there are.
    board = client.get("/ui/board?i=many")
    assert board.status_code == 200, board.text
    column = board.text.split('data-status="open"', 1)[1].split('<div class="column"', 1)[0]
    assert column.count('<li class="card"') == CARDS
    assert f'<li class="coverage">{TASKS - CARDS} more not shown</li>' in column


def test_empty_boxes_ask_for_words_and_missing_things_are_named(client: TestClient, service: Service) -> None:
    made, _ = service.note(parse("note", {"initiative": "here", "text": "the heron waits by the weir"}))
    assert made.primary is not None
    search = client.get("/ui/search?i=here&q=++")
    assert search.status_code == 200 and "type words to look for" in search.text
    recall = client.get("/ui/recall?i=here")
    assert recall.status_code == 200 and "say what you need" in recall.text
    for view in ("timeline", "board", "graph", "search"):
        unnamed = client.get(f"/ui/{view}")
        assert unnamed.status_code == 400 and "name an initiative (?i=NAME)" in unnamed.text, view
    gone = client.get("/ui/graph?i=here&focus=01900000-0000-7000-8000-000000000000")
    assert gone.status_code == 404 and 'data-code="not_found"' in gone.text, gone.text
    unknown = client.get("/ui/graph?i=nowhere")
    assert unknown.status_code == 404 and "nowhere" in unescape(unknown.text)


def test_a_layer_filter_says_how_many_nodes_it_hides(client: TestClient, service: Service) -> None:
    for text, layer in (("kept in the hot layer", "hot"), ("kept warm", "warm"), ("also warm", "warm")):
        service.note(parse("note", {"initiative": "layers", "text": text, "options": {"layer": layer}}))
    page = client.get("/ui/graph?i=layers&layer=hot")
    assert page.status_code == 200, page.text
    assert "2 nodes hidden by the filters" in unescape(page.text)
    assert 'name="layer" value="hot" checked' in page.text


def test_a_read_from_another_sites_page_is_refused(client: TestClient) -> None:
    refused = client.get("/ui/", headers={"Origin": "http://evil.example"})
    assert refused.status_code == 403 and "Invalid Origin header" in refused.text
    own = client.get("/ui/", headers={"Origin": BASE})
    assert own.status_code == 200


def test_an_edit_form_sent_in_chunks_past_the_limit_is_refused(client: TestClient, service: Service) -> None:
    """A form that declares no length (chunked) is counted as it comes and cut at the limit: 413,
    and nothing is changed."""
    made, _ = service.note(parse("note", {"initiative": "big", "text": "a node the form names"}))
    assert made.primary is not None
    node = made.primary.id
    form = f"i=big&op=layer&node={node}&layer=cold&request_id=ui-1&back=/ui/&pad=".encode()

    def chunks() -> Iterator[bytes]:
        yield form
        for _ in range(BODY_LIMIT // 8192 + 1):
            yield b"x" * 8192

    refused = client.post(
        "/ui/edit",
        content=chunks(),
        headers={"Origin": BASE, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert refused.status_code == 413 and "Refused: too large" in refused.text, refused.text
    read = service.read(parse("read", {"initiative": "big", "node": {"id": node}}))
    assert read.hits[0].node.layer.value == "warm", "nothing was changed"
