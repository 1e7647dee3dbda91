"""When a node's reminder is due in `context`, and where the first sight of it is recorded.

A reminder (`{after, window_days}` on a node) is delivered by `context` from its `after` day for
`window_days` days counted from the day it was first shown; `context` records that day
(`record_seen`, with the moves of the hygiene reports it showed: shown once for the whole vault,
`hygiene`).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from kaeru.domain.model import Node
from kaeru.service import hygiene
from kaeru.service.mutation import run_mutation
from kaeru.service.runtime import Runtime
from kaeru.storage.base import Initiative

#: The initiative property recording when each reminder of its nodes was first shown:
#: `{node id: {"after": its reminder's after, "day": the day}}`.
REMINDERS_SEEN = "reminders_seen"


def seen_day(scope: Initiative, node: Node, today: date) -> str | None:
    """When `node`'s reminder was first shown in `scope`: the initiative's record of it (for the
    reminder's current `after`: a reminder set again starts again), else the day an older kaeru
    stamped on the node itself. A day after `today` was recorded by a clock set ahead: it counts
    as no sight (`record_seen` records today instead), or the window, counted from a day still to
    come, never ran out (decision 405)."""
    entry = (scope.properties.get(REMINDERS_SEEN) or {}).get(node.id)
    reminder = node.properties.get("reminder") or {}
    day: Any = None
    if isinstance(entry, dict) and entry.get("after") == reminder.get("after"):
        day = str(entry["day"])
    elif isinstance(reminder.get("seen"), str):
        day = reminder["seen"]
    return day if day is not None and day <= today.isoformat() else None


def not_yet(node: Node, today: date) -> bool:
    """Whether `node` holds a reminder whose `after` has not come: not relevant before then (SPEC
    1.6), so `context` shows it among no layer's notes (nor `recent`, `decisions`), as `recall`
    suppresses it (decision 17.C3) — a task or a claim stays in its own section, open work; from
    `after` it is delivered under `reminders`, and after its window where its layer puts it."""
    reminder = node.properties.get("reminder")
    after = reminder.get("after") if isinstance(reminder, dict) else None
    return isinstance(after, str) and date.fromisoformat(after) > today


def reminder_due(node: Node, today: date, seen: str | None) -> bool:
    reminder = node.properties.get("reminder")
    if not isinstance(reminder, dict):
        return False
    if date.fromisoformat(reminder["after"]) > today:
        return False
    # Counted in days since first sight, not as a date: a window may run past the calendar's end
    # (`window_days` up to 2**31-1), and `seen + window` would overflow where this cannot.
    return seen is None or (today - date.fromisoformat(seen)).days < int(reminder["window_days"])


def record_seen(
    rt: Runtime, initiative: str, reminders: dict[str, str], reports: dict[str, int], today: str, actor: str
) -> None:
    """Record first sight of reminders (`{node id: its after}`: their window starts now) and how
    many moves of each hygiene report were shown (`{report id: its moves when read}`). Both are the
    initiative's record, not a revision of the node: stamped on the node, another agent's `context`
    moved the node to a new revision and the agent that had read it got a `revision_conflict` for
    an edit nobody had made, and a report's revision copied its whole body again. A report's count
    is the one `context` read, never the note's count now: a pass that appended moves since left
    them unread. Once recorded, no `context` of any agent shows those moves again (`hygiene`)."""

    def body(ctx: Any) -> None:
        properties = dict(ctx.initiative.properties)
        known = ctx.session.nodes_by_ids(ctx.session.attention_ids([ctx.initiative.id]))
        if reports:
            counts = dict(properties.get(hygiene.REPORTS_SHOWN) or {})
            for report_id, count in reports.items():
                counts[report_id] = max(count, int(counts.get(report_id, 0)))
            # Those of reports gone, and those the note itself says (a pass wrote it since), dropped.
            properties[hygiene.REPORTS_SHOWN] = {
                report_id: count
                for report_id, count in counts.items()
                if (report := known.get(report_id)) is not None
                and hygiene.REPORT_TAG in report.tags
                and count > hygiene.shown_on_note(report)
            }
        if reminders:
            seen = {
                node_id: entry
                for node_id, entry in (ctx.initiative.properties.get(REMINDERS_SEEN) or {}).items()
                if node_id in known and "reminder" in known[node_id].properties  # gone ones dropped
            }
            for node_id, after in reminders.items():
                if node_id not in seen or seen[node_id].get("after") != after or str(seen[node_id]["day"]) > today:
                    seen[node_id] = {"after": after, "day": today}
            properties[REMINDERS_SEEN] = seen
        ctx.session.set_initiative_properties(ctx.initiative.id, properties)

    run_mutation(
        rt,
        operation="reminder_seen",
        initiative=initiative,
        request_id=None,
        args={},
        actor=actor,
        body=body,
        create=False,
        # It rewrites the initiative's properties it read: held alone, so two `context` calls
        # stamping at once on PostgreSQL (whose writers share the row) cannot drop each other's.
        exclusive=True,
    )
