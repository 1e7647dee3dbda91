"""Envelopes of the working-set reads: initiatives, context, timeline, reflect."""

from __future__ import annotations

from typing import Any

from kaeru.api.envelope import node_data, read_base
from kaeru.service.context import ContextOutcome
from kaeru.service.initiatives import InitiativesOutcome
from kaeru.service.outcomes import ReadOutcome
from kaeru.service.recall import RecallOutcome
from kaeru.service.reflect import ReflectOutcome


def initiatives_envelope(outcome: InitiativesOutcome) -> dict[str, Any]:
    data = {
        "initiatives": [
            {
                "name": s.name,
                "created_at": s.created_at,
                "last_activity": s.last_activity,
                "counts": s.counts,
                "slots": s.slots,
            }
            for s in outcome.initiatives
        ],
        "total": outcome.total,
    }
    return read_base("initiatives", data, outcome.coverage, outcome.issues, outcome.continuation)


def context_envelope(outcome: ContextOutcome) -> dict[str, Any]:
    sections = []
    for section in outcome.sections:
        entry: dict[str, Any] = {
            "name": section.name,
            "items": [node_data(v) for v in section.views],
            "total": section.total,
        }
        entry.update({k: v for k, v in section.extra.items()})
        sections.append(entry)
    data = {
        "initiative": outcome.initiative,
        "today": outcome.today,
        "task": outcome.task,
        "notices": outcome.notices,
        "sections": sections,
    }
    return read_base("context", data, outcome.coverage, outcome.issues)


def timeline_envelope(outcome: ReadOutcome, anchor: str | None) -> dict[str, Any]:
    data = {"hits": [node_data(v) for v in outcome.hits], "total": outcome.total, "anchor": anchor}
    return read_base("timeline", data, outcome.coverage, outcome.issues, outcome.continuation)


def reflect_envelope(outcome: ReflectOutcome) -> dict[str, Any]:
    data = {
        "initiative": outcome.initiative,
        "counts": outcome.counts,
        "items": [
            {
                k: v
                for k, v in {"kind": i.kind, "message": i.message, "node": i.node, "name": i.name, "fix": i.fix}.items()
                if v is not None
            }
            for i in outcome.items
        ],
        "total": sum(outcome.counts.values()),
    }
    return read_base("reflect", data, outcome.coverage, outcome.issues)


def recall_envelope(outcome: RecallOutcome) -> dict[str, Any]:
    plan = outcome.plan.to_json()
    data: dict[str, Any] = {
        "hits": [node_data(v) for v in outcome.hits],
        "total": outcome.total,
        "retrieval_plan": plan,
        "next_step": outcome.next_step,
        "explain": outcome.explain,
    }
    if outcome.raw_hits is not None:
        data["raw_hits"] = [hit.to_json() for hit in outcome.raw_hits]
    if outcome.raw_hits_error is not None:
        data["raw_hits_error"] = outcome.raw_hits_error
    if outcome.overdue:  # the page's tasks overdue today, as `context`'s `tasks` section gives them
        data["overdue"] = outcome.overdue
    return read_base("recall", data, outcome.coverage, outcome.issues, outcome.continuation)
