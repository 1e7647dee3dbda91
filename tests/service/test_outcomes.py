"""A mutation outcome is what replay stores: it must survive JSON exactly, with every field."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from kaeru.domain.budget import Cut
from kaeru.service.outcomes import (
    Change,
    EntityRef,
    EvidenceLink,
    FailedStep,
    Issue,
    MutationOutcome,
    SlotChange,
)


def _full() -> MutationOutcome:
    return MutationOutcome(
        state="partial",
        primary=EntityRef("n1", "r1"),
        created=[EntityRef("n2", "r2")],
        affected=[EntityRef("n3", "r3")],
        changes=[
            Change("tags", ["a"], ["a", "b"]),
            # A long body cut to keep the answer bounded: the shown start, and its range.
            Change("body", "long old", "new", before_range=Cut("long old", 0, 8, 1_000_000)),
        ],
        evidence=[EvidenceLink("n4", "supports")],
        failed_steps=[FailedStep("link", "not_found", "no such node")],
        slots=[SlotChange("focus", None, "n1", "r9")],
        artifacts=[{"kind": "file", "path": "x"}],
        issues=[Issue("budget_truncated", "cut", "text", True)],
    )


def _ranges_as_written(change: dict[str, Any]) -> dict[str, Any]:
    """A change as `asdict` gives it, its ranges as the wire writes them: only when set, without the
    text (the value shown is that text)."""
    written = {k: v for k, v in change.items() if not k.endswith("_range")}
    for side in ("before_range", "after_range"):
        if change[side] is not None:
            written[side] = {k: change[side][k] for k in ("start", "end", "total")}
    return written


def test_to_json_has_every_field_as_asdict_does() -> None:
    """The hand-written serialiser agrees with dataclasses.asdict, so no field is silently dropped
    (a change's ranges are written only when a value was cut: every other change keeps three keys)."""
    for outcome in (MutationOutcome(), _full()):
        expected = dataclasses.asdict(outcome)
        expected["changes"] = [_ranges_as_written(c) for c in expected["changes"]]
        assert outcome.to_json() == expected


def test_outcome_round_trips_through_json_text() -> None:
    """What replay stores (JSON text) reads back as an equal outcome."""
    outcome = _full()
    assert MutationOutcome.from_json(json.loads(json.dumps(outcome.to_json()))) == outcome
