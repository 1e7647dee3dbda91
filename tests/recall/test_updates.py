"""`recall`'s `updates` channel (decision 17.U1): of two short notes that give one of the query's
words different numbers, the newer ranks first — found among the leading hits or below them — unless
the query asks for history (a history word, or a question in the past); explain shows the gain."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.service.recall.updates import asks_history, read_text, read_words
from tests.recall.helpers import P, note

QUERY = "what is the monthly budget for the payments staging cluster"


def recall(service: Service, query: str, disabled: frozenset[str] = frozenset(), **extra: Any) -> Any:
    args: dict[str, Any] = {"initiatives": [P], "query": query, "explain": True, "limit": 10, **extra}
    return service.recall(parse("recall", args), disabled=disabled)


def ids(outcome: Any) -> list[str]:
    return [h.node.id for h in outcome.hits]


def buried_update(service: Service, update: str) -> tuple[str, str]:
    """An older note with the budget, nine short notes that match the query as well (without
    numbers), then `update`: a longer text, so the query's words alone rank it below the first ten."""
    note(service, "an unrelated initiative keeps the searched scope narrow", initiative="elsewhere")
    older = note(service, "Payments staging cluster monthly budget: 400 dollars.")
    for i in range(9):
        note(service, f"Review {i}: payments staging cluster monthly budget discussed.")
    return older, note(service, PREAMBLE + update)


PREAMBLE = (
    "After the planning session with finance and the platform group about hiring, vendors, travel, "
    "training, offsites, laptops, licences and support contracts, we agreed that the "
)


def test_a_newer_statement_below_the_first_ten_is_raised_above_the_older(service: Service) -> None:
    older, newer = buried_update(service, "payments staging cluster monthly budget is now 450 dollars.")
    without = ids(recall(service, QUERY, disabled=frozenset({"updates"}), limit=20))
    assert without.index(older) < 10 <= without.index(newer)

    answer = recall(service, QUERY, limit=20)
    assert ids(answer).index(newer) == ids(answer).index(older) - 1  # just above the older
    # explain says why: the raised note's `updates` gain; the older one has none.
    assert answer.explain[newer]["updates"] > 0 and "updates" not in answer.explain[older]


STATED = "staging cluster monthly budget, increased to 450 dollars."  # says the change, not "payments"


@pytest.mark.parametrize("update", ["payments staging cluster monthly budget is now 450 dollars.", STATED])
def test_a_history_question_keeps_the_old_order(service: Service, update: str) -> None:
    older, newer = buried_update(service, update)
    for query in (
        "what was the monthly budget for the payments staging cluster",  # a question in the past
        "what is the original monthly budget for the payments staging cluster",  # a history word
        "how has the monthly budget for the payments staging cluster changed",  # a change asked about
    ):
        answer = recall(service, query, limit=20)
        assert ids(answer).index(older) < 10 <= ids(answer).index(newer)
        assert "updates" not in answer.explain[newer]


@pytest.mark.parametrize(
    "text",
    [
        # Newer, a number beside `budget` too, but without the query's rarest word the older one has.
        "search staging cluster monthly budget is now 900 dollars.",
        # A stated change, but "search" names the budget that changed: neither the older note nor
        # the query says it.
        "the search staging cluster monthly budget, increased to 900 dollars.",
    ],
    ids=["statement", "stated-change"],
)
def test_a_newer_note_about_another_subject_is_not_raised(service: Service, text: str) -> None:
    older, other = buried_update(service, text)
    answer = recall(service, QUERY, limit=20)
    assert ids(answer).index(older) < 10 <= ids(answer).index(other)
    assert "updates" not in answer.explain[other]


def test_a_stated_change_needs_no_rarest_word(service: Service) -> None:
    # 17.R1: the newer restates the subject without the query's rarest word ("payments"), but it
    # says that the budget changed, and every word naming that budget is the older's or the query's.
    older, newer = buried_update(service, STATED)
    answer = recall(service, QUERY, limit=20)
    assert ids(answer).index(newer) == ids(answer).index(older) - 1
    assert answer.explain[newer]["updates"] > 0


def test_every_newer_statement_that_passes_goes_above_the_older(service: Service) -> None:
    # 17.R1: an older note yields to each newer one that passes, not only to the best-ranked: the
    # restated budget (a leading hit) and the stated change (buried) both rank above it.
    note(service, "an unrelated initiative keeps the searched scope narrow", initiative="elsewhere")
    older = note(service, "Payments staging cluster monthly budget: 400 dollars.")
    stated = note(service, PREAMBLE + STATED)
    restated = note(
        service,
        "The finance team and the platform group, after the quarterly review of vendors, laptops, "
        "travel, offsites, training and licences, confirmed the payments staging cluster monthly "
        "budget: 420 dollars.",
    )
    for i in range(8):
        note(service, f"Review {i}: payments staging cluster monthly budget discussed.")
    without = ids(recall(service, QUERY, disabled=frozenset({"updates"}), limit=20))
    assert without.index(older) < min(without.index(restated), without.index(stated))
    assert without.index(older) < 10 <= without.index(stated)
    answer = recall(service, QUERY, limit=20)
    order = ids(answer)
    assert max(order.index(restated), order.index(stated)) < order.index(older)
    assert answer.explain[stated]["updates"] > 0 and answer.explain[restated]["updates"] > 0


def test_a_change_word_counts_before_the_value_only() -> None:
    slots = {"deadlin", "budget"}
    assert read_text("I met my deadline on October 1, but now I write letters.", slots, changes=True)[2] == {}
    changed = read_text("the new April 25 deadline", slots, changes=True)[2]
    assert changed == {"deadlin": [frozenset({"april"})], "*": [frozenset()]}  # `*`: any number (decision 111)
    assert "budget" in read_text("our gift budget, adjusted to 450 dollars", slots, changes=True)[2]


def test_a_number_in_another_sentence_is_not_a_value_of_the_word() -> None:
    values, content, _ = read_text("Budget approved. 42 people came.", {"budget"})
    assert "budget" not in values and values["*"] == frozenset({"42"})
    values, _, _ = read_text("The budget is 42 dollars.", {"budget"})
    assert values["budget"] == frozenset({"42"})
    assert "budget" in content and "the" not in content


def test_history_words_and_past_questions_ask_for_history() -> None:
    assert asks_history(["origin", "budget"], "original budget")
    assert asks_history(["budget"], "what was the budget")
    assert asks_history(["budget"], "how much did we spend")
    assert asks_history(["how", "has", "budget", "chang"], "how has the budget changed")
    assert not asks_history(["budget"], "what is the budget now")


def test_a_bracketed_header_gives_no_values() -> None:
    values, _, _ = read_text("[1:56 pm on 8 May, 2023] Caroline: I went to the support group.", {"carolin", "group"})
    assert values == {}  # the header's numbers say when: no value of any word, nor of the text
    values, _, _ = read_text("The budget [approved] is 550.", {"budget"})
    assert values["budget"] == frozenset({"550"})  # a bracket inside a sentence is no header


def test_notes_with_dated_headers_are_not_reordered_by_their_dates(service: Service) -> None:
    """A client that writes each turn as "[when] speaker: text" (and no `occurred_at`): the dates of
    two turns are no values, so the newer turn is not an update of the older."""
    older = note(service, "[10:00 am on 2 May, 2023] Caroline: the support group helped; the support group listened.")
    newer = note(
        service,
        "[3:00 pm on 9 June, 2023] Caroline: my support group sends greetings about adoption paperwork, "
        "counselling, friendship, courage, painting, hiking, cooking, gardening, reading, poetry, singing, "
        "swimming, cycling, camping, fishing, knitting, baking, dancing, running, rowing, sailing.",
    )
    query = "caroline support group"
    without = ids(recall(service, query, disabled=frozenset({"updates"})))
    assert without.index(older) < without.index(newer)
    assert ids(recall(service, query)) == without


LONG_ANSWER = (
    "Here is how to get the most from your Zoom meeting with Professor Danielle on March 22: send the "
    "draft {n} days before, list the sections you are unsure of, prepare questions about the method, "
    "the literature review, the structure of the argument, the timeline for revisions, the feedback "
    "format, the citation style, the next milestones, and set reminders {n} hours and 15 minutes before "
    "the meeting so that nothing about the time or the link is missed. Bring printed copies, a notebook, "
    "your outline, data tables, figures, appendix notes and questions on funding, conferences, venues."
)


def test_a_stated_change_of_any_number_between_two_leading_statements(service: Service) -> None:
    # Decision 111: the newer statement says the meeting was rescheduled ("rescheduled to March 22
    # at 4:30") without a number next to a query word; long answers among the leading hits share
    # every word of the two, so only the words the short statements share count as common.
    older = note(service, "The Zoom meeting with Professor Danielle is at 3 PM on March 22, time to review my draft.")
    for n in (2, 3, 4):
        note(service, LONG_ANSWER.format(n=n))
    newer = note(
        service, "Please remind me that the Zoom meeting with Professor Danielle is rescheduled to March 22 at 4:30 PM."
    )
    query = "what time is the zoom meeting with professor danielle"
    without = ids(recall(service, query, disabled=frozenset({"updates"})))
    assert without.index(older) < without.index(newer) < 10
    answer = recall(service, query)
    assert ids(answer).index(newer) == ids(answer).index(older) - 1
    assert answer.explain[newer]["updates"] > 0


SERVER_QUERY = "which server runs the payments database"
#: Short notes that match the server question about as well as the update does, with no change word.
SERVER_NOTES = [
    "Payments database backups are copied to another server each night.",
    "The payments database server has 64 GB of memory.",
    "Monitoring alerts for the payments database server go to the on-call channel.",
]


def moved_server(service: Service, update: str) -> tuple[str, str, list[str], Any]:
    """The older statement, `update` written after it, the server question's order without the
    updates channel, and its answer with it."""
    note(service, "an unrelated initiative keeps the searched scope narrow", initiative="elsewhere")
    older = note(service, "The payments database runs on server alpha in the Frankfurt data centre.")
    for text in SERVER_NOTES:
        note(service, text)
    newer = note(service, update)
    without = ids(recall(service, SERVER_QUERY, disabled=frozenset({"updates"})))
    return older, newer, without, recall(service, SERVER_QUERY)


@pytest.mark.parametrize(
    "update",
    [
        "We moved the payments database to server beta in Berlin last night.",
        "We switched the payments database to a managed server from Crunchy.",
        "We replaced server alpha: the payments database runs on server beta in Berlin.",
    ],
    ids=["moved", "switched", "replaced"],
)
def test_a_newer_statement_of_a_changed_name_is_raised_above_the_older(service: Service, update: str) -> None:
    """Decision 282: a value that is a word, not a number — where the database runs now."""
    older, newer, without, answer = moved_server(service, update)
    assert without.index(older) < without.index(newer)
    assert ids(answer).index(newer) == ids(answer).index(older) - 1
    assert answer.explain[newer]["updates"] > 0 and "updates" not in answer.explain[older]
    # A question in the past, or about the history, keeps the old order.
    for query in ("which server did the payments database run on", "which server originally ran the payments database"):
        assert ids(recall(service, query)) == ids(recall(service, query, disabled=frozenset({"updates"}))), query


@pytest.mark.parametrize(
    "text",
    [
        # Another database moved: "search" names it, and neither the older note nor the query says it.
        "We moved the search database to server beta in Berlin last night.",
        # Nothing new after the word of change: the same server, said again (it may still update the
        # note on the server's memory, which names no server).
        "We moved the payments database to server alpha.",
        # No word of change: a second fact, not an update.
        "A replica of the payments database sits on server gamma in the Paris data centre, beside the old storage arrays.",
    ],
    ids=["another-subject", "no-new-value", "no-change-word"],
)
def test_a_newer_statement_that_changes_no_name_of_the_older_is_not_raised(service: Service, text: str) -> None:
    older, other, without, answer = moved_server(service, text)
    assert without.index(older) < without.index(other)
    assert ids(answer).index(older) < ids(answer).index(other)


def test_a_stated_change_of_words_is_read_per_sentence() -> None:
    slots = {"server", "payment", "databas"}
    sentences, worded = read_words("Alpha is old. We moved the payments database to server beta; it is fast.", slots)
    assert sentences == [
        frozenset({"alpha", "old"}),
        frozenset({"move", "payment", "databas", "server", "beta"}),
        frozenset({"fast"}),
    ]
    assert worded == [(frozenset(slots), frozenset({"beta"}), frozenset())]
    # The words before the first query word name what changed.
    assert read_words("The search team moved the payments database.", slots)[1][0][2] == {"search", "team"}
    # The query words may come before the word of change; a stem of one is no word of change.
    assert read_words("The payments server was replaced by beta.", slots)[1] == [
        ({"payment", "server"}, {"beta"}, frozenset())
    ]
    assert read_words("The payments server moves to beta; it is now gamma.", slots)[1] == []
    # A sentence needs two of the query's words.
    assert read_words("The server moved to beta.", slots)[1] == []
    assert read_words("The payments database runs on server alpha.", slots)[1] == []  # no word of change
    assert read_words("[May 1] We now eat lunch at noon.", slots)[1] == []  # no query word after it


@pytest.mark.parametrize(
    ("older", "others", "update", "query", "history"),
    [
        (
            "Die Zahlungsdatenbank läuft auf dem Server alpha in Frankfurt.",
            [
                "Die Zahlungsdatenbank hat 64 GB Speicher auf dem Server.",
                "Backups der Zahlungsdatenbank gehen jede Nacht auf einen anderen Server.",
            ],
            # The participle comes last: the new value stands before it.
            "Wir haben die Zahlungsdatenbank auf den Server beta in Berlin umgezogen.",
            "Auf welchem Server läuft die Zahlungsdatenbank?",
            "Auf welchem Server lief die Zahlungsdatenbank früher?",
        ),
        (
            "La base des paiements tourne sur le serveur alpha à Paris.",
            [
                "La base des paiements a 64 Go de mémoire sur le serveur.",
                "Les sauvegardes de la base des paiements vont chaque nuit sur un autre serveur.",
            ],
            # Accented (`migré`), and its subject is a function word of French (`nous avons`).
            "Nous avons migré la base des paiements sur le serveur beta à Lyon.",
            "Sur quel serveur tourne la base des paiements ?",
            "Sur quel serveur tournait la base des paiements auparavant ?",
        ),
    ],
    ids=["de", "fr"],
)
def test_a_changed_name_is_found_in_other_languages(
    service: Service, older: str, others: list[str], update: str, query: str, history: str
) -> None:
    first = note(service, older)
    for text in others:
        note(service, text)
    newer = note(service, update)
    without = ids(recall(service, query, disabled=frozenset({"updates"})))
    assert without.index(first) < without.index(newer)
    answer = recall(service, query)
    assert ids(answer).index(newer) == ids(answer).index(first) - 1
    assert answer.explain[newer]["updates"] > 0
    # A question about before, in the same language, keeps the order.
    assert ids(recall(service, history)) == ids(recall(service, history, disabled=frozenset({"updates"})))
