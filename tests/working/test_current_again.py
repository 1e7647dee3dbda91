"""Forgetting the node that superseded a fact makes the fact current again (a node is superseded
only while a live node supersedes it): `search` and `context` answer the old value from then on.
That is the spec's rule, but it happened silently — deleting an initiative whose notes had
corrected facts elsewhere put every corrected value back without a word. The answer now warns,
naming what reads current again (decision 393). Both backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kaeru.config import Settings
from kaeru.service import Service, grants, initiatives
from kaeru.storage.factory import open_store
from tests.working.conftest import Call, LockBetweenTwoChunks, make_call


def _id(answer: dict[str, Any]) -> str:
    assert answer["state"] == "applied", answer["issues"]
    node: str = answer["data"]["primary"]["id"]
    return node


def _currentness(call: Call, initiative: str, node: str) -> str:
    hit: str = call("read", initiative=initiative, node={"id": node})["data"]["hits"][0]["currentness"]
    return hit


def _warned(answer: dict[str, Any]) -> list[str]:
    assert answer["state"] == "applied", answer["issues"]
    return [i["message"] for i in answer["issues"] if i["code"] == "superseded_current_again"]


def _supersede(call: Call, initiative: str, old: str, text: str) -> str:
    new = _id(call("note", initiative=initiative, text=text))
    link = {"from": {"id": new}, "to": {"id": old}, "edge_type": "supersedes", "weight": 1}
    assert call("link", initiative=initiative, **link)["state"] == "applied"
    assert _currentness(call, "p", old) == "superseded"
    return new


def test_forgetting_the_only_successor_warns_that_the_old_value_is_current_again(call: Call) -> None:
    old = _id(call("note", initiative="p", text="the api rate limit is 100 per minute", name="rate-limit-100"))
    new = _id(
        call("evolve", initiative="p", mode="supersede", source={"id": old}, new_body="the api rate limit is 500")
    )
    answer = call("forget", initiative="p", node={"id": new}, reason="wrong number")
    [message] = _warned(answer)
    assert "'rate-limit-100'" in message and "current again" in message
    assert _currentness(call, "p", old) == "current"


def test_no_warning_while_another_successor_still_supersedes_it(call: Call) -> None:
    old = _id(call("note", initiative="p", text="deploys go through jenkins"))
    first = _supersede(call, "p", old, "deploys go through github actions")
    _supersede(call, "p", old, "deploys go through buildkite")
    assert _warned(call("forget", initiative="p", node={"id": first}, reason="duplicate")) == []
    assert _currentness(call, "p", old) == "superseded"
    plain = _id(call("note", initiative="p", text="a note nothing supersedes"))
    assert _warned(call("forget", initiative="p", node={"id": plain}, reason="noise")) == []


@pytest.mark.parametrize("chunk", [None, 2])
def test_deleting_an_initiative_names_the_facts_elsewhere_it_alone_superseded(
    call: Call, monkeypatch: pytest.MonkeyPatch, chunk: int | None
) -> None:
    if chunk is not None:  # a large initiative is deleted a chunk per transaction: the warning survives
        monkeypatch.setattr(initiatives, "CHUNK", chunk)
    fact = _id(call("note", initiative="p", text="the cache lives on redis", name="cache-on-redis"))
    # q's own superseded note is forgotten with q: nothing to warn about there.
    own = _id(call("note", initiative="q", text="q's first draft"))
    _supersede(call, "q", own, "q's second draft")
    for i in range(4):
        call("note", initiative="q", text=f"q filler {i}")
    _supersede(call, "q", fact, "the cache moved to memcached")
    answer = call("initiative", initiative="q", action="delete")
    [message] = _warned(answer)
    assert "'cache-on-redis'" in message and "'q'" in message and "draft" not in message
    assert _currentness(call, "p", fact) == "current"


def test_a_limited_token_is_not_told_of_facts_it_may_not_see(call: Call) -> None:
    hidden = _id(call("note", initiative="secret-proj", text="the vault key rotates monthly", name="hidden-fact"))
    shown = _id(call("note", initiative="pub", text="the wiki moved to confluence", name="shown-fact"))
    both = _id(call("note", initiative="pub", text="the wiki moved to notion; the key rotates weekly"))
    for old in (hidden, shown):
        link = {"from": {"id": both}, "to": {"id": old}, "edge_type": "supersedes", "weight": 1}
        assert call("link", initiative="pub", **link)["state"] == "applied"
    with grants.acting(grants.Principal("lim", frozenset({"pub"}))):
        answer = call("forget", initiative="pub", node={"id": both}, reason="split it")
    [message] = _warned(answer)
    assert "'shown-fact'" in message and "hidden-fact" not in message and "secret-proj" not in message


def test_a_delete_the_vault_stops_part_way_still_warns_of_what_its_chunks_left_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delete stopped part way (another process holds the write lock past the wait, as in
    `test_chunked_initiatives`) answers `partial`; the chunks it applied had forgotten the only
    successor of a fact elsewhere, and a retry finds that done and cannot say it: the `partial`
    answer says it (review of decision 393). SQLite: its one write lock is what is held."""
    monkeypatch.setattr(initiatives, "CHUNK", 5)
    settings = Settings.from_env({"KAERU_BUSY_TIMEOUT_MS": "300"}, vault_dir=tmp_path / "vault")
    store = open_store(settings)
    try:
        call = make_call(Service(store, settings))
        fact = _id(call("note", initiative="p", text="the rate limit is 100 per minute", name="rate-limit-100"))
        successor = _id(call("note", initiative="q", text="the rate limit is 500 per minute"))
        link = {"from": {"id": successor}, "to": {"id": fact}, "edge_type": "supersedes", "weight": 1}
        assert call("link", initiative="q", **link)["state"] == "applied"
        for i in range(40):
            call("note", initiative="q", text=f"q filler {i}")
        blocker = LockBetweenTwoChunks(tmp_path / "vault" / "vault.sqlite3")

        blocker.start()
        stopped = call("initiative", initiative="q", action="delete")
        blocker.join()
        assert blocker.holding.is_set() and stopped["state"] == "partial", stopped
        [message] = [i["message"] for i in stopped["issues"] if i["code"] == "superseded_current_again"]
        assert "'rate-limit-100'" in message, message
        assert _currentness(call, "p", fact) == "current"
        again = call("initiative", initiative="q", action="delete")
        assert again["state"] == "applied", again
    finally:
        store.close()
