"""A page that cuts a list leads to the rest: the rules page said "not shown: 50 rules (budget)" and a
node's page "N more edges not listed", each with no way to them. Now each links to the whole list,
paged by the tools' own cursors, and following the links reaches every item exactly once — for a
token limited to one initiative, only what it may see. The reviews page speaks of its own cut only
(it said "not shown: N rules (budget)" of rules it never shows). In process, on both backends: the
viewer as `kaeru serve --http` mounts it, asked over ASGI with a bearer token."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from kaeru.service import Service, grants
from kaeru.web.pages import EDGES_SHOWN
from tests.web.inprocess import hit_ids, link, walk
from tests.working.conftest import Call

#: Rules of `RULE_CHARS` characters: more than `context`'s largest budget holds whole.
RULES = 120
RULE_CHARS = 900
EDGE = re.compile(r'<li class="edge-row">.*?data-id="([^"]+)"', re.S)


def test_every_rule_the_budget_cuts_is_a_link_away(client: TestClient, call: Call) -> None:
    made = [
        call("note", initiative="laws", kind="rule", name=f"rule {n:03d}", text=f"Rule {n}. " + "x" * RULE_CHARS)
        for n in range(RULES)
    ]
    ids = [m["data"]["primary"]["id"] for m in made]
    released = ids[3]
    call("revise", initiative="laws", node={"id": released}, patch={"constraint_state": "released"})
    page = client.get("/ui/rules?i=laws")
    assert page.status_code == 200, page.text
    in_force = hit_ids(page.text)
    assert 0 < len(in_force) < RULES - 1 and released not in in_force
    cut = re.search(r'<p class="coverage">not shown: (\d+) rules \(budget\)', page.text)
    assert cut and int(cut.group(1)) == RULES - 1 - len(in_force), page.text
    every = link(page.text, "every-rule")
    assert every is not None, "the cut links to every rule"
    pages = walk(client, every)
    assert len(pages) > 1
    assert sorted(n for p in pages for n in hit_ids(p)) == sorted(ids), "every rule, each once, over the pages"
    marked = re.findall(r'data-id="([^"]+)">(?:(?!<li class="hit").)*not in force: released', "".join(pages), re.S)
    assert marked == [released], "the released rule, and it alone, is marked not in force"


def test_every_link_of_a_node_is_a_link_away_a_limited_token_seeing_its_own(
    client: TestClient, call: Call, service: Service
) -> None:
    hub = call("note", initiative="site", name="hub", text="many notes point here")["data"]["primary"]["id"]
    spokes = [
        call("note", initiative="site", name=f"spoke {n}", text=f"spoke number {n}", link_to={"id": hub})["data"][
            "primary"
        ]["id"]
        for n in range(EDGES_SHOWN + 12)
    ]
    hidden = [
        call("note", initiative="payroll", name=f"pay {n}", text=f"payroll zq{n}", link_to={"id": hub})["data"][
            "primary"
        ]["id"]
        for n in range(3)
    ]
    page = client.get(f"/ui/node?i=site&id={hub}")
    assert page.status_code == 200, page.text
    assert page.text.count('<li class="edge-row">') == EDGES_SHOWN
    every = link(page.text, "every-link")
    assert every is not None and "15 more edges not listed" in page.text
    links = [n for p in walk(client, every) for n in EDGE.findall(p)]
    assert sorted(links) == sorted(spokes + hidden), "every link once, over the pages"

    alice, _ = grants.add_token(service.rt, "alice", ["site"], False, "test")
    as_alice = {"Authorization": f"Bearer {alice}"}
    pages = walk(client, every, **as_alice)
    seen = [n for p in pages for n in EDGE.findall(p)]
    assert sorted(seen) == sorted(spokes), "a token limited to `site` lists its links only, each once"
    assert not any("pay " in p or "zq" in p for p in pages)


def test_the_reviews_page_speaks_of_its_own_cut_and_the_rest_come_as_reviews_close(
    client: TestClient, call: Call
) -> None:
    for n in range(RULES):
        call("note", initiative="doubts", kind="rule", name=f"rule {n:03d}", text="y" * RULE_CHARS)
    notes = [
        call("note", initiative="doubts", name=f"claim {n:02d}", text=f"claim {n}")["data"]["primary"]["id"]
        for n in range(22)
    ]
    for node in notes:
        call("review", initiative="doubts", action="flag", target={"id": node}, reason="check it")
    page = client.get("/ui/reviews?i=doubts").text
    shown = hit_ids(page)
    assert len(shown) == 20 and "rules (" not in page, "no word of the rules this page never shows"
    assert re.search(r"not shown: 2 reviews \(limit\)", page)
    for node in shown[:2]:
        call("review", initiative="doubts", action="close", target={"id": node})
    after = hit_ids(client.get("/ui/reviews?i=doubts").text)
    assert sorted(after) == sorted(set(notes) - set(shown[:2])), "the two left out before are shown now"
