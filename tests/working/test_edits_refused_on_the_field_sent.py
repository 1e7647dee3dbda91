"""Edits the published schemas accept and the use cases refuse or find nothing to do for: each
refusal names the field the caller sent and writes nothing; an edit that would change nothing says
`unchanged`. And a task `due` `now` is due on the user's today. Both backends."""

from __future__ import annotations

from typing import Any

from kaeru.service import Service
from kaeru.service.checks import MAX_TEXT_CHARS
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.working.conftest import Call, Clock, make_call

P = "edits"


def _refused(answer: dict[str, Any], code: str, field: str) -> str:
    assert answer["state"] == "rejected", answer
    [issue] = answer["issues"]
    assert (issue["code"], issue["field"]) == (code, field), issue
    return str(issue["message"])


def _named(call: Call, name: str, text: str) -> str:
    made = call("note", initiative=P, name=name, text=text)
    assert made["state"] == "applied", made
    return str(made["data"]["primary"]["id"])


def _total(call: Call) -> int:
    return int(call("search", initiatives=[P], filters={"current": "all"}, limit=50)["data"]["total"])


def test_a_link_that_is_not_there_is_not_found_and_one_at_its_weight_is_unchanged(call: Call) -> None:
    _named(call, "alpha", "the alpha plan")
    _named(call, "beta", "the beta plan")
    ends = {"from": "alpha", "to": "beta", "edge_type": "refers_to"}
    for action, extra in (("reweight", {"weight": 0.5}), ("remove", {})):
        message = _refused(call("link", initiative=P, action=action, **ends, **extra), "not_found", "to")
        assert message == "no live refers_to edge from 'alpha' to 'beta'"
    assert call("link", initiative=P, action="add", **ends, weight=0.5)["state"] == "applied"
    same = call("link", initiative=P, action="reweight", **ends, weight=0.5)
    assert same["state"] == "unchanged" and same["data"]["changes"] == [], same
    removed = call("link", initiative=P, action="remove", **ends)
    assert removed["data"]["changes"] == [{"field": "edge.refers_to", "before": 0.5, "after": None}]
    _refused(call("link", initiative=P, action="remove", **ends), "not_found", "to")


def test_a_verdicts_blank_method_is_refused_on_evidence_method_as_a_claims_is(call: Call) -> None:
    """`verdict` refused a blank method as "evidence is {node} or {method}" on `evidence` — the
    field was right there; `claim` says "evidence.method must not be blank" on `evidence.method`."""
    made = call("claim", initiative=P, text="the cache halves the p99")
    hypothesis = made["data"]["primary"]["id"]
    before = _total(call)
    for tool, args in (
        ("verdict", {"hypothesis": hypothesis, "status": "supported"}),
        ("claim", {"text": "the cache halves the p50", "initial_status": "supported"}),
    ):
        answer = call(tool, initiative=P, evidence={"method": "  \t "}, **args)
        assert _refused(answer, "invalid_argument", "evidence.method") == "evidence.method must not be blank"
    assert _total(call) == before, "no experiment node, no claim written"
    [hit] = call("read", initiative=P, node={"id": hypothesis})["data"]["hits"]
    assert hit["status"] == "open"


def test_a_blank_review_reason_and_a_stale_slot_release_are_refused_on_their_field(call: Call) -> None:
    _named(call, "gamma", "the gamma plan")
    message = _refused(
        call("review", initiative=P, action="flag", target="gamma", reason=" \n "), "invalid_argument", "reason"
    )
    assert message == "flag needs a reason: what is doubtful and why"
    taken = call("slot", initiative=P, slot="lead-plan", node="gamma")
    revision = taken["data"]["slots"][0]["revision"]
    stale = call("slot", initiative=P, slot="lead-plan", expected_slot_revision="7")
    message = _refused(stale, "slot_conflict", "expected_slot_revision")
    assert message == f"slot 'lead-plan' is at revision {revision!r}, not '7'; re-read it and retry"
    assert stale["issues"][0]["retryable"] is True
    held = call("current_state", initiative=P, slot="lead-plan")["data"]
    assert held["current"]["name"] == "gamma", "the slot is still held"
    assert _total(call) == 1, "no review note written"


def test_detaching_a_node_from_an_initiative_it_is_not_in_is_refused_on_node(call: Call) -> None:
    call("note", initiative="elsewhere", name="delta", text="the delta plan")
    _named(call, "anchor", "keeps the initiative")
    answer = call("initiative", initiative=P, action="detach", node={"initiative": "elsewhere", "name": "delta"})
    assert _refused(answer, "invalid_argument", "node") == "'delta' is not in 'edits'"
    [hit] = call("read", initiative="elsewhere", node="delta")["data"]["hits"]
    assert hit["initiatives"] == ["elsewhere"]


def test_a_text_past_the_limit_is_refused_on_its_field(call: Call) -> None:
    _named(call, "anchor", "keeps the initiative")
    message = _refused(call("note", initiative=P, text="a" * (MAX_TEXT_CHARS + 1)), "invalid_argument", "text")
    assert message == f"text is longer than {MAX_TEXT_CHARS} characters"
    assert _total(call) == 1


def test_a_task_due_now_is_due_on_the_users_today(store: Store, vault: VaultSpec, clock: Clock) -> None:
    """`due: now` was read against 1970: the task was due 1970-01-01, overdue from the start (with an
    `already_ended` warning). `now` is the call's moment, so its day is the user's today — in the
    user's zone, a day ahead of UTC's here."""
    clock.advance(hours=12)  # 2026-03-02 21:00 UTC: 2026-03-03 in Auckland
    for zone, today in (("UTC", "2026-03-02"), ("Pacific/Auckland", "2026-03-03")):
        call = make_call(Service(store, vault.settings(timezone=zone), clock=clock))
        made = call("task", initiative=P, text=f"ship the {zone} build", due="now")
        assert made["state"] == "applied", made
        assert [i["code"] for i in made["issues"] if i["code"] == "already_ended"] == []
        task = made["data"]["primary"]["id"]
        [hit] = call("read", initiative=P, node={"id": task})["data"]["hits"]
        assert hit["properties"]["due"] == today
        moved = call("task_update", initiative=P, task={"id": task}, due="NOW ")
        assert moved["state"] in ("applied", "unchanged"), moved
        [hit] = call("read", initiative=P, node={"id": task})["data"]["hits"]
        assert hit["properties"]["due"] == today
