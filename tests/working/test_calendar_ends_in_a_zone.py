"""A day at an end of the calendar, read on the user's calendar (KAERU_TIMEZONE): `until:
9999-12-31` west of UTC ends past year 9999 in UTC, `since: 0001-01-01` east of it begins before
year 1 — each is the calendar's own end, so "everything up to the end of time" lists everything
instead of being refused as past the calendar. Both backends."""

from __future__ import annotations

import pytest

from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.working.conftest import Clock, make_call


@pytest.mark.parametrize(
    ("zone", "bound"),
    [("America/Los_Angeles", {"until": "9999-12-31"}), ("Asia/Tokyo", {"since": "0001-01-01"})],
    ids=["last-day-west", "first-day-east"],
)
def test_a_day_at_the_calendars_end_is_its_end_in_any_zone(
    store: Store, vault: VaultSpec, clock: Clock, zone: str, bound: dict[str, str]
) -> None:
    call = make_call(Service(store, vault.settings(timezone=zone), clock=clock))
    made = call("note", initiative="ends", text="the seed of the timeline", name="seed")
    assert made["state"] == "applied", made
    listed = call("timeline", initiatives=["ends"], **bound)
    assert listed["state"] == "ok", listed
    assert [h["name"] for h in listed["data"]["hits"]] == ["seed"]
    read = call("read", initiative="ends", node="seed", at="9999-12-31")
    assert read["state"] == "ok" and read["data"]["hits"][0]["name"] == "seed", read
