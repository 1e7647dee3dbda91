"""What `recall` leaves out unless asked (issue 17, decisions 17.C2, 17.C3): stale memory (the cold and
frozen layers) without `include_stale`, and suppressed memory (rules released or past their
`through`, reminders before their `after`) without `include_suppressed`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kaeru.api.requests import parse
from kaeru.service import Service
from tests.service.support import Clock, primary

P = "proj"


def _note(service: Service, text: str, **extra: Any) -> str:
    return primary(service.note(parse("note", {"initiative": P, "text": text, **extra}))[0])


def _ids(service: Service, query: str | None = None, **extra: Any) -> set[str]:
    args: dict[str, Any] = {"initiatives": [P], **extra}
    if query is not None:
        args["query"] = query
    return {h.node.id for h in service.recall(parse("recall", args)).hits}


def _left_out(service: Service, query: str, **extra: Any) -> dict[str, int]:
    answer = service.recall(parse("recall", {"initiatives": [P], "query": query, **extra}))
    return {o.reason: o.count for o in answer.coverage.omitted}


def test_cold_and_frozen_memory_is_stale_unless_asked(timed: Service) -> None:
    warm = _note(timed, "the tide table for the north harbour")
    cold = _note(timed, "the tide table for the north harbour, 2019 edition", options={"layer": "cold"})
    frozen = _note(timed, "the tide table for the north harbour, 2009 edition", options={"layer": "frozen"})
    assert _ids(timed, "tide table north harbour") == {warm}
    # Left out, and said so.
    assert _left_out(timed, "tide table north harbour") == {"stale": 2}
    assert _left_out(timed, "tide table north harbour", include_stale=True) == {}
    assert _ids(timed, "tide table north harbour", include_stale=True) == {warm, cold, frozen}
    # Moved to cold later (archived): left out from then on.
    timed.layer(parse("layer", {"initiative": P, "nodes": [warm], "layer": "cold"}))
    assert _ids(timed, "tide table north harbour") == set()
    assert _ids(timed, "tide table north harbour", include_stale=True) == {warm, cold, frozen}
    # explore_history is about what memory used to say: archived memory belongs to it.
    history = timed.recall(
        parse("recall", {"initiatives": [P], "query": "tide table north harbour", "task_intent": "explore_history"})
    )
    assert {warm, cold, frozen} <= {h.node.id for h in history.hits}


def test_a_slot_s_previous_holder_is_cooled_and_so_stale(timed: Service) -> None:
    first = _note(timed, "handoff: the dredger is booked for monday", options={"slot": "handoff"})
    second = _note(timed, "handoff: the dredger is booked for tuesday", options={"slot": "handoff"})
    assert _ids(timed, "dredger booked") == {second}
    # include_superseded alone does not bring it back (it is stale, not only superseded) …
    assert _ids(timed, "dredger booked", include_superseded=True) == {second}
    # … include_stale does.
    assert _ids(timed, "dredger booked", include_stale=True) == {first, second}


def test_released_and_expired_rules_are_suppressed_unless_asked(timed: Service, clock: Clock) -> None:
    active = _note(timed, "always moor the barge at berth two", kind="rule")
    released = _note(timed, "always moor the barge at berth five", kind="rule")
    timed.revise(parse("revise", {"initiative": P, "node": released, "patch": {"constraint_state": "released"}}))
    expired = _note(timed, "always moor the barge at berth nine", kind="rule", applicability={"through": "2026-05-10"})
    assert _ids(timed, "moor the barge berth") == {active, expired}
    clock.tick(timedelta(days=10).total_seconds())  # 2026-05-11: past `through`
    assert _ids(timed, "moor the barge berth") == {active}
    assert _left_out(timed, "moor the barge berth") == {"suppressed": 2}
    assert _ids(timed, "moor the barge berth", include_suppressed=True) == {active, released, expired}
    # The same with apply_preference, whose rules channel lists active rules on its own.
    asked = {"task_intent": "apply_preference"}
    assert _ids(timed, "moor the barge berth", **asked) == {active}


def test_a_reminder_is_suppressed_before_its_date(timed: Service, clock: Clock) -> None:
    later = _note(timed, "renew the pilot licence", reminder={"after": "2026-06-01", "window_days": 7})
    now = _note(timed, "the pilot licence office moved to the quay")
    assert _ids(timed, "pilot licence") == {now}
    assert _ids(timed, "pilot licence", include_suppressed=True) == {later, now}
    clock.tick(timedelta(days=31).total_seconds())  # 2026-06-01: due
    assert _ids(timed, "pilot licence") == {later, now}
