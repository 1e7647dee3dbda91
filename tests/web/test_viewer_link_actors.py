"""The viewer's node page names who added or removed each link in its history, as it names who
revised the node (decision 476 left link events without one). Two people link and unlink under
their own names; the page says each. In process, on both backends: the viewer as `kaeru serve
--http` mounts it, asked over ASGI with the admin's bearer token."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.web.inprocess import viewer_client

ADMIN = "link-actors-admin-token-k4"
EVENT = re.compile(r'<li class="edge-event">(.*?)</li>', re.S)


def test_the_node_pages_link_events_name_who_made_them(service: Service, store: Store, vault: VaultSpec) -> None:
    run = build_server(service).registry.run

    def as_(who: str, tool: str, **args: Any) -> dict[str, Any]:
        with grants.acting(grants.Principal(who)):
            answer = run(tool, {"initiative": "site", **args})
        assert answer["state"] == "applied", answer
        return answer

    a = as_("ann", "note", name="A", text="note A")["data"]["primary"]["id"]
    b = as_("ann", "note", name="B", text="note B")["data"]["primary"]["id"]
    ends = {"from": {"id": a}, "to": {"id": b}}
    as_("ann", "link", action="add", edge_type="refers_to", weight=0.6, **ends)
    as_("ben", "link", action="remove", edge_type="refers_to", **ends)
    with viewer_client(service, store, vault, ADMIN) as client:
        page = client.get(f"/ui/node?i=site&id={a}")
    assert page.status_code == 200
    events = [" ".join(unescape(e).split()) for e in EVENT.findall(page.text)]
    assert [e.split(": ", 1)[0].split()[-1] for e in events] == ["added", "removed"], events
    assert [e.rsplit(" by ", 1)[-1] for e in events] == ["ann", "ben"], events
