"""A token limited to some initiatives sees a revision of a node only when, at that revision, the node
was in one of them — the rule `read … at` applies — in every read that shows past revisions: `trail
kind=history` (its pages and their counts), `recall` with `explore_history` (supersession chains
included), `current_state` as of a moment. And `read … at` misses a node it may not see with the very
words of an id that does not exist (decision 15.K2). Both backends; the admin sees every revision."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kaeru.domain.timefmt import fmt
from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from tests.service.support import Clock

PUB = "pub"
SECRET = "secret-proj"
#: Words only the revisions written while the node was in `SECRET` alone ever held.
HIDDEN_WORDS = ("zebulon", "xylophage", "walrus", "narwhal")
LIMITED = grants.Principal("lim", frozenset({PUB}))


class Vault:
    """The tools' handlers on a vault whose clock moves ten seconds before every call."""

    def __init__(self, service: Service, clock: Clock):
        self.registry = build_server(service).registry
        self.clock = clock

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        self.clock.tick()
        envelope: dict[str, Any] = self.registry.run(tool, args)
        return envelope

    def ok(self, tool: str, **args: Any) -> dict[str, Any]:
        envelope = self.call(tool, **args)
        assert envelope["state"] in ("ok", "applied"), envelope["issues"]
        return envelope

    def write(self, tool: str, **args: Any) -> str:
        node_id: str = self.ok(tool, **args)["data"]["primary"]["id"]
        return node_id

    def move(self, node: str, action: str, initiative: str) -> None:
        self.ok("initiative", initiative=initiative, action=action, node={"id": node})

    def as_limited(self, tool: str, **args: Any) -> dict[str, Any]:
        with grants.acting(LIMITED):
            return self.call(tool, **args)


@pytest.fixture
def vault(timed: Service, clock: Clock) -> Vault:
    return Vault(timed, clock)


def _moved_node(v: Vault) -> str:
    """A node written in `SECRET`, shared with `PUB`, back in `SECRET` alone, then moved to `PUB`:
    its memberships change several times, and two of its revisions are in both initiatives."""
    node = v.write("note", initiative=SECRET, name="zebulon plan", text="launch codeword xylophage")
    v.ok("revise", initiative=SECRET, node={"id": node}, patch={"name": "ferry plan", "body": "ferry"})
    v.move(node, "attach", PUB)  # in both
    v.ok("revise", initiative=PUB, node={"id": node}, patch={"body": "the ferry leaves at nine"})  # in both
    v.move(node, "detach", PUB)  # SECRET alone again
    v.ok("revise", initiative=SECRET, node={"id": node}, patch={"body": "walrus protocol"})
    v.ok("revise", initiative=SECRET, node={"id": node}, patch={"body": "the ferry leaves at ten"})
    v.move(node, "attach", PUB)
    v.move(node, "detach", SECRET)
    v.ok("revise", initiative=PUB, node={"id": node}, patch={"body": "the ferry leaves at eleven"})
    return node


def _revisions(trail: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in trail["data"]["entries"] if e["kind"] == "revision"]


def _hidden_words(answer: dict[str, Any]) -> list[str]:
    text = json.dumps(answer, ensure_ascii=False).lower()
    return [w for w in HIDDEN_WORDS if w in text]


def test_a_moved_nodes_history_shows_a_limited_token_the_revisions_read_at_shows_it(vault: Vault) -> None:
    node = _moved_node(vault)
    everything = vault.ok("trail", initiative=PUB, node={"id": node}, kind="history", limit=50)
    every = _revisions(everything)
    assert len(every) == 10 and _hidden_words(everything) == list(HIDDEN_WORDS[:3])  # the admin sees all
    in_pub = [e["at"] for e in every if PUB in e["node"]["initiatives"]]
    assert len(in_pub) == 5

    mine = vault.as_limited("trail", initiative=PUB, node={"id": node}, kind="history", limit=50)
    assert [e["at"] for e in _revisions(mine)] == in_pub
    assert mine["data"]["total"] == 5 and mine["coverage"]["complete"]
    assert _hidden_words(mine) == []
    first = _revisions(mine)[0]
    # It was not created then: revised, its changes given as from nothing (what came before is not shown).
    assert first["action"] == "revised" and all(c["before"] is None for c in first["changes"])
    # After the revisions in SECRET alone, a revision is compared with the last one the token saw.
    back = _revisions(mine)[2]
    assert {c["field"]: (c["before"], c["after"]) for c in back["changes"]}["body"] == (
        "the ferry leaves at nine",
        "the ferry leaves at ten",
    )
    # One rule: `read … at` each revision's time answers exactly for the revisions the trail shows.
    for entry in every:
        read = vault.as_limited("read", initiative=PUB, node={"id": node}, at=entry["at"])
        assert (read["state"] == "ok") == (entry["at"] in in_pub), entry
        assert _hidden_words(read) == []


def test_a_limited_tokens_history_pages_over_the_revisions_it_may_see_only(vault: Vault) -> None:
    node = _moved_node(vault)
    edge_to = vault.write("note", initiative=PUB, name="timetable", text="the timetable")
    vault.ok("link", initiative=PUB, action="add", **{"from": node}, to=edge_to, edge_type="refers_to", weight=0.5)
    whole = vault.as_limited("trail", initiative=PUB, node={"id": node}, kind="history", limit=50)
    assert whole["data"]["total"] == 6  # five revisions and the link
    seen: list[tuple[str, str]] = []
    answer = vault.as_limited("trail", initiative=PUB, node={"id": node}, kind="history", limit=2)
    while True:
        assert answer["data"]["total"] == 6 and _hidden_words(answer) == []
        seen += [(e["kind"], e["at"]) for e in answer["data"]["entries"]]
        if answer.get("continuation") is None:
            break
        assert answer["coverage"]["omitted"] == [{"section": "entries", "count": 6 - len(seen), "reason": "limit"}]
        answer = vault.as_limited("trail", **answer["continuation"]["next_arguments"])
    assert seen == [(e["kind"], e["at"]) for e in whole["data"]["entries"]]


def test_explore_history_lists_a_limited_token_the_revisions_it_may_see_along_the_chain(vault: Vault) -> None:
    node = _moved_node(vault)
    # A predecessor written in SECRET alone, then moved to PUB and superseded there.
    older = vault.write("note", initiative=SECRET, name="narwhal route", text="the narwhal ferry route")
    vault.ok(
        "revise", initiative=SECRET, node={"id": older}, patch={"name": "old route", "body": "the old ferry route"}
    )
    vault.move(older, "attach", PUB)
    vault.move(older, "detach", SECRET)
    newer = vault.write(
        "evolve", initiative=PUB, mode="supersede", source={"id": older}, new_body="the new ferry route"
    )
    asked = {"initiatives": [PUB], "query": "ferry", "task_intent": "explore_history", "limit": 50}
    admin = vault.ok("recall", **asked)
    assert {"xylophage", "narwhal"} <= set(_hidden_words(admin))
    mine = vault.as_limited("recall", **asked)
    assert mine["state"] == "ok" and _hidden_words(mine) == []
    listed = {(h["id"], h["revision"]) for h in mine["data"]["hits"]}
    assert {i for i, _ in listed} == {node, older, newer}
    # Exactly the revisions `trail` shows the token, each once, and no other counted.
    shown = 0
    for each in (node, older, newer):
        trail = vault.as_limited("trail", initiative=PUB, node={"id": each}, kind="history", limit=50)
        assert {r for i, r in listed if i == each} == {e["node"]["revision"] for e in _revisions(trail)}
        shown += len(_revisions(trail))
    assert mine["data"]["total"] == len(mine["data"]["hits"]) == len(listed) == shown == 5 + 2 + 1


def test_current_state_as_of_a_moment_the_node_was_hidden_is_not_found(vault: Vault) -> None:
    node = _moved_node(vault)
    first = _revisions(vault.ok("trail", initiative=PUB, node={"id": node}, kind="history", limit=50))[0]
    admin = vault.ok("current_state", initiative=PUB, node={"id": node}, as_of=first["at"])
    assert admin["data"]["status"] == "current" and "xylophage" in json.dumps(admin)
    mine = vault.as_limited("current_state", initiative=PUB, node={"id": node}, as_of=first["at"])
    assert mine["data"]["status"] == "not_found" and _hidden_words(mine) == []
    now = vault.as_limited("current_state", initiative=PUB, node={"id": node})
    assert now["data"]["status"] == "current"


def test_read_at_misses_a_node_it_may_not_see_as_it_misses_an_unknown_id(vault: Vault) -> None:
    vault.write("note", initiative=PUB, text="a pub note")
    live = vault.write("note", initiative=SECRET, text="secret live")
    gone = vault.write("note", initiative=SECRET, text="secret forgotten")
    vault.ok("forget", initiative=SECRET, node={"id": gone}, reason="not needed")
    unknown = "01a24920-0000-7000-8000-000000000000"
    at = fmt(vault.clock.tick())
    for ref in (lambda i: i, lambda i: {"id": i}):
        misses = set()
        for node in (unknown, live, gone):
            for moment in ({}, {"at": at}):
                answer = vault.as_limited("read", initiative=PUB, node=ref(node), **moment)
                assert answer["state"] == "rejected", answer
                [issue] = answer["issues"]
                misses.add((issue["code"], issue["message"].replace(node, "<id>"), issue.get("field")))
        assert len(misses) == 1, misses
    # The admin is told what it is, as before.
    answer = vault.call("read", initiative=PUB, node={"id": gone}, at=at)
    assert answer["issues"][0]["message"] == f"the node did not exist (or was forgotten) at {at}"


def test_read_at_a_moment_a_visible_node_was_hidden_reads_as_before_it_existed(vault: Vault) -> None:
    before = fmt(vault.clock.now)
    node = _moved_node(vault)
    first = _revisions(vault.ok("trail", initiative=PUB, node={"id": node}, kind="history", limit=50))[0]
    hidden = vault.as_limited("read", initiative=PUB, node={"id": node}, at=first["at"])
    earlier = vault.as_limited("read", initiative=PUB, node={"id": node}, at=before)
    assert hidden["state"] == earlier["state"] == "rejected"
    assert hidden["issues"][0]["message"].replace(first["at"], "<at>") == earlier["issues"][0]["message"].replace(
        before, "<at>"
    )
    assert _hidden_words(hidden) == []
