"""A question that names only a day, on a day of more memories than recall scores (decision 471).

"What happened today?" has no word a memory holds: the day's memories are the answer (decision
288). A day of more than `DATE_CANDIDATES` of them was dropped whole, and the answer was empty and
said complete. It is the day's newest, newest first, paged on by the continuation, and the older
ones are said to be left out. Both backends, through the tool registry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.service.recall.channels import DATE_CANDIDATES
from kaeru.service.recall.fusion import WINDOW
from kaeru.storage.base import Store
from tests.backends import VaultSpec

P = "busy-day"
#: More memories today than recall scores for a day.
TODAY = DATE_CANDIDATES + 30


class _Clock:
    """A wall clock that a test sets, a millisecond on at each reading (so notes keep their order)."""

    def __init__(self, start: datetime) -> None:
        self.moment = start

    def __call__(self) -> datetime:
        self.moment += timedelta(milliseconds=1)
        return self.moment


def _ids(answer: dict[str, Any]) -> list[str]:
    return [h["id"] for h in answer["data"]["hits"]]


def test_a_crowded_day_answers_with_its_newest_memories_newest_first(store: Store, vault: VaultSpec) -> None:
    clock = _Clock(datetime(2026, 3, 4, 10, 0, tzinfo=UTC))
    run = build_server(Service(store, vault.settings(), clock=clock)).registry.run

    def note(text: str) -> str:
        answer = run("note", {"initiative": P, "text": text})
        assert answer["state"] == "applied", answer
        return str(answer["data"]["primary"]["id"])

    yesterday = {note(f"Yesterday's chore number {i}: watered the ferns.") for i in range(3)}
    clock.moment = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)
    written = [note(f"Worked on step {i} of the migration.") for i in range(TODAY)]
    clock.moment = datetime(2026, 3, 5, 18, 0, tzinfo=UTC)

    first = run("recall", {"initiatives": [P], "query": "what happened today", "limit": 10})
    assert first["state"] == "ok", first
    newest = written[::-1]
    assert _ids(first) == newest[:10], "the day's newest memories, newest first"
    assert first["coverage"]["complete"] is False and first["continuation"] is not None
    # The ranked window holds the newest `WINDOW`; every older memory of the day is said to be left out.
    assert {"section": "hits", "count": TODAY - WINDOW, "reason": "window"} in first["coverage"]["omitted"]

    seen = _ids(first)
    answer = first
    while answer["continuation"] is not None:
        answer = run("recall", answer["continuation"]["next_arguments"])
        assert answer["state"] == "ok", answer
        seen += _ids(answer)
    assert seen == newest[:WINDOW], "the pages follow on, newest first, without a gap or a repeat"
    assert not yesterday & set(seen)
