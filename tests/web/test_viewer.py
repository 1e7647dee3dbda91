"""The web viewer (issue 19) in headless Chromium against a real `kaeru serve --http`, both backends:
every view loads, the graph shows the fixture's nodes, search finds, history shows revisions, an edit
made in the page is what MCP `read` returns, the token is required, the grants hold."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import pytest

from kaeru.web.graph import LIMIT
from kaeru.web.pages import TRAIL_PAGE
from tests.backends import new_vault
from tests.web.conftest import ADMIN, ADMIN_ACTOR, BIG, LOG_REVISIONS, Site
from tests.wire.bearer_clients import bearer_client
from tests.wire.support import http_server, structured, subprocess_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def sign_in(page: Any, site: Site, token: str = ADMIN) -> None:
    page.goto(f"{site.base}/ui/login")
    page.fill("#token", token)
    page.click("form[action='/ui/login'] button")
    page.wait_for_selector("h1")


def mcp(site: Site, tool: str, args: dict[str, Any], token: str = ADMIN) -> dict[str, Any]:
    """One tool call over the server's `/mcp` (the SDK client, as an agent would), in a thread of its
    own: Playwright's synchronous API holds this thread's event loop."""

    async def go() -> dict[str, Any]:
        async with bearer_client(site.server.url, token) as client:
            return structured(await client.call_tool(tool, args))

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, go).result(timeout=60)


def get(url: str, headers: dict[str, str] | None = None, data: bytes | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {}, data=data, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as error:
        return int(error.code), error.read().decode()


def views(site: Site) -> list[tuple[str, str, str]]:
    ids = site.fixture.ids
    return [
        ("initiatives", "/ui/", "Initiatives"),
        ("graph", "/ui/graph?i=web", "Graph: web"),
        ("graph-neighbourhood", f"/ui/graph?i=big&focus={ids['big_last']}", "Graph: big"),
        ("graph-window", "/ui/graph?i=big", "Graph: big"),
        ("node", f"/ui/node?i=web&id={ids['decision']}", "Use SVG"),
        ("board", "/ui/board?i=web", "Board: web"),
        ("timeline", "/ui/timeline?i=web", "Timeline: web"),
        ("reviews", "/ui/reviews?i=web", "Open reviews: web"),
        ("rules", "/ui/rules?i=web", "Rules in force: web"),
        ("search", "/ui/search?i=web&q=SVG", "Search: web"),
        ("recall", "/ui/recall?i=web&q=graph+SVG", "Recall: web"),
    ]


def test_every_view_loads(site: Site, page: Any, screenshots: Path) -> None:
    sign_in(page, site)
    for name, path, title in views(site):
        response = page.goto(site.base + path)
        assert response.status == 200, (name, response.status, page.content()[:2000])
        assert page.inner_text("main h1") == title, name
        assert page.locator(".error").count() == 0, (name, page.inner_text("main"))
        page.screenshot(path=str(screenshots / f"{name}.png"), full_page=name != "graph-window")
    # What the views show, beyond loading.
    page.goto(f"{site.base}/ui/")
    assert set(page.locator("tr.initiative").evaluate_all("rows => rows.map(r => r.dataset.name)")) == {
        "web",
        "payroll",
        "big",
    }
    page.goto(f"{site.base}/ui/rules?i=web")
    assert site.fixture.ids["rule"] in page.locator("li.hit").evaluate_all("l => l.map(e => e.dataset.id)")
    page.goto(f"{site.base}/ui/reviews?i=web")
    assert site.fixture.ids["flagged"] in page.locator("li.hit").evaluate_all("l => l.map(e => e.dataset.id)")
    assert "still true?" in page.inner_text(f"li.hit[data-id='{site.fixture.ids['flagged']}'] ul.reasons")
    page.goto(f"{site.base}/ui/board?i=web")
    assert page.locator(f".column[data-status=open] li.card[data-id='{site.fixture.ids['task']}']").count() == 1
    assert page.locator(f".column[data-status=done] li.card[data-id='{site.fixture.ids['done']}']").count() == 1
    page.goto(f"{site.base}/ui/recall?i=web&q=graph+SVG")
    assert page.locator("li.hit").count() >= 1 and page.locator("li.hit .share").count() >= 1


def test_the_graph_shows_the_fixtures_nodes(site: Site, page: Any) -> None:
    sign_in(page, site)
    listed = mcp(site, "initiatives", {})
    total = next(i["counts"]["total"] for i in listed["data"]["initiatives"] if i["name"] == "web")
    walked = mcp(site, "timeline", {"initiatives": ["web"], "limit": 100})
    page.goto(f"{site.base}/ui/graph?i=web")
    drawn = page.locator("svg#graph g.node").evaluate_all("nodes => nodes.map(n => n.dataset.id)")
    assert sorted(drawn) == sorted(h["id"] for h in walked["data"]["hits"]) and len(drawn) == total
    ids = site.fixture.ids
    assert {ids[k] for k in ("decision", "rule", "task", "done", "claim", "old", "new", "flagged")} <= set(drawn)
    assert ids["payroll"] not in drawn
    # Superseded nodes are marked; edges are labelled with their type and weight.
    assert page.locator(f"g.node[data-id='{ids['old']}']").get_attribute("class").split().count("c-superseded") == 1
    edge = page.locator(f"g.edge[data-from='{ids['rule']}'][data-to='{ids['decision']}']")
    assert edge.get_attribute("data-type") == "refers_to" and edge.locator("text").text_content() == "refers_to 0.8"
    assert page.inner_text("#not-shown") == "everything in view is drawn."
    # Filters: by type, and current only.
    page.check("input[name=type][value=task]")
    page.click("form.filters button")
    page.wait_for_load_state()  # the click waits for the navigation to commit, not for the page
    tasks = page.locator("svg#graph g.node").evaluate_all("n => n.map(e => e.dataset.id)")
    assert sorted(tasks) == sorted([ids["task"], ids["done"]])
    assert "hidden by the filters" in page.inner_text("#not-shown")
    page.goto(f"{site.base}/ui/graph?i=web&current=1")
    assert ids["old"] not in page.locator("svg#graph g.node").evaluate_all("n => n.map(e => e.dataset.id)")
    # Clicking a node opens it.
    page.goto(f"{site.base}/ui/graph?i=web")
    page.click(f"g.node[data-id='{ids['decision']}'] circle")
    page.wait_for_url(f"**/ui/node?i=web&id={ids['decision']}")
    assert page.inner_text("main h1") == "Use SVG"


def test_a_big_initiative_draws_a_bounded_window_and_says_what_is_not_shown(site: Site, page: Any) -> None:
    sign_in(page, site)
    page.goto(f"{site.base}/ui/graph?i=big")
    assert page.locator("svg#graph g.node").count() == LIMIT
    said = page.inner_text("#not-shown")
    assert f"{BIG - LIMIT} of the initiative's {BIG} nodes are outside this window" in said
    assert "1 edges lead to nodes not drawn" in said
    page.click("#next-window")
    page.wait_for_load_state()
    assert page.locator("svg#graph g.node").count() == BIG - LIMIT
    page.goto(f"{site.base}/ui/graph?i=big&focus={site.fixture.ids['big_last']}")
    # A chain: the focus and three steps back.
    assert page.locator("svg#graph g.node").count() == 4
    assert "lie past the limit" in page.inner_text("#not-shown")


def test_search_returns_its_hits(site: Site, page: Any) -> None:
    sign_in(page, site)
    page.goto(f"{site.base}/ui/graph?i=web")
    page.fill("#search-box", "canvas")
    page.press("#search-box", "Enter")
    page.wait_for_url("**/ui/search?*")
    found = page.locator("li.hit").evaluate_all("l => l.map(e => e.dataset.id)")
    searched = mcp(site, "search", {"initiatives": ["web"], "text": "canvas"})
    assert found == [h["id"] for h in searched["data"]["hits"]]
    assert found and set(found) <= {site.fixture.ids[k] for k in ("old", "new", "done")}
    assert page.inner_text("#total").startswith(f"{searched['data']['total']} hit(s)")


def test_a_page_says_what_the_tool_warned_and_a_mistyped_initiative_is_not_found(site: Site, page: Any) -> None:
    """The tools answer an emoji search and an unknown initiative `ok`, with a warning and no hit;
    the pages showed "0 hit(s)" or an empty list and no reason."""
    sign_in(page, site)
    page.goto(f"{site.base}/ui/search?i=web&q=%F0%9F%90%B8")
    assert "emoji and punctuation are not indexed" in page.inner_text("p.warning[data-code=invalid_argument]")
    for view in ("timeline?i=wbe", "search?i=wbe&q=canvas", "recall?i=wbe&q=canvas", "graph?i=wbe"):
        response = page.goto(f"{site.base}/ui/{view}")
        assert response.status == 404, (view, response.status)
        said = page.inner_text("p.error[data-code=unknown_initiative]")
        assert "did you mean 'web'" in said, (view, said)


def test_a_page_as_of_a_moment_names_its_neighbours_as_they_were_then(site: Site, page: Any) -> None:
    sign_in(page, site)
    ids, then = site.fixture.ids, site.fixture.before_rename
    page.goto(f"{site.base}/ui/node?i=web&id={ids['decision']}&at={quote(then)}")
    link = page.locator(f".edges-list a.node-link[data-id='{ids['budget']}']")
    assert link.inner_text() == "Budget v1"  # its name then, as `read … at` gives it
    link.click()
    page.wait_for_load_state()
    assert page.inner_text("main h1") == "Budget v1" and page.inner_text("#as-of-shown") == f"as of {then}"
    page.goto(f"{site.base}/ui/node?i=web&id={ids['decision']}")
    assert page.locator(f".edges-list a.node-link[data-id='{ids['budget']}']").inner_text() == "Budget v2"


def test_a_nodes_page_shows_its_properties_and_names_its_successor(site: Site, page: Any) -> None:
    """A task's due date was only in the raw JSON of its history; "superseded by" listed bare ids."""
    sign_in(page, site)
    ids = site.fixture.ids
    page.goto(f"{site.base}/ui/node?i=web&id={ids['task']}")
    assert "due\n2030-01-15" in page.inner_text("#properties")
    page.goto(f"{site.base}/ui/node?i=web&id={ids['old']}")
    successor = page.locator(f"dl.facts a.node-link[data-id='{ids['new']}']")
    assert successor.inner_text() == "Use SVG, not canvas"


def test_a_nodes_history_shows_its_revisions_and_the_as_of_control(site: Site, page: Any) -> None:
    sign_in(page, site)
    ids = site.fixture.ids
    page.goto(f"{site.base}/ui/node?i=web&id={ids['decision']}")
    revisions = page.locator("#history li.revision")
    assert revisions.count() == 2
    assert "created" in revisions.nth(0).inner_text() and "revised" in revisions.nth(1).inner_text()
    diff = revisions.nth(1).locator("td.diff").first
    assert diff.locator("del").all_inner_texts() == ["server."]
    assert diff.locator("ins").all_inner_texts() == ["server as SVG."]
    assert page.inner_text("#body") == "Render the graph on the server as SVG."
    # As of the first revision: the body it had then.
    revisions.nth(0).locator("a.asof-link").click()
    page.wait_for_selector("#as-of-shown")
    assert page.inner_text("#as-of-shown").startswith("as of ")
    assert page.inner_text("#body") == site.fixture.first_body


def test_a_long_history_pages_forward_by_the_trails_cursor_and_back_to_the_first_page(site: Site, page: Any) -> None:
    sign_in(page, site)
    page.goto(f"{site.base}/ui/node?i=web&id={site.fixture.ids['log']}")

    def revisions() -> list[int]:
        found = page.locator("#history li.revision").evaluate_all("l => l.map(e => parseInt(e.dataset.revision, 10))")
        return [int(n) for n in found]

    first = revisions()
    assert first == list(range(1, TRAIL_PAGE + 1))
    assert page.inner_text("#trail-shown") == f"entries 1–{TRAIL_PAGE} of {LOG_REVISIONS}"
    assert page.locator("#trail-first").count() == 0
    page.click("#trail-next")
    page.wait_for_selector("#trail-first")
    assert revisions() == list(range(TRAIL_PAGE + 1, LOG_REVISIONS + 1)), "the rest, each once, in order"
    assert page.inner_text("#trail-shown") == f"entries {TRAIL_PAGE + 1}–{LOG_REVISIONS} of {LOG_REVISIONS}"
    assert page.locator("#trail-next").count() == 0
    changed = page.locator("#history li.revision").first
    assert "revised" in changed.inner_text()
    assert changed.locator("td.diff del").all_inner_texts() == [f"{TRAIL_PAGE - 1}."], "diffed with the page before"
    page.click("#trail-first")
    page.wait_for_selector("#trail-next")
    assert revisions() == first
    # A short history has no pager at all.
    page.goto(f"{site.base}/ui/node?i=web&id={site.fixture.ids['decision']}")
    assert page.locator(".trail-pages").count() == 0


def test_an_edit_made_in_the_page_is_what_mcp_reads(site: Site, page: Any) -> None:
    sign_in(page, site)
    ids = site.fixture.ids
    page.goto(f"{site.base}/ui/node?i=web&id={ids['rule']}")
    page.select_option("#layer-select", "hot")
    page.check("#pin-box")
    page.click("form.edit[data-op=layer] button")
    page.wait_for_selector("#edited")
    assert page.inner_text("#edited") == "layer: applied"
    read = mcp(site, "read", {"initiative": "web", "node": {"id": ids["rule"]}})
    node = read["data"]["hits"][0]
    assert (node["layer"], node["pinned"]) == ("hot", True)
    trail = mcp(site, "trail", {"initiative": "web", "node": {"id": ids["rule"]}, "kind": "history"})
    assert trail["data"]["entries"][-1]["actor"] == ADMIN_ACTOR

    page.goto(f"{site.base}/ui/board?i=web")
    card = page.locator(f"li.card[data-id='{ids['task']}']")
    card.locator("select[name=status]").select_option("in-progress")
    card.locator("button").click()
    page.wait_for_selector("#edited")
    assert page.locator(f".column[data-status=in-progress] li.card[data-id='{ids['task']}']").count() == 1
    read = mcp(site, "read", {"initiative": "web", "node": {"id": ids["task"]}})
    assert read["data"]["hits"][0]["status"] == "in-progress"

    page.goto(f"{site.base}/ui/node?i=web&id={ids['claim']}")
    page.fill("#flag-reason", "measured only on a laptop")
    page.click("form.edit[data-op=flag] button")
    page.wait_for_selector("#edited")
    page.goto(f"{site.base}/ui/reviews?i=web")
    under_review = page.locator("li.hit").evaluate_all("l => l.map(e => e.dataset.id)")
    assert ids["claim"] in under_review
    page.locator(f"li.hit[data-id='{ids['claim']}'] form.edit button").click()
    page.wait_for_selector("#edited")
    assert page.inner_text("#edited") == "close: applied"
    assert ids["claim"] not in page.locator("li.hit").evaluate_all("l => l.map(e => e.dataset.id)")
    context = mcp(site, "context", {"initiative": "web", "sections": ["reviews"]})
    [reviews] = [x for x in context["data"]["sections"] if x["name"] == "reviews"]
    assert ids["claim"] not in [i["id"] for i in reviews["items"]]


def test_a_form_sent_again_changed_is_a_new_edit_and_unchanged_a_replay(site: Site, page: Any) -> None:
    """The form carries a request id: sent twice as it is (a double click) the edit is made once;
    sent again with another reason (back, retype) it was refused `request_id_reused`, naming a
    request id the person never chose."""
    sign_in(page, site)
    done = site.fixture.ids["done"]
    page.goto(f"{site.base}/ui/node?i=web&id={done}")
    form = page.locator("form.edit[data-op=flag]")
    fields = {
        name: form.locator(f"input[name={name}]").get_attribute("value")
        for name in ("i", "op", "node", "back", "request_id", "csrf")
    }
    cookie = "; ".join(f"{c['name']}={c['value']}" for c in page.context.cookies())
    said = []
    for reason in ("checked on a laptop only", "checked on a laptop only", "the renderer changed since"):
        body = urllib.parse.urlencode({**fields, "reason": reason}).encode()
        status, html = get(f"{site.base}/ui/edit", {"Cookie": cookie, "Origin": site.base}, body)
        assert status == 200, html[:500]
        said.append(html.split('id="edited">', 1)[1].split("<", 1)[0])
    assert said == ["flag: applied", "flag: applied (already done: the same form was sent twice)", "flag: applied"]
    page.goto(f"{site.base}/ui/reviews?i=web")
    reasons = page.inner_text(f"li.hit[data-id='{done}'] ul.reasons")
    assert "the renderer changed since" in reasons and reasons.count("checked on a laptop only") == 1


def test_the_token_is_required(site: Site, page: Any) -> None:
    for path in ("/ui/", "/ui/graph?i=web", f"/ui/node?i=web&id={site.fixture.ids['decision']}"):
        response = page.goto(site.base + path)
        assert response.status == 401 and page.locator("#token").count() == 1, path
        assert "Use SVG" not in page.content()
    page.goto(f"{site.base}/ui/login")
    page.fill("#token", "kaeru_not-a-token")
    page.click("form[action='/ui/login'] button")
    assert "refused" in page.inner_text("main")
    sign_in(page, site)
    assert page.inner_text("main h1") == "Initiatives"
    # A bearer header works as the cookie does; a wrong one, or another Host, is refused.
    status, body = get(f"{site.base}/ui/graph?i=web", {"Authorization": f"Bearer {ADMIN}"})
    assert status == 200 and site.fixture.ids["decision"] in body
    assert get(f"{site.base}/ui/graph?i=web", {"Authorization": "Bearer wrong"})[0] == 401
    assert get(f"{site.base}/ui/", {"Authorization": f"Bearer {ADMIN}", "Host": "evil.example"})[0] == 421
    # A form posted from another site is refused by its Origin, whatever the cookie.
    cookie = "; ".join(f"{c['name']}={c['value']}" for c in page.context.cookies())
    edit = f"i=web&op=layer&node={site.fixture.ids['decision']}&layer=cold".encode()
    status, _ = get(f"{site.base}/ui/edit", {"Cookie": cookie, "Origin": "http://evil.example"}, edit)
    assert status == 403
    read = mcp(site, "read", {"initiative": "web", "node": {"id": site.fixture.ids["decision"]}})
    assert read["data"]["hits"][0]["layer"] != "cold"


def test_two_viewers_in_one_browser_stay_signed_in(site: Site, page: Any, tmp_path: Path) -> None:
    """A browser sends a host's cookies to all its ports: with one cookie name, signing in to a
    second viewer (another vault's) replaced the first's cookie, whose pages then refused it — and
    cleared it, signing the second out too. A refused cookie's page says what to do."""
    other = new_vault("sqlite", tmp_path)
    env = subprocess_env(other.env(), KAERU_AUTH_TOKEN="second-viewer-token", KAERU_ACTOR="second")
    with http_server(env, tmp_path) as second:
        sign_in(page, site)
        page.goto(f"{second.base}/ui/login?token=second-viewer-token")
        assert page.inner_text("main h1") == "Initiatives"
        for base in (site.base, second.base, site.base):
            response = page.goto(f"{base}/ui/")
            assert response.status == 200 and page.inner_text("main h1") == "Initiatives", base
        # A cookie from an earlier run (a token no longer valid) points at the sign-in link.
        gone = {"name": f"kaeru_ui_{second.port}", "value": "gone", "domain": "127.0.0.1", "path": "/ui"}
        page.context.add_cookies([gone])
        response = page.goto(f"{second.base}/ui/")
        assert response.status == 401 and "sign-in link `kaeru ui` printed" in page.inner_text("p.error")
    assert page.goto(f"{site.base}/ui/").status == 200  # the other viewer's cookie was left alone


def test_a_persons_token_sees_and_edits_only_its_grants(site: Site, page: Any) -> None:
    sign_in(page, site, site.fixture.alice)
    assert page.inner_text("header .who") == "as alice"
    assert page.locator("tr.initiative").evaluate_all("rows => rows.map(r => r.dataset.name)") == ["web"]
    response = page.goto(f"{site.base}/ui/graph?i=payroll")
    assert response.status == 403 and "zq19secret" not in page.content()
    response = page.goto(f"{site.base}/ui/node?i=web&id={quote(site.fixture.ids['payroll'])}")
    assert response.status == 404 and "zq19secret" not in page.content()
    page.goto(f"{site.base}/ui/node?i=web&id={site.fixture.ids['new']}")
    page.fill("#flag-reason", "alice doubts it")
    page.click("form.edit[data-op=flag] button")
    page.wait_for_selector("#edited")
    assert page.inner_text("#edited") == "flag: applied"
    context = mcp(site, "context", {"initiative": "web", "sections": ["reviews"]})
    [reviews] = [x for x in context["data"]["sections"] if x["name"] == "reviews"]
    notes = reviews["reasons"][site.fixture.ids["new"]]
    history = mcp(site, "trail", {"initiative": "web", "node": {"id": notes[-1]}, "kind": "history"})
    assert history["data"]["entries"][0]["actor"] == "alice"
    assert json.dumps(history).count("alice doubts it") >= 1


def test_a_read_only_tokens_edit_is_refused_and_said(site: Site, page: Any) -> None:
    sign_in(page, site, site.fixture.rita)
    page.goto(f"{site.base}/ui/node?i=web&id={site.fixture.ids['new']}")
    page.select_option("#layer-select", "frozen")
    page.click("form.edit[data-op=layer] button")
    page.wait_for_selector("#edited")
    assert page.inner_text("#edited").startswith("layer: refused — forbidden:")
    read = mcp(site, "read", {"initiative": "web", "node": {"id": site.fixture.ids["new"]}})
    assert read["data"]["hits"][0]["layer"] != "frozen"


def test_the_board_marks_every_late_task_and_the_timeline_says_its_order_and_zone(site: Site, page: Any) -> None:
    """`context` names only the overdue tasks its bundle shows (decision 344): the board marks a late
    task by its own due day, in every column but the closing one, and counts them all. The timeline
    said "in recording order" and cut the `Z` off its times; it orders by when things happened."""
    late = mcp(site, "task", {"initiative": "late", "text": "pay the invoice", "due": "2020-01-01"})
    mcp(site, "task", {"initiative": "late", "text": "renew the domain", "due": "2099-01-01"})
    old = mcp(site, "note", {"initiative": "late", "text": "the kick-off", "occurred_at": "2025-01-10T00:00:00Z"})
    sign_in(page, site)
    page.goto(f"{site.base}/ui/board?i=late")
    card = page.locator(f"li.card[data-id='{late['data']['primary']['id']}']")
    assert card.locator(".state").inner_text() == "overdue"
    assert page.locator("li.card .state").count() == 1 and page.inner_text("p.coverage") == "1 overdue"
    page.goto(f"{site.base}/ui/timeline?i=late")
    assert "in the order things happened" in page.inner_text("p.mode")
    first = page.locator("li.hit").first
    assert first.get_attribute("data-id") == old["data"]["primary"]["id"]
    assert first.locator(".when").inner_text() == "2025-01-10 00:00 UTC"


def test_a_long_bodys_history_says_which_part_its_diff_compares(site: Site, page: Any) -> None:
    """A history page cuts a long body's values to its bound (decision 357): the diff of the cut texts
    shows no edit past the cut, so the page says which characters it compared."""
    words = " ".join(f"w{i}" for i in range(20_000))
    made = mcp(site, "note", {"initiative": "long", "text": words})
    node = made["data"]["primary"]
    mcp(
        site,
        "revise",
        {
            "initiative": "long",
            "node": {"id": node["id"]},
            "expected_revision": node["revision"],
            "patch": {"body": words + " end"},
        },
    )
    sign_in(page, site)
    page.goto(f"{site.base}/ui/node?i=long&id={node['id']}")
    said = page.locator("ol.history p.coverage").all_inner_texts()
    assert any(s.startswith("Compared: ") and "characters 1–" in s and f"of {len(words):,}" in s for s in said), said
