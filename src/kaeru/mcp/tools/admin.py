"""Board and scope tools: task, task_update, initiative."""

from __future__ import annotations

from kaeru.api.envelope import MUTATION_KIND
from kaeru.mcp.adapter import ToolRegistry, ToolSpec, mutation

TASK = """Put a task on the initiative's board: `status` column (default: the board's first, open unless `set_board` changed it; unknown keys are rejected), optional `due`, `reminder`, tags and a `link_to` edge (a `supersedes` one also supersedes the target's current version, as `note`'s). Overdue tasks lead `context`; `done` and every column after it close a task.
Changes: one task node; `request_id` replays. Use `task_update` to move or finish it. Returns the task's id and revision."""

TASK_UPDATE = """Move a task to another board column and/or set or clear its `due` date. `done` and every column after it (a `dropped` you added) close a task: out of open work, never overdue, `done_at` recorded; a board without `done` is closed by its last column.
Changes: a new revision (`expected_revision` makes it compare-and-set). Use `initiative set_board` to change the columns. Returns what changed."""

INITIATIVE = """Manage an initiative: `rename`, `merge` into `to` (everything moves; `to` keeps its board, and tasks land on it), `delete` (nodes in no other initiative are forgotten, recoverable through history), `attach`/`detach` a node, `set_board` columns (in order; `done` and every column after it close a task, so put `dropped` after `done`).
Changes: memberships and the initiative, in one audited transaction (a merge or delete of over 500 nodes moves them in audited chunks first; stopped part way by the vault it answers `partial`, and the same call again completes it); delete and merge are destructive. Use `initiatives` to check names first. Returns what moved."""


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
