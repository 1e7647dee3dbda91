"""What decision 429 left to a token limited to some initiatives (decision 15.K2): a chain's body
made of its steps' names, paged by `read`, ends where the body it reads ends (no empty last page,
no offset refused by the stored body's length), and a `revise` of a node names, in its `changes`,
nothing outside its grants — a rule scoped to a task it may not see keeps that scope when the token's
patch leaves `task` out, and a patch that would drop it is refused. The admin's answers are as
before. Both backends."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest

from kaeru.service import grants
from tests.working.conftest import Call
from tests.working.limited import LIMITED, PUB, SECRET, applied_id, scoped_rule


def _names(steps: str) -> list[str]:
    """Long step names (under the 200-character limit), one per letter of `steps`: `e` a step in
    `pub`, `h` one that has left it."""
    return [f"s{i}-{'hidden' if k == 'h' else 'end'}" + " lantern" * 22 for i, k in enumerate(steps)]


def _shown(steps: str) -> str:
    """The body of the chain of `steps` as the limited token reads it."""
    return " → ".join("…" if k == "h" else name for k, name in zip(steps, _names(steps), strict=True))


SHOWN = _shown("ehe")


def _long_chain(call: Call, steps: str = "ehe") -> tuple[str, list[str]]:
    """A chain of long-named steps saved without a summary (its body is their names) while every
    step was in `pub`; the `h` steps, from `secret-proj`, have left `pub` since: the chain and them."""
    ids, hidden = [], []
    for name, k in zip(_names(steps), steps, strict=True):
        step = applied_id(call("note", initiative=SECRET if k == "h" else PUB, name=name, text=f"the step {name[:2]}"))
        if k == "h":
            assert call("initiative", initiative=PUB, action="attach", node={"id": step})["state"] == "applied"
            hidden.append(step)
        ids.append(step)
    for src, dst in pairwise(ids):
        link = {"from": {"id": src}, "to": {"id": dst}}
        assert call("link", initiative=PUB, **link, edge_type="causal", weight=0.9)["state"] == "applied"
    chain = applied_id(call("link", initiative=PUB, action="chain", **{"from": {"id": ids[0]}, "to": {"id": ids[-1]}}))
    for step in hidden:
        assert call("initiative", initiative=PUB, action="detach", node={"id": step})["state"] == "applied"
    return chain, hidden


def _pages(call: Call, chain: str) -> list[str]:
    """The body's pages (512 characters at most) read one after another, following each answer's
    continuation."""
    pages: list[str] = []
    args: dict[str, Any] = {"initiative": PUB, "node": {"id": chain}, "budget_chars": 512}
    while True:
        page = call("read", **args)
        assert page["state"] == "ok", page
        pages.append(page["data"]["hits"][0]["body"])
        if not page.get("continuation"):
            return pages
        args = page["continuation"]["next_arguments"]


@pytest.mark.parametrize(("steps", "pages"), [("ehe", 1), ("ehhhee", 2)])
def test_a_limited_token_s_pages_end_where_the_body_it_reads_ends(call: Call, steps: str, pages: int) -> None:
    """No page is empty: the continuation follows the body as shown, not the longer stored one (it
    offered a last page of nothing after the shown body's end). The stored bodies take more pages
    than the shown ones (two and three). The admin's pages are unchanged."""
    chain, _ = _long_chain(call, steps)
    shown = _shown(steps)
    stored = call("read", initiative=PUB, node={"id": chain}, budget_chars=8000)["data"]["hits"][0]["body"]

    admin = _pages(call, chain)
    assert "".join(admin) == stored and all(admin), admin
    with grants.acting(LIMITED):
        limited = _pages(call, chain)
    assert "".join(limited) == shown
    assert all(limited), f"an empty page: {[len(p) for p in limited]}"
    assert len(limited) == pages < len(admin), [len(p) for p in limited]


def test_an_offset_past_the_body_a_limited_token_reads_is_refused_by_that_body(call: Call) -> None:
    """`body_offset` between the shown body's end and the stored one's was answered with an empty
    page; it is refused as past the body's end, the length told being the shown one's."""
    chain, _ = _long_chain(call)
    stored = call("read", initiative=PUB, node={"id": chain}, budget_chars=4000)["data"]["hits"][0]["body"]
    offset = len(SHOWN) + 10
    assert call("read", initiative=PUB, node={"id": chain}, body_offset=offset)["state"] == "ok"
    with grants.acting(LIMITED):
        at_end = call("read", initiative=PUB, node={"id": chain}, body_offset=len(SHOWN))
        past = call("read", initiative=PUB, node={"id": chain}, body_offset=offset)
    assert at_end["state"] == "ok" and at_end["data"]["hits"][0]["body"] == "", at_end
    assert past["state"] == "rejected", past
    issue = past["issues"][0]
    assert issue["code"] == "invalid_argument" and issue["field"] == "body_offset", issue
    assert f"({len(SHOWN)})" in issue["message"] and str(len(stored)) not in issue["message"], issue


def test_a_chain_s_body_revised_by_a_limited_token_names_no_hidden_step(call: Call) -> None:
    """`changes.body.before` is the body as the token reads it, not the stored one."""
    chain, hidden = _long_chain(call)
    with grants.acting(LIMITED):
        revised = call("revise", initiative=PUB, node={"id": chain}, patch={"body": "a line of lanterns"})
    assert revised["state"] == "applied", revised
    change = next(c for c in revised["data"]["changes"] if c["field"] == "body")
    assert change["before"] == SHOWN and change["after"] == "a line of lanterns", change
    assert "s1-hidden" not in json.dumps(revised) and hidden[0] not in json.dumps(revised), revised


def test_the_body_a_limited_token_read_sent_back_changes_nothing(call: Call) -> None:
    """A client that sends back the fields it read (`body` beside a new `name`) wrote the `…` it reads
    for a hidden step over the stored name, for everyone, and reported a change whose before and after
    were the same text. The body it read is no change."""
    chain, _ = _long_chain(call)
    stored = call("read", initiative=PUB, node={"id": chain}, budget_chars=4000)["data"]["hits"][0]["body"]
    with grants.acting(LIMITED):
        revised = call("revise", initiative=PUB, node={"id": chain}, patch={"body": SHOWN, "name": "lantern line"})
    assert revised["state"] == "applied", revised
    assert [c["field"] for c in revised["data"]["changes"]] == ["name"], revised["data"]["changes"]
    after = call("read", initiative=PUB, node={"id": chain}, budget_chars=4000)["data"]["hits"][0]["body"]
    assert after == stored, "the stored body keeps the hidden step's name"


def _applicability(call: Call, rule: str) -> Any:
    return call("read", initiative=PUB, node={"id": rule})["data"]["hits"][0]["properties"].get("applicability")


def test_a_limited_token_moving_a_hidden_scope_s_date_keeps_the_scope(call: Call) -> None:
    """The token reads `{task: null, through}`; sending `{through}` changes the date and keeps the
    task it cannot see (it was dropped silently), and `changes` show the scope as it reads it."""
    rule, task = scoped_rule(call, "2027-06-30")
    with grants.acting(LIMITED):
        revised = call("revise", initiative=PUB, node={"id": rule}, patch={"applicability": {"through": "2027-09-30"}})
    assert revised["state"] == "applied", revised
    assert task not in json.dumps(revised), "the task is named nowhere in the answer"
    change = next(c for c in revised["data"]["changes"] if c["field"] == "applicability")
    assert change["before"] == {"task": None, "through": "2027-06-30"}, change
    assert change["after"] == {"task": None, "through": "2027-09-30"}, change
    assert _applicability(call, rule) == {"task": task, "through": "2027-09-30"}
    with grants.acting(LIMITED):
        again = call("revise", initiative=PUB, node={"id": rule}, patch={"applicability": {"through": "2027-09-30"}})
    assert again["state"] == "unchanged", again


@pytest.mark.parametrize("patch", ["null", "a task it sees"])
def test_a_limited_token_s_patch_dropping_a_hidden_scope_is_refused(call: Call, patch: str) -> None:
    """Clearing applicability or naming another task would drop a scope the token cannot see: it is
    refused on `patch.applicability`, nothing written; the admin may do either."""
    rule, task = scoped_rule(call, "2027-06-30")
    seen = applied_id(call("task", initiative=PUB, text="write the rotation notice"))
    value = None if patch == "null" else {"task": {"id": seen}}
    with grants.acting(LIMITED):
        refused = call("revise", initiative=PUB, node={"id": rule}, patch={"applicability": value})
    assert refused["state"] == "rejected", refused
    issue = refused["issues"][0]
    field = "patch.applicability" if value is None else "patch.applicability.task"
    assert issue["code"] == "forbidden" and issue["field"] == field, issue
    assert task not in json.dumps(refused), refused
    assert _applicability(call, rule) == {"task": task, "through": "2027-06-30"}, "nothing written"
    assert call("revise", initiative=PUB, node={"id": rule}, patch={"applicability": value})["state"] == "applied"
    assert _applicability(call, rule) == (None if value is None else {"task": seen})


def test_the_admin_s_patch_still_replaces_applicability_whole(call: Call) -> None:
    """Unchanged for the admin: the patch is the new value, `changes` show the task ids."""
    rule, task = scoped_rule(call, "2027-06-30")
    revised = call("revise", initiative=PUB, node={"id": rule}, patch={"applicability": {"through": "2027-09-30"}})
    assert revised["state"] == "applied", revised
    change = next(c for c in revised["data"]["changes"] if c["field"] == "applicability")
    assert change["before"] == {"task": task, "through": "2027-06-30"}, change
    assert change["after"] == {"through": "2027-09-30"}, change
    assert _applicability(call, rule) == {"through": "2027-09-30"}
