"""Writers whose clocks disagree, on one vault (decision 404; the clock-skew probe, session 42).
Each writer stamps with its own clock: a server days ahead purged every other writer's replay keys
(a retry then wrote its note twice), a slot taken by a writer whose clock was behind was recorded
before the holder it replaced (no `as_of` showed that holder), and an NTP step back stamped a write
before the one it followed. Both backends; clocks are injected as the tests' `Clock`s, and the
process's own clock (`WallClock`) is driven by a stepping source."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from psycopg.conninfo import conninfo_to_dict

from kaeru.service import Service, doctor
from kaeru.service.runtime import WallClock
from kaeru.storage.base import Store
from kaeru.storage.postgres.clock import offset_of
from kaeru.storage.postgres.store import PostgresStore
from tests.backends import VaultSpec
from tests.working.conftest import Call, Clock, make_call

BASE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _writer(store: Store, vault: VaultSpec, offset: timedelta) -> Call:
    return make_call(Service(store, vault.settings(), clock=Clock(BASE + offset)))


def _id(answer: dict[str, Any]) -> str:
    assert answer["state"] == "applied", answer["issues"]
    node: str = answer["data"]["primary"]["id"]
    return node


def test_a_server_days_ahead_leaves_the_other_writers_replay_keys(store: Store, vault: VaultSpec) -> None:
    on_time = _writer(store, vault, timedelta(0))
    ahead = _writer(store, vault, timedelta(days=8))
    args = {"initiative": "p", "text": "the ferry leaves at ten", "request_id": "ferry-1"}
    first = _id(on_time("note", **args))
    _id(ahead("note", initiative="p", text="a note from a laptop a week ahead"))  # its write purges first
    again = on_time("note", **args)
    assert again["replayed"] is True and again["data"]["primary"]["id"] == first, again
    found = on_time("search", initiatives=["p"], text="ferry")["data"]["hits"]
    assert [h["id"] for h in found] == [first]


def test_a_slot_taken_by_a_writer_whose_clock_is_behind_is_recorded_after_the_holder_before(
    store: Store, vault: VaultSpec
) -> None:
    on_time = _writer(store, vault, timedelta(0))
    behind = _writer(store, vault, timedelta(minutes=-10))
    alice = _id(on_time("note", initiative="p", text="alice's handoff: migrate the users table"))
    bob = _id(behind("note", initiative="p", text="bob's handoff: migrate the orders table"))
    first = on_time("slot", initiative="p", slot="handoff", node={"id": alice})["data"]["slots"][0]
    second = behind("slot", initiative="p", slot="handoff", node={"id": bob})["data"]["slots"][0]
    with store.read() as session:
        scope = session.initiative_by_name("p")
        assert scope is not None
        stamps = [(s.node_id, s.updated_at) for s in session.slot_history(scope.id, "handoff")]
    assert [holder for holder, _ in stamps] == [alice, bob], stamps
    assert stamps[0][1] < stamps[1][1], stamps
    # Between the two takes, as of a moment after the first, alice held the slot.
    held = on_time("current_state", initiative="p", slot="handoff", as_of=stamps[0][1])["data"]
    assert held["current"]["id"] == alice, (held, first, second)


class _Stepping:
    """A machine clock that NTP steps back ten minutes after its second reading."""

    def __init__(self) -> None:
        self.readings = [BASE, BASE + timedelta(seconds=1), BASE - timedelta(minutes=10)]

    def __call__(self) -> datetime:
        return self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]


def test_the_process_clock_never_goes_back_when_the_machine_clock_is_stepped(store: Store) -> None:
    wall = WallClock(_Stepping())
    readings = [wall.now(store) for _ in range(4)]
    assert readings == sorted(readings) and len(set(readings)) == 4, readings
    assert readings[1] - readings[0] >= timedelta(seconds=1) - abs(store.clock_offset())


def test_the_vaults_clock_is_this_machines_exactly_here(store: Store, vault: VaultSpec) -> None:
    """PostgreSQL's clock is measured (`clock_offset`), SQLite's is the machine's: on one machine
    they are one clock, so the offset is zero, not the few milliseconds a round trip's unequal halves
    made of it (a note was then stamped after a window this machine's clock closed just after it)."""
    if vault.database_url and _host(vault.database_url) not in LOCAL_HOSTS:
        pytest.skip("the test database's server is on another machine, with a clock of its own")
    for _ in range(20):  # measured again each time: each reading must allow no offset
        if isinstance(store, PostgresStore):
            store.clock._measured = None
            with store.read():
                pass
            assert store.clock._measured is not None, "the server's clock was read"
        assert store.clock_offset() == timedelta(0)


#: Where a PostgreSQL server shares this machine's clock: a Unix socket or the loopback.
LOCAL_HOSTS = frozenset({"", "localhost", "127.0.0.1", "::1"})


def _host(url: str) -> str:
    host = conninfo_to_dict(url).get("host") or ""
    return "" if host.startswith("/") else host


def test_a_round_trip_whose_halves_differ_measures_no_offset_between_one_clock() -> None:
    """The server read at once, its answer 50 ms on the way back: the middle of the round trip put
    the server 25 ms behind this machine, which is its own clock."""

    def read_now_answer_late() -> datetime:
        now = datetime.now(UTC)
        time.sleep(0.05)
        return now

    assert offset_of(read_now_answer_late) == timedelta(0)


def test_a_server_ten_minutes_ahead_is_measured_so_whatever_the_round_trip() -> None:
    def ahead() -> datetime:
        time.sleep(0.05)
        return datetime.now(UTC) + timedelta(minutes=10)

    offset = offset_of(ahead)
    assert timedelta(minutes=10) - timedelta(seconds=1) < offset <= timedelta(minutes=10), offset


def test_a_write_is_stamped_by_the_vaults_clock_not_this_machines(store: Store, vault: VaultSpec) -> None:
    """The database server 10 minutes ahead of this machine (its measured offset set so): a write by
    a service on the system clock is stamped by the server's time."""
    if vault.backend != "postgres":
        pytest.skip("SQLite's writers share one machine's clock: its offset is zero")
    ahead = timedelta(minutes=10)
    cast(Any, store).clock.offset = ahead  # measured again only a minute after the store opened
    call = make_call(Service(store, vault.settings()))
    before = datetime.now(UTC)
    node = _id(call("note", initiative="p", text="stamped by the server's clock"))
    with store.read() as session:
        written = session.get_node(node)
    assert written is not None
    stamped = datetime.fromisoformat(written.recorded_at)
    assert ahead - timedelta(seconds=30) < stamped - before < ahead + timedelta(seconds=30), (before, stamped)


@pytest.mark.parametrize(
    ("seconds", "status", "said"),
    [(0.02, "ok", "agrees with the database server's"), (5, "warn", "5.0 s behind"), (-5, "warn", "5.0 s ahead of")],
)
def test_the_doctor_says_which_way_this_machines_clock_is_off(seconds: float, status: str, said: str) -> None:
    check = doctor._clock(timedelta(seconds=seconds))
    assert check.status == status and said in check.summary, check
