"""The viewer's pages that list initiatives, now that `initiatives` answers in pages (decision 100):
the initiatives page links to the next page, and a graph finds its initiative's node count however
many initiatives share its name's start. In process, through the server's own tool registry."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html import unescape
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
from starlette.requests import Request

from kaeru.domain.timefmt import fmt
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.web import pages


def _request(**params: str) -> Request:
    query = urlencode(params).encode()
    return Request({"type": "http", "method": "GET", "path": "/", "query_string": query, "headers": []})


def _make(store: Store, names: list[str]) -> None:
    with store.write() as session:
        for i, name in enumerate(names):
            session.create_initiative(name, fmt(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=i)))


def _shown(body: str) -> list[str]:
    return [unescape(n) for n in re.findall(r'<tr class="initiative" data-name="([^"]*)"', body)]


def test_the_initiatives_page_links_to_the_next_page(service: Service, store: Store) -> None:
    names = [f"area-{i:03d}" for i in range(130)]
    _make(store, names)
    call = build_server(service).registry.envelope

    async def go() -> None:
        _, body, _ = await pages.initiatives_page(call, _request())
        assert _shown(body) == names[::-1][:100]
        assert "100 of 130" in body
        link = re.search(r'<a id="next-page" href="([^"]+)"', body)
        assert link is not None
        cursor = parse_qs(urlsplit(unescape(link.group(1))).query)["cursor"][0]
        _, body, _ = await pages.initiatives_page(call, _request(cursor=cursor))
        assert _shown(body) == names[::-1][100:]
        assert 'id="next-page"' not in body

    anyio.run(go)


def test_a_graph_finds_its_initiative_among_many_with_the_same_start(service: Service, store: Store) -> None:
    # 600 more active initiatives start with "p": the one named "p" is on no first page of them.
    _make(store, ["p", *[f"p{i:03d}" for i in range(600)]])
    call = build_server(service).registry.envelope

    async def go() -> tuple[str, str | None]:
        title, _, initiative = await pages.graph_page(call, _request(i="p"))
        return title, initiative

    assert anyio.run(go) == ("Graph: p", "p")
