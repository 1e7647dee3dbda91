"""Asked which rules are in force, recall brings back the rules in force; an update is of the
subject both notes give a value of; open tasks come overdue first (session 55's re-entry probe).
Both backends, through the tool registry."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.recall.helpers import hit_ids, made_id

P = "svc"


def _run(service: Service) -> Any:
    return build_server(service).registry.run


@pytest.mark.parametrize("query", ["what rules apply", "which rules are in force?", "rules", "Welche Regeln gelten?"])
def test_a_question_about_the_rules_brings_back_the_rules_in_force(service: Service, query: str) -> None:
    """A rule's kind is a tag kept out of the word index: "what rules apply" found nothing, said
    complete, while `context` listed the rule. The rules not in force stay out, counted."""
    run = _run(service)

    def note(text: str, **extra: Any) -> str:
        return made_id(run("note", {"initiative": P, "text": text, **extra}))

    in_force = note("Never push directly to main; always open a PR.", kind="rule")
    ended = note("Freeze deploys over the holidays.", kind="rule", applicability={"through": "2020-01-05"})
    decision = note("Decided to use PostgreSQL because of concurrent writers.", kind="decision")
    answer = run("recall", {"initiatives": [P], "query": query})
    found = hit_ids(answer)
    assert found[:1] == [in_force], found
    assert ended not in found and decision not in found[:1]
    assert {"section": "hits", "count": 1, "reason": "suppressed"} in answer["coverage"]["omitted"]


def test_rules_beside_a_subject_lean_toward_the_rule_of_that_subject(service: Service) -> None:
    run = _run(service)
    made_id(run("note", {"initiative": P, "text": "Deployments happen from the release branch on Tuesdays."}))
    rule = made_id(run("note", {"initiative": P, "text": "Deployments need a second approver.", "kind": "rule"}))
    assert hit_ids(run("recall", {"initiatives": [P], "query": "what rules apply to deployments"}))[0] == rule


def test_chatter_with_another_number_does_not_rank_above_the_fact(service: Service) -> None:
    """Any two numbers counted as a changed value: a thread id in chat about the port was taken for
    a new port and ranked above it."""
    run = _run(service)
    port = made_id(run("note", {"initiative": P, "text": "The API now listens on port 9443.", "name": "API port"}))
    made_id(
        run(
            "note",
            {"initiative": P, "text": "Discussed the API port with ops in chat; no change for now (thread 263)."},
        )
    )
    answer = run("recall", {"initiatives": [P], "query": "what port does the API use now", "explain": True})
    assert hit_ids(answer)[0] == port, answer["data"]["explain"]


def test_a_changed_value_of_the_same_thing_still_ranks_first(service: Service) -> None:
    run = _run(service)
    made_id(run("note", {"initiative": P, "text": "The API listens on port 8080 behind the proxy."}))
    newer = made_id(run("note", {"initiative": P, "text": "The API listens on port 9443 behind the proxy now."}))
    assert hit_ids(run("recall", {"initiatives": [P], "query": "which port does the API listen on"}))[0] == newer


def test_open_work_lists_the_overdue_task_first(service: Service) -> None:
    """`context` leads with the overdue task; recall's "open tasks, overdue first" ranked the newest."""
    run = _run(service)
    late = made_id(
        run("task", {"initiative": P, "name": "Rate limiting", "text": "Add rate limiting.", "due": "2020-01-03"})
    )
    made_id(run("task", {"initiative": P, "name": "API docs", "text": "Write docs."}))
    assert hit_ids(run("recall", {"initiatives": [P], "query": "what is left to do"}))[0] == late


def test_numbers_next_to_no_word_are_no_changed_value(service: Service) -> None:
    """Two lines of bare figures (a reference, a line number, a count pasted under a message) that
    differ are the value of nothing both notes name: the newer is no update of the older, and the
    older, which answers the question better, keeps its rank."""
    run = _run(service)
    older = made_id(
        run(
            "note",
            {"initiative": P, "text": "The webinar on AI ethics in hiring is hosted by the business council.\n1 18"},
        )
    )
    newer = made_id(
        run("note", {"initiative": P, "text": "Worried about missing something at the business council again.\n1 21"})
    )
    answer = run(
        "recall", {"initiatives": [P], "query": "who hosts the webinar on AI ethics in hiring", "explain": True}
    )
    assert hit_ids(answer)[:2] == [older, newer], answer["data"]["explain"]
    assert "updates" not in answer["data"]["explain"][newer], answer["data"]["explain"]
