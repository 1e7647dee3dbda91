"""Superseding a node that was superseded before: a node keeps its name when it is superseded, so an
agent that updates a fact by the name it gave it names the old node again. The second successor
forked the fact — two current ports in `context`, `search` and `recall`, a conflict only
`current_state` told. The new node now supersedes the current version too, and says so; an
explicit `link` (which may mean a split) warns; a `revise` of a superseded node warns that readers
answer its successor; `reflect` lists the forks there are (decision 462). Both backends."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.service import grants, supersession
from tests.working.conftest import Call

PORT = "dev server port"


def _id(answer: dict[str, Any]) -> str:
    assert answer["state"] == "applied", answer["issues"]
    node: str = answer["data"]["primary"]["id"]
    return node


def _issues(answer: dict[str, Any], code: str) -> list[str]:
    return [i["message"] for i in answer["issues"] if i["code"] == code]


def _current_hits(call: Call, initiative: str, text: str) -> list[str]:
    return [h["body"] for h in call("search", initiatives=[initiative], text=text)["data"]["hits"]]


def _read(call: Call, node: str) -> dict[str, Any]:
    hit: dict[str, Any] = call("read", initiative="p", node={"id": node})["data"]["hits"][0]
    return hit


def _supersede(call: Call, source: Any, body: str, **more: Any) -> dict[str, Any]:
    return call("evolve", initiative="p", mode="supersede", source=source, new_body=body, **more)


def test_superseding_a_fact_by_its_name_twice_leaves_one_current_value(call: Call) -> None:
    old = _id(call("note", initiative="p", text="The dev server listens on port 8080.", name=PORT))
    first = _id(_supersede(call, PORT, "The dev server listens on port 9090."))
    args = {"initiative": "p", "mode": "supersede", "source": PORT, "new_body": "The dev server listens on port 8443."}
    answer = call("evolve", request_id="again", **args)
    second = _id(answer)
    [said] = _issues(answer, "superseded_current_too")
    assert first in said and f"'{PORT}'" in said
    assert _current_hits(call, "p", "dev server port") == ["The dev server listens on port 8443."]
    assert _read(call, first)["successors"] == [second] and _read(call, second)["currentness"] == "current"
    assert sorted(_read(call, old)["successors"]) == sorted([first, second])  # the edge the call named
    warm = [i for s in call("context", initiative="p")["data"]["sections"] for i in s["items"]]
    assert [i["body"] for i in warm if i["currentness"] == "current"] == ["The dev server listens on port 8443."]
    # Replayed, the same answer and no second write.
    again = call("evolve", request_id="again", **args)
    assert again["replayed"] and again["data"] == answer["data"] and again["issues"] == answer["issues"]
    assert _current_hits(call, "p", "dev server port") == ["The dev server listens on port 8443."]


def test_a_decision_superseded_twice_through_link_to_has_one_current_version(call: Call) -> None:
    call("note", initiative="p", kind="decision", name="ORM choice", text="Use SQLAlchemy 2.0.")
    link = {"link_to": "ORM choice", "edge_type": "supersedes", "weight": 1.0}
    v2 = _id(call("note", initiative="p", kind="decision", name="ORM choice v2", text="Use raw SQL.", **link))
    answer = call("note", initiative="p", kind="decision", name="ORM choice v3", text="Use Piccolo ORM.", **link)
    v3 = _id(answer)
    [said] = _issues(answer, "superseded_current_too")
    assert "'ORM choice v2'" in said and v2 in said
    decisions = next(s for s in call("context", initiative="p")["data"]["sections"] if s["name"] == "decisions")
    assert [i["id"] for i in decisions["items"]] == [v3]


def test_the_current_version_hands_its_slot_on(call: Call) -> None:
    call("note", initiative="p", text="The dev server listens on port 8080.", name=PORT, options={"slot": "port"})
    _supersede(call, PORT, "The dev server listens on port 9090.")
    newest = _id(_supersede(call, PORT, "The dev server listens on port 8443."))
    state = call("current_state", initiative="p", slot="port")["data"]
    assert state["status"] == "current" and state["current"]["id"] == newest


def test_superseding_the_current_version_itself_says_nothing(call: Call) -> None:
    call("note", initiative="p", text="The dev server listens on port 8080.", name=PORT)
    first = _id(_supersede(call, PORT, "The dev server listens on port 9090."))
    answer = _supersede(call, {"id": first}, "The dev server listens on port 8443.")
    assert answer["state"] == "applied" and answer["issues"] == []


def test_a_current_version_in_another_initiative_stays_current_and_is_named(call: Call) -> None:
    old = _id(call("note", initiative="p", text="the cache lives on redis", name="cache"))
    elsewhere = _id(call("note", initiative="q", text="the cache moved to memcached"))
    link = {"from": {"id": elsewhere}, "to": {"id": old}, "edge_type": "supersedes", "weight": 1.0}
    assert call("link", initiative="q", **link)["state"] == "applied"
    answer = _supersede(call, "cache", "the cache moved to valkey")
    [said] = _issues(answer, "superseded_current_too")
    assert elsewhere in said and "outside 'p'" in said
    assert call("read", initiative="q", node={"id": elsewhere})["data"]["hits"][0]["currentness"] == "current"


def test_a_limited_token_neither_supersedes_nor_names_a_version_it_may_not_see(call: Call) -> None:
    old = _id(call("note", initiative="pub", text="the wiki lives on confluence", name="wiki"))
    hidden = _id(call("note", initiative="secret-proj", text="the wiki moved to the secret notion"))
    link = {"from": {"id": hidden}, "to": {"id": old}, "edge_type": "supersedes", "weight": 1.0}
    assert call("link", initiative="secret-proj", **link)["state"] == "applied"
    with grants.acting(grants.Principal("lim", frozenset({"pub"}))):
        answer = call(
            "evolve", initiative="pub", mode="supersede", source="wiki", new_body="the wiki moved to bookstack"
        )
    assert answer["state"] == "applied" and hidden not in str(answer) and "notion" not in str(answer)
    state = call("read", initiative="secret-proj", node={"id": hidden})["data"]["hits"][0]
    assert state["currentness"] == "current"


def test_a_chain_longer_than_the_walk_is_said(call: Call, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supersession, "MAX_CHAIN", 2)
    call("note", initiative="p", text="release train v1", name="train")
    here = "train"
    for n in range(2, 5):
        here = _id(_supersede(call, {"id": here} if n > 2 else here, f"release train v{n}"))
    answer = _supersede(call, "train", "release train v9")
    [said] = _issues(answer, "superseded_current_too")
    assert "longer than a write follows" in said


def test_an_explicit_link_beside_a_current_successor_warns_and_keeps_both(call: Call) -> None:
    old = _id(call("note", initiative="p", text="the build listens on port 8080", name="build port"))
    one = _id(_supersede(call, "build port", "the build listens on port 8081"))
    other = _id(call("note", initiative="p", text="the build listens on port 9090"))
    link = {"from": {"id": other}, "to": {"id": old}, "edge_type": "supersedes", "weight": 1.0}
    answer = call("link", initiative="p", **link)
    [said] = _issues(answer, "supersession_forked")
    assert one in said and "stays current" in said
    assert call("current_state", initiative="p", node={"id": old})["data"]["status"] == "conflict"
    # Linking the newest over the other, as the warning says, ends the fork without a word.
    again = call("link", initiative="p", **{**link, "to": {"id": one}})
    assert again["state"] == "applied" and _issues(again, "supersession_forked") == []


def test_revising_a_superseded_node_warns_that_readers_answer_its_successor(call: Call) -> None:
    call("note", initiative="p", text="The dev server listens on port 8080.", name=PORT)
    first = _id(_supersede(call, PORT, "The dev server listens on port 9090."))
    answer = call("revise", initiative="p", node=PORT, patch={"body": "The dev server listens on port 7000."})
    [said] = _issues(answer, "revised_superseded")
    assert first in said and f"'{PORT}' is superseded" in said
    # Only the name: what the old record is called, not what it says; and the current node: no warning.
    renamed = call("revise", initiative="p", node=PORT, patch={"name": "dev server port (old)"})
    assert renamed["state"] == "applied" and renamed["issues"] == []
    current = call("revise", initiative="p", node={"id": first}, patch={"body": "The dev server listens on 9091."})
    assert current["state"] == "applied" and current["issues"] == []


def test_reflect_lists_a_fork_with_the_link_that_ends_it(call: Call) -> None:
    old = _id(call("note", initiative="p", text="deploys go through jenkins", name="deploys"))
    one = _id(_supersede(call, "deploys", "deploys go through github actions"))
    other = _id(call("note", initiative="p", text="deploys go through buildkite"))
    call("link", initiative="p", **{"from": {"id": other}, "to": {"id": old}}, edge_type="supersedes", weight=1.0)
    # A chain that did not fork is no finding.
    call("note", initiative="p", text="the linter is flake8", name="linter")
    _supersede(call, "linter", "the linter is ruff")
    reflected = call("reflect", initiative="p")["data"]
    [item] = [i for i in reflected["items"] if i["kind"] == "forked_supersession"]
    assert item["node"] == old and one in item["message"] and other in item["message"]
    assert item["fix"]["tool"] == "link" and item["fix"]["arguments"]["from"] == other
    assert item["fix"]["arguments"]["to"] == one
    assert call(item["fix"]["tool"], **item["fix"]["arguments"])["state"] == "applied"
    after = call("reflect", initiative="p")["data"]["items"]
    assert [i for i in after if i["kind"] == "forked_supersession"] == []
    assert _current_hits(call, "p", "deploys") == ["deploys go through buildkite"]


def test_current_state_on_the_old_name_answers_the_one_current_version(call: Call) -> None:
    """The old node is superseded by both versions, the newest by way of the one before too:
    `current_state` follows the newest, not a conflict between the two (decision 462)."""
    old = _id(call("note", initiative="p", text="The dev server listens on port 8080.", name=PORT))
    first = _id(_supersede(call, PORT, "The dev server listens on port 9090."))
    second = _id(_supersede(call, PORT, "The dev server listens on port 8443."))
    for as_of in ({}, {"as_of": _read(call, second)["recorded_at"]}):  # now, and as of a moment
        state = call("current_state", initiative="p", node=PORT, **as_of)["data"]
        assert state["status"] == "current" and state["current"]["id"] == second
        assert {p["id"] for p in state["predecessors"]} == {first, old}
    with grants.acting(grants.Principal("lim", frozenset({"p"}))):
        assert call("current_state", initiative="p", node=PORT)["data"]["current"]["id"] == second
    # A fork a `link` made and reflect's fix ended: the newest is current, the old node not in conflict.
    other = _id(call("note", initiative="p", text="The dev server listens on port 3000."))
    split = {"from": {"id": other}, "to": {"id": old}, "edge_type": "supersedes", "weight": 1.0}
    call("link", initiative="p", **split)
    assert call("current_state", initiative="p", node=PORT)["data"]["status"] == "conflict"
    call("link", initiative="p", **{**split, "to": {"id": second}})
    state = call("current_state", initiative="p", node=PORT)["data"]
    assert state["status"] == "current" and state["current"]["id"] == other


def test_reflect_for_a_limited_token_counts_no_fork_through_a_version_it_may_not_see(call: Call) -> None:
    """A fork whose other version is in an initiative outside the token's grants: counted, then its
    item dropped, it said `forked_supersession: 1` over no item — that a hidden superseder exists."""
    base = _id(call("note", initiative="pub", text="the wiki lives on confluence", name="wiki"))
    seen = _id(call("note", initiative="pub", text="the wiki moved to bookstack"))
    hidden = _id(call("note", initiative="secret-proj", text="the wiki moved to the secret notion"))
    for source, initiative in ((seen, "pub"), (hidden, "secret-proj")):
        link = {"from": {"id": source}, "to": {"id": base}, "edge_type": "supersedes", "weight": 1.0}
        assert call("link", initiative=initiative, **link)["state"] == "applied"
    assert call("reflect", initiative="pub")["data"]["counts"].get("forked_supersession") == 1, "the admin sees it"
    with grants.acting(grants.Principal("lim", frozenset({"pub"}))):
        limited = call("reflect", initiative="pub")["data"]
    assert "forked_supersession" not in limited["counts"], limited["counts"]
    assert hidden not in str(limited) and "notion" not in str(limited)
