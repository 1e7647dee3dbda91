"""Updates as agents write them (decision 300): a newer statement marked as what holds from now on
("now", "the new …", "instead of", "no longer", "took over", "from now on", "replaced … with") ranks
above the statement it restates with another value — unless the query asks for history; and a
marker that changes nothing of the older statement raises nothing."""

from __future__ import annotations

import pytest

from kaeru.api.requests import parse
from kaeru.domain.text import tokens
from kaeru.service import Service
from kaeru.service.recall.markers import _STRONG, STRONG_WORDS, may_mark, strong, weak
from kaeru.service.recall.updates import read_marks
from tests.recall.helpers import P, note, recall

FILLER = "Standup {}: worked on the search page and fixed flaky tests in CI"

MARKED = [
    (
        "We use npm to install the frontend packages",
        "From now on we use pnpm instead of npm for the frontend packages",
        "which package manager for the frontend packages",
    ),
    ("Staging runs on Heroku", "Staging now runs on Fly.io", "where does staging run"),
    ("The team lead is Bob", "Dana is the new team lead", "who is the team lead"),
    (
        "We format Python code with black",
        "We replaced black with ruff format for Python code",
        "how do we format Python code",
    ),
    (
        "Alice owns the billing service",
        "Carol took over the billing service from Alice",
        "who owns the billing service",
    ),
    (
        "Deploys go out on Tuesdays",
        "From now on deploys go out on Thursdays because of the QA schedule",
        "when do deploys go out",
    ),
    (
        "The docs site is hosted on Netlify",
        "The docs site is no longer on Netlify; it is hosted on GitHub Pages",
        "where is the docs site hosted",
    ),
    ("Die Tests laufen auf Jenkins", "Die Tests laufen jetzt auf GitHub Actions", "wo laufen die Tests"),
]


def ids(outcome: object) -> list[str]:
    return [h.node.id for h in outcome.hits]  # type: ignore[attr-defined]


def _pair(service: Service, older_text: str, newer_text: str) -> tuple[str, str]:
    older = note(service, older_text)
    for i in range(5):
        note(service, FILLER.format(i))
    return older, note(service, newer_text)


@pytest.mark.parametrize(("older_text", "newer_text", "query"), MARKED, ids=lambda v: v[:24])
def test_a_marked_update_ranks_above_the_statement_it_updates(
    service: Service, older_text: str, newer_text: str, query: str
) -> None:
    older, newer = _pair(service, older_text, newer_text)
    without = ids(recall(service, query, disabled=frozenset({"updates"})))
    assert without[:2] == [older, newer]
    answer = recall(service, query)
    assert ids(answer)[:2] == [newer, older]
    assert answer.explain[newer]["updates"] > 0


def test_a_question_about_the_past_keeps_the_order(service: Service) -> None:
    older, newer = _pair(service, "Staging runs on Heroku", "Staging now runs on Fly.io")
    for query in ("where did staging run", "where did staging originally run"):
        assert ids(recall(service, query))[:2] == [older, newer], query


@pytest.mark.parametrize(
    "newer_text",
    [
        # "for now" is for the moment, not from now on.
        "For now staging runs the nightly load tests on Heroku and Fly.io",
        # A marker, but the newer does not restate the older: another thing that staging does.
        "Staging now sends its alerts, logs, traces, metrics and audit records to the new Grafana cloud account",
        # "new" far from the query's words.
        "The new intern looked at the dashboards this morning; staging runs fine",
        # A question asks whether it changed; it does not say it did.
        "Does staging now run on Fly.io?",
    ],
    ids=["for-now", "no-restatement", "far-marker", "question"],
)
def test_a_marker_that_updates_nothing_raises_nothing(service: Service, newer_text: str) -> None:
    older, other = _pair(service, "Staging runs on Heroku", newer_text)
    answer = recall(service, "where does staging run")
    assert ids(answer).index(older) < ids(answer).index(other)
    assert "updates" not in answer.explain.get(other, {})


def test_a_question_marks_nothing_and_a_statement_beside_it_still_does() -> None:
    slots = {"stage", "run"}
    assert read_marks("Does staging now run on Fly.io?", slots) == []
    assert read_marks("Does staging now run on Fly.io?! Nobody said so.", slots) == []
    stated = [(frozenset(slots), frozenset({"now"}))]
    assert read_marks("Staging now runs on Fly.io", slots) == stated
    assert read_marks("Is that right? Staging now runs on Fly.io.", slots) == stated
    assert read_marks("Staging now runs on Fly.io. Is that fine?", slots) == stated


def test_markers_are_read_as_phrases_and_beside_the_query() -> None:
    assert strong("The docs site is no longer on Netlify") == ["no", "longer"]
    assert strong("Désormais on déploie le jeudi") == ["desormais"]
    assert strong("Carol took over the billing service") == ["took", "over"]
    assert strong("Staging now runs on Fly.io") == []
    words = ["staging", "now", "runs", "on", "fly", "io"]
    assert weak(words, [w in ("staging", "runs") for w in words]) == ["now"]
    words = ["playing", "online", "for", "now"]
    assert weak(words, [w == "online" for w in words]) == []  # "for now"
    words = ["the", "new", "intern", "looked", "at", "staging"]
    assert weak(words, [w == "staging" for w in words]) == []  # too far


@pytest.mark.parametrize("marker", [m for group in _STRONG for m in group.split("|")])
def test_every_strong_marker_is_found_by_its_word(marker: str) -> None:
    """A text is read for strong markers only when one of its words is a marker's word: a marker
    without one would never be found (`markers.STRONG_WORDS`)."""
    phrase = marker.replace(r"\w+", "est")  # `ne \w+ plus`: "ne est plus"
    assert not STRONG_WORDS.isdisjoint(tokens(phrase))
    sentence = f"Le Bot: {phrase.capitalize()} the staging server"
    assert strong(sentence) and may_mark(sentence, set(tokens(sentence))) and may_mark(sentence)


@pytest.mark.parametrize(
    ("text", "marked"),
    [
        ("From the start we ran staging on Heroku and deployed it on Tuesdays", False),
        ("We run staging on Fly.io instead", True),
        ("Dana is the NEW team lead", True),  # weak: found here, read beside the query later
        ("Le site n'est plus sur Netlify", True),
        ("Plus de tests, moins de bugs", False),  # a strong marker's word, but no marker
    ],
)
def test_a_text_is_marked_alike_by_its_words_and_by_the_regex(text: str, marked: bool) -> None:
    assert may_mark(text, set(tokens(text))) is marked
    assert may_mark(text) is marked


@pytest.mark.parametrize("query", ["where is staging hosted", "which host is staging on"])
def test_a_successor_ranks_above_the_fact_it_supersedes(service: Service, query: str) -> None:
    """A superseded fact is found by the question's own words, its successor often in others
    ("moved … to Fly.io"): the stale answer ranked first, the current one below routine notes."""
    older = note(service, "Staging is hosted on Heroku (app shopfront-staging).")
    note(service, "Checked database connection counts on staging: 40 of 100.")
    note(service, "Ran the load test against staging: 350 rps sustained.")
    made, _ = service.evolve(
        parse(
            "evolve",
            {
                "initiative": P,
                "mode": "supersede",
                "source": {"id": older},
                "new_body": "Staging moved from Heroku to Fly.io (app shopfront-stg, region fra).",
            },
        )
    )
    assert made.primary is not None
    newer = made.primary.id
    order = ids(recall(service, query))
    assert order.index(newer) < order.index(older), order
    # Asked what it was before, the order of the words stands.
    before = ids(recall(service, "where was staging hosted originally"))
    assert before.index(older) < before.index(newer)
