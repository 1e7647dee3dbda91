"""`current_state` of a node named by id answers as `read` does (decision 296): as of a moment
before it was forgotten, the node as it was; after a settle, the successor it lives on as."""

from __future__ import annotations

from typing import Any

from tests.working.conftest import Call, Clock


def test_as_of_a_moment_before_it_was_forgotten_the_node_was_current(call: Call, clock: Clock) -> None:
    node = call("note", initiative="p", text="we use React 19", kind="decision")["data"]["primary"]["id"]
    clock.advance(minutes=5)
    before = "2026-03-02T09:02:00Z"
    call("forget", initiative="p", node={"id": node}, reason="wrong project")
    assert call("read", initiative="p", node={"id": node}, at=before)["data"]["hits"][0]["currentness"] == "current"
    state = call("current_state", initiative="p", node={"id": node}, as_of=before)["data"]
    assert state["status"] == "current" and state["current"]["id"] == node
    assert call("current_state", initiative="p", node={"id": node})["data"]["status"] == "not_found"
    earlier = call("current_state", initiative="p", node={"id": node}, as_of="2026-03-01T00:00:00Z")["data"]
    assert earlier["status"] == "not_found"


def test_a_settled_node_leads_to_what_it_was_settled_into(call: Call) -> None:
    claim = call("claim", initiative="p", text="the bundle doubled: moment.js locales", initial_status="supported")[
        "data"
    ]["primary"]["id"]
    settled = call("evolve", initiative="p", mode="settle", source={"id": claim})["data"]["primary"]["id"]
    state = call("current_state", initiative="p", node={"id": claim})["data"]
    assert state["status"] == "current" and state["current"]["id"] == settled
    missed = call("read", initiative="p", node={"id": claim})
    assert missed["state"] == "rejected" and settled in missed["issues"][0]["message"]


def test_a_miss_says_why_as_read_does(call: Call) -> None:
    """`current_state` answered a bare `not_found`: a misspelt slot or name got no did-you-mean, a
    forgotten node no word that it was forgotten, an unknown initiative nothing (decision 387)."""
    pump = call("note", initiative="p", text="the pump hums", name="pump hum")["data"]["primary"]["id"]
    gone = call("note", initiative="p", text="old", name="gone")["data"]["primary"]["id"]
    call("forget", initiative="p", node={"id": gone}, reason="wrong")
    call("slot", initiative="p", slot="handoff", node={"id": pump})

    def said(**args: Any) -> tuple[str, str, str]:
        answer = call("current_state", initiative="p", **args)
        assert answer["state"] == "ok" and answer["data"]["status"] == "not_found", answer
        [issue] = answer["issues"]
        return issue["code"], issue["field"], issue["message"]

    assert said(slot="handof") == ("not_found", "slot", "no slot 'handof' in 'p'; did you mean 'handoff'?")
    code, field, message = said(node="pump hums")
    assert (code, field) == ("not_found", "node") and "did you mean 'pump hum'?" in message
    assert "was forgotten at" in said(node={"id": gone})[2]
    answer = call("current_state", initiative="pp", slot="handoff")
    assert answer["data"]["status"] == "not_found" and answer["issues"][0]["code"] == "unknown_initiative"
    assert "did you mean 'p'?" in answer["issues"][0]["message"]
