"""`open_work_phrase`: the questions about open work an agent asks in its own words, and the
everyday questions that only share a word with them (decision 293)."""

from __future__ import annotations

import pytest

from kaeru.domain.open_work import open_work_phrase


@pytest.mark.parametrize(
    ("query", "phrase"),
    [
        ("What is left to do?", "left to do"),
        ("what remains to be done on the importer", "remains to be done"),
        ("What’s next?", "what's next"),
        ("next steps for the checkout page", "next steps"),
        ("what should I work on next", "should i work on next"),
        ("open tasks", "open tasks"),
        ("show me the todo list", "todo"),
        ("where did we leave off", "where did we leave"),
        ("what was I working on", "what was i working on"),
        ("Was ist noch zu tun?", "noch zu tun"),
        ("Wo waren wir stehengeblieben?", "wo waren wir stehengeblieben"),
        ("Qu'est-ce qui reste à faire ?", "reste a faire"),
        ("¿Qué queda por hacer?", "queda por hacer"),
        ("Cosa resta da fare?", "resta da fare"),
        ("Quais são os próximos passos?", "proximos passos"),
        ("Wat staat er nog te doen?", "nog te doen"),
    ],
)
def test_a_question_about_open_work_is_told(query: str, phrase: str) -> None:
    assert open_work_phrase(query) == phrase


@pytest.mark.parametrize(
    "query",
    [
        "What did Melanie like to do on weekends?",
        "What did Caroline do next summer?",
        "when is the next release",
        "which tasks did the scheduler run yesterday",
        "the task queue left the worker idle",
        "What books did she read next to the fire?",
        "Nothing left over from the migration",
    ],
)
def test_a_question_sharing_a_word_with_them_is_not(query: str) -> None:
    assert open_work_phrase(query) == ""
