"""Working-set tools: initiatives, context, timeline, reflect (re-entry and maintenance reads)."""

from __future__ import annotations

from typing import Any

from kaeru.api import envelope as env
from kaeru.api import working
from kaeru.mcp.adapter import ToolRegistry, ToolSpec
from kaeru.service import Service
from kaeru.service.requests import ContextRequest, InitiativesRequest, RecallRequest, ReflectRequest, TimelineRequest

INITIATIVES = """List the initiatives (project scopes) this memory holds — call it first when you start.

What it does: every initiative (or those whose name starts with `prefix`) with its node counts by \
tier (operational = in flight, archival = settled) and in total, the slots it has filled, when \
it was created and when it was last written to, most recently active first.
Changes nothing (read-only).
Use it to pick the exact initiative name before `context` — a misspelled name on a write creates a \
new initiative (with a warning) and splits the project's memory.
Returns {initiatives: [{name, created_at, last_activity, counts {operational, archival, total}, \
slots}], total}."""

CONTEXT = """Re-enter an initiative: everything that matters now, within your budget — call it at the start of every session.

What it does: returns sections in this order: `rules` (every active rule that applies today, and \
those scoped to `task` — always first), `slots` (who holds each role, e.g. handoff), `core`, \
`hot`, `warm` (operational nodes by layer, hot and warm capped at 15, newest first), `cortex` \
(archival core/hot knowledge), `tasks` (open tasks, overdue first), `claims` (open hypotheses), \
`reviews` (nodes under doubt), `reminders` (due today; their window starts at first sight), \
`recent` (latest captures). A node appears in the first section that includes it. Bodies are \
cut to fit `budget_chars`, rules first; `coverage.rules_complete` is true only when every \
applicable rule is in the answer, and every section cut short is listed in `coverage.omitted` \
with a count and reason (limit, budget). cold/frozen appear only when asked for in `sections`. \
`notices` carry news such as a hygiene pass that moved nodes.
Changes only bookkeeping: the first sight of a due reminder is recorded (its window starts), and \
a shown hygiene report is marked as read.
Use `search` for something specific; `initiatives` first if unsure of the name.
Returns ContextData {initiative, today, task, notices, sections: [{name, items: NodeData[], \
total, …}]}, with `tasks.overdue`, `tasks.columns`, `slots.holders` and `reviews.reasons`."""

TIMELINE = """See what happened in order: around a node, around the best match of a query, or in a time window.

What it does: lists live nodes of `initiatives` in time order (when they happened — `occurred_at` \
— then when they were recorded): `before` items preceding and `after` items following `anchor` \
(or the best literal match of `query`), or the first `limit` items between `since` and `until`. \
Conversations and work logs are sequences: the neighbours of a hit are often the context you need. \
Pages forward: when more follows, `continuation.next_arguments` is the exact call for the next \
`limit` items after the last one shown (writes in between neither repeat nor skip an item); \
`coverage.omitted` counts what the page left out (`timeline`: later items, reason limit or \
budget; `before`: earlier items beyond `before`, reason limit), up to 200 each: past that, an \
entry with reason window (count 1) says at least one more lies beyond. `total` counts the walk's \
items (shown on earlier pages, on this page and still to come); with a window entry, at least.
Changes nothing (read-only).
Use `search` to find by words, `trail history` for one node's own revisions.
Returns {hits: NodeData[] oldest first, total, anchor: id or null (null on a cursor's pages)}."""

REFLECT = """Get the maintenance work-list of an initiative, each item with the exact call that fixes it.

What it does: finds orphans (nodes linked to nothing), open reviews, overdue tasks, stale chains \
(saved path no longer the strongest), settle candidates (operational knowledge older than 14 \
days that others rely on → `evolve settle`), archivable nodes (old, unreferenced, still in \
context → `layer cold`), dangling references (edges to forgotten nodes) and near-duplicate \
initiative names (→ `initiative merge`). At most 25 items per kind (the rest counted in \
`coverage.omitted`).
Changes nothing (read-only) — review the fixes and make the calls you agree with.
Use it at the end of a session or when `context` feels noisy.
Returns {initiative, counts {kind: n}, items: [{kind, message, node, name, fix {tool, \
arguments}}], total}."""


RECALL = """Find what you need when you do not know the exact words: task-aware retrieval.

What it does: compiles a retrieval plan from what you are doing (`task_intent`, `role`, `risk`), \
runs its channels and fuses them: stemmed BM25 over name, description, body and tags (name \
weighted highest; a word counts by how rare it is in the searched initiatives), exact words, a \
node named like the query, matching tags, query words side by side, temporal neighbours (what was \
recorded just before and after a strong hit — conversations and work logs are sequences), memory \
recorded on a date the query names ("5 March 2024", "2024-03"), nodes linked to strong hits (by \
edge weight), recency and layer; \
intent priors then favour rules and preferences (apply_preference), decisions and verdicts \
(explain_decision), outcomes and refuted claims (debug_failure), in-flight work (resume_work, \
which also works without a query: slots, open tasks, hot and recent memory). Superseded and \
refuted memory is demoted unless `include_superseded` or explore_history; `risk: high` returns \
only current, non-refuted memory from the direct channels. explore_history answers differently: \
it takes the 20 best nodes the query itself matches (its words, name or meaning — not their \
neighbours; without a query, the plan's best), adds the nodes linked to them by `supersedes` \
edges in either direction (forgotten predecessors too, within the searched initiatives, 64 nodes \
at most), and lists every revision of each — one hit per revision, oldest first by recorded_at, \
each with its own `revision`, `recorded_at` and `currentness` (an earlier revision of a node that \
is current now reads `superseded`); its `next_step` reads each revision `at` its moment. \
`token_budget` is a hard cap and `limit` the page size: what a page leaves out is counted in \
`coverage.omitted` (reason budget, limit or window) and `continuation.next_arguments` is the exact \
call for the next page. The plan and its hash are deterministic for the same \
inputs and vault state; `explain` adds each hit's per-channel scores.
Changes nothing (read-only).
Use `search` when you know the exact words (literal, filterable); `read` for one node in full — \
`next_step` lists the exact `read` calls for the hits.
Returns {hits: NodeData[], total, retrieval_plan {intent, role, risk, channels [{name, weight, \
reason}], plan_hash, …}, next_step {tool: read, calls}, explain}."""


def _recall(service: Service, request: RecallRequest) -> dict[str, Any]:
    return working.recall_envelope(service.recall(request))


def _initiatives(service: Service, request: InitiativesRequest) -> dict[str, Any]:
    return working.initiatives_envelope(service.initiatives(request))


def _context(service: Service, request: ContextRequest) -> dict[str, Any]:
    return working.context_envelope(service.context(request))


def _timeline(service: Service, request: TimelineRequest) -> dict[str, Any]:
    outcome, anchor = service.timeline(request)
    return working.timeline_envelope(outcome, anchor)


def _reflect(service: Service, request: ReflectRequest) -> dict[str, Any]:
    return working.reflect_envelope(service.reflect(request))


def register(registry: ToolRegistry) -> None:
    read = env.READ_KIND
    registry.add(
        ToolSpec("initiatives", "List initiatives", INITIATIVES, read, _initiatives, read_only=True, idempotent=True)
    )
    # context stamps reminders as seen: not read-only, but repeating it is harmless.
    registry.add(ToolSpec("context", "Re-entry context", CONTEXT, read, _context, idempotent=True))
    registry.add(ToolSpec("recall", "Recall (task-aware)", RECALL, read, _recall, read_only=True, idempotent=True))
    registry.add(ToolSpec("timeline", "Timeline", TIMELINE, read, _timeline, read_only=True, idempotent=True))
    registry.add(ToolSpec("reflect", "Maintenance work-list", REFLECT, read, _reflect, read_only=True, idempotent=True))
