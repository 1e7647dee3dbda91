"""One model per tool input: what each tool accepts, readable in code (decision 14.T1).

`REQUESTS` maps a tool's name to its model; the edge (`api/requests.py`) validates the arguments
against the tool's schema once and builds the model from them, and every service takes the model.
"""

from __future__ import annotations

from kaeru.service.requests.base import Request, wire_schema
from kaeru.service.requests.contract import ClaimRequest, ReviseRequest, SearchRequest
from kaeru.service.requests.reads import (
    ArchiveRequest,
    ContextRequest,
    CurrentStateRequest,
    InitiativesRequest,
    ReadRequest,
    RecallRequest,
    ReflectRequest,
    TimelineRequest,
    TrailRequest,
)
from kaeru.service.requests.writes import (
    EvolveRequest,
    ForgetRequest,
    InitiativeRequest,
    LayerRequest,
    LinkRequest,
    NoteRequest,
    ReplaceRequest,
    ReviewRequest,
    SlotRequest,
    TaskRequest,
    TaskUpdateRequest,
    VerdictRequest,
)

REQUESTS: dict[str, type[Request]] = {
    "search": SearchRequest,
    "claim": ClaimRequest,
    "revise": ReviseRequest,
    "note": NoteRequest,
    "read": ReadRequest,
    "replace": ReplaceRequest,
    "link": LinkRequest,
    "verdict": VerdictRequest,
    "evolve": EvolveRequest,
    "review": ReviewRequest,
    "slot": SlotRequest,
    "layer": LayerRequest,
    "forget": ForgetRequest,
    "trail": TrailRequest,
    "current_state": CurrentStateRequest,
    "task": TaskRequest,
    "task_update": TaskUpdateRequest,
    "initiative": InitiativeRequest,
    "initiatives": InitiativesRequest,
    "context": ContextRequest,
    "timeline": TimelineRequest,
    "reflect": ReflectRequest,
    "recall": RecallRequest,
    "archive": ArchiveRequest,
}

__all__ = [
    "REQUESTS",
    "ArchiveRequest",
    "ClaimRequest",
    "ContextRequest",
    "CurrentStateRequest",
    "EvolveRequest",
    "ForgetRequest",
    "InitiativeRequest",
    "InitiativesRequest",
    "LayerRequest",
    "LinkRequest",
    "NoteRequest",
    "ReadRequest",
    "RecallRequest",
    "ReflectRequest",
    "ReplaceRequest",
    "Request",
    "ReviewRequest",
    "ReviseRequest",
    "SearchRequest",
    "SlotRequest",
    "TaskRequest",
    "TaskUpdateRequest",
    "TimelineRequest",
    "TrailRequest",
    "VerdictRequest",
    "wire_schema",
]
