"""A forgotten or settled node in the viewer (decision 473): a settled node's successor listed the edge
`← consolidated_to 1.0 <raw id>`, linking to a 404, and the 404 of a forgotten or settled node named
the way out (`read` with `at`, `trail`, the successor) without a link. And user text in Hebrew or
Arabic sat left-aligned: the elements holding names, bodies and excerpts carry `dir="auto"`. In
process, on both backends, over ASGI with the admin's bearer token (as
tests/web/test_viewer_paging_and_refusals.py does)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from typing import Any

import pytest
from starlette.testclient import TestClient

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.web.inprocess import viewer_client

ADMIN = "settled-admin-token-d1"


@pytest.fixture
def client(service: Service, store: Store, vault: VaultSpec) -> Iterator[TestClient]:
    with viewer_client(service, store, vault, ADMIN) as asking:
        yield asking


def _run(service: Service, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    made = build_server(service).registry.run(tool, args)
    assert made["state"] != "rejected", made
    return made


def _write(service: Service, tool: str, args: dict[str, Any]) -> str:
    node: str = _run(service, tool, args)["data"]["primary"]["id"]
    return node


def _link(page: str, anchor: str) -> str | None:
    found = re.search(rf'<a id="{anchor}"[^>]* href="([^"]+)">', page)
    return unescape(found.group(1)) if found else None


def _ok(client: TestClient, where: str | None) -> str:
    assert where is not None
    answer = client.get(where)
    assert answer.status_code == 200, answer.text
    return answer.text


def test_a_settled_nodes_edge_and_its_refused_page_lead_somewhere(client: TestClient, service: Service) -> None:
    old = _write(service, "note", {"initiative": "herons", "name": "Herons fish", "text": "Herons fish at dawn."})
    new = _write(service, "evolve", {"initiative": "herons", "mode": "settle", "source": old})
    successor = _ok(client, f"/ui/node?i=herons&id={new}")
    row = re.search(r'<li class="edge-row">← <span class="etype">consolidated_to</span>.*?</li>', successor)
    assert row is not None, successor
    named = re.search(rf'<a class="node-link[^"]*" data-id="{old}"[^>]* href="([^"]+)">([^<]*)</a>', row.group(0))
    assert named is not None and named.group(2) == "Herons fish", "the settled node named by its name"
    then = _ok(client, unescape(named.group(1)))
    assert "Herons fish at dawn." in then, "its link opens it as it was before it was settled"

    refused = client.get(f"/ui/node?i=herons&id={old}")
    assert refused.status_code == 404 and 'data-code="not_found"' in refused.text
    assert _link(refused.text, "way-successor") == f"/ui/node?i=herons&id={new}"
    assert "Herons fish at dawn." in _ok(client, _link(refused.text, "way-as-of"))
    history = _link(refused.text, "way-history")
    assert history is not None and history.endswith("#history")
    assert 'id="history"' in _ok(client, history)


def test_a_forgotten_nodes_refused_page_links_to_it_as_it_was(client: TestClient, service: Service) -> None:
    gone = _write(service, "note", {"initiative": "herons", "name": "Old roost", "text": "They roosted by the mill."})
    _run(service, "forget", {"initiative": "herons", "node": {"id": gone}, "reason": "moved"})
    refused = client.get(f"/ui/node?i=herons&id={gone}")
    assert refused.status_code == 404
    assert _link(refused.text, "way-successor") is None, "a forgotten node has no successor"
    assert "They roosted by the mill." in _ok(client, _link(refused.text, "way-as-of"))
    assert _link(refused.text, "way-history") is not None


def test_right_to_left_text_takes_its_own_direction(client: TestClient, service: Service) -> None:
    name, body = "שלום עולם", "אנפות דגות עם שחר"
    node = _write(service, "note", {"initiative": "rtl", "name": name, "text": body})
    page = _ok(client, f"/ui/node?i=rtl&id={node}")
    assert f'<h1 dir="auto">{name}</h1>' in page
    assert f'<div dir="auto"><pre id="body">{body}</pre></div>' in page
    timeline = _ok(client, "/ui/timeline?i=rtl")
    assert f'dir="auto" href="/ui/node?i=rtl&amp;id={node}">{name}</a>' in timeline
    assert f'<div class="excerpt" dir="auto">{body}</div>' in timeline
    found = _ok(client, "/ui/search?i=rtl&q=" + body.split()[0])
    assert f'<div class="excerpt" dir="auto">{body}</div>' in found
