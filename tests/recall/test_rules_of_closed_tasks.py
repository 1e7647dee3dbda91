"""A rule scoped to a task nobody works on any more is not a rule to follow (decision 471).

`context` held back the rule of a dropped task; `recall`, which tested a rule's state and
`through` day only, ranked it second among "the rules I must follow" under `apply_preference`. A
rule whose task is closed (a closing column of the board, `done` or `dropped`) or forgotten is now
suppressed as a released one is — said in `coverage.omitted`, and shown with `include_suppressed`.
A rule of an open task stays. Both backends, through the tool registry."""

from __future__ import annotations

from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.recall.helpers import hit_ids, made_id

P = "billing"


def test_a_rule_of_a_closed_or_forgotten_task_is_suppressed(service: Service) -> None:
    run = build_server(service).registry.run
    board = [{"key": "open"}, {"key": "in-progress"}, {"key": "done"}, {"key": "dropped"}]
    assert run("initiative", {"initiative": P, "action": "set_board", "columns": board})["state"] in ("applied", "ok")

    def task(text: str) -> str:
        return made_id(run("task", {"initiative": P, "text": text}))

    def rule(text: str, task_id: str | None = None) -> str:
        scoped = {"applicability": {"task": {"id": task_id}}} if task_id else {}
        return made_id(run("note", {"initiative": P, "text": text, "kind": "rule", **scoped}))

    working, dropped, finished, forgotten = (
        task(t) for t in ("Render invoice PDFs", "Migrate to Fly.io", "Set up CI", "Spike on WeasyPrint")
    )
    kept = {
        rule("Never log full card numbers; redact them before logging."),
        rule("When working on PDF export, use the invoice-v2 template only.", working),
    }
    held = {
        rule("While migrating to Fly.io, keep Heroku running in parallel until DNS is switched.", dropped),
        rule("While setting up CI, cache the wheels between jobs.", finished),
        rule("During the WeasyPrint spike, pin cairo to 1.16.", forgotten),
    }
    for node, status in ((dropped, "dropped"), (finished, "done")):
        assert run("task_update", {"initiative": P, "task": {"id": node}, "status": status})["state"] == "applied"
    assert (
        run("forget", {"initiative": P, "node": {"id": forgotten}, "reason": "spike abandoned"})["state"] == "applied"
    )

    asked = {"initiatives": [P], "query": "which rules must I follow", "task_intent": "apply_preference"}
    answer = run("recall", asked)
    found = hit_ids(answer)
    assert kept <= set(found) and not held & set(found), found
    assert {"section": "hits", "count": len(held), "reason": "suppressed"} in answer["coverage"]["omitted"]
    # Asked for, they are shown.
    assert held <= set(hit_ids(run("recall", {**asked, "include_suppressed": True})))
