"""The text a model reads says when each memory happened, and which tasks are overdue.

A probe of time (session 51) came back after a month: `context`, `recall`, `search`, `timeline` and
`read` printed no date on any node, so "Deployed billing v1.3 to production" (January) and a
February incident read as equally fresh, `timeline` ("what happened, in order") gave no times, and
an overdue task was named only by id in a JSON line. Clients with `KAERU_STRUCTURED=off` get only
this text. Now each node line carries the day of its `created_at` (the valid time: `occurred_at`
when given) on the user's calendar, the time of day in `timeline` and `read`, the day its revision
was recorded when that is another day, and an overdue task's line says so with its due day.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from kaeru.mcp.render import compact
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.working.conftest import Call, Clock, make_call

P = "billing"


def _line(text: str, name: str) -> str:
    [line] = [line for line in text.splitlines() if line.startswith(f"- {name} · ")]
    return line


def _setting(store: Store, vault: VaultSpec, clock: Clock, zone: str = "UTC") -> Call:
    return make_call(Service(store, vault.settings(timezone=zone), clock=clock))


def test_every_node_line_says_when_it_happened(store: Store, vault: VaultSpec) -> None:
    clock = Clock(datetime(2027, 1, 4, 10, 0, tzinfo=UTC))
    call = _setting(store, vault, clock)
    call("note", initiative=P, name="deploy13", text="Deployed billing v1.3 to production")
    call(
        "note", initiative=P, name="deploy12", text="Deployed billing v1.2 to staging", occurred_at="2027-01-03T23:00Z"
    )
    clock.advance(days=29)  # 2027-02-02
    call("note", initiative=P, name="incident", text="Incident: invoice PDFs timed out in production")
    call("revise", initiative=P, node="deploy13", patch={"description": "the January release"})

    day = r" · 2027-01-04 \(recorded 2027-02-02\) · id="
    for tool, args in (
        ("context", {"initiative": P}),
        ("search", {"initiatives": [P], "text": "production"}),
        ("recall", {"initiatives": [P], "query": "production deploy incident"}),
    ):
        text = compact(call(tool, **args))
        assert re.search("deploy13 · observation" + day, _line(text, "deploy13")), (tool, text)
        assert _line(text, "incident").startswith("- incident · observation · 2027-02-02 · id="), (tool, text)

    # What happened in order, with the time of day: the back-dated deploy first, at its own moment.
    timeline = compact(call("timeline", initiatives=[P]))
    assert [line.split(" · id=")[0] for line in timeline.splitlines() if line.startswith("- ")] == [
        "- deploy12 · observation · 2027-01-03 23:00 (recorded 2027-01-04)",
        "- deploy13 · observation · 2027-01-04 10:00 (recorded 2027-02-02)",
        "- incident · observation · 2027-02-02 10:00",
    ], timeline
    # `occurred_at` is the date the line gives: not repeated as a property.
    assert "occurred_at" not in timeline
    read = compact(call("read", initiative=P, node="deploy13"))
    assert re.search(r"deploy13 · observation · 2027-01-04 10:00 \(recorded 2027-02-02\) · id=", read), read
    # As of a moment before the revision: the revision shown is the first, recorded that day.
    past = compact(call("read", initiative=P, node="deploy13", at="2027-01-05"))
    assert "deploy13 · observation · 2027-01-04 10:00 · id=" in past, past


def test_a_day_is_the_users_day(store: Store, vault: VaultSpec) -> None:
    """A note written at 20:00 UTC on the 4th was written on the 5th in Auckland, the day `today=`
    says there and the day `read at` and `timeline since` read a bare date as."""
    clock = Clock(datetime(2027, 1, 4, 20, 0, tzinfo=UTC))
    call = _setting(store, vault, clock, "Pacific/Auckland")
    call("note", initiative=P, name="standup", text="Morning stand-up: the migration is on track")
    envelope = call("context", initiative=P)
    text = compact(envelope, ZoneInfo("Pacific/Auckland"))
    assert envelope["data"]["today"] == "2027-01-05"
    assert "standup · observation · 2027-01-05 · id=" in text, text
    timeline = compact(call("timeline", initiatives=[P], since="2027-01-05"), ZoneInfo("Pacific/Auckland"))
    assert "standup · observation · 2027-01-05 09:00 · id=" in timeline, timeline


def test_an_overdue_task_says_so_on_its_own_line(store: Store, vault: VaultSpec) -> None:
    clock = Clock(datetime(2027, 1, 4, 10, 0, tzinfo=UTC))
    call = _setting(store, vault, clock)
    late = call("task", initiative=P, name="invoices", text="Generate the December invoices", due="2027-01-08")
    call("task", initiative=P, name="audit", text="Prepare the audit pack", due="2027-03-15")
    clock.advance(days=30)
    envelope = call("context", initiative=P)
    [tasks] = [s for s in envelope["data"]["sections"] if s["name"] == "tasks"]
    assert tasks["overdue"] == [late["data"]["primary"]["id"]]
    text = compact(envelope)
    assert _line(text, "invoices").endswith(" · status=open · overdue, due 2027-01-08"), text
    assert _line(text, "audit").endswith(" · status=open · due 2027-03-15"), text
    assert '"overdue":' not in text  # the ids are not listed again in the section's JSON line
    # `search` does not know today: it gives the due day, not a verdict.
    found = compact(call("search", initiatives=[P], filters={"types": ["task"]}))
    assert _line(found, "invoices").endswith(" · status=open · due 2027-01-08"), found
