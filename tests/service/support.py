"""Helpers shared by the service tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kaeru.service.outcomes import MutationOutcome


class Clock:
    """A settable clock so tests can read "as of" moments between writes."""

    def __init__(self) -> None:
        self.now = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: float = 10) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


def primary(outcome: MutationOutcome) -> str:
    assert outcome.primary is not None
    return outcome.primary.id
