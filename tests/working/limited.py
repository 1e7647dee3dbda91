"""What the limited-token tests share (decisions 15.K2, 428–431): two initiatives, a token granted only
`pub`, and a rule in `pub` scoped to a task of `secret-proj` — outside that token's grants."""

from __future__ import annotations

from typing import Any

from kaeru.service import grants
from tests.working.conftest import Call

PUB, SECRET = "pub", "secret-proj"
LIMITED = grants.Principal("lim", frozenset({PUB}))


def applied_id(answer: dict[str, Any]) -> str:
    """The id of the node a write made or changed; the write must have been applied."""
    assert answer["state"] == "applied", answer
    return str(answer["data"]["primary"]["id"])


def scoped_rule(call: Call, through: str) -> tuple[str, str]:
    """A rule in `pub` scoped to a task of `secret-proj` until `through`: the rule and the task."""
    task = applied_id(call("task", initiative=SECRET, text="rotate the vault keys"))
    rule = applied_id(
        call(
            "note",
            initiative=PUB,
            kind="rule",
            text="announce every key rotation a day ahead",
            applicability={"task": {"id": task}, "through": through},
        )
    )
    return rule, task
