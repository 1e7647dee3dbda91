"""Hygiene: automatic, reversible layer tidying by fixed rules (opt-in), reaching a fixed point.

Only layers move — never content, never into core, never a pinned node. Rules (kaeru's, amended
where they hid current knowledge: decision 332): a core node with a live verdict against it drops
one step; a core node unchanged for 30 days with no support drops to hot; core is capped at 15
(least supported, oldest first, drop to hot); an unsupported hot/warm episode unchanged for 14
days goes cold — unless it is a current decision, holds a slot, or is the current end of a chain
of `supersedes` (knowledge, not a journal entry), and one hygiene demoted from core stops at warm;
a finished task (in its board's closing columns) unsupported and unchanged for 14 days goes cold
as a journal entry does — finished work, which `reflect` otherwise offered as `archivable` for ever;
a warm node with ≥ 5 supporting inbound edges rises to hot. "Support" is a live inbound edge from
a live node that is not a cancelling edge (supersedes, contradicts, falsifies). "Unchanged" counts
from the node's last revision: a fact corrected last week, or a node the agent moved back by hand,
starts its time again.

A pass that moves anything reports it in the initiative's report note of the week (one written in
the last `REPORT_SPAN` holding fewer than `REPORT_MOVES` moves, revised with the pass's moves
appended; past that bound the moves go to new notes), not in a note of its own: a pass an hour
apart wrote a note each, and a year's reports crowded the cold listings and the timeline. Bounded,
as each revision keeps a copy of the body among the note's past revisions.

`context` shows the moves no earlier `context` showed (`unread`, `unread_notice`), once for the
whole vault: the first `context` of the initiative to show them, whichever agent or session made
it, marks them shown, and no later `context` says them again. What was shown is counted in the
initiative's `REPORTS_SHOWN` (report id → moves shown), never by a revision of the note (which would
copy its body again), and counts only the moves that `context` read: a pass committing after it
read the report leaves its own moves unread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from kaeru.domain.model import DECISION_TAG, EdgeType, Layer, Node, NodeType
from kaeru.domain.timefmt import fmt, parse_ts
from kaeru.service import tasks
from kaeru.service.mutation import WriteContext
from kaeru.storage.base import Initiative, Session

CORE_CEILING = 15
CORE_REVIEW_AGE = timedelta(days=30)
JOURNAL_AGE = timedelta(days=14)
PROMOTE_IN_DEGREE = 5
CANCELLING = {EdgeType.SUPERSEDES, EdgeType.CONTRADICTS, EdgeType.FALSIFIES}
REPORT_TAG = "kind:hygiene"
#: How long one report note gathers the passes' moves before the next pass starts a new one.
REPORT_SPAN = timedelta(days=7)
#: How many moves one report note holds at most: a pass's moves past it start a new note.
REPORT_MOVES = 200
#: The initiative property counting, for each report not marked read on the note itself, how many
#: of its moves a `context` has shown: `{report id: count}` (`shown`).
REPORTS_SHOWN = "hygiene_reports_shown"
#: The report's first line; the moves follow, one a line.
REPORT_HEAD = (
    "Hygiene moved {count} node(s) (undo one: `layer` with its id and its layer before; "
    "keep one where it is for good: `layer` with `pin: true`):"
)


@dataclass(frozen=True)
class Move:
    node_id: str
    name: str
    before: Layer
    after: Layer
    reason: str


def plan(session: Session, initiative_id: int, now: datetime, closing: Sequence[str] = ()) -> list[Move]:
    """The moves one pass would make, computed from a snapshot (nothing is written).

    Only the nodes a rule can move are read — every core one, hot and warm episodes past the
    journal age, warm ones with enough inbound links — found by the storage's index queries
    (`hygiene_candidates`), so a pass costs what it may move, not the initiative's size (decision
    84); the rules below then decide on them exactly as on every node."""
    supporting = [e.value for e in EdgeType if e not in CANCELLING]
    ids = session.hygiene_candidates(initiative_id, fmt(now - JOURNAL_AGE), supporting, PROMOTE_IN_DEGREE)
    found = session.nodes_by_ids(ids)
    nodes = [found[i] for i in ids if i in found and not found[i].pinned and not found[i].retracted]
    nodes.sort(key=lambda n: n.seq)
    counts = session.inbound_counts([n.id for n in nodes], supporting)
    support = {n.id: counts.get(n.id, 0) for n in nodes}
    journal = [n.id for n in nodes if n.node_type == NodeType.EPISODE and n.layer != Layer.CORE and not support[n.id]]
    replacing = replacements(session, journal)
    asked = [n.id for n in nodes if n.layer == Layer.CORE or DECISION_TAG in n.tags or n.id in replacing]
    verdicts = session.verdicts_against(asked)
    holders = frozenset(s.node_id for s in session.slots_of(initiative_id) if s.node_id)
    finished = frozenset(n.id for n in nodes if n.node_type == NodeType.TASK and n.status in closing)
    return decide(nodes, support, verdicts, now, holders, replacing, finished)


def replacements(session: Session, node_ids: Sequence[str]) -> frozenset[str]:
    """Which of `node_ids` supersede another node by a live edge: each is the project's statement of
    a value that changed (the staging URL, a rate limit), and while nothing supersedes or falsifies
    it in turn it is the current one, however long unchanged — the end of its chain that `recall`
    and `context` answer for every version before it. Its own outgoing edge is no support (only an
    inbound link is), so a month away cooled the current end of every chain (decision 332 kept
    decisions and slot holders only). Asked of the nodes a rule would otherwise cool, not of the
    initiative."""
    if not node_ids:
        return frozenset()
    asked = set(node_ids)
    edges = session.live_edges(node_ids, [EdgeType.SUPERSEDES])
    return frozenset(e.src for e in edges if e.src in asked and e.dst != e.src)


def decide(
    nodes: list[Node],
    support: dict[str, int],
    verdicts: Mapping[str, Sequence[object]],
    now: datetime,
    holders: frozenset[str] = frozenset(),
    replacing: frozenset[str] = frozenset(),
    finished: frozenset[str] = frozenset(),
) -> list[Move]:
    """The rules, applied to `nodes` (live, unpinned, oldest first) with each one's count of
    supporting inbound links, the live verdicts against the core ones, the decisions and the
    replacements, the nodes holding a slot, those that supersede another (`replacements`), and the
    tasks in a closing column (`finished`): done work is a journal entry once old, as a note is."""
    moves: list[Move] = []
    moved: set[str] = set()

    def age(node: Node) -> timedelta:
        return now - parse_ts(node.recorded_at)  # since its last revision: a correction is news

    def knowledge(node: Node) -> bool:
        """A current decision, a slot's holder, or a current replacement: what the project knows
        now, however old."""
        stated = DECISION_TAG in node.tags or node.id in replacing
        return node.id in holders or (stated and not verdicts.get(node.id))

    core = [n for n in nodes if n.layer == Layer.CORE]
    for node in core:
        if verdicts.get(node.id):
            moves.append(Move(node.id, node.name, Layer.CORE, Layer.HOT, "a live verdict replaced or refuted it"))
            moved.add(node.id)
        elif age(node) > CORE_REVIEW_AGE and support[node.id] == 0:
            moves.append(
                Move(node.id, node.name, Layer.CORE, Layer.HOT, "unchanged in core for 30 days, with no support")
            )
            moved.add(node.id)
    remaining = [n for n in core if n.id not in moved]
    if len(remaining) > CORE_CEILING:
        remaining.sort(key=lambda n: (support[n.id], n.created_at))
        for node in remaining[: len(remaining) - CORE_CEILING]:
            moves.append(Move(node.id, node.name, Layer.CORE, Layer.HOT, f"core above its ceiling of {CORE_CEILING}"))
            moved.add(node.id)
    for node in nodes:
        if node.id in moved or node.layer == Layer.CORE:
            continue
        was_core = "hygiene_demoted_at" in node.properties
        journal = node.node_type == NodeType.EPISODE or node.id in finished
        if (
            journal
            and node.layer in ((Layer.HOT,) if was_core else (Layer.HOT, Layer.WARM))
            and support[node.id] == 0
            and age(node) > JOURNAL_AGE  # a demotion from core is a revision: its 14 days' grace
            and not knowledge(node)
        ):
            after = Layer.WARM if was_core else Layer.COLD  # once chosen for core, never out of recall
            what = "a finished task" if node.id in finished else "an unsupported episode"
            moves.append(Move(node.id, node.name, node.layer, after, f"{what} unchanged for 14 days"))
        elif node.layer == Layer.WARM and support[node.id] >= PROMOTE_IN_DEGREE:
            moves.append(Move(node.id, node.name, Layer.WARM, Layer.HOT, f"{support[node.id]} supporting links"))
    return moves


def apply_pass(ctx: WriteContext) -> list[Move]:
    """Plan and apply one pass inside the caller's transaction; report the moves when anything moved."""
    closing = tasks.closing_keys(tasks.columns(ctx.session, ctx.initiative))
    moves = plan(ctx.session, ctx.initiative.id, ctx.now, closing)
    for move in moves:
        node = ctx.session.get_node(move.node_id, for_update=True)
        if node is None or node.retracted or node.pinned or node.layer != move.before:
            continue
        properties = dict(node.properties)
        if move.before == Layer.CORE:
            properties["hygiene_demoted_at"] = ctx.now_s
        ctx.update_node(node, layer=move.after, properties=properties)
    if moves:
        _report(ctx, moves)
    return moves


def _report(ctx: WriteContext, moves: list[Move]) -> None:
    """Append the pass's moves to the week's report note (`_week_report`), or start one, at most
    `REPORT_MOVES` a note. Names are not unique: each move names its node's id too, and the report
    says the calls that undo a move or keep a node where it is (an undone move stays undone for the
    rule's whole period). The note's `hygiene.moves` counts its moves and `unread` those at its end
    that no `context` had shown when the pass wrote it (`shown` tells the rest)."""
    lines = [f"- {m.name} ({m.node_id}): {m.before.value} → {m.after.value} ({m.reason})" for m in moves]
    week = _week_report(ctx.session, ctx.initiative.id, fmt(ctx.now - REPORT_SPAN))
    if week is not None:
        known = dict(week.properties.get("hygiene") or {})
        total = moves_of(week)
        room, lines = lines[: REPORT_MOVES - total], lines[REPORT_MOVES - total :]
        # Appended to the body as it stands (an agent may have revised it); the first line recounted
        # only while it is still the report's own.
        body = week.body or ""
        first, _, rest = body.partition("\n")
        if first.startswith(REPORT_HEAD.split("{", 1)[0]):
            body = REPORT_HEAD.format(count=total + len(room)) + ("\n" + rest if rest else "")
        unread = total - shown(week, ctx.initiative) + len(room)
        state = {**known, "moves": total + len(room), "reported": False, "unread": unread}
        ctx.update_node(week, body=body + "\n" + "\n".join(room), properties={**week.properties, "hygiene": state})
    while lines:
        batch, lines = lines[:REPORT_MOVES], lines[REPORT_MOVES:]
        ctx.create_node(
            node_type=NodeType.EPISODE,
            body=REPORT_HEAD.format(count=len(batch)) + "\n" + "\n".join(batch),
            name_fallback="hygiene",
            tags=[REPORT_TAG],
            layer=Layer.COLD,
            properties={"hygiene": {"moves": len(batch), "reported": False, "unread": len(batch)}},
        )


def _week_report(session: Session, initiative_id: int, since: str) -> Node | None:
    """The initiative's newest live report note written since `since` with room for a move, read
    for update, through the partial index of nodes holding a reminder or a report
    (`attention_ids`), as `context` finds them."""
    found = session.nodes_by_ids(session.attention_ids([initiative_id]))
    reports = [n for n in found.values() if REPORT_TAG in n.tags and "hygiene" in n.properties]
    recent = [n for n in reports if n.created_at >= since and n.node_type == NodeType.EPISODE]
    if not recent:
        return None
    newest = max(recent, key=lambda n: (n.created_at, n.seq))
    node = session.get_node(newest.id, for_update=True)
    return node if node is not None and not node.retracted and moves_of(node) < REPORT_MOVES else None


def moves_of(report: Node) -> int:
    """How many moves `report` holds (its property; a report older than the count: its lines)."""
    moves = (report.properties.get("hygiene") or {}).get("moves")
    return moves if isinstance(moves, int) else max(0, len((report.body or "").splitlines()) - 1)


def shown(report: Node, scope: Initiative) -> int:
    """How many of `report`'s moves (the first ones) a `context` has shown: the note says how many
    were unread when a pass last wrote it (all read once `reported`), the initiative's
    `REPORTS_SHOWN` how many a `context` showed since; each only grows, so the larger is right."""
    recorded = (scope.properties.get(REPORTS_SHOWN) or {}).get(report.id)
    return min(moves_of(report), max(shown_on_note(report), recorded if isinstance(recorded, int) else 0))


def shown_on_note(report: Node) -> int:
    """How many of `report`'s moves had been shown when a pass last wrote it, as the note says."""
    known = report.properties.get("hygiene") or {}
    total = moves_of(report)
    unread = known.get("unread")
    return total if known.get("reported", True) else total - (unread if isinstance(unread, int) else total)


def unread(report: Node, scope: Initiative) -> int:
    """How many of `report`'s moves no `context` has shown (the last ones)."""
    return moves_of(report) - shown(report, scope)


def unread_notice(report: Node, scope: Initiative) -> str:
    """What `context` says of a report: the moves no earlier `context` showed, under the report's
    first line counting them (a report revised by a later pass holds the week's moves). A body an
    agent revised so that its last lines are not those moves is said whole."""
    lines = (report.body or "").splitlines()
    count = unread(report, scope)
    tail = lines[-count:] if 0 < count < len(lines) else []
    if count >= moves_of(report) or len(tail) != count or not all(line.startswith("- ") for line in tail):
        return report.body or ""
    return "\n".join([REPORT_HEAD.format(count=count), *tail])
