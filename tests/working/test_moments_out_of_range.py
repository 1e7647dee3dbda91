"""A moment past the calendar's ends (years 1–9999 in UTC) is bad input, told on its field — never
an `internal` fault: a relative offset too far back, a time whose offset moves it past 9999 or
before year 1, a due offset past 9999."""

from __future__ import annotations

from typing import Any

import pytest

from tests.backends import VaultSpec
from tests.cli.support import kaeru
from tests.working.conftest import Call

FAR_BACK = "999999999d"  # timedelta's own largest count of days: now minus it is before year 1
PAST_9999 = "9999-12-31T23:59:59-05:00"  # a valid time whose UTC instant is in the year 10000
BEFORE_1 = "0001-01-01T00:00:00+05:00"  # ... and one whose UTC instant is in year 0

CASES: list[tuple[str, dict[str, Any], str]] = [
    ("read", {"node": "seed", "at": FAR_BACK}, "at"),
    ("read", {"node": "seed", "at": PAST_9999}, "at"),
    ("current_state", {"node": "seed", "as_of": FAR_BACK}, "as_of"),
    ("timeline", {"since": FAR_BACK}, "since"),
    ("timeline", {"until": BEFORE_1}, "until"),
    ("note", {"text": "dated", "occurred_at": BEFORE_1}, "occurred_at"),
    ("note", {"text": "dated", "occurred_at": PAST_9999}, "occurred_at"),
    ("task", {"text": "someday", "due": FAR_BACK}, "due"),
]


@pytest.mark.parametrize(("tool", "args", "field"), CASES, ids=[f"{t}-{f}-{i}" for i, (t, _, f) in enumerate(CASES)])
def test_a_moment_past_the_calendar_is_refused_on_its_field(
    call: Call, tool: str, args: dict[str, Any], field: str
) -> None:
    assert call("note", initiative="w", text="the seed", name="seed")["state"] == "applied"
    scope = {"initiatives": ["w"]} if tool == "timeline" else {"initiative": "w"}
    answer = call(tool, **scope, **args)
    assert answer["state"] == "rejected", answer
    issue = answer["issues"][0]
    assert (issue["code"], issue["field"]) == ("invalid_argument", field), issue
    assert "9999" in issue["message"]
    if tool in ("note", "task"):
        listed = call("timeline", initiatives=["w"])["data"]["hits"]
        assert [h["name"] for h in listed] == ["seed"], "nothing was written"


def test_the_terminal_says_so_with_exit_2_and_json(vault: VaultSpec) -> None:
    assert kaeru(vault, "note", "the seed", "-i", "w", "--name", "seed").code == 0
    run = kaeru(vault, "read", "seed", "-i", "w", "--at", FAR_BACK, as_json=True)
    assert run.code == 2
    envelope = run.json()
    assert envelope["state"] == "rejected" and envelope["issues"][0]["field"] == "at"


def test_a_moment_before_the_year_1000_is_stored_padded_sorts_first_and_survives_an_archive(call: Call) -> None:
    """A note about something long ago (`occurred_at` in the year 500) was stored as `500-06-01T…`:
    not RFC 3339, after every modern moment in text order, and its archive was refused on import as
    a damaged one (decision 216). Now it is stored with a four-digit year, the timeline puts it
    first, and the vault's archive passes an import's checks (its records are already here: skipped)."""
    call("note", initiative="w", text="the abbey was founded", occurred_at="0500-06-01T00:00:00Z")
    call("note", initiative="w", text="the abbey was restored", occurred_at="2026-06-01T00:00:00Z")
    found = call("timeline", initiatives=["w"])["data"]["hits"]
    assert [h["properties"]["occurred_at"] for h in found] == [
        "0500-06-01T00:00:00.000000Z",
        "2026-06-01T00:00:00.000000Z",
    ]
    assert call("archive", action="export", path="w.amg")["state"] == "applied"
    again = call("archive", action="import", path="w.amg")
    assert again["state"] == "unchanged" and not again["issues"], again
