"""A date and a time without an offset are the user's, in every field that takes one (decision 342).

`due`, reminders and a rule's `through` were already days of the user's calendar (decision 188),
but `timeline`'s `since`/`until`, `read`'s `at`, `current_state`'s `as_of` and `occurred_at` read a
bare date as UTC's day and a wall time as UTC: at 08:30 in Auckland, "today's" timeline was empty
and yesterday's held this morning's stand-up; a deploy logged at 20:00 in Tokyo was stored eight
hours in the future and listed after the rollback it preceded. Also here: the other spellings of a
day, a clock that ran ahead stopping hygiene, a rule that ended before it was written, and a
back-dated node read before it was recorded.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.working.conftest import Call, Clock, make_call


def _call(store: Store, vault: VaultSpec, clock: Clock, zone: str, **settings: Any) -> Call:
    return make_call(Service(store, vault.settings(timezone=zone, **settings), clock=clock))


def _ids(answer: dict[str, Any]) -> list[str]:
    assert answer["state"] == "ok", answer
    return [hit["id"] for hit in answer["data"]["hits"]]


def test_a_bare_date_in_a_timeline_is_the_users_day(store: Store, vault: VaultSpec) -> None:
    clock = Clock(datetime(2026, 3, 3, 19, 0, tzinfo=UTC))  # 08:00 on the 4th in Auckland
    call = _call(store, vault, clock, "Pacific/Auckland")
    standup = call("note", initiative="nz", text="stand-up this morning: the release slips a day")
    standup_id = standup["data"]["primary"]["id"]
    clock.advance(minutes=30)
    assert call("context", initiative="nz")["data"]["today"] == "2026-03-04"
    assert _ids(call("timeline", initiatives=["nz"], since="2026-03-04", until="2026-03-04")) == [standup_id]
    assert _ids(call("timeline", initiatives=["nz"], since="2026-03-03", until="2026-03-03")) == []
    # The same day in its other ISO 8601 spellings, which were read as UTC's midnight.
    assert _ids(call("timeline", initiatives=["nz"], since="20260304", until="20260304")) == [standup_id]
    assert _ids(call("timeline", initiatives=["nz"], since="2026-W10-3", until="2026-W10-3")) == [standup_id]
    # The calendar's last day is a bound, whatever the zone (its end was computed as the next
    # day's midnight, which 9999-12-31 has not: refused as "outside the years 1 to 9999").
    assert _ids(call("timeline", initiatives=["nz"], until="9999-12-31")) == [standup_id]
    # `read at` a date is as it was at the end of the user's day.
    assert call("read", initiative="nz", node=standup_id, at="2026-03-04")["state"] == "ok"
    assert call("read", initiative="nz", node=standup_id, at="2026-03-03")["state"] == "rejected"


def test_a_wall_time_in_occurred_at_is_the_users(store: Store, vault: VaultSpec) -> None:
    clock = Clock(datetime(2026, 3, 4, 12, 0, tzinfo=UTC))  # 21:00 in Tokyo
    call = _call(store, vault, clock, "Asia/Tokyo")
    deploy = call("note", initiative="jp", text="deploy of v2 finished", occurred_at="2026-03-04T20:00:00")
    clock.advance(minutes=5)
    rollback = call("note", initiative="jp", text="rollback of v2 started", occurred_at="2026-03-04T20:05:00")
    assert deploy["state"] == rollback["state"] == "applied"
    read = call("read", initiative="jp", node=deploy["data"]["primary"]["id"])
    assert read["data"]["hits"][0]["created_at"] == "2026-03-04T11:00:00.000000Z"  # 20:00 in Tokyo
    walked = _ids(call("timeline", initiatives=["jp"], since="2026-03-04"))
    assert walked == [deploy["data"]["primary"]["id"], rollback["data"]["primary"]["id"]]
    # An offset still says which zone it is in.
    offset = call("note", initiative="jp", text="the pager went off", occurred_at="2026-03-04T10:00:00Z")
    read = call("read", initiative="jp", node=offset["data"]["primary"]["id"])
    assert read["data"]["hits"][0]["created_at"] == "2026-03-04T10:00:00.000000Z"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("２０２６-03-03", "is not a moment: give"),  # full-width digits: Python's own words were shown
        ("2026-02-30", "is not a moment (2026-02 has no day 30): give"),
        ("2026-W10", "is not a moment: give"),  # a week, which parsers read as its Monday
    ],
)
def test_a_value_that_is_no_day_is_refused_in_the_callers_words(
    store: Store, vault: VaultSpec, value: str, said: str
) -> None:
    call = _call(store, vault, Clock(datetime(2026, 3, 4, 12, 0, tzinfo=UTC)), "UTC")
    call("note", initiative="x", text="a note")
    answer = call("timeline", initiatives=["x"], until=value)
    assert answer["state"] == "rejected" and said in answer["issues"][0]["message"], answer
    assert answer["issues"][0]["field"] == "until"


def test_a_clock_that_ran_ahead_does_not_stop_hygiene(store: Store, vault: VaultSpec) -> None:
    """The automatic pass runs at most once an hour, timed from its last run: a run stamped by a clock a
    year fast kept hygiene off for that year once the clock was put right."""
    clock = Clock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    call = _call(store, vault, clock, "UTC", hygiene=True)
    call("note", initiative="h", text="the first note of the project")
    clock.moment = clock.moment.replace(year=2027)  # one call with a clock a year fast
    call("context", initiative="h")
    clock.moment = clock.moment.replace(year=2026)  # put right
    later = call("note", initiative="h", text="an observation nobody linked", options={"layer": "warm"})
    clock.advance(days=15)
    answer = call("context", initiative="h")
    assert answer["state"] == "ok" and any("warm → cold" in n for n in answer["data"]["notices"]), answer["data"]
    read = call("read", initiative="h", node=later["data"]["primary"]["id"])
    assert read["data"]["hits"][0]["layer"] == "cold"


def test_a_rule_that_ended_before_it_was_written_is_said(store: Store, vault: VaultSpec) -> None:
    call = _call(store, vault, Clock(datetime(2026, 12, 5, 10, 0, tzinfo=UTC)), "UTC")
    answer = call(
        "note", initiative="r", kind="rule", text="never deploy on Fridays", applicability={"through": "2025-12-31"}
    )
    assert answer["state"] == "applied"
    assert [(i["code"], i["field"]) for i in answer["issues"] if i["code"] == "already_ended"] == [
        ("already_ended", "applicability.through")
    ]
    current = call("note", initiative="r", kind="rule", text="freeze merges", applicability={"through": "2026-12-05"})
    assert all(i["code"] != "already_ended" for i in current["issues"])


def test_a_back_dated_node_read_before_it_was_recorded_says_so(store: Store, vault: VaultSpec) -> None:
    call = _call(store, vault, Clock(datetime(2026, 12, 5, 10, 0, tzinfo=UTC)), "UTC")
    old = call("note", initiative="b", text="the kick-off meeting", occurred_at="2025-01-10T09:00:00Z")
    answer = call("read", initiative="b", node=old["data"]["primary"]["id"], at="2025-06-01")
    assert answer["state"] == "rejected"
    message = answer["issues"][0]["message"]
    assert "not yet recorded" in message and "2025-01-10T09:00:00" in message, message
