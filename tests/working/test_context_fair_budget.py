"""`context` under a tight budget (the year probe, session 56): granted by priority alone, a
year's open tasks, all overdue, took every character the rules left, and the answer showed none
of the hot decisions, the current decisions, the standing facts (the API port) or the nodes
awaiting a verdict. Each section now gets its leading nodes first; when everything fits, the
answer is what it was."""

from __future__ import annotations

from tests.working.conftest import Call, section, section_ids
from tests.working.limited import applied_id

P = "atlas"
FILLER = " Owner: platform team; see the runbook and the last incident review before starting."
ROOMY = 64000


def _project(call: Call) -> dict[str, list[str]]:
    """A project a year in: thirty open tasks long overdue, written first, then what was decided and
    learnt; the tasks alone are more than twice a 2,000-character budget."""
    made: dict[str, list[str]] = {"tasks": [], "hot": [], "decisions": [], "facts": [], "review": []}
    for i in range(30):
        task = call(
            "task", initiative=P, text=f"Task {i}: document the rate limiter part {i}." + FILLER, due="2025-03-01"
        )
        made["tasks"].append(applied_id(task))
    for text in ("Never deploy on Fridays.", "Money is stored in integer cents."):
        call("note", initiative=P, kind="rule", text=text)
    call("note", initiative=P, text="Handoff: the refund flow is half done.", options={"slot": "handoff"})
    for name, text in (("primary db", "PostgreSQL 16 is the primary database."), ("money", "Amounts are cents.")):
        made["hot"].append(
            applied_id(call("note", initiative=P, kind="decision", text=text, name=name, options={"layer": "hot"}))
        )
    for i in range(4):
        made["decisions"].append(
            applied_id(call("note", initiative=P, kind="decision", text=f"Decision {i}: keep queue {i}."))
        )
    made["facts"].append(applied_id(call("note", initiative=P, text="The API listens on port 9443.", name="api port")))
    made["facts"].append(
        applied_id(call("note", initiative=P, text="Dave owns the payments service.", name="payments owner"))
    )
    believed = applied_id(call("note", initiative=P, text="The cache is warmed at boot.", name="cache warm-up"))
    call(
        "note", initiative=P, text="The boot log shows a cold cache.", link_to={"id": believed}, edge_type="contradicts"
    )
    made["review"].append(believed)
    return made


def test_a_long_overdue_task_list_leaves_each_section_its_leading_nodes(call: Call) -> None:
    made = _project(call)
    roomy = call("context", initiative=P, budget_chars=ROOMY)
    assert roomy["coverage"]["complete"] is True, roomy["coverage"]
    tight = call("context", initiative=P, budget_chars=2000)

    assert section_ids(tight, "hot") == section_ids(roomy, "hot") and set(section_ids(tight, "hot")) == set(made["hot"])
    assert section_ids(tight, "decisions")[:1] == [made["decisions"][-1]], "the newest decision in force"
    assert set(made["facts"]) <= set(section_ids(tight, "warm")), "the standing facts: the API port, the owner"
    assert section_ids(tight, "reviews") == made["review"]
    assert section_ids(tight, "tasks"), "the open work still comes"
    assert "9443" in str(section(tight, "warm")["items"])

    omitted = {o["section"]: o["count"] for o in tight["coverage"]["omitted"] if o["reason"] == "budget"}
    assert tight["coverage"]["complete"] is False and omitted.get("tasks", 0) > 0
    for given in roomy["data"]["sections"]:
        name, everything = given["name"], [item["id"] for item in given["items"]]
        shown = section_ids(tight, name)
        # Each section keeps its leading nodes in its own order (the most overdue task first), and
        # says how many of its candidates the budget left out.
        assert shown == everything[: len(shown)], name
        assert omitted.get(name, 0) == len(everything) - len(shown), name
    order = [o["section"] for o in tight["coverage"]["omitted"]]
    assert order == sorted(order, key=[s["name"] for s in tight["data"]["sections"]].index)
    bodies = sum(len(item.get("body") or "") for s in tight["data"]["sections"] for item in s["items"])
    assert bodies <= 2000


def test_when_everything_fits_the_answer_is_what_it_was(call: Call) -> None:
    """The even shares only come in when something must be cut: at the budget that holds exactly
    every section's capped nodes, the answer is the one a roomy budget gives."""
    _project(call)
    roomy = call("context", initiative=P, budget_chars=ROOMY)
    assert roomy["coverage"]["complete"] is True, roomy["coverage"]
    need = sum(len(item.get("body") or "") for s in roomy["data"]["sections"] for item in s["items"])
    assert 2000 < need < ROOMY

    exact = call("context", initiative=P, budget_chars=need)
    assert exact["data"]["sections"] == roomy["data"]["sections"]
    assert exact["coverage"] == roomy["coverage"]
    short = call("context", initiative=P, budget_chars=need - 1)
    assert short["data"]["sections"] != roomy["data"]["sections"], "the budget is tight: one character less cuts"
