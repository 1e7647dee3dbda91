"""`recall` on long notes, code identifiers and updated facts (issue 17): a long body is scored by
its best passage, identifiers match by their words and whole, and of two memories that give
different values for what the query asks, the newer ranks first unless the query asks for history."""

from __future__ import annotations

from typing import Any

from kaeru.domain.text import identifier_words
from kaeru.service import Service
from tests.recall.helpers import FILLER, note, recall


def narrow_scope(service: Service) -> None:
    """Recall's own BM25F (passages, identifiers) runs for a scope of at most half of the vault."""
    note(service, "an unrelated initiative keeps the searched scope narrow", initiative="elsewhere")


def ids(outcome: Any) -> list[str]:
    return [h.node.id for h in outcome.hits]


def test_identifier_words_split_camel_case_and_keep_joined_identifiers_whole() -> None:
    parts, wholes = identifier_words("call getUserName, then os.path.join on user_name and HTTPServer")
    assert parts == ["get", "user", "name", "http", "server"]
    assert wholes == ["os.path.join", "user_name"]
    # Numbers, sentence ends and plain words are not identifiers.
    assert identifier_words("It cost 4.500 dollars. Then v2 shipped") == ([], [])


def test_a_long_note_is_scored_by_its_best_passage(service: Service) -> None:
    """Two long notes with the same words the same number of times and the same length: the one
    that says them together (one passage) ranks above the one that scatters them."""
    narrow_scope(service)
    together = note(service, FILLER * 3 + "the zeta cluster failover drill passed on staging " + FILLER * 3)
    scattered = note(service, "zeta " + FILLER * 2 + "cluster failover " + FILLER * 2 + "drill passed " + FILLER * 2)
    for i in range(6):
        note(service, f"short note {i} about lunch plans")
    answer = recall(service, "zeta cluster failover drill")
    assert ids(answer)[:2] == [together, scattered]
    assert answer.explain[together]["lexical"] > answer.explain[scattered]["lexical"]


def test_code_identifiers_match_by_their_words_and_whole(service: Service) -> None:
    narrow_scope(service)
    camel = note(service, "fetch profile handler calls getUserName before rendering")
    plain = note(service, "fetch profile handler for the admin user page")
    answer = recall(service, "fetch profile user name")
    assert ids(answer).index(camel) < ids(answer).index(plain)

    joined = note(service, "deploy script: config built with os.path.join of the base and env dirs")
    loose = note(service, "deploy script: os module, path of the base config, join env dirs")
    answer = recall(service, "deploy config os.path.join")
    assert ids(answer).index(joined) < ids(answer).index(loose)


def test_the_newer_of_two_differing_statements_ranks_first(service: Service) -> None:
    narrow_scope(service)
    older = note(service, "What is the staging budget per month? The staging budget per month is 35 dollars.")
    for i in range(4):
        note(service, f"standup {i}: nothing blocking")
    newer = note(service, "Update: staging budget per month raised to 50 dollars.")

    without = recall(service, "what is the staging budget per month", disabled=frozenset({"updates"}))
    assert ids(without)[:2] == [older, newer]  # the older one says more of the query's words

    answer = recall(service, "what is the staging budget per month")
    assert "updates" in {c.name for c in answer.plan.channels}
    assert ids(answer)[:2] == [newer, older]
    assert answer.explain[newer]["updates"] > 0 and "updates" not in answer.explain[older]

    history = recall(service, "what was the original staging budget per month")
    assert ids(history)[0] == older and "updates" not in history.explain[newer]
    superseded = recall(service, "what is the staging budget per month", include_superseded=True)
    assert "updates" not in {c.name for c in superseded.plan.channels}


def test_statements_that_agree_keep_their_order(service: Service) -> None:
    narrow_scope(service)
    older = note(service, "What is the staging budget per month? The staging budget per month is 35 dollars.")
    newer = note(service, "Reminder: staging budget per month is 35 dollars.")
    answer = recall(service, "what is the staging budget per month")
    assert ids(answer)[:2] == [older, newer] and "updates" not in answer.explain[newer]
