"""`open_work_phrase` and `decisions_phrase`: the questions about open work and about decisions an
agent asks in its own words, and the everyday questions that only share a word with them
(decisions 293, 319)."""

from __future__ import annotations

import pytest

from kaeru.domain.open_work import asked_alone, decisions_phrase, open_work_phrase


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
        ("Qu'est-ce qui reste à faire ?", "qu'est-ce qui reste a faire"),
        ("¿Qué queda por hacer?", "queda por hacer"),
        ("Cosa resta da fare?", "resta da fare"),
        ("Quais são os próximos passos?", "proximos passos"),
        ("Wat staat er nog te doen?", "nog te doen"),
        # Asked otherwise by a probing agent, and answered with nothing (decision 319).
        ("what is still open?", "what is still open"),
        ("which tasks are open?", "which tasks are open"),
        ("what is overdue?", "what is overdue"),
        ("what should I work on now?", "should i work on now"),
        ("which claims are still open?", "which claims are still open"),
        ("any open questions?", "open questions"),
        ("que reste-t-il à faire ?", "reste-t-il a faire"),
        ("was steht noch an?", "steht noch an"),
        ("残りのタスクは？", "残りのタスク"),
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
        "Which stores are open on Sunday?",
        "is the door open",
        "ケーキの残りはどこ？",
        "次は何を食べる？",
    ],
)
def test_a_question_sharing_a_word_with_them_is_not(query: str) -> None:
    assert open_work_phrase(query) == ""


@pytest.mark.parametrize(
    ("query", "phrase"),
    [
        ("what did we decide?", "what did we decide"),
        ("What did Bob decide about the API?", "what did bob decide"),
        ("which decisions were made?", "which decisions"),
        ("decisions", "decisions"),
        ("what was decided about the cache?", "what was decided"),
        ("why did we choose PostgreSQL?", "why did we choose"),
        ("Qu’avons-nous décidé ?", "qu'avons-nous decide"),
        ("Was haben wir entschieden?", "was haben wir entschieden"),
        ("¿Qué decidimos?", "que decidimos"),
        ("Wat hebben we besloten?", "wat hebben we besloten"),
        ("何を決めた？", "何を決め"),
    ],
)
def test_a_question_about_decisions_is_told(query: str, phrase: str) -> None:
    assert decisions_phrase(query) == phrase


@pytest.mark.parametrize(
    "query",
    [
        "How did Melanie feel about her decision?",
        "the decision tree model",
        "where is staging hosted",
        "Why did Bob move to Berlin?",
        "What did she pick up at the store?",
        "What did he settle in court?",
        "決定木とは何ですか？",
    ],
)
def test_a_question_naming_a_decision_is_not_one_about_decisions(query: str) -> None:
    assert decisions_phrase(query) == ""


@pytest.mark.parametrize(
    ("query", "alone"),
    [
        ("what did we decide?", True),
        ("What did Bob decide?", True),
        ("which decisions were made?", True),
        ("what is still open?", True),
        ("que reste-t-il à faire ?", True),
        ("残りのタスクは？", True),
        ("What did Bob decide about the API?", False),
        ("why did we choose PostgreSQL?", False),
        ("How do I pay an overdue bill?", False),
        ("Is the window still open?", False),
        ("Pourquoi le train est en retard ?", False),
        ("what is left to do on the importer?", False),
    ],
)
def test_a_phrase_with_words_of_a_subject_is_not_asked_alone(query: str, alone: bool) -> None:
    """Alone, the phrase asks for the whole list; beside a subject's words ("an overdue bill"), it
    only leans the order: the lists were added to everyday questions (review, session 38)."""
    phrase = open_work_phrase(query) or decisions_phrase(query)
    assert phrase and asked_alone(query, phrase) is alone
