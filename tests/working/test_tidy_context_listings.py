"""`context`'s "all <section>: search …" lines are the service's own queries: the text restated them,
and drifted — the decisions' line listed the cold and frozen decisions `context` never offers, and
the tasks' line took a board's last column for its closing one (`done` decides, wherever it is)."""

from __future__ import annotations

import json
from typing import Any

from kaeru.mcp.render import compact
from tests.working.conftest import Call


def _listed(call: Call, answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each "all <section>: search {…}" line of the answer's text, as the arguments it names."""
    lines = [line for line in compact(answer).splitlines() if line.startswith("all ")]
    decode = json.JSONDecoder().raw_decode  # the rules' line may end in a note after the arguments
    return {line[4:].split(":", 1)[0]: decode(line.split(" search ", 1)[1])[0] for line in lines}


def _found(call: Call, arguments: dict[str, Any]) -> set[str]:
    """Every hit of the search, page after page."""
    found: set[str] = set()
    arguments = {**arguments, "limit": 50}
    while True:
        answer = call("search", **arguments)
        assert answer["state"] == "ok", answer
        found.update(hit["id"] for hit in answer["data"]["hits"])
        if not answer.get("continuation"):
            return found
        arguments = answer["continuation"]["next_arguments"]


def _agree(call: Call, answer: dict[str, Any], names: set[str]) -> None:
    """Each section in `names` has a line, and its search finds the section's nodes: those it shows,
    and as many more as it says it left out (less the ones another section of the answer shows)."""
    listed = _listed(call, answer)
    assert set(listed) == names, compact(answer)
    sections = {s["name"]: s for s in answer["data"]["sections"]}
    for name, arguments in listed.items():
        found = _found(call, arguments)
        own = {item["id"] for item in sections[name]["items"]}
        elsewhere = {item["id"] for s in sections.values() if s["name"] != name for item in s["items"]}
        assert own <= found, name
        assert len(found - elsewhere) == sections[name]["total"], (name, arguments)
        assert sections[name]["filters"] == arguments["filters"]  # the service's, as the text says them


def test_the_search_a_context_line_names_finds_what_its_section_chose(call: Call) -> None:
    call("note", initiative="p", text="the project starts")
    columns = [{"key": "todo"}, {"key": "later"}, {"key": "done"}, {"key": "dropped"}]  # `done` and after close
    assert call("initiative", initiative="p", action="set_board", columns=columns)["state"] == "applied"
    # Oldest first: the newest work fills `warm` and `recent`, which would show what a cap left out.
    for i in range(12):
        call("note", initiative="p", kind="decision", text=f"We use library L{i} for component C{i}")
    for i in range(2):  # decisions `context` never offers: cold
        cold = call("note", initiative="p", kind="decision", text=f"Use tabs in Makefile {i}")["data"]["primary"]
        call("layer", initiative="p", nodes=[cold["id"]], layer="cold")
    for i in range(22):
        call("claim", initiative="p", text=f"batch {i} reconciles in one pass")
    for i in range(3):
        call("task", initiative="p", text=f"closed batch {i}", status="done")
    for i in range(40):
        call("task", initiative="p", text=f"reconcile batch {i}", status="todo")
    for i in range(30):
        call("task", initiative="p", text=f"archive batch {i}", status="later")
    answer = call("context", initiative="p")
    assert {o["section"] for o in answer["coverage"]["omitted"]} >= {"tasks", "decisions", "claims"}
    _agree(call, answer, {"tasks", "decisions", "claims"})
    tasks = _listed(call, answer)["tasks"]["filters"]
    assert tasks == {"types": ["task"], "statuses": ["todo", "later"]}


def test_rules_left_out_by_the_budget_are_listed_by_their_search(call: Call) -> None:
    for i in range(12):
        call("note", initiative="p", kind="rule", text=f"rule {i}: " + "keep every write idempotent " * 12)
    answer = call("context", initiative="p", budget_chars=512)
    assert answer["coverage"]["rules_complete"] is False
    _agree(call, answer, {"rules"})


def test_rules_not_in_force_are_said_on_the_rules_search_that_lists_them_too(call: Call) -> None:
    """No search filter says "in force": with an ended rule or one scoped to a task in the initiative,
    a search by type and tag lists rules the section never shows. It was withheld then, and the rules
    the budget left out (whole, so many) were a count with no way to read them (review of decision
    491): it is offered, with how many of what it lists do not apply here."""
    task = call("task", initiative="p", text="ship the parser")["data"]["primary"]["id"]
    for i in range(12):
        call("note", initiative="p", kind="rule", text=f"rule {i}: " + "keep every write idempotent " * 12)
    call("note", initiative="p", kind="rule", text="rule for another task only", applicability={"task": {"id": task}})
    call("note", initiative="p", kind="rule", text="a freeze that ended", applicability={"through": "2001-01-01"})
    answer = call("context", initiative="p", budget_chars=512)
    assert answer["coverage"]["rules_complete"] is False
    rules = next(s for s in answer["data"]["sections"] if s["name"] == "rules")
    assert rules["filters_not_applying"] == 2
    [line] = [x for x in compact(answer).splitlines() if x.startswith("all rules: search ")]
    assert line.endswith("(and 2 rule(s) that do not apply here: released, ended, or for a task not named)")
    found = _found(call, _listed(call, answer)["rules"])
    shown = {item["id"] for item in rules["items"]}
    [budget] = [o["count"] for o in answer["coverage"]["omitted"] if (o["section"], o["reason"]) == ("rules", "budget")]
    assert shown <= found and len(found) == len(shown) + budget + 2, "each rule left out, and the two said"


def test_a_section_that_leaves_nothing_out_names_no_search(call: Call) -> None:
    """The filters travel with a section only when it leaves some of its nodes out: a whole answer
    is as it was."""
    call("task", initiative="p", text="one task")
    call("note", initiative="p", kind="decision", text="We use SQLite")
    answer = call("context", initiative="p")
    assert answer["coverage"]["omitted"] == []
    assert all("filters" not in section for section in answer["data"]["sections"])
    assert not _listed(call, answer)
