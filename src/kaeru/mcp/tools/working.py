"""Working-set tools: initiatives, context, timeline, reflect (re-entry and maintenance reads)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kaeru.api.envelope import READ_KIND
from kaeru.mcp.adapter import ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from kaeru.service import Service
    from kaeru.service.requests import (
        ContextRequest,
        InitiativesRequest,
        RecallRequest,
        ReflectRequest,
        TimelineRequest,
    )

INITIATIVES = """List the initiatives (project scopes), most active first, with node counts, slots and last activity. Call it first to spell the initiative exactly: a misspelled name on a write creates a new one.
Changes nothing. Use `context` next. Returns `limit` initiatives a page and `total`; `continuation` gives the next page."""

CONTEXT = """Re-enter an initiative at the start of a session: what matters now, within `budget_chars`. Sections in order: rules (active today or for `task`; always first), slots, core, hot, decisions (current, newest first), warm, cortex (settled), tasks (overdue first; `open_total` counts every open task, `blocked_by` names open blockers), claims (open), reviews (doubted nodes), reminders due, recent; cold and frozen only via `sections`. Hot, warm and recent hold current nodes (no superseded node, no closed task); warm lists named notes and the current ends of supersedes chains first (up to 10), then its newest. A node shows once. The budget goes to rules, then slots, tasks, claims, reminders, core, decisions, reviews, then the rest. Without `task`, rules scoped to an open task are held back and counted (a notice names the task; `coverage.omitted` reason task_scoped; the task's `scoped_rules`). `coverage` says whether every rule fit and what was cut.
Changes a due reminder's first sight and a hygiene report's read mark; with KAERU_HYGIENE=1, at most hourly, a hygiene pass: notes unchanged for 14 days, not linked to, go cold (current decisions, slot holders and the current end of a chain of `supersedes` stay), each move reported once in `notices` with its undo. Use `search` or `recall` for something specific. Returns the sections with their nodes and totals."""

TIMELINE = """What happened, in order (when it happened, then when recorded): around `anchor`, around the best literal match of `query`, or the first `limit` items between `since` and `until`. A window with `since` also lists each older node changed in it (revised, a task done or moved, a verdict), at its last change there and as that revision: its `created_at` is before `since`, its `recorded_at` the change.
Changes nothing. Use `search` to find by words, `trail` for one node's revisions. Returns nodes oldest first, `total`, `anchor` and the next page in `continuation`."""

REFLECT = """An initiative's maintenance work-list, each item with the call that fixes it: orphans, open reviews, overdue tasks (most overdue first), stale chains, settle candidates, archivable nodes, dangling references, near-duplicate initiative names, nodes with two current versions (forked supersessions) (25 per kind; open reviews newest first: the last one's `node` as `reviews_after` lists only the next 25).
Changes nothing: make the calls you agree with. Use it at the end of a session. Returns the items (kind, message, node, `fix`) and counts."""


RECALL = """Find memory when you do not know the exact words: stemmed BM25 over names, bodies and tags, word rarity and proximity, exact names, temporal neighbours, days the query names (a date, with or without its year: in June, on 10 March; yesterday, last Tuesday, last week: what was made or changed then), links, recency and layer (and meaning, with the semantic extra), fused and weighted by `task_intent`. Superseded and refuted memory is demoted (a refuted claim not when the query asks what went wrong); explore_history lists every revision of the best matches and their supersedes chain, oldest first. A question about the rules ("which rules apply?") brings back the rules in force, as `context` lists them.
Changes nothing. Use `search` for exact words and filters. Returns hits (excerpts; a task overdue today is listed in `overdue` and its line says so), the retrieval plan, `next_step` (the `read` calls for full bodies; when the best match is archived memory left out, the same recall with `include_stale: true`) and the next page in `continuation`."""


def _recall(service: Service, request: RecallRequest) -> dict[str, Any]:
    from kaeru.api import working  # with the use case it shapes (decision 16.S1)

    return working.recall_envelope(service.recall(request))


def _initiatives(service: Service, request: InitiativesRequest) -> dict[str, Any]:
    from kaeru.api import working  # with the use case it shapes (decision 16.S1)

    return working.initiatives_envelope(service.initiatives(request))


def _context(service: Service, request: ContextRequest) -> dict[str, Any]:
    from kaeru.api import working  # with the use case it shapes (decision 16.S1)

    return working.context_envelope(service.context(request))


def _timeline(service: Service, request: TimelineRequest) -> dict[str, Any]:
    from kaeru.api import working  # with the use case it shapes (decision 16.S1)

    outcome, anchor = service.timeline(request)
    return working.timeline_envelope(outcome, anchor)


def _reflect(service: Service, request: ReflectRequest) -> dict[str, Any]:
    from kaeru.api import working  # with the use case it shapes (decision 16.S1)

    return working.reflect_envelope(service.reflect(request))


def register(registry: ToolRegistry) -> None:
    read = READ_KIND
    registry.add(
        ToolSpec("initiatives", "List initiatives", INITIATIVES, read, _initiatives, read_only=True, idempotent=True)
    )
    # context stamps reminders as seen: not read-only, but repeating it is harmless.
    registry.add(ToolSpec("context", "Re-entry context", CONTEXT, read, _context, idempotent=True))
    registry.add(ToolSpec("recall", "Recall (task-aware)", RECALL, read, _recall, read_only=True, idempotent=True))
    registry.add(ToolSpec("timeline", "Timeline", TIMELINE, read, _timeline, read_only=True, idempotent=True))
    registry.add(ToolSpec("reflect", "Maintenance work-list", REFLECT, read, _reflect, read_only=True, idempotent=True))
