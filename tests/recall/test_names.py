"""How a note's name counts in `recall`'s BM25F (decision 110, 17.K2): the numbers that are pieces of
an identifier in the name (`D2:3`, `v2.4`) are not words of it."""

from __future__ import annotations

from collections import Counter

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.service.recall.bm25 import _joined_numbers
from tests.recall.helpers import P, recall


def named(service: Service, name: str, text: str) -> str:
    outcome, _ = service.note(parse("note", {"initiative": P, "name": name, "text": text}))
    assert outcome.primary is not None
    return outcome.primary.id


def test_a_number_inside_an_identifier_in_a_name_is_not_a_word_of_it() -> None:
    assert _joined_numbers("Caroline D1:3 v2.4 at 4:30 Budget 2024") == Counter({"3": 1, "4": 2, "30": 1})
    assert _joined_numbers("Budget 2024, draft 3") == Counter()


def test_a_turn_number_in_a_name_does_not_match_the_query_s_number(service: Service) -> None:
    # "Standup D2:3" is the third entry of day 2, not something about 3: the note that says "3"
    # in its text is the one the query's number asks for.
    for i in range(6):
        named(service, f"Standup D1:{i + 5}", f"the build was green on run {i + 10}")
    decoy = named(service, "Standup D2:3", "offsite agenda drafted")
    wanted = named(service, "Standup D2:4", "offsite moved to 3 June")
    answer = recall(service, "offsite 3")
    assert answer.explain[wanted]["lexical"] > answer.explain[decoy]["lexical"]
