"""A change said done without its new value (`recall/stated_done.py`, issue 17): a later note saying
that a fact with a value was changed — "the design review has been postponed", or a question that
takes it as given, "which date has it been moved to?" — ranks above the note that gives the old
value, unless the query asks for history; a question asking whether it changed, a supposition, a
change of another thing named just before it, or a document updated raises nothing."""

from __future__ import annotations

import pytest

from kaeru.service import Service
from tests.recall.helpers import note, recall

OLDER = "The design review with the client is scheduled for March 20 at 10:00"
FILLER = "Standup {}: worked on the search page and fixed flaky tests in CI"
QUERY = "when is the design review with the client scheduled"


def ids(outcome: object) -> list[str]:
    return [h.node.id for h in outcome.hits]  # type: ignore[attr-defined]


def _pair(service: Service, newer_text: str) -> tuple[str, str]:
    older = note(service, OLDER)
    for i in range(5):
        note(service, FILLER.format(i))
    return older, note(service, newer_text)


@pytest.mark.parametrize(
    "newer_text",
    [
        "Heads up: the design review with the client has been postponed, they will send dates",
        "Can you remind me which day the design review with the client has been moved to?",
    ],
    ids=["statement", "question-taking-it-as-given"],
)
def test_a_change_said_done_ranks_above_the_old_value(service: Service, newer_text: str) -> None:
    older, newer = _pair(service, newer_text)
    assert ids(recall(service, QUERY, disabled=frozenset({"updates"})))[:2] == [older, newer]
    answer = recall(service, QUERY)
    assert ids(answer)[:2] == [newer, older]
    assert answer.explain[newer]["updates"] > 0


@pytest.mark.parametrize(
    "newer_text",
    [
        "Has the design review with the client been postponed, does anyone know?",
        "If the design review with the client has been postponed, tell the team",
        "The client design review catering has been cancelled",
        "The client design review notes have been updated with the action items",
    ],
    ids=["asks-whether", "supposes", "another-thing", "a-document-updated"],
)
def test_no_change_said_done_keeps_the_order(service: Service, newer_text: str) -> None:
    older, newer = _pair(service, newer_text)
    assert ids(recall(service, QUERY, disabled=frozenset({"updates"})))[:2] == [older, newer]
    assert ids(recall(service, QUERY))[:2] == [older, newer]


def test_a_question_about_the_past_keeps_the_order(service: Service) -> None:
    older, newer = _pair(service, "The design review with the client has been postponed")
    assert ids(recall(service, "when was the design review with the client originally scheduled"))[:2] == [older, newer]
