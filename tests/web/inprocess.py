"""The viewer in process, as `kaeru serve --http` mounts it, asked over ASGI with an admin's bearer
token: the tests of one view each, without a server process or a browser."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from kaeru.mcp.bearer import VaultTokens
from kaeru.mcp.server import build_server
from kaeru.mcp.ui import viewer
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec

#: A hit of a search, recall or timeline page: its node's id.
HIT = re.compile(r'<li class="hit" id="card-[^"]*" tabindex="-1" data-id="([^"]+)"')
#: The address the viewer believes it serves (its own origin, which a form's POST must come from).
BASE = "http://127.0.0.1:9876"


@contextmanager
def viewer_client(service: Service, store: Store, vault: VaultSpec, admin: str) -> Iterator[TestClient]:
    """A client of the viewer on `vault`, every request carrying the admin token `admin`."""
    settings = vault.settings()
    served = build_server(service)
    ui = viewer(served, settings, "127.0.0.1", 9876, VaultTokens(store, admin, settings.actor), None)
    app = Starlette(routes=[Mount("/ui", app=ui)])
    with TestClient(app, base_url=BASE, headers={"Authorization": f"Bearer {admin}"}) as asking:
        yield asking


def written(service: Service, tool: str, args: dict[str, Any]) -> str:
    """The id of the node a write tool's call made (the call must not be refused)."""
    made = build_server(service).registry.run(tool, args)
    assert made["state"] != "rejected", made
    node: str = made["data"]["primary"]["id"]
    return node


def hit_ids(page: str) -> list[str]:
    """The ids of a page's hits, in their order."""
    return HIT.findall(page)


def link(page: str, anchor: str) -> str | None:
    """The address of the page's link `anchor` (its id, or its class where a page holds several)."""
    found = re.search(rf'<a (?:id|class)="{anchor}" href="([^"]+)">', page)
    return unescape(found.group(1)) if found else None


def walk(client: TestClient, where: str, **headers: str) -> list[str]:
    """Every page from `where` on, following each page's "next" link."""
    pages: list[str] = []
    here: str | None = where
    for _ in range(50):
        if here is None:
            return pages
        page = client.get(here, headers=headers)
        assert page.status_code == 200, page.text
        pages.append(page.text)
        here = link(page.text, "next-page")
    raise AssertionError("the pages never end")
