"""A hit forgotten after the first page was ranked is not shown on the next page, and the page says
so: `coverage.omitted` counts it as `retracted` (search and recall)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.working.conftest import Call

P = "harbour"


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("search", {"initiatives": [P], "text": "harbour crane"}),
        ("recall", {"initiatives": [P], "query": "harbour crane"}),
    ],
)
def test_a_hit_forgotten_between_pages_is_counted_as_retracted(call: Call, tool: str, args: dict[str, Any]) -> None:
    for i in range(6):
        call("note", initiative=P, text=f"harbour crane number {i} lifts containers off the ships")
    first = call(tool, **args, limit=3)
    shown = [h["id"] for h in first["data"]["hits"]]
    cursor = first["continuation"]["cursor"]
    assert len(shown) == 3 and cursor
    ranked = call(tool, **args, limit=6)
    later = [h["id"] for h in ranked["data"]["hits"] if h["id"] not in shown]
    assert len(later) == 3
    forgotten = call("forget", initiative=P, node={"id": later[0]}, reason="wrong crane")
    assert forgotten["state"] == "applied"
    second = call(tool, **args, limit=3, cursor=cursor)
    assert second["state"] == "ok", second
    assert [h["id"] for h in second["data"]["hits"]] == later[1:]
    assert {"section": "hits", "count": 1, "reason": "retracted"} in second["coverage"]["omitted"]
