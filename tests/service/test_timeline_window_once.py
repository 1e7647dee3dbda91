"""A `timeline` window names "at least one more lies beyond" once.

A page over a busy window (`since`) left out more items than it counts (`COUNT_WINDOW`) while the
log of changes in the window was not read back to `since` either: both said so with the same
`{timeline, 1, window}`, and the page listed it twice — `timeline 1 (window); timeline 200 (limit);
timeline 1 (window)`. The bounds are lowered here (the module reads them at each call)."""

from __future__ import annotations

import pytest

from kaeru.api.envelope import read_envelope
from kaeru.api.requests import parse
from kaeru.mcp.render import compact
from kaeru.service import Service, timeline
from tests.service.support import Clock, primary

P = "busy"
COUNTED = 5


def test_a_busy_window_says_once_that_more_lie_beyond(
    timed: Service, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timeline, "COUNT_WINDOW", COUNTED)
    monkeypatch.setattr(timeline, "CHANGES_READ", 2)
    old = [primary(timed.note(parse("note", {"initiative": P, "text": f"older note {i}"}))[0]) for i in range(3)]
    clock.tick(3 * 3600)
    for i, node in enumerate(old):  # changes in the window to older memories: more than the log read holds
        timed.revise(parse("revise", {"initiative": P, "node": {"id": node}, "patch": {"description": f"now {i}"}}))
    for i in range(COUNTED + 10):
        timed.note(parse("note", {"initiative": P, "text": f"recent note {i}"}))
    page, _ = timed.timeline(parse("timeline", {"initiatives": [P], "since": "2h", "limit": 3}))
    said = [(o.section, o.count, o.reason) for o in page.coverage.omitted]
    assert said == [("timeline", COUNTED, "limit"), ("timeline", 1, "window")]
    assert page.coverage.complete is False and page.continuation is not None
    assert page.total == 3 + COUNTED + 1, "a lower bound: shown, counted, and one more"
    # ... and the text says it is one: "3 of 9 hits" was read as exact.
    assert f"3 of at least {page.total} hits" in compact(read_envelope("timeline", page))
