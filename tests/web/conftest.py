"""The viewer in a real browser: Debian's headless Chromium driven by Playwright (no browser download).

One vault per backend and module, seeded with a small fixture through the tools; one real
`kaeru serve --http` on it (admin token set); one browser per module. Screenshots of each view go
to `$KAERU_SCREENSHOTS` when set (`KAERU_SCREENSHOTS=docs/screenshots` regenerates the committed
ones), else to `screenshots/` under pytest's temporary directory (kept as test artifacts).

And the in-process tests' `client` (the viewer asked over ASGI with an admin's token, no server or
browser) and `call` (the tools' handlers), on the vault of the test's backend.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from kaeru.config import Settings
from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from kaeru.web.pages import TRAIL_PAGE
from tests.backends import BACKENDS, VaultSpec, drop_vault, new_vault, postgres_admin_url
from tests.web.inprocess import viewer_client
from tests.wire.support import HttpServer, http_server, subprocess_env
from tests.working.conftest import Call, make_call

ADMIN = "web-admin-token-19w"
ADMIN_ACTOR = "web-admin"
#: The admin token of the in-process viewer (`client`).
IN_PROCESS_ADMIN = "in-process-admin-token-55"
#: Nodes in the big initiative: more than one graph window holds.
BIG = 130
#: The revisions of the `log` note: its history is longer than a node page shows (`TRAIL_PAGE`).
LOG_REVISIONS = TRAIL_PAGE + 5


def chromium() -> str | None:
    """Debian's Chromium (scripts/test.sh installs it when missing)."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


@dataclass
class Fixture:
    """What the seed made: ids by role, and a person's token limited to `web`."""

    ids: dict[str, str] = field(default_factory=dict)
    alice: str = ""
    #: A read-only token for every initiative.
    rita: str = ""
    #: The body of `decision` before its revision.
    first_body: str = ""
    #: A moment at which `budget` (linked to `decision`) still had its first name, "Budget v1".
    before_rename: str = ""


@dataclass
class Site:
    vault: VaultSpec
    server: HttpServer
    fixture: Fixture
    env: dict[str, str]

    @property
    def base(self) -> str:
        return self.server.base


def seed(settings: Settings) -> Fixture:
    """The fixture, written through the tools' handlers (as the seeding agent)."""
    store = open_store(settings)
    try:
        service = Service(store, settings)
        run = build_server(service).registry.run
        fixture = Fixture()

        def write(name: str, args: dict[str, Any]) -> str:
            envelope = run(name, args)
            assert envelope["state"] != "rejected", envelope
            node_id: str = envelope["data"]["primary"]["id"]
            return node_id

        ids = fixture.ids
        fixture.first_body = "Render the graph on the server."
        ids["decision"] = write(
            "note",
            {"initiative": "web", "kind": "decision", "name": "Use SVG", "text": fixture.first_body, "tags": ["ui"]},
        )
        ids["rule"] = write(
            "note",
            {
                "initiative": "web",
                "kind": "rule",
                "name": "No CDN",
                "text": "Never load anything from a CDN.",
                "link_to": ids["decision"],
                "edge_type": "refers_to",
                "weight": 0.8,
            },
        )
        write(
            "revise",
            {"initiative": "web", "node": ids["decision"], "patch": {"body": "Render the graph on the server as SVG."}},
        )
        ids["task"] = write(
            "task",
            {
                "initiative": "web",
                "name": "Browser tests",
                "text": "Write the browser tests.",
                "due": "2030-01-15",
                "link_to": ids["decision"],
                "edge_type": "targets",
                "weight": 0.6,
            },
        )
        ids["done"] = write(
            "task", {"initiative": "web", "name": "Pick a renderer", "text": "Choose SVG or canvas.", "status": "done"}
        )
        ids["claim"] = write(
            "claim", {"initiative": "web", "text": "SVG stays fast at a hundred nodes", "about": ids["decision"]}
        )
        ids["old"] = write(
            "note", {"initiative": "web", "kind": "decision", "name": "Use canvas", "text": "Draw on a canvas."}
        )
        ids["new"] = write(
            "evolve",
            {
                "initiative": "web",
                "mode": "supersede",
                "source": ids["old"],
                "new_name": "Use SVG, not canvas",
                "new_body": "Draw with SVG: nodes are elements a test can find.",
            },
        )
        ids["flagged"] = write(
            "note", {"initiative": "web", "name": "Cache pages", "text": "Pages are cached for an hour."}
        )
        write("review", {"initiative": "web", "action": "flag", "target": ids["flagged"], "reason": "still true?"})
        ids["log"] = write("note", {"initiative": "web", "name": "Release log", "text": "Release 0."})
        for n in range(1, LOG_REVISIONS):
            write("revise", {"initiative": "web", "node": ids["log"], "patch": {"body": f"Release {n}."}})
        ids["budget"] = write(
            "note", {"initiative": "web", "name": "Budget v1", "text": "Two days of work.", "link_to": ids["decision"]}
        )
        fixture.before_rename = datetime.now(UTC).isoformat()
        write("revise", {"initiative": "web", "node": ids["budget"], "patch": {"name": "Budget v2"}})
        ids["payroll"] = write("note", {"initiative": "payroll", "name": "Salaries", "text": "payroll zq19secret"})
        previous = None
        for n in range(BIG):
            args: dict[str, Any] = {"initiative": "big", "name": f"step {n:03d}", "text": f"Step number {n}."}
            if previous is not None:
                args.update(link_to=previous, edge_type="temporal", weight=0.5)
            previous = write("note", args)
        ids["big_last"] = previous or ""
        token, _ = grants.add_token(service.rt, "alice", ["web"], False, "test")
        fixture.alice = token
        fixture.rita, _ = grants.add_token(service.rt, "rita", None, True, "test")
        return fixture
    finally:
        store.close()


@pytest.fixture(scope="module", params=BACKENDS)
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    backend: str = request.param
    if backend == "postgres" and not postgres_admin_url():
        pytest.skip("PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (make test starts one)")
    home = tmp_path_factory.mktemp(f"web-{backend}")
    vault = new_vault(backend, home)
    try:
        fixture = seed(vault.settings(actor="seeder"))
        env = subprocess_env(vault.env(), KAERU_AUTH_TOKEN=ADMIN, KAERU_ACTOR=ADMIN_ACTOR)
        with http_server(env, home) as server:
            yield Site(vault, server, fixture, env)
    finally:
        drop_vault(vault)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra")
    executable = chromium()
    if executable is None:
        pytest.skip(
            "no Chromium on this machine and it could not be installed "
            "(scripts/test.sh runs apt-get install chromium as root)"
        )
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context (no cookie) and page."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chosen = os.environ.get("KAERU_SCREENSHOTS")
    where = Path(chosen) if chosen else tmp_path_factory.getbasetemp() / "screenshots"
    where.mkdir(parents=True, exist_ok=True)
    return where


@pytest.fixture
def client(service: Service, store: Store, vault: VaultSpec) -> Iterator[TestClient]:
    """The viewer in process on the test's vault, every request carrying an admin's token."""
    with viewer_client(service, store, vault, IN_PROCESS_ADMIN) as asking:
        yield asking


@pytest.fixture
def call(service: Service) -> Call:
    """The tools' handlers on the test's vault, each call's answer checked against its schema."""
    return make_call(service)
