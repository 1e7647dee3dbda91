"""The board marks a task overdue exactly when the service says it is (`tasks.is_overdue`): a due day
before the user's today, in KAERU_TIMEZONE, while the task is in no column that closes it. The
board had its own copy of the rule, which took the board's last column for the closing one: on a
board whose `done` is not last, a finished task was marked overdue and a task left open in the last
column was not. In process, on both backends: the viewer's app over the tools of a service whose
clock the test moves, asked for the board page as a browser would (`GET /ui/board`)."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from typing import Any

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.web.app import Backend, ui_app
from tests.backends import VaultSpec
from tests.working.conftest import Clock, make_call

HOST = "viewer.test"
CARD = re.compile(r'<li class="card" [^>]*data-id="([^"]+)">(.*?)</li>', re.S)


def _board_page(service: Service, initiative: str) -> str:
    """The board's HTML, served by the viewer's app to the local admin (no token set)."""

    async def refuse(token: str) -> None:
        return None

    async def open_to_local(scope: object) -> bool:
        return False

    backend = Backend(
        call=build_server(service).registry.envelope,
        verify=refuse,
        required=open_to_local,
        allowed_hosts=[HOST],
        allowed_origins=[],
    )
    app = ui_app(backend)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/ui/board",
        "root_path": "/ui",
        "query_string": f"i={initiative}".encode(),
        "headers": [(b"host", HOST.encode())],
    }
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 200, sent
    return b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body").decode()


def _marked_overdue(html: str) -> set[str]:
    cards = CARD.findall(html)
    assert cards, "the board shows its tasks"
    return {node for node, inside in cards if '<span class="state">overdue</span>' in inside}


def test_the_board_and_the_service_agree_on_overdue_at_the_users_day_edges(store: Store, vault: VaultSpec) -> None:
    clock = Clock(datetime(2026, 12, 5, 1, 0, tzinfo=UTC))  # 17:00 on the 4th in Los Angeles
    service = Service(store, vault.settings(timezone="America/Los_Angeles"), clock=clock)
    call = make_call(service)
    columns = [
        {"key": "open", "label": "Open"},
        {"key": "shelved", "label": "Shelved"},
        {"key": "done", "label": "Done"},
        {"key": "dropped", "label": "Dropped"},
    ]
    assert call("initiative", initiative="tz", action="set_board", columns=columns)["state"] != "rejected"

    def task(name: str, due: str, status: str = "open") -> str:
        made = call("task", initiative="tz", name=name, text=name, due=due, status=status)
        assert made["state"] != "rejected", made
        node: str = made["data"]["primary"]["id"]
        return node

    yesterday = task("due yesterday", "2026-12-03")
    today = task("due today", "2026-12-04")
    tomorrow = task("due tomorrow, UTC's today", "2026-12-05")
    shelved = task("shelved, due yesterday", "2026-12-03", "shelved")  # open: before `done`
    done = task("done, due yesterday", "2026-12-03", "done")
    dropped = task("dropped, due yesterday", "2026-12-03", "dropped")  # closed: after `done` (decision 460)

    def service_says() -> set[str]:
        tasks = next(s for s in call("context", initiative="tz")["data"]["sections"] if s["name"] == "tasks")
        reflected = {
            i["node"] for i in call("reflect", initiative="tz")["data"]["items"] if i["kind"] == "overdue_task"
        }
        assert set(tasks["overdue"]) == reflected
        return reflected

    assert service_says() == {yesterday, shelved}
    assert _marked_overdue(_board_page(service, "tz")) == {yesterday, shelved}
    clock.advance(hours=8)  # 01:00 on the 5th in Los Angeles: the task due on the 4th is late now
    assert service_says() == {yesterday, today, shelved}
    assert _marked_overdue(_board_page(service, "tz")) == {yesterday, today, shelved}
    assert tomorrow not in service_says() and done not in service_says() and dropped not in service_says()
