"""An argument that the chosen action does not use is refused on its field, never silently dropped:
`initiative attach` with `to` answered `unchanged` and the agent believed the node was now in `to`."""

from __future__ import annotations

from typing import Any

import pytest

from tests.working.conftest import Call

CASES: list[tuple[str, dict[str, Any], str]] = [
    ("initiative", {"action": "attach", "node": "A", "to": "z"}, "to"),
    ("initiative", {"action": "set_board", "columns": [{"key": "a"}, {"key": "b"}], "to": "zz"}, "to"),
    ("initiative", {"action": "rename", "to": "g2", "columns": [{"key": "a"}]}, "columns"),
    ("initiative", {"action": "delete", "node": "A"}, "node"),
    ("review", {"action": "flag", "target": "A", "reason": "unsure", "resolution": "never used"}, "resolution"),
    ("review", {"action": "close", "target": "A", "reason": "a reason for a close"}, "reason"),
    ("evolve", {"mode": "settle", "source": "A", "sources": ["A"]}, "sources"),
    ("evolve", {"mode": "synthesise", "sources": ["A"], "new_body": "all of it", "source": "A"}, "source"),
    ("link", {"action": "remove", "from": "A", "to": "B", "edge_type": "refers_to", "weight": 0.5}, "weight"),
    ("link", {"from": "A", "to": "B", "edge_type": "refers_to", "weight": 0.5, "summary": "why"}, "summary"),
    ("archive", {"action": "import", "path": "x.amg", "initiatives": ["g"]}, "initiatives"),
]


@pytest.mark.parametrize(("tool", "args", "field"), CASES, ids=[f"{t}-{f}-{i}" for i, (t, _, f) in enumerate(CASES)])
def test_an_argument_the_action_does_not_use_is_refused(
    call: Call, tool: str, args: dict[str, Any], field: str
) -> None:
    for name in ("A", "B"):
        assert call("note", initiative="g", text=f"node {name}", name=name)["state"] == "applied"
    before = call("timeline", initiatives=["g"])["data"]["hits"]
    answer = call(tool, **({} if tool == "archive" else {"initiative": "g"}), **args)
    assert answer["state"] == "rejected", answer
    issue = answer["issues"][0]
    assert (issue["code"], issue["field"]) == ("invalid_argument", field), issue
    assert "does not apply" in issue["message"]
    assert call("timeline", initiatives=["g"])["data"]["hits"] == before, "nothing was written"
