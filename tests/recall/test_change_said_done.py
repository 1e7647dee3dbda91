"""A change said done without its new value (`recall/stated_done.py`, issue 17): a later note saying
that a fact with a value was changed — "the design review has been postponed", or a question that
takes it as given, "which date has it been moved to?" — ranks above the note that gives the old
value, unless the query asks for history; a question asking whether it changed (with or without its
mark), a supposition, a hypothesis ("would have been"), a denial ("has not been", "nobody said"), a
request to check it, a change of another thing named just before it — or of another value of the
older note —, or a thing updated raises nothing."""

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
        "The design review with the client has not been postponed",
        "The design review with the client hasn't been postponed",
        "Nobody said the design review with the client has been postponed",
        "The design review with the client would have been postponed",
        "The design review with the client would've been postponed but the client said no",
        "Has the design review with the client been postponed",
        "Confirm that the design review with the client has been postponed",
        "Can you check the design review with the client has been postponed",
    ],
    ids=[
        "asks-whether",
        "supposes",
        "another-thing",
        "a-document-updated",
        "not",
        "n-t",
        "denied-report",
        "would-have",
        "would-ve",
        "asks-without-its-mark",
        "a-request",
        "a-request-asked",
    ],
)
def test_no_change_said_done_keeps_the_order(service: Service, newer_text: str) -> None:
    older, newer = _pair(service, newer_text)
    assert ids(recall(service, QUERY, disabled=frozenset({"updates"})))[:2] == [older, newer]
    assert ids(recall(service, QUERY))[:2] == [older, newer]


def test_a_question_about_the_past_keeps_the_order(service: Service) -> None:
    older, newer = _pair(service, "The design review with the client has been postponed")
    assert ids(recall(service, "when was the design review with the client originally scheduled"))[:2] == [older, newer]


def test_updated_is_no_change_said_done(service: Service) -> None:
    """Named by the query's own words, so only the word of change can refuse it: a thing updated
    (a document, a plan) may keep its numbers."""
    older, newer = _pair(service, "The design review with the client has been updated")
    assert ids(recall(service, QUERY, disabled=frozenset({"updates"})))[:2] == [older, newer]
    assert ids(recall(service, QUERY))[:2] == [older, newer]


def test_a_change_of_another_value_keeps_the_order(service: Service) -> None:
    """The owner changed, not the deadline the query asks about: the older's number is the
    deadline's, and "owner" is no query word."""
    older = note(service, "Database migration deadline: March 3. Owner: Bob")
    for i in range(5):
        note(service, FILLER.format(i))
    newer = note(service, "The database migration owner has been changed")
    query = "when is the database migration deadline"
    assert ids(recall(service, query, disabled=frozenset({"updates"})))[:2] == [older, newer]
    assert ids(recall(service, query))[:2] == [older, newer]
