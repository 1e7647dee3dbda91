"""A time offset of thousands of digits (`due: "999…9d"`, `since: "999…9d ago"`) is a moment past the
calendar, refused on its field in kaeru's words: `task` answered `internal` with a traceback in the
log (Python's `int` refuses over 4,300 digits with a ValueError the due-date parser did not
expect), and the moments said "Exceeds the limit (4300 digits) for integer string conversion… use
sys.set_int_max_str_digits()" (decision 443)."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service

HUGE = "9" * 5_000


@pytest.fixture
def run(service: Service) -> Any:
    return build_server(service).registry.run


def _refused(envelope: dict[str, Any], field: str) -> str:
    assert envelope["state"] == "rejected", envelope
    [issue] = envelope["issues"]
    assert (issue["code"], issue["field"]) == ("invalid_argument", field), issue
    message: str = issue["message"]
    assert "integer string conversion" not in message and "set_int_max_str_digits" not in message
    return message


def test_a_due_offset_past_the_calendar_is_refused_on_due(run: Any) -> None:
    made = run("task", {"initiative": "tide", "text": "check the weir", "due": HUGE + "d"})
    assert "falls after the year 9999" in _refused(made, "due")
    task_id = run("task", {"initiative": "tide", "text": "check the gate"})["data"]["primary"]["id"]
    moved = run("task_update", {"initiative": "tide", "task": task_id, "due": HUGE + "w"})
    assert "falls after the year 9999" in _refused(moved, "due")


@pytest.mark.parametrize("unit", ["d ago", "m", "w ago"])
def test_a_time_ago_past_the_calendar_is_refused_on_its_field(run: Any, unit: str) -> None:
    answer = run("timeline", {"initiatives": ["tide"], "since": HUGE + unit})
    assert "outside the years 1 to 9999" in _refused(answer, "since")
