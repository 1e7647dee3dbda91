"""History tools: `trail` and `current_state`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kaeru.api import envelope as env
from kaeru.mcp.adapter import ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from kaeru.service import Service
    from kaeru.service.requests import CurrentStateRequest, TrailRequest

TRAIL = """Follow a node by `kind`: history (every revision and edge change, oldest first; `newest`: its last page), provenance (derived_from ancestors), path (strongest path to `to`), neighbours (one hop), chain (a saved chain's steps).
Changes nothing. Use `read` for content, `current_state` for what replaced a node. Returns the subject and its entries, `limit` a page (the rest: `continuation`)."""

CURRENT_STATE = """What is true now (or at `as_of`): who holds a `slot`, or the newest version of a `node` along supersedes edges, with its predecessors. `status`: current, no_current, not_found, ambiguous or conflict (ids in `candidates`).
Changes nothing. Use it before acting on a fact that may have been replaced. Returns status, current, predecessors, edges."""


def _trail(service: Service, request: TrailRequest) -> dict[str, Any]:
    return env.trail_envelope(service.trail(request))


def _state(service: Service, request: CurrentStateRequest) -> dict[str, Any]:
    return env.state_envelope(service.current_state(request))


def register(registry: ToolRegistry) -> None:
    registry.add(ToolSpec("trail", "Trail of a node", TRAIL, env.READ_KIND, _trail, read_only=True, idempotent=True))
    registry.add(
        ToolSpec(
            "current_state",
            "Current holder or successor",
            CURRENT_STATE,
            env.READ_KIND,
            _state,
            read_only=True,
            idempotent=True,
        )
    )
