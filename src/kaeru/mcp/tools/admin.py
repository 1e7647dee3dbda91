"""Board and scope tools: task, task_update, initiative."""

from __future__ import annotations

from kaeru.api.envelope import MUTATION_KIND
from kaeru.mcp.adapter import ToolRegistry, ToolSpec, mutation

TASK = """Put a task on the initiative's board.

What it does: creates a `task` node in the board's first column (`open`) or in `status` (a \
column key; unknown keys are rejected with the valid list), with an optional `due` date \
(YYYY-MM-DD, RFC 3339, or a future offset like 3d / 2w), `reminder`, tags, a `link_to` edge to \
what it is about, and `options.slot`. Overdue tasks come first in `context`.
Changes: one task node (plus its edge and slot change) in one transaction; `request_id` replays.
Use `note` for things that are not work to do; `task_update` to move or finish a task.
Returns MutationData: `primary` {id, revision} of the task."""

TASK_UPDATE = """Move a task to another board column, finish it, or change its due date.

What it does: sets `status` to a column key of the initiative's board (strict: an unknown key is \
rejected with the valid keys) — the terminal column (`done` by default) records `done_at` — \
and/or sets `due` (null clears it). Same id, a new revision; history keeps every move.
Changes: the task (new revision); audit record. `expected_revision` makes it a compare-and-set.
Use `initiative set_board` to change the columns themselves.
Returns MutationData: `primary`, `changes` [{field: status|due, before, after}]."""

INITIATIVE = """Manage an initiative (project scope): rename, merge, delete, attach/detach a node, or set its board.

What it does: `rename` to `to` (fails if `to` exists — merge instead); `merge` into `to`: every \
node, edge and slot moves, nothing is lost, then this initiative is removed; `delete`: nodes that \
belong to no other initiative are forgotten (recoverable through history, `read … at=`), the \
others just leave it; `attach` / `detach` `node` (a node may belong to several initiatives; a \
node's last initiative cannot be detached — use `forget`); `set_board` replaces the task board's \
ordered `columns` [{key, label}] (default open → in-progress → done; tasks keep their status).
Changes: memberships (new node revisions), the initiative itself; one transaction, audited. \
DESTRUCTIVE for `delete` and `merge`.
Use `initiatives` to see the names first.
Returns MutationData: `changes` (what moved), `affected`."""


def register(registry: ToolRegistry) -> None:
    registry.add(ToolSpec("task", "Add a task", TASK, MUTATION_KIND, mutation("task"), idempotent=True))
    registry.add(
        ToolSpec(
            "task_update", "Move or finish a task", TASK_UPDATE, MUTATION_KIND, mutation("task_update"), idempotent=True
        )
    )
    registry.add(
        ToolSpec(
            "initiative",
            "Manage an initiative",
            INITIATIVE,
            MUTATION_KIND,
            mutation("initiative"),
            destructive=True,
            idempotent=True,
        )
    )
