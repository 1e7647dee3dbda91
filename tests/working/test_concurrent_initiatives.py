"""A merge runs alone in its initiatives (decision 301): two opposite merges at once leave one
initiative holding everything, and a note written while its initiative is merged away is in the
merge's target afterwards, or refused naming it — on PostgreSQL too, whose writers run side by side."""

from __future__ import annotations

from functools import partial
from typing import Any

from kaeru.api.requests import parse
from kaeru.errors import UnknownInitiative
from kaeru.service import Service
from tests.together import together

ROUNDS = 6


def _note(service: Service, initiative: str, text: str) -> str:
    outcome, _ = service.note(parse("note", {"initiative": initiative, "text": text}))
    assert outcome.primary is not None
    return outcome.primary.id


def _merge(service: Service, subject: str, target: str) -> Any:
    return service.initiative(parse("initiative", {"initiative": subject, "action": "merge", "to": target}))


def _live(service: Service) -> set[str]:
    answer = service.initiatives(parse("initiatives", {}))
    return {i.name for i in answer.initiatives}


def _found(service: Service, initiatives: list[str], word: str) -> set[str]:
    answer = service.search(parse("search", {"initiatives": initiatives, "text": word, "limit": 50}))
    return {h.node.id for h in answer.hits}


def test_two_opposite_merges_at_once_leave_one_initiative_with_everything(service: Service) -> None:
    for r in range(ROUNDS):
        a, b = f"alpha{r}", f"beta{r}"
        nodes = {_note(service, a, f"alpha fact zebra{r}"), _note(service, b, f"beta fact zebra{r}")}
        together([partial(_merge, service, a, b), partial(_merge, service, b, a)])
        left = [n for n in (a, b) if n in _live(service)]
        assert len(left) == 1, (r, left)
        assert _found(service, left, f"zebra{r}") == nodes


def test_a_note_written_while_its_initiative_is_merged_is_not_lost(service: Service) -> None:
    for r in range(ROUNDS):
        a, b = f"gamma{r}", f"delta{r}"
        _note(service, a, "gamma seed")
        _note(service, b, "delta seed")
        late = [partial(_note, service, a, f"late note {k} okapi{r}") for k in range(4)]
        results = together([partial(_merge, service, a, b), *late])
        written = {x for x in results[1:] if isinstance(x, str)}
        # A note that came after the merge is refused, naming where the initiative went (decision
        # 333: it started a second `gamma` before); none is lost without its writer being told.
        refused = [x for x in results[1:] if isinstance(x, UnknownInitiative) and f"merged into {b!r}" in x.message]
        assert len(written) + len(refused) == 4, results
        assert a not in _live(service), "the merged name was not made again"
        assert _found(service, [b], f"okapi{r}") == written, r


def test_board_edits_at_once_all_apply(service: Service) -> None:
    """Without `expected_revision` a board edit is no compare-and-set: edits at once apply one
    after the other (PostgreSQL answered some `revision_conflict`)."""
    _note(service, "boards", "a board to edit")
    edits = [
        partial(
            service.initiative,
            parse(
                "initiative",
                {"initiative": "boards", "action": "set_board", "columns": [{"key": f"c{k}"}, {"key": "done"}]},
            ),
        )
        for k in range(6)
    ]
    results = together(edits)
    assert all(not isinstance(r, Exception) and r[0].state == "applied" for r in results), results
