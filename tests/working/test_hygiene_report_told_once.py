"""A week's hygiene report note tells each move once, including a move a pass appends while a
`context` is between reading the report and marking it shown; marking it shown does not write the
note again (each revision keeps a copy of its body); a note holds at most `REPORT_MOVES` moves; an
agent's revision of the note survives the passes that append to it. Both backends."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.service import Service
from kaeru.service import context as context_module
from kaeru.service.requests.base import BUDGET_MAX
from tests.working.conftest import Call, Clock
from tests.working.hygiene_week import P, first_of_two_moved, made, report_notes

#: The most moves one report note holds (`hygiene.REPORT_MOVES`).
REPORT_MOVES = 200


def _hit(call: Call, node: str) -> dict[str, Any]:
    hit: dict[str, Any] = call("read", initiative=P, node={"id": node}, budget_chars=BUDGET_MAX)["data"]["hits"][0]
    return hit


def test_a_move_appended_while_context_marks_the_report_is_told_next_time(
    call: Call, timed: Service, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = first_of_two_moved(call, timed, clock)
    clock.advance(days=1)
    record_seen = context_module.record_seen

    def after_another_pass(*args: Any, **kwargs: Any) -> None:
        # Another server's pass commits after this `context` read the report, before it marks it shown.
        assert [m.node_id for m in timed.hygiene(P)] == [second]
        record_seen(*args, **kwargs)

    monkeypatch.setattr(context_module, "record_seen", after_another_pass)
    told = call("context", initiative=P)["data"]["notices"]
    monkeypatch.setattr(context_module, "record_seen", record_seen)
    assert len(told) == 1 and first in told[0] and second not in told[0]
    [report] = report_notes(call)
    revision = report["revision"]

    told = call("context", initiative=P)["data"]["notices"]
    assert len(told) == 1 and second in told[0] and first not in told[0], told
    assert told[0].startswith("Hygiene moved 1 node(s)")
    assert call("context", initiative=P)["data"]["notices"] == [], "told once"
    # Marked shown without a revision of the note.
    assert _hit(call, report["id"])["revision"] == revision


def test_a_pass_moving_many_nodes_fills_notes_of_a_bounded_size(call: Call, timed: Service, clock: Clock) -> None:
    notes = [made(call("note", initiative=P, text=f"Standup {i}: nothing blocking.")) for i in range(REPORT_MOVES + 5)]
    clock.advance(days=2)
    late = made(call("note", initiative=P, text="Standup late: nothing blocking."))
    clock.advance(days=13)
    assert len(timed.hygiene(P)) == len(notes)
    reports = report_notes(call)
    assert len(reports) == 2
    bodies = [_hit(call, r["id"])["body"] for r in reports]
    assert sorted(b.count("\n- ") for b in bodies) == [5, REPORT_MOVES]
    assert all(any(n in b for b in bodies) for n in notes)

    # A later pass in the week appends to the note with room.
    clock.advance(days=2)
    assert [m.node_id for m in timed.hygiene(P)] == [late]
    assert len(report_notes(call)) == 2
    bodies = [_hit(call, r["id"])["body"] for r in report_notes(call)]
    assert sorted(b.count("\n- ") for b in bodies) == [6, REPORT_MOVES]

    told = "\n".join(call("context", initiative=P)["data"]["notices"])
    assert all(n in told for n in [*notes, late])
    assert call("context", initiative=P)["data"]["notices"] == []


def test_an_agents_revision_of_the_report_survives_a_later_pass(call: Call, timed: Service, clock: Clock) -> None:
    first, second = first_of_two_moved(call, timed, clock)
    assert first in call("context", initiative=P)["data"]["notices"][0]
    [report] = report_notes(call)
    revised = call(
        "revise", initiative=P, node={"id": report["id"]}, patch={"body": "Checked: the staging note can go."}
    )
    assert revised["state"] == "applied", revised["issues"]

    clock.advance(days=1)
    assert [m.node_id for m in timed.hygiene(P)] == [second]
    body = _hit(call, report["id"])["body"]
    assert body.startswith("Checked: the staging note can go.\n") and second in body
    told = call("context", initiative=P)["data"]["notices"]
    assert len(told) == 1 and second in told[0] and "Checked" not in told[0], told
    assert told[0].startswith("Hygiene moved 1 node(s)")
