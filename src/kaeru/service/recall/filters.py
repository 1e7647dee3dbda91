"""Recall's filters: what the caller narrows to (`types`, `tags`, `layers`, `branch`) and what is
left out unless asked for (`include_stale`, `include_suppressed`); decisions 17.C1–17.C4.

The caller's `types`, `tags` and `layers` mean what search's `filters` mean (any of the types, any
of the layers, every one of the tags) and are applied twice: inside the channels' text searches (so
the candidates are the best matches *among* the filtered memory, not the filtered part of the best
matches overall) and on every candidate before ranking (graph and temporal neighbours, slots and
names come from elsewhere). `branch`, stale and suppressed memory are decided on the candidates.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import date
from typing import Any, cast

from kaeru.domain.model import Layer, Node
from kaeru.domain.naming import canonical, forms
from kaeru.service.hygiene import REPORT_TAG
from kaeru.service.requests import RecallRequest
from kaeru.service.revise import is_rule
from kaeru.service.rules_in_force import closed_tasks, replaced, rule_applies, scoped_task
from kaeru.storage.base import Initiative, SearchQuery, SearchRow, Session

#: Stale memory: the layers of archived memory (`cold`, `frozen`), which `context` also serves only on request.
STALE = frozenset({Layer.COLD.value, Layer.FROZEN.value})


@dataclass(frozen=True)
class Filters:
    today: date
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    layers: tuple[str, ...] = ()
    branch: str | None = None
    include_stale: bool = False
    include_suppressed: bool = False
    #: Superseded memory asked for (`include_superseded`, `explore_history`): a replaced rule with it.
    include_superseded: bool = False

    @classmethod
    def of(cls, request: RecallRequest, today: date, *, history: bool) -> Filters:
        return cls(
            today=today,
            types=tuple(request.types or ()),
            tags=tuple(canonical(t) for t in request.tags or ()),  # as search's (decision 184)
            layers=tuple(request.layers or ()),
            branch=request.branch,
            # explore_history is about what memory used to say: archived memory belongs to it.
            include_stale=request.include_stale or history,
            include_suppressed=request.include_suppressed,
            include_superseded=request.include_superseded or history,
        )

    @property
    def narrows_search(self) -> bool:
        return bool(self.types or self.tags or self.layers)

    def left_out(
        self, node: Node, closed: frozenset[str] | set[str] = frozenset(), gone: frozenset[str] | set[str] = frozenset()
    ) -> str | None:
        """Why a candidate is left out: `filtered` (types, tags, layers, branch; a hygiene report
        unless its tag is asked for), `stale`, `suppressed`; None when it is kept. `closed`: the
        tasks no longer worked on (`rules_in_force.closed_tasks`), whose rules are not in force;
        `gone`: the rules a newer node replaced (`replaced_rules`)."""
        if REPORT_TAG in node.tags and REPORT_TAG not in self.tags:
            return "filtered"  # hygiene's own report of its moves: no memory of the project's
        if self.types and node.node_type.value not in self.types:
            return "filtered"
        if self.layers and node.layer.value not in self.layers:
            return "filtered"
        if self.tags and not all(any(f in node.tags for f in forms(tag)) for tag in self.tags):
            return "filtered"
        if self.branch is not None:
            recorded = node.properties.get("branch")
            if isinstance(recorded, str) and recorded != self.branch:
                return "filtered"
        if not self.include_stale and node.layer.value in STALE and node.layer.value not in self.layers:
            return "stale"
        if not self.include_suppressed and suppressed(node, self.today, closed, gone):
            return "suppressed"
        return None

    def narrow(self, query: SearchQuery) -> SearchQuery | None:
        """`query` with the caller's types, layers and tags added (None: nothing can match both)."""
        types = _both(query.types, self.types)
        layers = _both(query.layers, self.layers)
        if types is None or layers is None:
            return None
        tags = tuple(dict.fromkeys((*query.tags, *self.tags)))
        return dataclasses.replace(query, types=types, layers=layers, tags=tags)


def closed_scoped_tasks(session: Session, pool: dict[str, Node], scopes: list[Initiative]) -> set[str]:
    """The tasks the rules among `pool` are scoped to that are no longer worked on (closed, forgotten
    or gone): such a rule is suppressed as a released one is (decision 471)."""
    scoped = [t for n in pool.values() if is_rule(n) and (t := scoped_task(n)) is not None]
    return closed_tasks(session, scoped, scopes) if scoped else set()


def replaced_rules(session: Session, pool: dict[str, Node], filters: Filters) -> set[str]:
    """The rules among `pool` a live node supersedes or refutes (`rules_in_force.replaced`): not in
    force, so suppressed as `context` leaves them out — unless superseded memory is asked for
    (`include_superseded`, `explore_history`), where a replaced rule is what was asked."""
    if filters.include_suppressed or filters.include_superseded:
        return set()
    rules = [n for n in pool.values() if is_rule(n)]
    return set(replaced(session, rules)) if rules else set()


def _both(asked: Any, wanted: tuple[str, ...]) -> tuple[str, ...] | None:
    """The values allowed by both lists (an empty list allows every value); None when none is."""
    if not wanted:
        return tuple(asked)
    if not asked:
        return wanted
    kept = tuple(v for v in asked if v in wanted)
    return kept or None


def suppressed(
    node: Node,
    today: date,
    closed: frozenset[str] | set[str] = frozenset(),
    gone: frozenset[str] | set[str] = frozenset(),
) -> bool:
    """Memory its own policy holds back today (decision 17.C3): a rule not in force — released,
    past its `applicability.through`, scoped to a task in `closed` (decision 471), or replaced by a
    newer node (in `gone`; the test `context` applies, `rules_in_force`) — or a node whose
    reminder's `after` has not come yet ("not relevant before `after`")."""
    props = node.properties
    if is_rule(node):
        task = scoped_task(node)
        if node.id in gone or task in closed or not rule_applies(node, today, task):
            return True
    reminder = props.get("reminder")
    after = reminder.get("after") if isinstance(reminder, dict) else None
    return isinstance(after, str) and date.fromisoformat(after) > today


class _Narrowed:
    """A session whose text searches also apply the caller's types, layers and tags; everything else
    is the session's own (the channels are written against `Session` and need not know)."""

    def __init__(self, session: Session, filters: Filters):
        self._session = session
        self._filters = filters

    def search(self, query: SearchQuery) -> tuple[list[SearchRow], int, int]:
        narrowed = self._filters.narrow(query)
        if narrowed is None:
            return [], 0, 0
        return self._session.search(narrowed)

    def newest_in_scope(self, initiative_ids: list[int], limit: int) -> list[str]:
        """The scope's newest memories among those the filters keep: the narrowed search without
        words (the memberships' ranges know no types, tags or layers)."""
        query = SearchQuery(initiative_ids=initiative_ids, omit_superseded=False, window=limit, count_total=False)
        return [r.id for r in self.search(query)[0]]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def narrowed(session: Session, filters: Filters) -> Session:
    """The session the channels search through: `session` itself unless types/tags/layers narrow it."""
    if not filters.narrows_search:
        return session
    return cast(Session, _Narrowed(session, filters))
