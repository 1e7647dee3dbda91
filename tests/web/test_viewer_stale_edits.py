"""An edit sent from a page loaded before an agent changed the node (decision 468), in process (the
viewer as `kaeru serve --http` mounts it, asked over ASGI — no server started), both backends: a
board's move of a task an agent has since finished is refused with "changed since you loaded the
page" and the task stays done (it was reopened, the agent's change lost, and the page said
"applied"); the node page's layer form sends only what the person changed, so a pin or layer an
agent set since is kept (changing only the layer unpinned the node). A move from a fresh page still
applies."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import urlencode

from starlette.testclient import TestClient

from tests.web.inprocess import BASE
from tests.working.conftest import Call

FORM = {"Origin": BASE, "Content-Type": "application/x-www-form-urlencoded"}


def _form(page: str, op: str, node: str) -> dict[str, str]:
    """The hidden fields of the page's `op` form for `node`, as the browser would send them."""
    for found in re.finditer(r'<form class="edit"[^>]*data-op="(\w+)">(.*?)</form>', page, re.S):
        fields = {
            k: unescape(v)
            for k, v in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', found.group(2))
        }
        if found.group(1) == op and fields.get("node") == node:
            return fields
    raise AssertionError(f"no {op} form for {node}")


def _send(client: TestClient, fields: dict[str, str]) -> str:
    """Post a form and follow its redirect: the notice the page then shows."""
    answer = client.post("/ui/edit", content=urlencode(fields).encode(), headers=FORM, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    said = re.search(r'id="edited">([^<]*)</p>', client.get(answer.headers["location"]).text)
    assert said is not None
    return unescape(said.group(1))


def _node(call: Call, initiative: str, node: str) -> dict[str, object]:
    hit: dict[str, object] = call("read", initiative=initiative, node={"id": node})["data"]["hits"][0]
    return hit


def test_a_move_from_a_board_loaded_before_an_agent_finished_the_task_is_refused(
    client: TestClient, call: Call
) -> None:
    task = call("task", initiative="work", name="Ship it", text="ship the release")["data"]["primary"]["id"]
    board = client.get("/ui/board?i=work").text
    move = _form(board, "move", task)
    call("task_update", initiative="work", task={"id": task}, status="done")  # the agent, meanwhile

    said = _send(client, {**move, "status": "in-progress"})
    assert said.startswith("move: refused — changed since you loaded the page: reload it"), said
    assert _node(call, "work", task)["status"] == "done", "the agent's change stands"

    # Reloaded, the same move applies: the card carries the revision it was drawn from.
    fresh = _form(client.get("/ui/board?i=work").text, "move", task)
    assert _send(client, {**fresh, "status": "in-progress"}) == "move: applied"
    assert _node(call, "work", task)["status"] == "in-progress"


def test_a_layer_form_sends_only_what_the_person_changed(client: TestClient, call: Call) -> None:
    node = call("note", initiative="work", name="Checklist", text="before a release")["data"]["primary"]["id"]
    layer = _form(client.get(f"/ui/node?i=work&id={node}").text, "layer", node)
    call("layer", initiative="work", nodes=[{"id": node}], pin=True)  # the agent pins it, meanwhile

    # The person changes only the layer; the pin box is still unticked as the page was drawn.
    assert _send(client, {**layer, "layer": "hot"}) == "layer: applied"
    after = _node(call, "work", node)
    assert (after["layer"], after["pinned"]) == ("hot", True), "the agent's pin is kept"

    # A page drawn now (pinned, hot); the agent moves it to cold; the person unticks the pin only.
    layer = _form(client.get(f"/ui/node?i=work&id={node}").text, "layer", node)
    call("layer", initiative="work", nodes=[{"id": node}], layer="cold")
    assert _send(client, {**layer, "layer": "hot"}) == "layer: applied"  # the select as drawn, no `pin` field
    after = _node(call, "work", node)
    assert (after["layer"], after["pinned"]) == ("cold", False), "unpinned as asked; the agent's layer kept"
