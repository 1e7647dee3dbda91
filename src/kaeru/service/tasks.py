"""Tasks and the initiative's board: `task`, `task_update`, and board columns (`initiative set_board`)."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import HypothesisStatus, Layer, Node, NodeType
from kaeru.domain.spelling import did_you_mean
from kaeru.domain.timefmt import is_time_ago, off_calendar, parse_moment
from kaeru.errors import InvalidArgument
from kaeru.service.capture import CaptureOptions, apply_slot, link_new, parse_reminder
from kaeru.service.checks import each_checked, one_issue_per_mistake, screen_secrets
from kaeru.service.mutation import WriteContext
from kaeru.service.outcomes import Change, Issue
from kaeru.service.revise import check_revision
from kaeru.storage.base import Initiative, SearchQuery, Session

if TYPE_CHECKING:
    from collections.abc import Collection

    from kaeru.service.requests import TaskRequest, TaskUpdateRequest

DEFAULT_COLUMNS: list[dict[str, str]] = [
    {"key": "open", "label": "Open"},
    {"key": "in-progress", "label": "In progress"},
    {"key": "done", "label": "Done"},
]
_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
#: A future offset: `3d`, `2w`, and as an agent may write it, `3 days`, `in 2 weeks` (decision 284).
_FUTURE = re.compile(r"^\s*(?:in\s+)?(\d+)\s*(d|days?|w|weeks?)\s*$", re.IGNORECASE)
#: How many tasks `set_board` reads at a time while moving them out of removed columns.
REHOME_BATCH = 500


def board_node(session: Session, initiative: Initiative) -> Node | None:
    """The initiative's board: of several (an archive imported beside the vault's own), the last
    edited, so the newest `set_board` always decides (decision 314); it was the first search hit."""
    rows, _, _ = session.search(SearchQuery(initiative_ids=[initiative.id], types=[NodeType.BOARD.value], window=50))
    nodes = session.nodes_by_ids([r.id for r in rows])
    live = [nodes[r.id] for r in rows if r.id in nodes]
    return max(live, key=lambda n: (n.recorded_at, n.seq)) if live else None


def columns(session: Session, initiative: Initiative | None) -> list[dict[str, str]]:
    """The board's columns in order (the defaults until someone edits the board)."""
    return columns_of(board_node(session, initiative) if initiative is not None else None)


def columns_of(board: Node | None) -> list[dict[str, str]]:
    """A board node's columns (the defaults without a board, or a board without columns)."""
    stored = board.properties.get("columns") if board is not None else None
    return list(stored) if isinstance(stored, list) and stored else list(DEFAULT_COLUMNS)


def terminal_key(cols: list[dict[str, str]]) -> str:
    """`done` when the board has it, else the last column: where a finished task is put when it
    must be moved (`_rehome`, `onto_board`), and the first of the columns that close a task."""
    keys = [c["key"] for c in cols]
    return "done" if "done" in keys else keys[-1]


def closing_keys(cols: list[dict[str, str]]) -> list[str]:
    """The columns that close a task (decision 460): `terminal_key` and every column after it, so a
    `dropped` or `wontfix` an agent adds after `done` to abandon a task closes it too. It was open
    work in `context`, `recall` and `reflect`: only `done` closed a task. Open vs closed is decided
    here and nowhere else."""
    keys = [c["key"] for c in cols]
    return keys[keys.index(terminal_key(cols)) :]


def open_keys(cols: list[dict[str, str]]) -> list[str]:
    """The columns of open work, in board order: those before the closing ones."""
    keys = [c["key"] for c in cols]
    return keys[: keys.index(terminal_key(cols))]


def is_overdue(
    due: str | None, status: str | None, cols: list[dict[str, str]], today: date, closing: Collection[str] = ()
) -> bool:
    """Whether a task is overdue: a due day before the user's `today` (`Runtime.today`, in
    KAERU_TIMEZONE) while its status is not one that closes it (`closing_keys`) — the rule
    `context`, `reflect` and `task` apply, here as one function so the viewer's board need not
    copy it (it had, and took the board's last column for the closing one). `closing`: the board's
    `closing_keys`, when a caller testing thousands of tasks holds them."""
    closed = closing or closing_keys(cols)
    return bool(due) and status not in closed and date.fromisoformat(str(due)) < today


def check_status(cols: list[dict[str, str]], status: str, field: str) -> str:
    keys = [c["key"] for c in cols]
    if status not in keys:
        said = f"unknown status {status!r}: this board's columns are: {', '.join(keys)}{did_you_mean(status, keys)}"
        raise InvalidArgument(said, field=field)
    return status


def require_task(node: Node, field: str, *, checklist: bool = True) -> Node:
    """`node` when it is a task (or, as a scope of work, a checklist unless `checklist` is False);
    else the refusal `task_update` gives. A rule scoped to an observation, or a `context` for one,
    was taken without a word: the rule was never in force for any work."""
    if node.node_type != NodeType.TASK and not (checklist and node.node_type == NodeType.CHECKLIST):
        wanted = "a task or checklist" if checklist else "a task"
        raise InvalidArgument(f"{node.name!r} is of type {node.node_type.value}, not {wanted}", field=field)
    return node


#: How many statuses no board has one call looks for in the nodes (a search each).
STATUSES_LOOKED_FOR = 20


def unknown_statuses(
    session: Session, scopes: list[Initiative], statuses: list[str], field: str, types: list[str] | None = None
) -> list[Issue]:
    """A warning for each status filter value nothing in `scopes` can have: `search` answered `ok`,
    0 hits, for `in_progress` (the default column is `in-progress`), and the agent read "nothing in
    progress". A warning, not a refusal: `search` accepts every input its published schema does.

    A status is known when it is a claim's, a column of a searched initiative's board, or carried
    by any node there — a task of an old vault, or left in a column its board has since dropped, is
    still found by its status. The boards are read once for all statuses (a board's columns, the
    common filter, cost no search of their own); the nodes only for a status no board has, and for
    at most `STATUSES_LOOKED_FOR` of those: the list is as long as the caller makes it, and a search
    each for thousands of made-up statuses held a call for minutes. The rest are said in one warning.

    With `types` only tasks, a claim's status is no excuse: `open` on a board of `todo, doing, done`
    matched nothing and was said to nobody, as a claim can be `open`."""
    only_tasks = bool(types) and set(types or ()) <= {NodeType.TASK.value}
    claims = [] if only_tasks else [s.value for s in HypothesisStatus]
    ids = [s.id for s in scopes]
    keys: list[str] | None = None
    issues: list[Issue] = []
    looked: set[str] = set()
    unlooked: list[str] = []
    for i, status in enumerate(statuses):
        if status in claims or status in looked:
            continue
        if keys is None:
            keys = board_keys(session, scopes)
        if status in keys:
            continue
        if len(looked) >= STATUSES_LOOKED_FOR:
            unlooked.append(status)
            continue
        looked.add(status)
        carried, _, _ = session.search(
            SearchQuery(
                initiative_ids=ids,
                types=[NodeType.TASK.value] if only_tasks else (),
                statuses=[status],
                omit_superseded=False,
                window=1,
                count_total=False,
            )
        )
        if carried:
            continue
        mean = did_you_mean(status, [*keys, *claims])
        said = (
            f"no board of the searched initiatives has a column {status!r} and no task there has it, so the "
            f"task filter matched nothing{mean} — the boards' columns are: {', '.join(keys)}"
            if only_tasks
            else f"unknown status {status!r}, so it matched nothing: no board of the searched initiatives has that "
            f"column and no node there has it{mean} — the boards' columns are: {', '.join(keys)}; a claim's "
            f"statuses: {', '.join(claims)}"
        )
        issues.append(Issue("invalid_argument", said, f"{field}.{i}"))
    unlooked = list(dict.fromkeys(unlooked))  # a status named twice is one status
    if unlooked:
        shown = ", ".join(repr(u) for u in unlooked[:5])
        issues.append(
            Issue(
                "invalid_argument",
                f"{len(unlooked)} more status(es) no board of the searched initiatives has ({shown}"
                f"{', …' if len(unlooked) > 5 else ''}) were not looked for in the nodes: past "
                f"{STATUSES_LOOKED_FOR} such statuses a call names, they are only filtered on",
                field,
            )
        )
    return issues


def board_keys(session: Session, scopes: list[Initiative]) -> list[str]:
    """Every column key of the boards of `scopes`, in board order (the defaults for an initiative
    without a board). Every board there counts, not only the newest: the key is only filtered on."""
    ids = [s.id for s in scopes]
    rows, _, _ = session.search(
        SearchQuery(initiative_ids=ids, types=[NodeType.BOARD.value], omit_superseded=False, window=50 * len(ids))
    )
    boards = [n for n in session.nodes_by_ids([r.id for r in rows]).values() if not n.retracted]
    keys = [c["key"] for board in boards for c in columns_of(board)]
    if {s.id for s in scopes} - {i for board in boards for i in board.initiatives}:
        keys += [c["key"] for c in DEFAULT_COLUMNS]
    return list(dict.fromkeys(keys))


def parse_due(raw: Any, now: datetime, zone: tzinfo | None, field: str) -> str:
    """A due date from `YYYY-MM-DD`, RFC 3339, `now`, or a future offset like `3d` / `2w`: a day on the
    user's calendar (`zone`, None for the machine's own; decision 188), so an offset counts from
    the user's today and a time with an offset falls on its own day there."""
    text = str(raw).strip()
    today = now.astimezone(zone).date()
    future = _FUTURE.match(text)
    if future:
        try:  # `int` refuses thousands of digits with a ValueError; `timedelta` a mere million years
            days = int(future.group(1)) * (7 if future.group(2)[0].lower() == "w" else 1)
            return (today + timedelta(days=days)).isoformat()
        except (OverflowError, ValueError) as exc:
            raise InvalidArgument(f"due {text!r} falls after the year 9999", field=field) from exc
    if re.fullmatch(r"\d+\s*[smh]", text) or is_time_ago(text):  # `3d ago` is a day past, never a due
        raise InvalidArgument("due is a day: use a date or a future offset in days/weeks (3d, 2w)", field=field)
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return date.fromisoformat(text).isoformat()
        # `now` is the call's moment (decision 329), so its day is the user's today: read against
        # 1970 it made a task due 1970-01-01, overdue from the start.
        moment = parse_moment(text, now)
        if _wall_time(text):  # a time without an offset is the user's own: its day as written
            return datetime.fromisoformat(text).date().isoformat()
        return moment.astimezone(zone).date().isoformat()
    except ValueError as exc:  # not `exc`'s words: they offer a time ago, which no due is
        null = "; a new task leaves due out; `task_update` clears it: send null (JSON null, not a text)"
        raise InvalidArgument(
            f"due must be a date (2026-03-03), an RFC 3339 time, `now` or a future offset (3d, 2w), not {text!r}"
            f"{off_calendar(text)}{null if text.lower() in ('null', 'none') else ''}",
            field=field,
        ) from exc


def _wall_time(text: str) -> bool:
    """Whether `text` is a date and time with no offset (`2026-12-10T18:00:00`)."""
    try:
        return datetime.fromisoformat(text).tzinfo is None
    except ValueError:
        return False


def task(ctx: WriteContext, request: TaskRequest) -> None:
    """Put a task on the initiative's board."""
    options = CaptureOptions.parse(request.options)
    text = ctx.clean("text", request.text)
    if not text or not text.strip():
        raise InvalidArgument("text must not be blank", field="text")
    cols = columns(ctx.session, ctx.initiative)
    status = check_status(cols, request.status or cols[0]["key"], "status")
    properties: dict[str, Any] = {}
    if request.due is not None:
        properties["due"] = due = parse_due(request.due, ctx.now, ctx.rt.settings.zone(), "due")
        if status not in closing_keys(cols) and due < (today := ctx.rt.today().isoformat()):
            # A wrong year made a task overdue the moment it was written (error sweep, decision 391).
            said = f"due {due} has already passed (today is {today}): the task is overdue now; if the date was a slip, `task_update` its due"
            ctx.outcome.issues.append(Issue("already_ended", said, "due"))
    reminder = parse_reminder(request.reminder, "reminder")
    if reminder:
        properties["reminder"] = reminder
    if status in closing_keys(cols):
        properties["done_at"] = ctx.now_s
    if request.branch is not None:
        properties["branch"] = ctx.clean("branch", request.branch)
    link_target = ctx.resolve(request.link_to, "link_to") if request.link_to is not None else None
    name = ctx.clean_name("name", request.name) if request.name else None
    node = ctx.create_node(
        node_type=NodeType.TASK,
        body=text,
        name=name,
        name_fallback="task",
        tags=["kind:task", f"status:{status}", *ctx.clean_tags("tags", request.tags)],
        layer=options.layer or Layer.WARM,
        status=status,
        properties=properties,
    )
    link_new(ctx, node, link_target, request)
    apply_slot(ctx, node, options)
    ctx.outcome.primary = ctx.outcome_ref(node)


def task_update(ctx: WriteContext, request: TaskUpdateRequest) -> None:
    """Move a task to another column, finish it, or change its due date (the schema wants one)."""
    node = require_task(ctx.resolve(request.task, "task"), "task", checklist=False)
    check_revision(node, request.expected_revision, ctx.session)
    cols = columns(ctx.session, ctx.initiative)
    properties = dict(node.properties)
    fields: dict[str, Any] = {}
    if request.status is not None:
        status = check_status(cols, request.status, "status")
        if status != node.status:
            fields["status"] = status
            fields["tags"] = (*[t for t in node.tags if not t.startswith("status:")], f"status:{status}")
            ctx.outcome.changes.append(Change("status", node.status, status))
            closing = closing_keys(cols)
            if status not in closing:
                properties.pop("done_at", None)
            elif node.status not in closing or "done_at" not in properties:
                properties["done_at"] = ctx.now_s  # done → dropped keeps the moment it closed
    if request.given("due"):  # null clears the due date
        due = parse_due(request.due, ctx.now, ctx.rt.settings.zone(), "due") if request.due is not None else None
        if due != properties.get("due"):
            ctx.outcome.changes.append(Change("due", properties.get("due"), due))
            if due is None:
                properties.pop("due", None)
            else:
                properties["due"] = due
    if not ctx.outcome.changes:
        ctx.outcome.state = "unchanged"
        ctx.outcome.primary = ctx.outcome_ref(node)
        return
    if properties != node.properties:
        fields["properties"] = properties
    updated = ctx.update_node(node, **fields)
    ctx.mark_affected(updated)
    ctx.outcome.primary = ctx.outcome_ref(updated)
    if "status" in fields:  # what the move means beyond this board (imported when first needed, 16.S1)
        from kaeru.service import blocking, task_boards

        ctx.outcome.issues += task_boards.say_left_boards(ctx.session, updated, fields["status"], ctx.initiative)
        if fields["status"] in closing_keys(cols):
            ctx.outcome.issues += blocking.say_still_blocked(ctx.session, updated, cols)


def set_board(ctx: WriteContext, raw: Any) -> None:
    """Replace the board's columns (add, remove, relabel, reorder in one edit); the tasks of a removed
    column are moved (`_rehome`)."""
    if not isinstance(raw, list) or not raw:
        raise InvalidArgument("columns must be a non-empty list of {key, label}", field="columns")

    def column(i: int, col: Any) -> dict[str, str]:
        if not isinstance(col, dict) or not isinstance(col.get("key"), str):
            raise InvalidArgument("each column is {key, label}", field=f"columns[{i}]")
        key = col["key"]
        if not _KEY.match(key):
            raise InvalidArgument(
                "a column key is lower-case letters, digits, - or _ (≤ 32)", field=f"columns[{i}].key"
            )
        # Screened as every stored text is (decision 352): a key is a handle (refused, never redacted).
        screen_secrets(ctx.rt.settings.secret_policy, f"columns[{i}].key", key, handle=True)
        label = str(col.get("label") or key)
        return {"key": key, "label": ctx.clean(f"columns[{i}].label", label) or key}

    # A mistake made in several columns is said once, of every column that made it.
    mark = len(ctx.outcome.issues)
    cols = each_checked(raw, column)
    ctx.outcome.issues[mark:] = one_issue_per_mistake(ctx.outcome.issues[mark:])
    at: dict[str, list[str]] = {}
    for i, col in enumerate(cols):
        at.setdefault(col["key"], []).append(f"columns[{i}].key")
    if repeated := {key: fields for key, fields in at.items() if len(fields) > 1}:
        said = "; ".join(f"{key!r} at {', '.join(fields)}" for key, fields in repeated.items())
        raise InvalidArgument(f"column keys must be unique: {said}", field="columns")
    if not open_keys(cols):  # a new task goes into the first column: closed there, it was never open work
        raise InvalidArgument(
            f"every column would close a task ({terminal_key(cols)!r} and every column after it do): "
            "put an open column first, where a new task goes",
            field="columns",
        )
    before = columns(ctx.session, ctx.initiative)
    if before == cols:
        ctx.outcome.state = "unchanged"
        return
    board = board_node(ctx.session, ctx.initiative)
    if board is None:
        board = ctx.create_node(
            node_type=NodeType.BOARD,
            body="Task board columns of this initiative.",
            name="board",
            tags=["kind:board"],
            layer=Layer.COLD,
            properties={"columns": cols},
        )
    else:
        board = ctx.update_node(board, properties={**board.properties, "columns": cols})
        ctx.mark_affected(board)
    ctx.outcome.changes.append(Change("columns", before, cols))
    _reclose(ctx, before, cols, _rehome(ctx, before, cols))
    ctx.outcome.primary = ctx.outcome_ref(board)


def _rehome(ctx: WriteContext, before: list[dict[str, str]], cols: list[dict[str, str]]) -> set[str]:
    """Move the initiative's tasks out of the columns `cols` removed (decision 295): a finished one to
    the new board's closing column, any other to its first. Left where they were, they were on no
    board: gone from `context` and `reflect`, overdue or not, and no `task_update` could name their
    status. Each move is a revision of the task, listed as affected, and said in one warning; one
    `left_board` per other board a shared task left (`LeftBoards`). Returns the ids of the tasks moved."""
    keys = {c["key"] for c in cols}
    removed = [c["key"] for c in before if c["key"] not in keys]
    seen: set[str] = set()
    if not removed:
        return seen
    from kaeru.service.task_boards import LeftBoards  # imported when first needed (16.S1)

    was_closed, new_terminal, left = closing_keys(before), terminal_key(cols), LeftBoards(ctx.initiative)
    moved: dict[tuple[str, str], int] = {}
    while batch := [n for n in _in_columns(ctx.session, ctx.initiative, removed) if n.id not in seen]:
        for node in batch:
            seen.add(node.id)
            status = new_terminal if node.status in was_closed else cols[0]["key"]
            left.note(node, status)  # a task on other boards too may leave them: said below
            ctx.mark_affected(_in_column(ctx, node, status, status == new_terminal))
            moved[(node.status or "", status)] = moved.get((node.status or "", status), 0) + 1
    if moved:
        said = ", ".join(f"{n} from {a!r} to {b!r}" for (a, b), n in sorted(moved.items()))
        ctx.outcome.issues.append(
            Issue("tasks_moved", f"tasks of the removed columns were moved: {said}", field="columns")
        )
    ctx.outcome.issues += left.say(ctx.session)
    return seen


def _reclose(ctx: WriteContext, before: list[dict[str, str]], cols: list[dict[str, str]], moved: set[str]) -> None:
    """Restamp the tasks of kept columns that this edit made closing or open (decision 460): a board
    without `done` is closed by its last column, so a column added after `shipped` reopened the
    shipped tasks without a word, each still carrying its `done_at`. A task closed now records
    `done_at`, one open again loses it; each is a revision listed as affected, and one warning
    `closing_columns_changed` counts them by column. The tasks `_rehome` just put in place
    (`moved`) are already right."""
    was, now = closing_keys(before), closing_keys(cols)
    kept = {c["key"] for c in before}
    flipped = [key for key in (c["key"] for c in cols) if key in kept and (key in was) != (key in now)]
    counts: dict[str, int] = {}
    seen = set(moved)
    while flipped and (batch := _in_columns(ctx.session, ctx.initiative, flipped, seen)):
        for node in batch:
            seen.add(node.id)
            key = node.status or ""
            ctx.mark_affected(_in_column(ctx, node, key, key in now))
            counts[key] = counts.get(key, 0) + 1
    if counts:
        said = ", ".join(
            f"{n} in {key!r} {'closed, `done_at` recorded' if key in now else 'open again, `done_at` cleared'}"
            for key, n in counts.items()
        )
        rule = (
            "`done` and every column after it"
            if "done" in now
            else f"the last column, {now[0]!r}, as the board has no `done`; with one, it and every column after it"
        )
        ctx.outcome.issues.append(
            Issue(
                "closing_columns_changed",
                f"the edit changed which columns close a task ({rule}): {said}",
                field="columns",
            )
        )


def _in_columns(session: Session, initiative: Initiative, keys: list[str], seen: set[str] | None = None) -> list[Node]:
    """Up to `REHOME_BATCH` live tasks of the initiative whose status is one of `keys` and whose id
    is not in `seen`, locked for the write that moves them (the search sees the transaction's own
    moves; a restamp keeps the column, so the window grows by what was already seen)."""
    seen = seen or set()
    rows, _, _ = session.search(
        SearchQuery(
            initiative_ids=[initiative.id],
            types=[NodeType.TASK.value],
            statuses=keys,
            omit_superseded=False,
            window=REHOME_BATCH + len(seen),
            count_total=False,
        )
    )
    found = (session.get_node(r.id, for_update=True) for r in rows if r.id not in seen)
    return [n for n in found if n is not None and not n.retracted and n.status in keys]


def onto_board(ctx: WriteContext, node: Node, cols: list[dict[str, str]]) -> Node:
    """`node`, a task brought onto this board (`initiative merge`, `attach`; decision 311), put in
    its first column — or its closing one when it was finished (`done_at`) — when this board has no
    column of its status: there it was on no board, out of `context` and `reflect`. Any other node,
    or a task whose column the board has, is returned as it is."""
    keys = [c["key"] for c in cols]
    if node.node_type != NodeType.TASK or node.status in keys:
        return node
    finished = bool(node.properties.get("done_at"))
    return _in_column(ctx, node, terminal_key(cols) if finished else keys[0], finished)


def _in_column(ctx: WriteContext, node: Node, status: str, closing: bool) -> Node:
    """A revision of task `node` in column `status` (its `status:` tag with it): finished when
    `closing` (its `done_at` kept, or now), else open (no `done_at`)."""
    properties = dict(node.properties)
    if closing:
        properties.setdefault("done_at", ctx.now_s)
    else:
        properties.pop("done_at", None)
    tags = (*[t for t in node.tags if not t.startswith("status:")], f"status:{status}")
    return ctx.update_node(node, status=status, tags=tags, properties=properties)


def say_placed(ctx: WriteContext, placed: int) -> None:
    """The warning `tasks_moved` for `placed` tasks `onto_board` moved."""
    if placed:
        ctx.outcome.issues.append(
            Issue(
                "tasks_moved",
                f"{placed} task(s) came from a board without their column here and were put in its "
                "first column (a finished one in its closing column)",
                field="initiative",
            )
        )
