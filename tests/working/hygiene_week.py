"""What the hygiene report tests share: the project, its report notes, and a week whose first pass
moves the older of two notes out of context."""

from __future__ import annotations

from typing import Any

from kaeru.service import Service
from tests.working.conftest import Call, Clock

P = "atlas"


def made(answer: dict[str, Any]) -> str:
    """The id of the node a write made; the write must have been applied."""
    assert answer["state"] == "applied", answer["issues"]
    node_id: str = answer["data"]["primary"]["id"]
    return node_id


def report_notes(call: Call) -> list[dict[str, Any]]:
    """The hygiene report notes, which are kept cold."""
    found = call("search", initiatives=[P], filters={"tags": ["kind:hygiene"], "layers": ["cold"]}, limit=50)
    hits: list[dict[str, Any]] = found["data"]["hits"]
    return hits


def first_of_two_moved(call: Call, timed: Service, clock: Clock) -> tuple[str, str]:
    """Two notes a day apart; a pass two weeks after the first moves it alone: (first, second)."""
    first = made(call("note", initiative=P, text="Deployed atlas v1.0.2 to staging."))
    clock.advance(days=1)
    second = made(call("note", initiative=P, text="Bumped dependencies, lockfile refreshed."))
    clock.advance(days=13, hours=1)
    assert [m.node_id for m in timed.hygiene(P)] == [first]
    return first, second
