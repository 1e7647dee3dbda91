"""Re-entry as a fresh agent makes it (the re-entry probe, session 49): `context` without `task`
says that rules wait for the task in progress, gives its budget to open work before routine notes,
keeps its layers' places for current nodes, and the `resume` prompt carries the bundle as the
tool's text with its coverage, not several times its size."""

from __future__ import annotations

import json
from typing import Any

import anyio

from kaeru.mcp.prompts import get_prompt
from kaeru.mcp.render import compact
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.service.requests.reads import SECTIONS
from tests.working.conftest import Call


def _section(envelope: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in envelope["data"]["sections"] if s["name"] == name)


def _ids(envelope: dict[str, Any], name: str) -> list[str]:
    return [item["id"] for item in _section(envelope, name)["items"]]


def _shown(envelope: dict[str, Any]) -> set[str]:
    return {item["id"] for s in envelope["data"]["sections"] for item in s["items"]}


def _id(envelope: dict[str, Any]) -> str:
    assert envelope["state"] == "applied", envelope
    return str(envelope["data"]["primary"]["id"])


def test_a_rule_of_the_task_in_progress_is_counted_and_named_until_the_task_is_given(call: Call) -> None:
    """The first `context` of a fresh agent, as the server's instructions say (the initiative
    only): the rule scoped to the task in progress was absent and `omitted` was empty."""
    task = _id(
        call("task", initiative="p", text="Implement invoice PDF export", name="pdf export", status="in-progress")
    )
    rule = _id(
        call(
            "note",
            initiative="p",
            kind="rule",
            text="While on the PDF export, render with reportlab only.",
            applicability={"task": "pdf export"},
        )
    )
    general = _id(call("note", initiative="p", kind="rule", text="Never push to main."))
    # Rules that wait for nothing: of a closed task, released, past their day.
    done = _id(call("task", initiative="p", text="Old export", name="old export", status="done"))
    call("note", initiative="p", kind="rule", text="Old export: use CSV.", applicability={"task": done})
    released = _id(call("note", initiative="p", kind="rule", text="Use wkhtmltopdf.", applicability={"task": task}))
    call("revise", initiative="p", node={"id": released}, patch={"constraint_state": "released"})
    call("note", initiative="p", kind="rule", text="Freeze.", applicability={"task": task, "through": "2026-03-01"})
    call("note", initiative="p", text="Handoff: half-way through the PDF export.", options={"slot": "handoff"})

    first = call("context", initiative="p")
    assert _ids(first, "rules") == [general]
    coverage = first["coverage"]
    assert {"section": "rules", "count": 1, "reason": "task_scoped"} in coverage["omitted"]
    # Every rule that applies without a task is here: rules_complete keeps its meaning, and nothing
    # was cut (the omission is by rule, as `search`'s superseded hits are).
    assert coverage["rules_complete"] is True and coverage["complete"] is True
    assert _section(first, "tasks")["scoped_rules"] == {task: 1}
    [notice] = first["data"]["notices"]
    assert '"pdf export" (1)' in notice and "`task`" in notice and "old export" not in notice
    assert "omitted: rules 1 (task_scoped)" in compact(first)

    on_task = call("context", initiative="p", task="pdf export")
    assert _ids(on_task, "rules") == [rule, general]  # in the order they were written
    assert on_task["coverage"]["omitted"] == [] and on_task["data"]["notices"] == []
    assert "scoped_rules" not in _section(on_task, "tasks")

    call("task_update", initiative="p", task=task, status="done")
    closed = call("context", initiative="p")
    assert closed["coverage"]["omitted"] == [] and closed["data"]["notices"] == []


def test_open_work_gets_the_budget_before_routine_notes(call: Call) -> None:
    """The budget followed the section order: 20 routine notes written after two tasks and a claim
    took 2,000 and 3,000 characters, and the answer showed no open task and no claim."""
    call("note", initiative="p", kind="rule", text="Never push directly to main.")
    handoff = _id(
        call("note", initiative="p", text="Handoff: " + "where things stand. " * 20, options={"slot": "handoff"})
    )
    tasks = {_id(call("task", initiative="p", text=f"Ship part {i} of the export", name=f"part {i}")) for i in range(2)}
    claim = _id(call("claim", initiative="p", text="Caching PDFs in Redis keeps p95 under 300 ms."))
    for i in range(20):
        call(
            "note",
            initiative="p",
            text=f"Routine observation {i}: " + "the build took a while and logs were noisy. " * 8,
        )
    for budget in (1000, 2000, 3000):
        answer = call("context", initiative="p", budget_chars=budget)
        assert set(_ids(answer, "tasks")) == tasks, budget
        assert _ids(answer, "claims") == [claim], budget
        assert _ids(answer, "slots") == [handoff], budget
        # The answer keeps the documented order, and says per section what the budget left out.
        assert [s["name"] for s in answer["data"]["sections"]] == list(SECTIONS)
        warm = _section(answer, "warm")
        cut = {o["section"]: o["count"] for o in answer["coverage"]["omitted"] if o["reason"] == "budget"}
        assert cut.get("warm", 0) == min(15, warm["total"]) - len(warm["items"]) > 0, budget
        assert answer["coverage"]["complete"] is False
        order = [o["section"] for o in answer["coverage"]["omitted"]]
        assert order == sorted(order, key=list(SECTIONS).index)
        bodies = sum(len(item.get("body") or "") for s in answer["data"]["sections"] for item in s["items"])
        assert bodies <= budget


def test_the_layers_keep_their_places_for_current_nodes(call: Call) -> None:
    """`warm` showed its 15 newest nodes whatever they were: superseded notes and finished tasks,
    marked, took places and budget from current ones (and `search` leaves those nodes out)."""
    kept = [_id(call("note", initiative="p", text=f"Current fact {i}.")) for i in range(15)]
    replaced = [_id(call("note", initiative="p", text=f"Old fact {i}.")) for i in range(10)]
    successors = [
        _id(call("evolve", initiative="p", mode="supersede", source={"id": old}, new_body=f"New fact {i}."))
        for i, old in enumerate(replaced)
    ]
    finished = [_id(call("task", initiative="p", text=f"Finished task {i}")) for i in range(3)]
    for task in finished:
        call("task_update", initiative="p", task={"id": task}, status="done")
    hot = _id(call("note", initiative="p", text="Old hot fact.", options={"layer": "hot"}))
    hot_successor = _id(call("evolve", initiative="p", mode="supersede", source={"id": hot}, new_body="New hot fact."))

    answer = call("context", initiative="p")
    shown = _shown(answer)
    assert not shown & set(replaced + finished + [hot]), "a superseded node or a closed task is not shown"
    assert set(kept + successors + [hot_successor]) <= shown
    assert len(_ids(answer, "warm")) == 15
    # Left out as not current, they are counted nowhere.
    assert answer["coverage"]["omitted"] == [] and answer["coverage"]["complete"] is True
    assert sum(len(s["items"]) for s in answer["data"]["sections"]) == sum(
        s["total"] for s in answer["data"]["sections"]
    )
    # `search` agrees: the superseded notes are not among its hits either.
    found = call("search", initiatives=["p"], text="fact", limit=50)
    assert not {h["id"] for h in found["data"]["hits"]} & set(replaced)
    # A superseded node asked for by its layer (cold: where a slot's previous holder goes) is still there.
    call("layer", initiative="p", nodes=[{"id": replaced[0]}], layer="cold")
    assert replaced[0] in _ids(call("context", initiative="p", sections=["cold"]), "cold")


def test_the_resume_prompt_carries_the_coverage_at_the_size_of_the_bundle(timed: Service) -> None:
    """`resume` wrapped the data alone as indented JSON: 4-5 times the tool's text, and no word
    of what was left out."""
    registry = build_server(timed).registry

    def call(tool: str, **args: Any) -> dict[str, Any]:
        return registry.run(tool, args)

    call("task", initiative="p", text="Implement invoice PDF export", name="pdf export")
    call(
        "note", initiative="p", kind="rule", text="On the export: reportlab only.", applicability={"task": "pdf export"}
    )
    call("note", initiative="p", kind="rule", text="Never push to main.")
    for i in range(40):
        call("note", initiative="p", text=f"Routine observation {i}: the build took a while.")
    bundle = compact(call("context", initiative="p"))

    async def resume() -> str:
        result = await get_prompt(registry, "resume", {"initiative": "p"})
        return "".join(m.content.text for m in result.messages if m.content.type == "text")

    text = anyio.run(resume)
    assert bundle in text, "the bundle is the context tool's own text"
    coverage = json.loads(text[text.rindex("coverage: ") + len("coverage: ") :])
    assert coverage["rules_complete"] is True
    assert {"section": "rules", "count": 1, "reason": "task_scoped"} in coverage["omitted"]
    assert "every rule in force" in text and "`task`" in text
    assert len(text) < len(bundle) + 2000, (len(text), len(bundle))

    for i in range(150):  # more rules than the default budget holds even cut short: some are left out
        call("note", initiative="p", kind="rule", text=f"Rule {i}: " + "keep every write idempotent. " * 4)
    text = anyio.run(resume)
    coverage = json.loads(text[text.rindex("coverage: ") + len("coverage: ") :])
    assert coverage["rules_complete"] is False and "does NOT hold every rule in force" in text


def test_rules_cut_to_the_budget_are_named(call: Call) -> None:
    """A rule cut to the budget: nothing said which was cut (the docs-truth probe). Only a first rule
    longer than the rules' whole share is cut now, and a cut rule is not delivered: `rules_complete`
    is false (it stayed true while every rule was cut to an equal share, session 52)."""
    ids = [
        _id(call("note", initiative="r", kind="rule", text=f"Rule {i}: " + "always do the thing properly " * n))
        for i, n in enumerate([24] + [8] * 7)
    ]
    cut = call("context", initiative="r", budget_chars=512)
    assert cut["coverage"]["rules_complete"] is False and cut["coverage"]["complete"] is False
    assert {"section": "rules", "count": 7, "reason": "budget"} in cut["coverage"]["omitted"]
    said = [i for i in cut["issues"] if i["code"] == "budget_truncated"]
    assert len(said) == 1 and said[0]["field"] == "budget_chars", cut["issues"]
    assert "1 rule(s) cut to fit budget_chars=512" in said[0]["message"] and ids[0] in said[0]["message"]
    whole = call("context", initiative="r")
    assert not [i for i in whole["issues"] if i["code"] == "budget_truncated"], "a rule that fits is not said cut"
