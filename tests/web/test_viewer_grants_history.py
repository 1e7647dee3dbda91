"""A node's page in the viewer shows a token limited to some initiatives only the revisions written
while the node was in one of them (decision 15.K2): a node moved into its initiative from another
showed its old name and body in the History and its diffs. Over HTTP against a real `kaeru serve
--http`, both backends; the admin's page of the same node shows every revision."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from html import unescape
from typing import Any
from urllib.parse import urlencode

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.factory import open_store
from tests.backends import BACKENDS, drop_vault, new_vault, postgres_admin_url
from tests.wire.support import HttpServer, http_server, subprocess_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

ADMIN = "web-grants-history-admin-token"
PUB = "pub"
SECRET = "secret-proj"
#: Words only the revisions written while the node was in `SECRET` alone held.
HIDDEN_WORDS = ("zebulon", "xylophage", "walrus")


@dataclass
class Moved:
    server: HttpServer
    node: str
    limited: str
    #: Each revision's time, and whether the node was in `PUB` then.
    revisions: list[tuple[str, bool]]


def _seed(service: Service) -> tuple[str, str, list[tuple[str, bool]]]:
    """A node written in `SECRET`, shared with `PUB`, back in `SECRET` alone, then moved to `PUB`."""
    run = build_server(service).registry.run

    def ok(tool: str, **args: Any) -> dict[str, Any]:
        envelope: dict[str, Any] = run(tool, args)
        assert envelope["state"] in ("ok", "applied"), envelope["issues"]
        return envelope

    node: str = ok("note", initiative=SECRET, name="zebulon plan", text="launch codeword xylophage")["data"]["primary"][
        "id"
    ]
    ref = {"id": node}
    ok("revise", initiative=SECRET, node=ref, patch={"name": "ferry plan", "body": "the ferry leaves at eight"})
    ok("initiative", initiative=PUB, action="attach", node=ref)
    ok("revise", initiative=PUB, node=ref, patch={"body": "the ferry leaves at nine"})
    ok("initiative", initiative=PUB, action="detach", node=ref)
    ok("revise", initiative=SECRET, node=ref, patch={"body": "walrus protocol"})
    ok("revise", initiative=SECRET, node=ref, patch={"body": "the ferry leaves at ten"})
    ok("initiative", initiative=PUB, action="attach", node=ref)
    ok("initiative", initiative=SECRET, action="detach", node=ref)
    trail = ok("trail", initiative=PUB, node=ref, kind="history", limit=50)["data"]["entries"]
    revisions = [(e["at"], PUB in e["node"]["initiatives"]) for e in trail if e["kind"] == "revision"]
    token, _ = grants.add_token(service.rt, "lim", [PUB], False, "test")
    return node, token, revisions


@pytest.fixture(scope="module", params=BACKENDS)
def moved(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Moved]:
    backend: str = request.param
    if backend == "postgres" and not postgres_admin_url():
        pytest.skip("PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (make test starts one)")
    home = tmp_path_factory.mktemp(f"grants-history-{backend}")
    vault = new_vault(backend, home)
    try:
        store = open_store(vault.settings(actor="seeder"))
        try:
            node, token, revisions = _seed(Service(store, vault.settings(actor="seeder")))
        finally:
            store.close()
        env = subprocess_env(vault.env(), KAERU_AUTH_TOKEN=ADMIN, KAERU_ACTOR="web-admin")
        with http_server(env, home) as server:
            yield Moved(server, node, token, revisions)
    finally:
        drop_vault(vault)


def _page(moved: Moved, token: str, **query: str) -> tuple[int, str]:
    """The node's page as `token` sees it: (status, its HTML)."""
    url = f"{moved.server.base}/ui/node?{urlencode({'i': PUB, 'id': moved.node, **query})}"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as error:
        return int(error.code), error.read().decode()


def _words(html: str) -> list[str]:
    text = unescape(re.sub(r"<[^>]+>", " ", html)).lower()
    return [w for w in HIDDEN_WORDS if w in text]


def _history(html: str) -> list[str]:
    """The revisions the page's History lists, by their time."""
    return re.findall(r'<li class="revision"[^>]*><span class="when">([^<]+)</span>', html)


def test_a_moved_nodes_page_shows_a_limited_token_only_the_revisions_of_its_initiative(moved: Moved) -> None:
    status, admin = _page(moved, ADMIN)
    assert status == 200 and _words(admin) == list(HIDDEN_WORDS)  # the vault holds them
    assert _history(admin) == [at for at, _ in moved.revisions]

    status, page = _page(moved, moved.limited)
    assert status == 200 and _words(page) == []
    shown = [at for at, in_pub in moved.revisions if in_pub]
    assert _history(page) == shown and len(shown) == 4
    # Each listed revision's "as of then" page opens, and shows nothing of the others either.
    for at in shown:
        status, then = _page(moved, moved.limited, at=at)
        assert status == 200 and _words(then) == [], at


def test_a_limited_tokens_page_as_of_a_hidden_revision_shows_nothing_of_it(moved: Moved) -> None:
    hidden = [at for at, in_pub in moved.revisions if not in_pub]
    assert len(hidden) == 5
    for at in hidden:
        status, page = _page(moved, moved.limited, at=at)
        assert _words(page) == [], at
        assert "not_found" in page and "ferry" not in page.lower(), (status, at)
