"""Wrong calls an agent makes that were answered as if they were right (the error sweep of session
41): a status filter no board has answered "0 hits", an argument that needs another was dropped,
a task scope that is no task was taken, a timeline anchor was looked up in the first initiative
only, and a token budget below its floor was raised without a word. Each is refused, or said, now
(`search`, a contract tool, warns of a status that matches nothing)."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.service import Service
from tests.working.conftest import Call


def _id(answer: dict[str, Any]) -> str:
    assert answer["state"] == "applied", answer
    return str(answer["data"]["primary"]["id"])


def _refused(answer: dict[str, Any], field: str, code: str = "invalid_argument") -> str:
    assert answer["state"] == "rejected", answer
    issue = answer["issues"][0]
    assert (issue["code"], issue["field"]) == (code, field), issue
    return str(issue["message"])


def _warned(answer: dict[str, Any], field: str) -> str:
    """`answer` is `ok` with no hit, and warns that the status at `field` matched nothing: `search`
    accepts every input its published schema does (a contract tool), so it warns, not refuses."""
    assert answer["state"] == "ok" and answer["data"]["hits"] == [], answer
    [issue] = [i for i in answer["issues"] if i["field"] == field]
    assert issue["code"] == "invalid_argument", issue
    return str(issue["message"])


def _search(call: Call, initiatives: list[str], statuses: list[str]) -> dict[str, Any]:
    return call("search", initiatives=initiatives, filters={"types": ["task", "hypothesis"], "statuses": statuses})


# --- search filters.statuses ------------------------------------------------------------------


def test_a_status_no_board_has_is_said_with_the_columns_not_answered_with_no_hits_alone(call: Call) -> None:
    """`in_progress` for the default column `in-progress` answered `ok`, 0 hits, and nothing else:
    "nothing is in progress" — while `task` refused the same value with the board's columns."""
    _id(call("task", initiative="g", text="migrate the ledger", status="in-progress"))
    message = _warned(_search(call, ["g"], ["in_progress"]), "filters.statuses.0")
    assert "did you mean 'in-progress'?" in message and "open, in-progress, done" in message
    assert "refuted" in message, "a claim's statuses are named too"
    _warned(_search(call, ["g"], ["open", "opened"]), "filters.statuses.1")
    found = _search(call, ["g"], ["in-progress"])
    assert found["state"] == "ok" and len(found["data"]["hits"]) == 1


def test_a_status_some_searched_board_or_a_claim_has_is_a_filter_not_a_mistake(call: Call) -> None:
    """A column of any searched initiative's board is valid for all of them (no task may be in it
    yet), and so is a claim's status; the same column is warned of where no searched board has it."""
    assert call("initiative", initiative="ops", action="set_board", columns=[{"key": "triage"}, {"key": "done"}])[
        "state"
    ] in ("applied", "unchanged")
    _id(call("task", initiative="g", text="a task on the default board"))
    both = _search(call, ["g", "ops"], ["triage"])
    assert both["state"] == "ok" and both["data"]["hits"] == [] and not both["issues"], both
    assert _search(call, ["g"], ["refuted", "open"])["state"] == "ok"
    _warned(_search(call, ["g"], ["triage"]), "filters.statuses.0")


def test_a_status_a_stored_task_has_is_found_though_no_board_has_it(call: Call, timed: Service) -> None:
    """An old vault's task, or one left in a column its board has since dropped, keeps its status:
    searching by it finds it rather than being refused."""
    task = _id(call("task", initiative="g", text="sort the inbox"))
    with timed.rt.store.write() as session:  # as a vault written before boards checked statuses
        node = session.get_node(task, for_update=True)
        assert node is not None
        old = node.evolve(status="triage", rev_no=node.rev_no + 1, revision=f"{node.revision}x")
        session.put_node(old, request_id=None, actor="test")
    found = _search(call, ["g"], ["triage"])
    assert found["state"] == "ok" and [h["id"] for h in found["data"]["hits"]] == [task], found


# --- arguments that need another one ----------------------------------------------------------

NEEDS: list[tuple[str, dict[str, Any], str, str]] = [
    ("note", {"initiative": "g", "text": "worn bearing hums", "edge_type": "causal"}, "edge_type", "link_to"),
    ("note", {"initiative": "g", "text": "worn bearing hums", "weight": 0.9}, "weight", "link_to"),
    (
        "task",
        {"initiative": "g", "text": "replace the bearing", "edge_type": "blocks", "weight": 1},
        "edge_type",
        "link_to",
    ),
    ("trail", {"initiative": "g", "node": "A", "to": "B"}, "to", "path"),
    ("trail", {"initiative": "g", "node": "A", "edge_types": ["causal"]}, "edge_types", "neighbours"),
    ("timeline", {"initiatives": ["g"], "before": 1, "limit": 2}, "before", "anchor"),
    ("timeline", {"initiatives": ["g"], "after": 1}, "after", "anchor"),
    ("link", {"initiative": "g", "action": "chain", "from": "A", "to": "B", "edge_type": "blocks"}, "edge_type", "add"),
    (
        "evolve",
        {
            "initiative": "g",
            "mode": "synthesise",
            "sources": ["A", "B"],
            "new_body": "both",
            "expected_revision": "9-0",
        },
        "expected_revision",
        "supersede",
    ),
]


@pytest.mark.parametrize(("tool", "args", "field", "needed"), NEEDS, ids=[f"{t}-{f}" for t, _, f, _ in NEEDS])
def test_an_argument_without_the_one_it_is_for_is_refused_not_dropped(
    call: Call, tool: str, args: dict[str, Any], field: str, needed: str
) -> None:
    """`note` with `edge_type` and no `link_to` was applied with no edge; `evolve synthesise` with a
    stale `expected_revision` was applied — the guard the caller relied on was never checked."""
    a = _id(call("note", initiative="g", text="the pump hums", name="A"))
    b = _id(call("note", initiative="g", text="the bearing is worn", name="B"))
    assert call("link", initiative="g", **{"from": a, "to": b}, edge_type="causal", weight=0.7)["state"] == "applied"
    before = call("timeline", initiatives=["g"])["data"]["hits"]
    message = _refused(call(tool, **args), field)
    assert needed in message, message
    assert call("timeline", initiatives=["g"])["data"]["hits"] == before, "nothing was written"


def test_the_same_arguments_with_what_they_are_for_are_taken(call: Call) -> None:
    a = _id(call("note", initiative="g", text="the pump hums", name="A"))
    linked = _id(call("note", initiative="g", text="worn bearing", link_to=a, edge_type="causal", weight=0.9))
    edges = call("trail", initiative="g", node=linked, kind="neighbours", edge_types=["causal"])["data"]["entries"]
    assert [e["edge"]["weight"] for e in edges] == [0.9]
    around = call("timeline", initiatives=["g"], query="pump", before=0, after=1)
    assert around["state"] == "ok" and around["data"]["anchor"] == a


# --- a task scope that is not a task ----------------------------------------------------------


def test_a_task_scope_that_is_not_a_task_is_refused(call: Call) -> None:
    """`context task=<an observation>` answered `ok`, and a rule scoped to an observation was stored:
    in force for no task ever. `task_update` refused the same id."""
    note = _id(call("note", initiative="g", text="the pump hums", name="hum"))
    task = _id(call("task", initiative="g", text="replace the bearing"))
    assert "not a task" in _refused(call("context", initiative="g", task=note, sections=["rules"]), "task")
    before = call("timeline", initiatives=["g"])["data"]["hits"]
    rule = call("note", initiative="g", kind="rule", text="torque bolts to 40 Nm", applicability={"task": note})
    assert "not a task" in _refused(rule, "applicability.task")
    assert call("timeline", initiatives=["g"])["data"]["hits"] == before, "nothing was written"
    assert call("context", initiative="g", task=task, sections=["rules"])["state"] == "ok"
    plan = _id(call("note", initiative="g", kind="checklist", text="1. drain 2. swap 3. test", name="plan"))
    assert call("context", initiative="g", task=plan, sections=["rules"])["state"] == "ok", "a checklist scopes work"
    assert call("note", initiative="g", kind="rule", text="torque to 40", applicability={"task": task})["state"] == (
        "applied"
    )


# --- timeline's anchor over several initiatives ------------------------------------------------


def test_a_timeline_anchor_is_looked_up_in_every_walked_initiative(call: Call) -> None:
    """With a `deploy` in each initiative the order of `initiatives` chose the anchor without a
    word, and a name only the second held was refused as missing from the first."""
    alpha = _id(call("note", initiative="alpha", text="deploy in alpha", name="deploy"))
    beta = _id(call("note", initiative="beta", text="deploy in beta", name="deploy"))
    rollback = _id(call("note", initiative="beta", text="rollback in beta", name="rollback"))
    for order in (["alpha", "beta"], ["beta", "alpha"]):
        message = _refused(call("timeline", initiatives=order, anchor="deploy"), "anchor", "ambiguous_ref")
        assert alpha in message and beta in message, message
    second = call("timeline", initiatives=["alpha", "beta"], anchor="rollback")
    assert second["state"] == "ok" and second["data"]["anchor"] == rollback, second
    named = call("timeline", initiatives=["alpha", "beta"], anchor={"initiative": "beta", "name": "deploy"})
    assert named["data"]["anchor"] == beta
    missing = _refused(call("timeline", initiatives=["alpha", "beta"], anchor="deploi"), "anchor", "not_found")
    assert "'alpha', 'beta'" in missing and "did you mean 'deploy'?" in missing, missing


# --- recall's token budget below its floor -----------------------------------------------------


def test_a_token_budget_below_the_floor_says_it_was_raised(call: Call) -> None:
    """`token_budget: 10` answered ten cut texts "to fit token_budget=10" in 2,000 characters."""
    for i in range(6):
        call("note", initiative="g", text=f"pump note {i}: " + "the pump hums loudly when it is cold and wet " * 8)
    answer = call("recall", initiatives=["g"], query="pump", token_budget=10)
    cut = [i["message"] for i in answer["issues"] if i["code"] == "budget_truncated"]
    assert cut and "token_budget=128 (the minimum; 10 was raised to it)" in cut[0], answer["issues"]
    plenty = call("recall", initiatives=["g"], query="pump", token_budget=200)
    said = [i["message"] for i in plenty["issues"] if i["code"] == "budget_truncated"]
    assert all("raised" not in m for m in said), said


def test_dates_say_which_part_is_wrong_and_a_past_due_is_said(call: Call) -> None:
    """ "'2026-13-01' is not a moment" did not say the month was impossible, "'3d' is not a 'date'"
    named no form, and a due day already past (a wrong year) was taken without a word (decision 391)."""
    node = _id(call("note", initiative="g", text="the pump hums"))
    at = _refused(call("read", initiative="g", node={"id": node}, at="2026-13-01"), "at")
    assert "(month 13 does not exist)" in at
    due = _refused(call("task", initiative="g", text="renew", due="2026-02-30"), "due")
    assert "(2026-02 has no day 30)" in due
    after = _refused(
        call("note", initiative="g", text="x", reminder={"after": "3d", "window_days": 2}), "reminder.after"
    )
    assert "is not a date (a day is written YYYY-MM-DD)" in after
    late = call("task", initiative="g", text="renew the certificate", due="2020-01-01")
    assert late["state"] == "applied"
    assert [(i["code"], i["field"]) for i in late["issues"]] == [("already_ended", "due")]
    done = call("task", initiative="g", text="an old finished chore", due="2020-01-01", status="done")
    assert done["state"] == "applied" and done["issues"] == []
