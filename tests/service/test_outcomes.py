"""A mutation outcome is what replay stores: it must survive JSON exactly, with every field."""

from __future__ import annotations

import dataclasses
import json

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
        changes=[Change("tags", ["a"], ["a", "b"])],
        evidence=[EvidenceLink("n4", "supports")],
        failed_steps=[FailedStep("link", "not_found", "no such node")],
        slots=[SlotChange("focus", None, "n1", "r9")],
        artifacts=[{"kind": "file", "path": "x"}],
        issues=[Issue("budget_truncated", "cut", "text", True)],
    )


def test_to_json_has_every_field_as_asdict_does() -> None:
    """The hand-written serialiser agrees with dataclasses.asdict, so no field is silently dropped."""
    for outcome in (MutationOutcome(), _full()):
        assert outcome.to_json() == dataclasses.asdict(outcome)


def test_outcome_round_trips_through_json_text() -> None:
    """What replay stores (JSON text) reads back as an equal outcome."""
    outcome = _full()
    assert MutationOutcome.from_json(json.loads(json.dumps(outcome.to_json()))) == outcome
