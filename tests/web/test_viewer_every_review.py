"""Every open review is a link away: the reviews page showed the newest 20 (`context`'s cap) and said
"no tool lists open reviews a page at a time", so a person with more doubts than that could not see
them. `reflect` now lists them newest first, and `reviews_after` (the last one listed) the next 25;
the page links to that listing, and following its links reaches every open review exactly once, in
the order `context` shows them — for a token limited to one initiative, only the doubts it may see.
In process, on both backends: the viewer as `kaeru serve --http` mounts it, asked over ASGI with a
bearer token."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from kaeru.service import Service, grants
from tests.web.inprocess import hit_ids, link, walk
from tests.working.conftest import Call

#: Open reviews: three of `reflect`'s pages, the last one short.
REVIEWS = 60


def _flagged(call: Call, initiative: str, count: int) -> list[str]:
    """`count` notes of `initiative`, each flagged for review, oldest first."""
    made = []
    for n in range(count):
        node = call("note", initiative=initiative, name=f"claim {n:02d}", text=f"claim number {n}")
        made.append(node["data"]["primary"]["id"])
        call("review", initiative=initiative, action="flag", target={"id": made[-1]}, reason=f"doubt {n}")
    return made


def test_every_open_review_is_reached_once_newest_first(client: TestClient, call: Call) -> None:
    made = _flagged(call, "doubts", REVIEWS)
    page = client.get("/ui/reviews?i=doubts")
    assert page.status_code == 200, page.text
    assert len(hit_ids(page.text)) == 20 and "no tool lists" not in page.text
    every = link(page.text, "every-review")
    assert every is not None, "the reviews page links to every open review"
    pages = walk(client, every)
    assert len(pages) == 3
    listed = [n for p in pages for n in hit_ids(p)]
    assert listed == made[::-1], "every open review once, newest first, over the pages"
    assert re.search(r"reviews 51–60 of 60", pages[-1]), pages[-1]

    # A review closed between pages skips nothing: the next page starts after the last one shown.
    second = link(pages[0], "next-page")
    assert second is not None
    call("review", initiative="doubts", action="close", target={"id": made[::-1][24]})
    rest = [n for p in walk(client, second) for n in hit_ids(p)]
    assert rest == made[::-1][25:]


def test_a_limited_token_pages_through_only_the_doubts_it_may_see(
    client: TestClient, call: Call, service: Service
) -> None:
    mine = _flagged(call, "site", 30)
    # Doubts raised from an initiative the token may not see: neither listed nor counted (decision 372).
    hidden = [
        call("note", initiative="site", name=f"other {n}", text=f"other {n}")["data"]["primary"]["id"] for n in range(3)
    ]
    for n, node in enumerate(hidden):
        doubt = {"initiative": "payroll", "name": f"pay doubt {n}", "text": f"payroll zq{n}", "link_to": {"id": node}}
        assert call("note", **doubt, edge_type="contradicts")["state"] != "rejected"
    admin = [n for p in walk(client, "/ui/reviews?i=site&all=1") for n in hit_ids(p)]
    assert sorted(admin) == sorted(mine + hidden)

    alice, _ = grants.add_token(service.rt, "alice", ["site"], False, "test")
    pages = walk(client, "/ui/reviews?i=site&all=1", Authorization=f"Bearer {alice}")
    seen = [n for p in pages for n in hit_ids(p)]
    assert seen == mine[::-1], "a token limited to `site` lists the reviews it may see, each once, newest first"
    assert not any("pay doubt" in p or "zq" in p for p in pages)
    assert "of 30" in pages[-1]


def test_reflect_names_a_node_of_its_initiative_to_page_after(call: Call) -> None:
    made = _flagged(call, "doubts", 3)
    other = call("note", initiative="elsewhere", name="x", text="x")["data"]["primary"]["id"]
    refused = call("reflect", initiative="doubts", reviews_after=other)
    assert refused["state"] == "rejected" and refused["issues"][0]["field"] == "reviews_after"
    page = call("reflect", initiative="doubts", reviews_after=made[2])
    assert [i["node"] for i in page["data"]["items"]] == [made[1], made[0]]
