"""What the recall ranking tests share: one initiative, a note written through the service, and a
`recall` with `explain` (optionally with channels switched off)."""

from __future__ import annotations

from typing import Any

from kaeru.api.requests import parse
from kaeru.service import Service

P = "proj"
#: Prose that matches no test query: pads a note into a long one.
FILLER = (
    "the weekly review went through the usual items of the roadmap and nobody raised anything new about "
    "the schedule or the staffing plan so the meeting ended early and everyone went back to their desks "
)


def note(service: Service, text: str, initiative: str = P) -> str:
    outcome, _ = service.note(parse("note", {"initiative": initiative, "text": text}))
    assert outcome.primary is not None
    return outcome.primary.id


def recall(service: Service, query: str, disabled: frozenset[str] = frozenset(), **extra: Any) -> Any:
    args: dict[str, Any] = {"initiatives": [P], "query": query, "explain": True, **extra}
    return service.recall(parse("recall", args), disabled=disabled)


def made_id(answer: dict[str, Any]) -> str:
    """The id of the node a write tool's answer made (the call applied)."""
    assert answer["state"] == "applied", answer
    return str(answer["data"]["primary"]["id"])


def hit_ids(answer: dict[str, Any]) -> list[str]:
    """The ids of a read tool's hits, in their order (the call answered)."""
    assert answer["state"] == "ok", answer
    return [h["id"] for h in answer["data"]["hits"]]
