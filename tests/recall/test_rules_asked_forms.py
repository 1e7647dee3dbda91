"""The common ways to ask which rules are in force are read as such, and questions about some other
rules (an engine, a rule of thumb, firewall rules, a database constraint, appointments) are not; an
update of a note written without spaces, or of a value under its label, is found; the rules past
those read are counted (session 55's review of recall's rules questions). Both backends, through
the tool registry."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.domain.open_work import asked_alone, rules_phrase
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.service.recall import rules_asked
from kaeru.service.recall.values_near import tied, values_by_word
from tests.recall.helpers import hit_ids, made_id

P = "svc"

ASKED = [
    "what are the rules",
    "What are the rules?",
    "what is the rule",
    "what is the rule here",
    "list the rules",
    "show me the rules",
    "give me all the rules",
    "what are our current rules?",
]
NOT_ASKED = [
    "what rules engine do we use",
    "our rules engine is slow",
    "is the unique constraint active on users.email",
    "active constraint violations in postgres",
    "the current rule of thumb",
    "firewall rules that apply to port 443",
    "which firewall rules are active",
    "welke afspraken heb ik morgen",
    "welke afspraken?",
    "the rules engine crashed",
    "rule out the cache",
    "as a rule we deploy on Fridays",
]


def _run(service: Service) -> Any:
    return build_server(service).registry.run


@pytest.mark.parametrize("query", ASKED)
def test_the_common_ways_to_ask_are_questions_about_the_rules_alone(query: str) -> None:
    phrase = rules_phrase(query)
    assert phrase and asked_alone(query, phrase), (query, phrase)


def test_the_rules_for_a_subject_are_asked_beside_it() -> None:
    query = "what are the rules for naming branches"
    phrase = rules_phrase(query)
    assert phrase and not asked_alone(query, phrase)


@pytest.mark.parametrize("query", NOT_ASKED)
def test_questions_about_other_rules_are_no_question_about_the_rules_in_force(query: str) -> None:
    assert rules_phrase(query) == ""


@pytest.mark.parametrize("query", ["what are the rules", "show me the rules", "what is the rule"])
def test_asked_the_commonest_way_recall_brings_back_the_rule(service: Service, query: str) -> None:
    """ "what are the rules" found nothing and said it omitted nothing."""
    run = _run(service)
    rule = made_id(
        run("note", {"initiative": P, "text": "Never push directly to main; always open a PR.", "kind": "rule"})
    )
    made_id(run("note", {"initiative": P, "text": "Lunch was pizza today."}))
    assert hit_ids(run("recall", {"initiatives": [P], "query": query}))[:1] == [rule]


@pytest.mark.parametrize("query", ["what rules engine do we use", "welke afspraken?"])
def test_asked_about_other_rules_alone_recall_lists_no_rule(service: Service, query: str) -> None:
    """Asked alone, a phrase lists every rule: "welke afspraken?" (which appointments?) did."""
    run = _run(service)
    rule = made_id(
        run("note", {"initiative": P, "text": "Never push directly to main; always open a PR.", "kind": "rule"})
    )
    assert rule not in hit_ids(run("recall", {"initiatives": [P], "query": query}))


def test_a_value_under_its_label_and_a_value_written_without_spaces_are_tied() -> None:
    assert tied(values_by_word("Budget\n550"), values_by_word("Budget\n600"))
    assert tied(values_by_word("API端口是8080。"), values_by_word("API端口是9443。"))
    assert tied(values_by_word("APIのポートは8080です。"), values_by_word("APIのポートは9443です。"))
    # a reference pasted under a line of prose is still the value of nothing
    assert not tied(
        values_by_word("The webinar is hosted by the business council\n1 18"),
        values_by_word("Worried about missing something at the business council\n1 21"),
    )


def _window(answer: dict[str, Any]) -> int:
    return sum(o["count"] for o in answer["coverage"]["omitted"] if o["reason"] == "window")


@pytest.mark.parametrize(("written", "left"), [(3, 0), (5, 2)])
def test_the_rules_past_those_read_are_counted(
    service: Service, monkeypatch: pytest.MonkeyPatch, written: int, left: int
) -> None:
    """At exactly `RULES_READ` rules one was said omitted, and past it always one, however many."""
    monkeypatch.setattr(rules_asked, "RULES_READ", 3)
    run = _run(service)
    for i in range(written):
        made_id(
            run(
                "note",
                {"initiative": P, "text": f"Always run the migrations twice before release {i}.", "kind": "rule"},
            )
        )
    answer = run("recall", {"initiatives": [P], "query": "what are the rules in force"})
    assert len(hit_ids(answer)) == 3
    assert _window(answer) == left, answer["coverage"]
