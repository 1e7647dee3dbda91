"""One model per tool input: what each tool accepts, readable in code (decision 14.T1).

`REQUESTS` maps a tool's name to its model; the edge (`api/requests.py`) validates the arguments
against the tool's schema once and builds the model from them, and every service takes the model.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from kaeru.service.requests.base import Request, wire_schema

if TYPE_CHECKING:
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

#: Each tool's model, and the module defining it. A module is imported when one of its models is
#: first asked for (`from kaeru.service.requests import NoteRequest`, `REQUESTS["note"]`): the first
#: call after `kaeru serve` starts builds the models of its own module only (decision 16.S1).
_MODELS: dict[str, tuple[str, str]] = {
    "search": ("SearchRequest", "contract"),
    "claim": ("ClaimRequest", "contract"),
    "revise": ("ReviseRequest", "contract"),
    "note": ("NoteRequest", "writes"),
    "read": ("ReadRequest", "reads"),
    "replace": ("ReplaceRequest", "writes"),
    "link": ("LinkRequest", "writes"),
    "verdict": ("VerdictRequest", "writes"),
    "evolve": ("EvolveRequest", "writes"),
    "review": ("ReviewRequest", "writes"),
    "slot": ("SlotRequest", "writes"),
    "layer": ("LayerRequest", "writes"),
    "forget": ("ForgetRequest", "writes"),
    "trail": ("TrailRequest", "reads"),
    "current_state": ("CurrentStateRequest", "reads"),
    "task": ("TaskRequest", "writes"),
    "task_update": ("TaskUpdateRequest", "writes"),
    "initiative": ("InitiativeRequest", "writes"),
    "initiatives": ("InitiativesRequest", "reads"),
    "context": ("ContextRequest", "reads"),
    "timeline": ("TimelineRequest", "reads"),
    "reflect": ("ReflectRequest", "reads"),
    "recall": ("RecallRequest", "reads"),
    "archive": ("ArchiveRequest", "reads"),
}


def __getattr__(name: str) -> Any:
    """A model by its class name, from its module (imported on first use; PEP 562)."""
    for model, home in _MODELS.values():
        if model == name:
            return getattr(importlib.import_module(f"{__name__}.{home}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Requests(Mapping[str, type[Request]]):
    """Tool name → its model, each model's module imported when first looked up (holds nothing:
    the modules are Python's to keep)."""

    def __getitem__(self, tool: str) -> type[Request]:
        model: type[Request] = __getattr__(_MODELS[tool][0])
        return model

    def __iter__(self) -> Iterator[str]:
        return iter(_MODELS)

    def __len__(self) -> int:
        return len(_MODELS)


REQUESTS: Mapping[str, type[Request]] = _Requests()

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
