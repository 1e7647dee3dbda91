""" "Today" is the user's calendar day (decision 188): in KAERU_TIMEZONE, else the machine's zone.

A task due on the 4th is not overdue at 17:00 on the 4th in Los Angeles (01:00 UTC on the 5th), a
reminder for the 5th is due at 08:00 on the 5th in Tokyo (23:00 UTC on the 4th), a rule in force
`through` the 4th still applies that evening in Los Angeles, and `due: 3d` counts from the user's
day. Before, every "today" was UTC's, for hours of every day wrong in most of the world.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from kaeru.config import Settings
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.working.conftest import Call, Clock, make_call


def _service(store: Store, vault: VaultSpec, clock: Clock, zone: str) -> Call:
    return make_call(Service(store, vault.settings(timezone=zone), clock=clock))


def _section(answer: dict[str, Any], name: str) -> dict[str, Any]:
    return next((s for s in answer["data"]["sections"] if s["name"] == name), {"items": [], "overdue": []})


def _ids(answer: dict[str, Any], name: str) -> list[str]:
    return [i["id"] for i in _section(answer, name)["items"]]


@pytest.fixture
def evening_in_los_angeles() -> Clock:
    return Clock(datetime(2026, 12, 5, 1, 0, tzinfo=UTC))  # 17:00 on the 4th in Los Angeles


def test_a_task_due_today_is_not_overdue_until_the_users_day_ends(
    store: Store, vault: VaultSpec, evening_in_los_angeles: Clock
) -> None:
    call = _service(store, vault, evening_in_los_angeles, "America/Los_Angeles")
    task = call("task", initiative="tz", text="ship the release", due="2026-12-04")["data"]["primary"]["id"]
    answer = call("context", initiative="tz")
    assert answer["data"]["today"] == "2026-12-04"
    assert task in _ids(answer, "tasks") and _section(answer, "tasks")["overdue"] == []
    assert _overdue_in_reflect(call) == []
    evening_in_los_angeles.advance(hours=8)  # 01:00 on the 5th there
    assert _section(call("context", initiative="tz"), "tasks")["overdue"] == [task]
    assert _overdue_in_reflect(call) == [task]


def _overdue_in_reflect(call: Call) -> list[str]:
    return [i["node"] for i in call("reflect", initiative="tz")["data"]["items"] if i["kind"] == "overdue_task"]


def test_a_due_offset_counts_from_the_users_day(store: Store, vault: VaultSpec, evening_in_los_angeles: Clock) -> None:
    call = _service(store, vault, evening_in_los_angeles, "America/Los_Angeles")
    in_three_days = call("task", initiative="tz", text="follow up", due="3d")["data"]["primary"]["id"]
    at_a_time = call("task", initiative="tz", text="demo", due="2026-12-10T18:00:00-08:00")["data"]["primary"]["id"]
    # A time with no offset is the user's wall time: its day as written (review: it was read as UTC).
    late = call("task", initiative="tz", text="late call", due="2026-12-10T23:30:00")["data"]["primary"]["id"]
    early = call("task", initiative="tz", text="early call", due="2026-12-10T02:00:00")["data"]["primary"]["id"]
    dues = {
        node: call("read", initiative="tz", node=node)["data"]["hits"][0]["properties"]["due"]
        for node in (in_three_days, at_a_time, late, early)
    }
    assert dues == {in_three_days: "2026-12-07", at_a_time: "2026-12-10", late: "2026-12-10", early: "2026-12-10"}


def test_a_reminder_is_due_from_the_start_of_its_day_for_the_user(store: Store, vault: VaultSpec) -> None:
    clock = Clock(datetime(2026, 12, 4, 23, 0, tzinfo=UTC))  # 08:00 on the 5th in Tokyo
    call = _service(store, vault, clock, "Asia/Tokyo")
    node = call(
        "note", initiative="tz", text="renew the certificate", reminder={"after": "2026-12-05", "window_days": 1}
    )["data"]["primary"]["id"]
    assert node in _ids(call("context", initiative="tz"), "reminders")


def test_a_rule_through_today_applies_all_of_the_users_day(
    store: Store, vault: VaultSpec, evening_in_los_angeles: Clock
) -> None:
    call = _service(store, vault, evening_in_los_angeles, "America/Los_Angeles")
    rule = call(
        "note",
        initiative="tz",
        kind="rule",
        text="freeze merges to main during the release",
        applicability={"through": "2026-12-04"},
    )["data"]["primary"]["id"]
    assert rule in _ids(call("context", initiative="tz"), "rules")
    recalled = call("recall", initiatives=["tz"], query="merges to main")
    assert rule in [h["id"] for h in recalled["data"]["hits"]]


@pytest.fixture
def machine_in_tokyo() -> Iterator[None]:
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    yield
    os.environ["TZ"] = "UTC"
    time.tzset()


def test_without_a_setting_the_machines_zone_decides(store: Store, vault: VaultSpec, machine_in_tokyo: None) -> None:
    clock = Clock(datetime(2026, 12, 4, 23, 0, tzinfo=UTC))  # 08:00 on the 5th in Tokyo
    call = make_call(Service(store, vault.settings(), clock=clock))
    call("note", initiative="tz", text="a first note")
    assert call("context", initiative="tz")["data"]["today"] == "2026-12-05"
    in_utc = make_call(Service(store, vault.settings(timezone="UTC"), clock=clock))
    assert in_utc("context", initiative="tz")["data"]["today"] == "2026-12-04"


def test_an_unknown_zone_is_refused_when_the_settings_are_read() -> None:
    for name in ("Mars/Olympus_Mons", "../../etc/passwd", "America/"):
        with pytest.raises(ValueError, match="KAERU_TIMEZONE must be an IANA time zone name"):
            Settings.from_env({"KAERU_TIMEZONE": name})
    assert Settings.from_env({"KAERU_TIMEZONE": "Europe/Paris"}).timezone == "Europe/Paris"
