"""What `context` leaves out as no longer current, and the rules it holds back for a task.

The sections of a layer's newest nodes (`hot`, `warm`, `recent`) show current nodes only: a node a
live node of the initiative supersedes, or a closed task, filled `warm`'s places and budget ahead of
current notes. Without `task`, the rules scoped to an open task are not delivered (they apply while
working on it, SPEC §1.5), but they are counted by task so that the answer says they exist.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from kaeru.domain.model import EdgeType, Node, NodeType, Tier
from kaeru.service import tasks
from kaeru.storage.base import Initiative, Session

#: The layers whose nodes `context` offers without being asked (cold and frozen: only by section).
EAGER_LAYERS = ("core", "hot", "warm")
#: The layer sections that show current nodes only (`Stale`), as `recent` does. Core is uncapped
#: and cortex settled: a node is put there on purpose, and shows there marked when superseded;
#: cold (where a slot's previous holder goes) and frozen are read only when named.
CURRENT_ONLY = ("hot", "warm")
#: The most rows `newest_current` reads past the tasks only Python finds closed (`done_at` in an
#: open column, from an old archive): the statement leaves every other stale node out itself.
STALE_WINDOW = 5000
#: At most this many tasks are named in the notice of rules waiting for a task.
WAITING_NAMED = 10


def newest(session: Session, scope: Initiative, facets: list[str] | None, window: int) -> tuple[list[Node], int]:
    """The initiative's newest `window` members of these facets (`<tier>:<layer>`; all: None) and how
    many there are, through the membership index (decision 16.R1) instead of a ranked search."""
    ids, total = session.newest_members(scope.id, facets, window)
    nodes = session.nodes_by_ids(ids)
    return [nodes[i] for i in ids if i in nodes], total


def of_layer(layer: str) -> Callable[[Node], bool]:
    """Whether a node is of the operational `layer` (what that layer's section reads)."""
    return lambda n: n.layer.value == layer and n.tier == Tier.OPERATIONAL


def eager(node: Node) -> bool:
    """Whether a node is of a layer that comes back by itself (what `recent` reads)."""
    return node.layer.value in EAGER_LAYERS


class Stale:
    """Whether a node is no longer current, for the sections that show the newest nodes of a layer:
    one a live node of the initiative supersedes (its successor is the current one: `search` leaves
    it out the same way) or a closed task (in a closing column, or with `done_at`). Shown marked,
    they filled `warm`'s 15 places and budget ahead of current notes. Asked once per node."""

    def __init__(self, session: Session, scope: Initiative):
        self._session = session
        self._scope = scope
        self._cols: list[dict[str, str]] | None = None
        self._known: dict[str, bool] = {}

    @property
    def columns(self) -> list[dict[str, str]]:
        """The initiative's board columns, read once."""
        if self._cols is None:
            self._cols = tasks.columns(self._session, self._scope)
        return self._cols

    def closed(self, node: Node) -> bool:
        """A task that is finished: in one of the board's closing columns, or stamped `done_at`."""
        if node.node_type != NodeType.TASK:
            return False
        return bool(node.properties.get("done_at")) or node.status in tasks.closing_keys(self.columns)

    def among(self, nodes: list[Node]) -> set[str]:
        """The ids of the stale nodes among `nodes`: one query for the verdicts against those not
        asked about yet, one for the nodes that supersede them."""
        ask = [n for n in nodes if n.id not in self._known]
        if ask:
            verdicts = self._session.verdicts_against([n.id for n in ask])
            by = {src for found in verdicts.values() for src, kind in found if kind == EdgeType.SUPERSEDES}
            sources = self._session.nodes_by_ids(list(by)) if by else {}
            inside = {i for i, n in sources.items() if self._scope.id in n.initiatives and not n.retracted}
            for node in ask:
                superseded = any(
                    kind == EdgeType.SUPERSEDES and src in inside for src, kind in verdicts.get(node.id, ())
                )
                self._known[node.id] = superseded or self.closed(node)
        return {n.id for n in nodes if self._known[n.id]}

    def read_current(self, nodes: list[Node]) -> set[str]:
        """The ids of the stale nodes among `nodes`, read by `newest_current_members`, which left the
        superseded ones out: only a task can still be stale (`closed`), which needs no query."""
        dropped = {n.id for n in nodes if self.closed(n)}
        self._known.update((n.id, n.id in dropped) for n in nodes)
        return dropped

    def current(self, node: Node) -> bool:
        """Whether `node` is current (asked of the nodes read so far without a query)."""
        return node.id not in self.among([node])


def newest_current(
    session: Session,
    scope: Initiative,
    facets: list[str],
    cap: int,
    shown: dict[str, Node],
    stale: Stale,
) -> tuple[list[Node], int]:
    """`newest` without the stale nodes (`Stale`), until `cap` current nodes no earlier section
    holds are in hand, and how many current nodes the facets hold (`newest_current_members`).
    The statement leaves the superseded nodes and the tasks in closing columns out however many
    they are; `Stale` then tests the nodes read (a task stamped `done_at` in an open column, from
    an archive written before the board closed its columns), and the window grows past those."""
    # The earlier sections' nodes of these facets may come first: read past them. Whether each is
    # current (the total counts only those) is asked at once.
    held = [n for n in shown.values() if f"{n.tier.value}:{n.layer.value}" in facets]
    stale.among(held)
    window = cap + len(held) + 1
    closing = tasks.closing_keys(stale.columns)
    while True:
        ids, total = session.newest_current_members(scope.id, facets, window, closing)
        # The earlier sections' nodes are in hand, read in this snapshot: only the others are read.
        found = session.nodes_by_ids([i for i in ids if i not in shown])
        nodes = [shown[i] if i in shown else found[i] for i in ids if i in shown or i in found]
        dropped = stale.read_current(nodes)
        fresh = sum(1 for n in nodes if n.id not in dropped and n.id not in shown)
        if fresh >= cap or len(ids) < window or not dropped or window >= STALE_WINDOW:
            break
        window = min(window * 4, STALE_WINDOW)
    return [n for n in nodes if n.id not in dropped], total - len(dropped)


def waiting_rules(
    session: Session, scope: Initiative, counts: dict[str, int], stale: Stale
) -> dict[str, tuple[str, int]]:
    """Of `counts` (the rules in force for each task they are scoped to, by task id), those of
    the tasks still open, each with how to name the task in `context`'s `task` (its name in this
    initiative, else its id). An agent resuming such a task must learn that its rules exist: the
    first `context` said `omitted: []` over a rule of the task in progress. The tasks are read in
    one query; a closed or forgotten task waits for nothing."""
    found = session.nodes_by_ids(list(counts)) if counts else {}
    waiting: dict[str, tuple[str, int]] = {}
    for task_id, count in counts.items():
        node = found.get(task_id)
        if node is not None and not node.retracted and not stale.closed(node):
            named = node.name if scope.id in node.initiatives else json.dumps({"id": node.id})
            waiting[task_id] = (named, count)
    return waiting


def waiting_notice(waiting: dict[str, tuple[str, int]]) -> str:
    """The notice of the rules left out because they apply only while working on a task."""
    rules = sum(count for _, count in waiting.values())
    named = [f"{json.dumps(name, ensure_ascii=False)} ({count})" for name, count in waiting.values()]
    more = f" and {len(named) - WAITING_NAMED} more tasks" if len(named) > WAITING_NAMED else ""
    said = "1 rule applies" if rules == 1 else f"{rules} rules apply"
    return (
        f"{said} only while working on a task and {'is' if rules == 1 else 'are'} not shown, by task: "
        f"{', '.join(named[:WAITING_NAMED])}{more}. Call `context` with `task` set to the task before "
        "working on it (the `tasks` section's `scoped_rules` counts them by task id)."
    )
