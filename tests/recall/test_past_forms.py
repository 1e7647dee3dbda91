"""A question in the past finds an irregular verb told in its past form (`domain.past_forms`):
"When did Mel go camping?" is answered by "we went camping"."""

from __future__ import annotations

from kaeru.domain.past_forms import expand, past_forms
from kaeru.domain.text import stem, tokens
from kaeru.service import Service
from tests.recall.helpers import note, recall


def _setting(service: Service) -> dict[str, str]:
    for i in range(12):
        note(service, f"Kim: turn {i} about the garden and the weather")
    told = note(service, "Mel: last weekend we went camping by the lake with the kids.")
    for i in range(6):
        note(service, f"Kim: turn {i} about lunch plans at the office")
    other = note(service, "Mel: camping stoves and camping chairs are on sale at the outdoor shop.")
    for i in range(6):
        note(service, f"Kim: turn {i} about the new printer")
    return {"told": told, "other": other}


def test_a_question_in_the_past_finds_the_verb_in_its_past_form(service: Service) -> None:
    """`go` after `did` counts `went` as the same word: the memory that tells the trip ranks above
    one that only says `camping` more often (without the past forms it ranked below it)."""
    m = _setting(service)
    answer = recall(service, "When did Mel go camping?")
    order = [h.node.id for h in answer.hits]
    assert order.index(m["told"]) < order.index(m["other"])
    assert answer.explain[m["told"]]["lexical"] > answer.explain[m["other"]]["lexical"]


def test_a_question_not_in_the_past_asks_the_base_form_only(service: Service) -> None:
    """Without `did` the verb is asked as it is: `went` is not `go` for "Where does Mel go camping?",
    so the memory that says `camping` twice stays first."""
    m = _setting(service)
    order = [h.node.id for h in recall(service, "Where does Mel go camping?").hits]
    assert order.index(m["other"]) < order.index(m["told"])


def test_only_a_base_form_in_a_past_question_is_widened() -> None:
    """From the base to the past only: `met` is not asked as `meet` (the stem of `meeting`), and a
    question without `did` or `didn't` widens nothing."""
    asked = [stem(w) for w in ("go", "met", "buy", "camping")]
    found = past_forms(asked, tokens("When did she go camping, buy it, and who met her?"))
    assert found == {"go": ("go", "went", "gone"), "buy": ("buy", "bought")}
    assert past_forms(asked, tokens("Why didn't she go?")) == {"go": ("go", "went", "gone"), "buy": ("buy", "bought")}
    assert past_forms(asked, tokens("Where does she go camping?")) == {}
    assert expand(asked, found) == ["go", "went", "gone", "met", "buy", "bought", "camp"]
