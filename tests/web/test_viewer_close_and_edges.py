"""The node page's edit forms and edge list, in process (the viewer as `kaeru serve --http` mounts
it, asked over ASGI — no server started): closing a node's reviews with a resolution records the
resolution, trimmed, and leaves no review open; a form naming an edit the page never
offers is refused with 400 and changes nothing; a node with more edges than the page lists says how
many it leaves out, and links to them all (tests/web/test_viewer_every_item.py follows the link). Both backends. And a revision that appends a long passage is shown added, with
no empty removal beside it."""

from __future__ import annotations

from html import unescape
from urllib.parse import urlencode

from starlette.testclient import TestClient

from kaeru.web.node import DIFF_WORDS, _diff
from kaeru.web.pages import EDGES_SHOWN
from tests.web.inprocess import BASE
from tests.working.conftest import Call

FORM = {"Origin": BASE, "Content-Type": "application/x-www-form-urlencoded"}


def _post(client: TestClient, fields: dict[str, str]) -> tuple[int, str, str]:
    answer = client.post("/ui/edit", content=urlencode(fields).encode(), headers=FORM, follow_redirects=False)
    return answer.status_code, answer.headers.get("location", ""), answer.text


def test_closing_reviews_with_a_resolution_records_it(client: TestClient, call: Call) -> None:
    node = call("note", initiative="site", name="cache-ttl", text="pages are cached for an hour")["data"]["primary"]
    call("review", initiative="site", action="flag", target={"id": node["id"]}, reason="still true?")
    back = f"/ui/node?i=site&id={node['id']}"
    fields = {"i": "site", "op": "close", "node": node["id"], "resolution": "  checked: still an hour \n", "back": back}
    status, location, _ = _post(client, fields)
    assert status == 303 and location.startswith(back), location
    assert "close: applied" in unescape(client.get(location).text)
    found = call("search", initiatives=["site"], text="checked", filters={"current": "all"})["data"]["hits"]
    assert [h["body"] for h in found] == ["checked: still an hour"]
    state = call("current_state", initiative="site", node={"id": node["id"]})["data"]
    assert state["status"] == "current"
    reopened = call("review", initiative="site", action="close", target={"id": node["id"]})
    assert reopened["state"] == "rejected" and reopened["issues"][0]["code"] == "not_found", "no review left open"


def test_an_edit_the_page_never_offers_is_refused_and_changes_nothing(client: TestClient, call: Call) -> None:
    node = call("note", initiative="site", name="kept", text="left as it is")["data"]["primary"]
    status, _, text = _post(client, {"i": "site", "op": "forget", "node": node["id"], "back": "/ui/"})
    assert status == 400 and text == "unknown edit"
    [hit] = call("read", initiative="site", node={"id": node["id"]})["data"]["hits"]
    assert hit["revision"] == node["revision"]


def test_a_node_with_more_edges_than_the_page_lists_says_how_many_are_left_out(client: TestClient, call: Call) -> None:
    hub = call("note", initiative="site", name="hub", text="many notes point here")["data"]["primary"]["id"]
    for n in range(EDGES_SHOWN + 2):
        call("note", initiative="site", name=f"spoke {n}", text=f"spoke number {n}", link_to={"id": hub})
    page = client.get(f"/ui/node?i=site&id={hub}")
    assert page.status_code == 200, page.text
    assert page.text.count('<li class="edge-row">') == EDGES_SHOWN
    assert '<li class="coverage">2 more edges not listed — <a class="every-link" href=' in page.text


def test_a_long_passage_appended_is_shown_added_with_nothing_removed() -> None:
    before = "Release notes for the spring build."
    added = " ".join(f"change{i}" for i in range(DIFF_WORDS + 50))
    html = _diff(before, f"{before} {added}")
    assert "<del>" not in html
    assert html.startswith(before) and "<ins>change0 change1" in html
    assert "50 more words</span></ins>" in html
