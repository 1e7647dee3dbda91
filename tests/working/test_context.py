"""Re-entry: `context` delivers every applicable rule first, never drops one silently, and puts the
new work in the right sections."""

from __future__ import annotations

import random
from typing import Any

from tests.working.conftest import Call

WORDS = [
    "cache",
    "index",
    "vault",
    "writer",
    "reader",
    "budget",
    "cursor",
    "replay",
    "schema",
    "token",
    "layer",
    "slot",
    "board",
]


def _rules(call: Call, task_id: str) -> dict[str, list[str]]:
    made: dict[str, list[str]] = {"general": [], "task": [], "expired": [], "released": []}
    for i in range(9):
        made["general"].append(
            call("note", initiative="p", kind="rule", text=f"rule {i}: never skip the migration step {i}")["data"][
                "primary"
            ]["id"]
        )
    for i in range(3):
        made["task"].append(
            call(
                "note",
                initiative="p",
                kind="rule",
                text=f"task rule {i}: benchmark before merging",
                applicability={"task": task_id},
            )["data"]["primary"]["id"]
        )
    for i in range(2):
        made["expired"].append(
            call(
                "note",
                initiative="p",
                kind="rule",
                text=f"freeze rule {i}: no deploys this week",
                applicability={"through": "2026-03-01"},
            )["data"]["primary"]["id"]
        )
    released = call("note", initiative="p", kind="rule", text="old rule: use the stdlib sqlite3 module")["data"][
        "primary"
    ]
    call("revise", initiative="p", node=released["id"], patch={"constraint_state": "released"})
    made["released"].append(released["id"])
    return made


def _section(envelope: dict[str, Any], name: str) -> list[str]:
    return [item["id"] for s in envelope["data"]["sections"] if s["name"] == name for item in s["items"]]


def test_rules_buried_in_noise_come_back_first_and_complete(call: Call) -> None:
    rng = random.Random(7)
    task = call("task", initiative="p", text="port the store to PostgreSQL")["data"]["primary"]["id"]
    made = _rules(call, task)
    for i in range(1985):
        call("note", initiative="p", text=" ".join(rng.choices(WORDS, k=12)) + f" #{i}")

    plain = call("context", initiative="p")
    assert plain["data"]["sections"][0]["name"] == "rules"
    assert sorted(_section(plain, "rules")) == sorted(made["general"])
    assert plain["coverage"]["rules_complete"] is True

    scoped = call("context", initiative="p", task=task)
    assert sorted(_section(scoped, "rules")) == sorted(made["general"] + made["task"])
    assert scoped["coverage"]["rules_complete"] is True
    not_rules = {i for s in scoped["data"]["sections"][1:] for i in (x["id"] for x in s["items"])}
    assert not (not_rules & set(made["expired"] + made["released"])), "inactive rules are never delivered"

    tight = call("context", initiative="p", task=task, budget_chars=512)
    rules = _section(tight, "rules")
    omitted = tight["coverage"]["omitted"]
    if tight["coverage"]["rules_complete"]:
        assert sorted(rules) == sorted(made["general"] + made["task"])
    else:
        assert {"section": "rules", "count": 12 - len(rules), "reason": "budget"} in omitted
    assert omitted, "a 512-character answer over 2,000 nodes must say what it left out"
    assert all(o["count"] > 0 and o["reason"] in ("budget", "limit") for o in omitted)
    bodies = sum(len(item.get("body") or "") for s in tight["data"]["sections"] for item in s["items"])
    assert bodies <= 512


def test_a_rule_too_long_for_the_budget_is_reported_not_dropped(call: Call) -> None:
    for i in range(12):
        call("note", initiative="p", kind="rule", text=f"rule {i}: " + "keep every write idempotent " * 12)
    answer = call("context", initiative="p", budget_chars=512)
    delivered = len(_section(answer, "rules"))
    if delivered < 12:
        assert answer["coverage"]["rules_complete"] is False
        assert {"section": "rules", "count": 12 - delivered, "reason": "budget"} in answer["coverage"]["omitted"]
    else:
        assert answer["coverage"]["rules_complete"] is True


def test_rules_that_cannot_all_fit_leave_the_other_sections_a_share(call: Call) -> None:
    """A project of many rules: they come first, but when they cannot all be delivered whole (and
    say so) they do not take the whole answer — the open tasks still come back, also when asked for alone
    (decision 153). Rules that fit are all delivered whole, as before."""
    tasks = [
        call("task", initiative="p", text=f"open task {i}: ship the importer")["data"]["primary"]["id"]
        for i in range(3)
    ]
    rule = "keep every write idempotent and every read bounded by its budget, whatever the caller asks"
    for i in range(4):
        call("note", initiative="p", kind="rule", text=f"rule {i}: {rule}")
    fits = call("context", initiative="p", budget_chars=800)
    assert len(_section(fits, "rules")) == 4 and fits["coverage"]["rules_complete"] is True
    assert all(not item.get("body_range") for s in fits["data"]["sections"][:1] for item in s["items"])
    for i in range(4, 12):
        call("note", initiative="p", kind="rule", text=f"rule {i}: {rule}")
    for asked in ({}, {"sections": ["tasks"]}):
        answer = call("context", initiative="p", budget_chars=800, **asked)
        assert answer["data"]["sections"][0]["name"] == "rules" and _section(answer, "rules")
        assert answer["coverage"]["complete"] is False  # the rules are cut (or some left out) and say so
        assert set(_section(answer, "tasks")) == set(tasks)
        bodies = sum(len(item.get("body") or "") for s in answer["data"]["sections"] for item in s["items"])
        assert bodies <= 800


def test_the_re_entry_ritual_shows_new_work_in_its_sections(call: Call) -> None:
    call("note", initiative="p", text="seed")
    assert [i["name"] for i in call("initiatives")["data"]["initiatives"]] == ["p"]
    note = call(
        "note",
        initiative="p",
        text="decided: cursors are stored result lists",
        kind="decision",
        options={"layer": "hot"},
    )["data"]["primary"]["id"]
    claim = call("claim", initiative="p", text="stored cursors stay under 1 ms")["data"]["primary"]["id"]
    task = call("task", initiative="p", text="measure cursor cost")["data"]["primary"]["id"]
    handoff = call("note", initiative="p", text="handoff: next, measure cursors", options={"slot": "handoff"})
    answer = call("context", initiative="p")
    assert note in _section(answer, "hot")
    assert claim in _section(answer, "claims")
    assert task in _section(answer, "tasks")
    slots = next(s for s in answer["data"]["sections"] if s["name"] == "slots")
    assert slots["holders"] == {"handoff": handoff["data"]["primary"]["id"]}


def test_a_node_set_cold_or_frozen_leaves_context_even_when_it_is_recent(call: Call) -> None:
    """`layer cold` keeps a node out of `context` (cold and frozen come back only when their
    sections are named), however new the node is: `recent` is not a way back in."""
    kept = call("note", initiative="p", text="the warm note stays in context")["data"]["primary"]["id"]
    cold = call("note", initiative="p", text="the cold note is only on request")["data"]["primary"]["id"]
    frozen = call("note", initiative="p", text="the frozen note is only on request")["data"]["primary"]["id"]
    call("layer", initiative="p", nodes=[cold], layer="cold")
    call("layer", initiative="p", nodes=[frozen], layer="frozen")
    answer = call("context", initiative="p")
    shown = {item["id"] for section in answer["data"]["sections"] for item in section["items"]}
    assert kept in shown
    assert cold not in shown
    assert frozen not in shown
    # No section counts them as left out either: they were not asked for.
    assert answer["coverage"]["omitted"] == []
    asked = call("context", initiative="p", sections=["cold", "frozen"])
    assert cold in _section(asked, "cold")
    assert frozen in _section(asked, "frozen")


def test_decisions_stay_in_context_after_a_day_of_routine_notes(call: Call) -> None:
    """What was decided is what an agent re-entering needs; `warm` and `recent` show the newest
    notes of their layers, and 26 routine notes written after two decisions pushed both out."""
    db = call("note", initiative="p", text="Migrate from MySQL to PostgreSQL 15", kind="decision")["data"]["primary"]
    api = call("note", initiative="p", text="Version the API in the URL path", kind="decision")["data"]["primary"]
    old = call("note", initiative="p", text="Deploy on Tuesdays", kind="decision")["data"]["primary"]["id"]
    new = call("evolve", initiative="p", mode="supersede", source={"id": old}, new_body="Deploy on Thursdays")["data"][
        "primary"
    ]["id"]
    cold = call("note", initiative="p", text="Use tabs in the Makefile", kind="decision")["data"]["primary"]["id"]
    call("layer", initiative="p", nodes=[cold], layer="cold")
    for i in range(26):
        call("note", initiative="p", text=f"Routine: ran the test suite, {400 + i} passed.")
    answer = call("context", initiative="p")
    names = [s["name"] for s in answer["data"]["sections"]]
    assert names.index("hot") < names.index("decisions") < names.index("warm")
    assert _section(answer, "decisions") == [new, api["id"], db["id"]]  # newest first; superseded and cold left out
    only = call("context", initiative="p", sections=["decisions"])
    assert [s["name"] for s in only["data"]["sections"]] == ["rules", "decisions"]


def test_the_decisions_total_counts_current_decisions_only(call: Call) -> None:
    """A superseded decision shown in `hot` was subtracted from a total that never counted it:
    the section said 5 fewer decisions were left out than there were (review, session 38)."""
    for i in range(3):
        old = call("note", initiative="p", kind="decision", text=f"Deploy with tool T{i}", options={"layer": "hot"})
        call(
            "note",
            initiative="p",
            kind="decision",
            text=f"Deploy with tool U{i} instead",
            link_to={"id": old["data"]["primary"]["id"]},
            edge_type="supersedes",
        )
    for i in range(12):
        call("note", initiative="p", kind="decision", text=f"We use library L{i} for component C{i}")
    for i in range(30):  # newer than every decision: `warm` and `recent` show none of them
        call("note", initiative="p", text=f"Routine: ran the test suite, {400 + i} passed.")
    answer = call("context", initiative="p")
    section = next(s for s in answer["data"]["sections"] if s["name"] == "decisions")
    assert len(section["items"]) == 10 and section["total"] == 15  # 3 successors and 12 others, all current
    omitted = {o["section"]: o["count"] for o in answer["coverage"]["omitted"]}
    assert omitted["decisions"] == 5


def test_a_node_holding_two_slots_is_shown_once(call: Call) -> None:
    """`context` shows a node once (decision 28); one holding two slots was listed, and paid for, twice."""
    node = call("note", initiative="p", text="the handoff, and where to start")["data"]["primary"]["id"]
    for slot in ("handoff", "entrypoint"):
        assert call("slot", initiative="p", slot=slot, node={"id": node})["state"] == "applied"
    slots = next(s for s in call("context", initiative="p")["data"]["sections"] if s["name"] == "slots")
    assert [i["id"] for i in slots["items"]] == [node] and slots["total"] == 1
    assert slots["holders"] == {"entrypoint": node, "handoff": node}


def test_overdue_tasks_and_slot_holders_are_named_as_far_as_they_are_shown(call: Call) -> None:
    """The overdue ids and the slots' holders were listed whole whatever the budget: 2,000 overdue
    tasks made an 87 KB answer showing 30 of them, 1,000 slots a 50,000-character line. They name
    what the bundle shows, and say how many there are."""
    for n in range(60):  # more than the bundle shows (tasks' 30, and warm's 15)
        call("task", initiative="late", text=f"late task {n}", due="2020-01-01")
    late = call("context", initiative="late")["data"]["sections"]
    tasks = next(s for s in late if s["name"] == "tasks")
    assert tasks["overdue_total"] == 60
    assert tasks["overdue"] and set(tasks["overdue"]) <= {i["id"] for s in late for i in s["items"]}
    assert len(tasks["overdue"]) < 60
    for n in range(60):
        call("note", initiative="held", text=f"holder {n} " + "words " * 300, options={"slot": f"slot-{n}"})
    answer = call("context", initiative="held", budget_chars=4000)
    slots = next(s for s in answer["data"]["sections"] if s["name"] == "slots")
    assert slots["slots_total"] == 60 and 0 < len(slots["holders"]) < 60
    assert set(slots["holders"].values()) <= {i["id"] for s in answer["data"]["sections"] for i in s["items"]}
