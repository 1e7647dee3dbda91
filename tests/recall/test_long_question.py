"""A long question ranks by its rarest words (decision 168).

Every word a question ranks by is read in full the first time it is asked, so a pasted paragraph
of fifty words took seconds at 100k memories, its common words costing the most and weighing the
least. A question of more than `QUERY_STEMS` distinct stems ranks by its rarest ones in the vault,
keeps at most `COMMON_STEMS` of those more than `RARE_ROWS` memories hold, and leaves out words no
memory holds; a shorter question is ranked whole. Both backends count rarity alike.
"""

from __future__ import annotations

import pytest

from kaeru.api.requests import parse
from kaeru.domain.text import stem
from kaeru.service import Service
from kaeru.service.recall import channels
from tests.recall.helpers import P, note, recall

#: Made-up words, each its own stem; the i-th is written in i + 1 memories.
WORDS = ["zorvak", "quillon", "brastex", "morvin", "kelpax", "druvon"]


def _write(service: Service) -> dict[str, list[str]]:
    held: dict[str, list[str]] = {w: [] for w in WORDS}
    for i, word in enumerate(WORDS):
        for k in range(i + 1):
            held[word].append(note(service, f"memory {k} of the {word} series"))
    return held


def test_a_long_question_keeps_its_rarest_words_and_few_common_ones(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(channels, "QUERY_STEMS", 4)
    monkeypatch.setattr(channels, "RARE_ROWS", 3)
    monkeypatch.setattr(channels, "COMMON_STEMS", 1)
    _write(service)
    # zorvak 1 memory, quillon 2, brastex 3 (rare: counted); morvin 4, kelpax 5, druvon 6 (common).
    question = ["druvon", "kelpax", "plinkt", "brastex", "morvin", "quillon", "zorvak"]
    known: set[str] = set()
    with service.store.read() as session:
        kept = channels._rarest(session, [stem(w) for w in question], known)
        short = channels._rarest(session, [stem(w) for w in question[:4]], known)
    # The three rare ones, then one common one, in the question's order; "plinkt" is held by none.
    assert kept == ["druvon", "brastex", "quillon", "zorvak"]
    assert short == ["druvon", "kelpax", "plinkt", "brastex"], "a short question is ranked whole"
    assert known == {"druvon", "kelpax", "morvin"}, "the common stems are not counted again"
    with service.store.read() as session:
        assert channels._rarest(session, [stem(w) for w in question], known) == kept


def test_a_long_question_still_finds_the_memory_its_rarest_word_names(service: Service) -> None:
    """Thirty words every memory holds and one that a single memory holds: the one is first."""
    common = [f"common{chr(97 + i)}{chr(97 + j)}" for i in range(3) for j in range(10)]
    for k in range(12):
        note(service, f"note {k}: " + " ".join(common))
    target = note(service, "the zorvak ledger sits in the blue cupboard " + " ".join(common[:3]))
    outcome = recall(service, " ".join(common) + " where is the zorvak ledger")
    assert len(common) + 2 > channels.QUERY_STEMS
    assert outcome.hits[0].node.id == target
    # The words it was not ranked by are said: the three in all 13 memories first, then the last of
    # those in 12 (ties in the question's order); never the rare two.
    [said] = [o for o in outcome.coverage.omitted if o.section == "query"]
    assert said.count == len(common) + 2 - channels.QUERY_STEMS
    left = said.reason.split("not by: ")[1].split(", ")
    assert left == common[:3] + common[3 - said.count :], said.reason
    assert not [o for o in recall(service, "where is the zorvak ledger").coverage.omitted if o.section == "query"]


def test_vault_counts_stop_at_the_cap_and_follow_revisions(service: Service) -> None:
    held = _write(service)
    with service.store.read() as session:
        counts = session.vault_counts_at_most([*WORDS, "plinkt"], 4)
    assert counts == [1, 2, 3, 4, None, None, 0]
    outcome, _ = service.revise(
        parse(
            "revise",
            {
                "initiative": P,
                "node": {"id": held["morvin"][0]},
                "patch": {"body": "memory 0, renamed away", "name": "renamed memory"},
            },
        )
    )
    assert outcome.state == "applied"
    with service.store.read() as session:
        assert session.vault_counts_at_most(["morvin", "kelpax"], 4) == [3, None]
