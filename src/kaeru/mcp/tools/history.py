"""History tools: `trail` and `current_state`."""

from __future__ import annotations

from typing import Any

from kaeru.api import envelope as env
from kaeru.mcp.adapter import ToolRegistry, ToolSpec
from kaeru.service import Service
from kaeru.service.requests import CurrentStateRequest, TrailRequest

TRAIL = """Follow how a node came to be and what it connects to.

What it does, by `kind`: `history` — every revision (with the fields that changed before → \
after, the actor and request_id) and every edge added, reweighted or removed, in recorded order \
(works for forgotten nodes named by id); `provenance` — the derived_from ancestors, breadth \
first, cycle-safe, 32 levels deep (deeper ones counted in `coverage.omitted`, reason limit); `path` — the strongest weighted directed path to `to` (cost 1 − weight per \
hop, inside `initiative`); `neighbours` — one hop in both directions (optionally only \
`edge_types`); `chain` — the steps of a saved chain node.
Changes nothing (read-only).
Use `read` for one node's content (or as of a moment); `current_state` to ask what replaces a \
node or holds a slot.
Returns TrailData {kind, subject: NodeData, entries: [{kind, at, node, edge, changes, actor, \
request_id, depth, direction, action}], total, cost (path)}."""

CURRENT_STATE = """Ask what is true now (or at `as_of`): who holds a slot, or what replaced a node.

What it does: for a `slot`, the holder, the earlier holders (newest first) and the supersedes \
edges between them; for a `node`, follows live supersedes edges to the newest version and \
returns it with its predecessors (at most 256; the rest counted in `coverage.omitted`, reason \
limit) and the edges that decided it. `status` is current (answer in \
`current`), no_current (released slot, forgotten or refuted end of chain), not_found, ambiguous \
(the name matches several nodes: ids in `candidates`), or conflict (two live successors: ids in \
`candidates`).
Changes nothing (read-only).
Use it before acting on a fact that may have been replaced; `trail history` shows how it changed.
Returns CurrentStateData {status, slot, slot_revision, subject, current, predecessors, edges, \
candidates}."""


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
