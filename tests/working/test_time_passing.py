"""What a project looks like after time passes, and after a clock goes back (the time-semantics probe,
session 51): hygiene after a month away kept no current fact of a chain of `supersedes` (the staging
URL's fourth value went cold, out of `context` and of default recall); a writer whose clock was a
day behind the vault's newest write recorded a replacement before the node it replaced; a reminder
whose day had not come showed among `warm` notes; an `occurred_at` a month ahead passed without a
word. Both backends (a floor from the vault's newest write is SQLite's alone: PostgreSQL's writers
stamp by the server's clock); clocks are the tests' `Clock`s, moved by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kaeru.service import Service
from kaeru.service.runtime import WallClock
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.working.conftest import Call, Clock, make_call

BASE = datetime(2027, 1, 4, 10, 0, tzinfo=UTC)


def _id(answer: dict[str, Any]) -> str:
    assert answer["state"] == "applied", answer["issues"]
    node: str = answer["data"]["primary"]["id"]
    return node


def _in_context(answer: dict[str, Any]) -> dict[str, str]:
    """Each node `context` shows, with its section's name."""
    assert answer["state"] == "ok", answer["issues"]
    return {i["id"]: s["name"] for s in answer["data"]["sections"] for i in s["items"]}


def _layer(call: Call, node: str) -> str:
    layer: str = call("read", initiative="billing", node=node)["data"]["hits"][0]["layer"]
    return layer


def test_after_a_month_away_hygiene_keeps_the_current_end_of_a_supersession_chain(
    store: Store, vault: VaultSpec
) -> None:
    """The staging URL told four times, each superseding the one before, and a month away: the
    fourth is the project's current value, however long unchanged (its only link is its own
    `supersedes` out, which counted as no link). It stays warm, in `context`, in default recall and
    out of `reflect`'s `archivable`; the versions it replaced and a plain note nobody linked to
    still go cold (decision 332), and a chain end replaced in turn is no longer kept."""
    clock = Clock(BASE)
    call = make_call(Service(store, vault.settings(), clock=clock))
    urls = []
    for n in range(1, 5):
        text = f"The staging environment URL is https://staging{n}.billing.example.com."
        link = {"link_to": urls[-1], "edge_type": "supersedes"} if urls else {}
        urls.append(_id(call("note", initiative="billing", name=f"fact-staging{n}", text=text, **link)))
        clock.advance(days=1)
    journal = _id(call("note", initiative="billing", text="Deployed billing v1.2 to staging; smoke tests green."))
    dropped = _id(call("note", initiative="billing", text="The invoice PDF service listens on port 8080."))
    ended = _id(
        call(
            "note",
            initiative="billing",
            text="The invoice PDF service listens on port 9090.",
            link_to=dropped,
            edge_type="supersedes",
        )
    )
    call(
        "note",
        initiative="billing",
        text="The invoice PDF service was retired.",
        link_to=ended,
        edge_type="supersedes",
        options={"layer": "cold"},
    )
    clock.advance(days=30)

    archivable = {
        i["node"] for i in call("reflect", initiative="billing")["data"]["items"] if i["kind"] == "archivable"
    }
    assert urls[3] not in archivable and journal in archivable, archivable
    moved = {m.node_id for m in Service(store, vault.settings(), clock=clock).hygiene("billing")}
    assert urls[3] not in moved and _layer(call, urls[3]) == "warm"
    assert {*urls[:3], journal, dropped, ended} <= moved, "replaced versions and journal notes still cool"
    assert _in_context(call("context", initiative="billing")).get(urls[3]) == "warm"
    hits = call("recall", initiatives=["billing"], query="what is the staging environment URL")["data"]["hits"]
    assert hits and hits[0]["id"] == urls[3], [h["id"] for h in hits]


def _writer(store: Store, vault: VaultSpec, clock: Clock) -> Call:
    return make_call(Service(store, vault.settings(), clock=clock))


def _one_machine(vault: VaultSpec) -> None:
    if vault.backend != "sqlite":
        pytest.skip("PostgreSQL's writers stamp by the server's one clock (decision 404): no floor is read")


def test_a_writer_whose_clock_is_behind_records_after_the_vaults_newest_write(store: Store, vault: VaultSpec) -> None:
    """Yesterday's session wrote the third staging URL; the laptop's clock was then put a day back,
    and the fourth, superseding it, was recorded a day before the third existed: `read at` showed
    an edge to a node that did not exist, `timeline` listed the replacement first. A write is now
    stamped after the vault's newest write (both its recorded time and when it happened), and the
    process's own clock goes on from there."""
    _one_machine(vault)
    ahead, behind = Clock(BASE + timedelta(days=1)), Clock(BASE)
    third = _id(
        _writer(store, vault, ahead)("note", initiative="billing", text="The staging URL is https://staging3.example.")
    )
    call = _writer(store, vault, behind)
    fourth = _id(
        call(
            "note",
            initiative="billing",
            text="The staging URL is https://staging4.example.",
            link_to=third,
            edge_type="supersedes",
        )
    )
    read = {n: call("read", initiative="billing", node=n)["data"]["hits"][0] for n in (third, fourth)}
    assert read[third]["recorded_at"] < read[fourth]["recorded_at"], read
    assert read[third]["created_at"] < read[fourth]["created_at"], read
    # Between the two, as recorded then: the third exists and nothing supersedes it yet.
    between = read[third]["recorded_at"]
    assert call("read", initiative="billing", node=third, at=between)["state"] == "ok"
    assert call("read", initiative="billing", node=fourth, at=between)["state"] == "rejected"
    at_fourth = call("read", initiative="billing", node=fourth, at=read[fourth]["recorded_at"], neighbours=True)
    assert [e["to"] for e in at_fourth["data"]["edges"]] == [third], at_fourth["data"]
    assert call("read", initiative="billing", node=third, at=read[fourth]["recorded_at"])["state"] == "ok"
    walked = call("timeline", initiatives=["billing"], since="2027-01-01")["data"]["hits"]
    assert [h["id"] for h in walked] == [third, fourth]
    # A newest write further ahead than a corrected clock explains (a clock set wrong by weeks) is
    # not followed: every later write would be stamped that far off.
    far = Clock(BASE + timedelta(days=40))
    _id(_writer(store, vault, far)("note", initiative="billing", text="written by a clock forty days fast"))
    own = _id(call("note", initiative="billing", text="written by the corrected clock"))
    stamped = call("read", initiative="billing", node=own)["data"]["hits"][0]["recorded_at"]
    assert stamped < (BASE + timedelta(days=1)).isoformat(), stamped


def test_a_token_or_an_import_stamped_by_a_clock_behind_keeps_the_floor(store: Store, vault: VaultSpec) -> None:
    """A token added, and an archive imported, by a process whose clock is behind were stamped by that
    clock, became the vault's newest audit record, and the next write lost its floor: the fourth
    URL was recorded before the third again (review of decision 483)."""
    from kaeru.service import grants

    _one_machine(vault)
    ahead, behind = Clock(BASE + timedelta(days=1)), Clock(BASE)
    third = _id(_writer(store, vault, ahead)("note", initiative="billing", text="The staging URL is staging3."))
    slow = Service(store, vault.settings(), clock=behind)
    grants.add_token(slow.rt, "ci", None, False, "admin")
    grants.revoke_token(slow.rt, "ci", "admin")
    call = make_call(slow)
    fourth = _id(
        call("note", initiative="billing", text="The staging URL is staging4.", link_to=third, edge_type="supersedes")
    )
    read = {n: call("read", initiative="billing", node=n)["data"]["hits"][0] for n in (third, fourth)}
    assert read[third]["recorded_at"] < read[fourth]["recorded_at"], read


def test_the_process_clock_goes_on_from_a_write_it_stamped_after_the_vaults_newest(
    store: Store, vault: VaultSpec
) -> None:
    """On the system clock (no clock injected), a write stamped after the vault's newest write, ahead
    of this machine's clock: the process's readings go on from there, so its own `read at: now`
    right after finds what it wrote."""
    _one_machine(vault)
    _id(_writer(store, vault, Clock(datetime.now(UTC) + timedelta(hours=5)))("note", initiative="p", text="first"))
    service = Service(store, vault.settings())
    machine = datetime.now(UTC)
    service.rt.wall = WallClock(lambda: machine)
    call = make_call(service)
    second = _id(call("note", initiative="p", text="second, by a clock five hours behind"))
    assert service.rt.now() > machine + timedelta(hours=4)
    assert call("read", initiative="p", node=second, at="now")["state"] == "ok"


def test_a_reminder_whose_day_has_not_come_is_in_no_section_of_context(call: Call, clock: Clock) -> None:
    """SPEC 1.6: a reminder is not relevant before `after` (`recall` holds it back, 17.C3), yet
    `context` showed it among `warm` notes from the day it was written."""
    later = call(
        "note",
        initiative="r",
        text="check the first Q1 invoices for rounding errors",
        reminder={"after": "2026-03-10", "window_days": 7},
    )["data"]["primary"]["id"]
    plain = call("note", initiative="r", text="invoices are numbered per year")["data"]["primary"]["id"]
    shown = _in_context(call("context", initiative="r"))
    assert plain in shown and later not in shown, shown
    warm = next(s for s in call("context", initiative="r")["data"]["sections"] if s["name"] == "warm")
    assert warm["total"] == 1, warm
    clock.advance(days=8)  # 2026-03-10: from `after`, under `reminders`
    assert _in_context(call("context", initiative="r")).get(later) == "reminders"


def test_an_occurred_at_later_than_now_is_stored_with_a_warning(call: Call, clock: Clock) -> None:
    """A month ahead (a wrong month, another year) was taken silently, though a `due` or `through`
    in the past is said (`already_ended`). A few minutes ahead is a clock difference, not a slip."""
    call("note", initiative="o", text="the billing project starts")
    ahead = call("note", initiative="o", text="deployed v1.2 to staging", occurred_at="2026-04-02")
    assert ahead["state"] == "applied"
    assert [(i["code"], i["field"]) for i in ahead["issues"]] == [("in_the_future", "occurred_at")], ahead["issues"]
    assert "2026-04-02" in ahead["issues"][0]["message"]
    soon = (clock.moment + timedelta(minutes=2)).isoformat()
    close = call("note", initiative="o", text="smoke tests green", occurred_at=soon)
    assert close["state"] == "applied" and close["issues"] == [], close["issues"]
    past = call("note", initiative="o", text="the kick-off", occurred_at="2026-02-01")
    assert past["issues"] == [], past["issues"]
