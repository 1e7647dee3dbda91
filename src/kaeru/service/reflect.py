"""`reflect`: the maintenance work-list of an initiative, each item with the exact call that fixes it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from kaeru.domain.currentness import decide
from kaeru.domain.model import (
    DECISION_TAG,
    NOTE_KIND_TYPES,
    Currentness,
    Edge,
    EdgeType,
    HypothesisStatus,
    Layer,
    Node,
    NodeType,
    NoteKind,
    Tier,
)
from kaeru.domain.similar import same_project
from kaeru.domain.timefmt import fmt
from kaeru.errors import UnknownInitiative
from kaeru.service import grants, tasks
from kaeru.service.checks import normalise_initiative
from kaeru.service.graph import Walk, strongest_path
from kaeru.service.hygiene import replacements
from kaeru.service.open_reviews import open_reviews, reviews_after
from kaeru.service.outcomes import Coverage, Omission
from kaeru.service.revise import is_rule
from kaeru.service.rules_in_force import rule_applies
from kaeru.service.runtime import Runtime
from kaeru.service.supersession import Fork, fork_finding, forks
from kaeru.storage.base import Initiative, SearchQuery, Session

if TYPE_CHECKING:
    from kaeru.service.requests import ReflectRequest

SETTLE_AGE = timedelta(days=14)
LIMIT = 25
#: How many orphans and dangling edges are read, so that what is past LIMIT is counted exactly.
SCAN = 5000
#: How far an overdue task's fix moves its due date: a week from the user's today, so that a task
#: still unfinished then is listed again soon, not dropped from view; the fix says the date, and an
#: agent that knows a better one sends that instead (closing a task is the user's call, never a fix).
DEFER = timedelta(days=7)
#: Claims whose evidence has decided them: old enough, they are archived as other finished memory is.
SETTLED_CLAIMS = (HypothesisStatus.SUPPORTED.value, HypothesisStatus.REFUTED.value)
#: A decision is a note of kind `decision`, an episode tagged `kind:decision`.
DECIDED_TYPE = NOTE_KIND_TYPES[NoteKind.DECISION]
#: The tag every task carries (`tasks.task`, `evolve`).
TASK_TAG = "kind:task"
#: The layers `context` brings back by themselves: what `orphan` and `archivable` ask about.
IN_CONTEXT = (Layer.CORE.value, Layer.HOT.value, Layer.WARM.value)


@dataclass
class ReflectItem:
    kind: str
    message: str
    node: str | None = None
    name: str | None = None
    fix: dict[str, Any] | None = None


@dataclass
class ReflectOutcome:
    initiative: str
    items: list[ReflectItem]
    counts: dict[str, int]
    coverage: Coverage
    issues: list[Any] = field(default_factory=list)


def reflect(rt: Runtime, request: ReflectRequest) -> ReflectOutcome:
    name = normalise_initiative(request.initiative)
    now = rt.now()
    today = rt.today()
    items: list[ReflectItem] = []
    counts: dict[str, int] = {}

    def add(
        kind: str, message: str, fix: dict[str, Any] | None, node_id: str | None = None, node_name: str | None = None
    ) -> None:
        counts[kind] = counts.get(kind, 0) + 1
        if counts[kind] <= LIMIT:
            items.append(ReflectItem(kind, message, node_id, node_name, fix))

    with rt.store.read() as session:
        scope = session.initiative_by_name(name)
        if scope is None:
            from kaeru.service.former_names import unknown_hint

            raise UnknownInitiative(f"no initiative named {name!r}{unknown_hint(session, name)}", field="initiative")
        base = {"initiative": scope.name}
        # Newest first, as `context` lists them; `reviews_after`: only the page after that node.
        reviews = open_reviews(session, scope)
        if request.reviews_after is not None:
            for target, edges in reviews_after(session, scope, reviews, request.reviews_after):
                add(*_review(base, target, edges))
            return _outcome(scope.name, _granted_items(session, items), counts)
        cols = tasks.columns(session, scope)
        terminal = tasks.terminal_key(cols)
        rows, _, _ = session.search(
            SearchQuery(
                initiative_ids=[scope.id],
                types=[NodeType.TASK.value],
                statuses=tasks.open_keys(cols),
                window=5000,
            )
        )
        open_tasks = session.nodes_by_ids([r.id for r in rows])
        in_force = _in_force(session, scope, today, set(open_tasks))
        # Oldest first; only the nodes shown are read (decision 16.R2). Saved chains are never
        # orphans; hygiene's own episodes are left out of the list and the count, tested on the
        # orphans' own rows (80). Nor is memory in force: `context` delivers it by its kind, not
        # through links, and "forget it" would drop a rule, a decision or open work. A decision
        # with no live edge has no verdict against it, so it is current: its tag alone tells.
        # A task is no orphan either, open or closed: its board is its frame, and "forget it" would drop
        # the record of work done (an old finished one is offered as `archivable`). Told by its
        # `kind:task` tag, on the orphans' own rows like the episodes'.
        # Nor is a cold or frozen node: it is already out of context (hygiene cooled it, or the agent
        # did), so "link it or forget it" asked again of settled chatter, oldest first, and a year in
        # the 25 listed were all from its first month; `archivable` asks of the same layers only.
        unless = ((DECIDED_TYPE.value, NodeType.TASK.value), ("kind:hygiene", DECISION_TAG, TASK_TAG))
        orphan_ids = session.orphans([scope.id], SCAN, unless=unless, layers=IN_CONTEXT)
        orphan_ids = [i for i in orphan_ids if i not in in_force]
        nodes = session.nodes_by_ids(orphan_ids[:LIMIT])
        for node in (nodes[i] for i in orphan_ids[:LIMIT] if i in nodes):
            add(
                "orphan",
                f"{node.name!r} is linked to nothing: link it to what it is about, or forget it",
                {
                    "tool": "link",
                    "arguments": {
                        **base,
                        "from": node.id,
                        "to": "<related node>",
                        "edge_type": "refers_to",
                        "weight": 0.5,
                    },
                },
                node.id,
                node.name,
            )
        if len(orphan_ids) > LIMIT:
            counts["orphan"] = counts.get("orphan", 0) + len(orphan_ids) - LIMIT
        for target, edges in reviews:
            add(*_review(base, target, edges))
        for fork in forks(session, scope.id):  # two current versions of one thing (decision 462)
            if hidden := grants.hidden_ids(session, [h.id for h in fork.heads]):
                # A limited token is told of the versions it may see, and of a fork only where two remain:
                # one counted then dropped by `_granted_items` said that a hidden superseder exists.
                fork = Fork(fork.node, [h for h in fork.heads if h.id not in hidden])
            if len(fork.heads) > 1:
                add("forked_supersession", *fork_finding(fork, base), fork.node.id, fork.node.name)
        moved = (today + DEFER).isoformat()
        # Most overdue first (then oldest): the first `LIMIT` are the ones listed, and in storage order
        # a task due yesterday was listed while tasks months late were only counted.
        late = [
            t
            for t in open_tasks.values()
            if t.properties.get("due") and date.fromisoformat(t.properties["due"]) < today
        ]
        for task in sorted(late, key=lambda t: (t.properties["due"], t.seq)):
            due = task.properties["due"]
            add(
                "overdue_task",
                f"task {task.name!r} was due {due} and is still open: if it is finished, set its "
                f"status to {terminal!r}; if not, move its due date (the fix moves it a week, to {moved})",
                {"tool": "task_update", "arguments": {**base, "task": task.id, "due": moved}},
                task.id,
                task.name,
            )
        rows, _, _ = session.search(SearchQuery(initiative_ids=[scope.id], types=[NodeType.CHAIN.value], window=500))
        for chain in session.nodes_by_ids([r.id for r in rows]).values():
            members = chain.properties.get("chain", {}).get("members") or []
            if len(members) < 2:
                continue
            walk = Walk()
            found = strongest_path(session, members[0], members[-1], {scope.id}, walk=walk)
            if walk.cut:  # stopped at its bound: neither "no path" nor "another path" is known (decision 413)
                continue
            if found is None:  # no path left: saving it again would be refused (decision 310)
                add(
                    "stale_chain",
                    f"chain {chain.name!r} has no path any more: forget it (or link its nodes again and save it)",
                    {"tool": "forget", "arguments": {**base, "node": chain.id, "reason": "its path no longer exists"}},
                    chain.id,
                    chain.name,
                )
            elif found[0] != members:
                add(
                    "stale_chain",
                    f"chain {chain.name!r} no longer matches the strongest path: save it again",
                    {"tool": "link", "arguments": {**base, "action": "chain", "from": members[0], "to": members[-1]}},
                    chain.id,
                    chain.name,
                )
        # A saved chain has its own item (`stale_chain`); a board is the tasks' frame, not knowledge.
        structure = {NodeType.CHAIN.value, NodeType.BOARD.value}
        # Canonical timestamps are fixed width: text order is time order (`timefmt.fmt`).
        settled_before = fmt(now - SETTLE_AGE)
        # Newest first, read as heads (id, name, type, layer, pin, time, tags), not whole nodes (16.R2);
        # only the old, finished, unpinned ones are asked whether anything refers to them (80). A
        # finished task or a decided claim is old by its last change (its status), as a note is.
        old = [
            (node_id, node_name, layer, tags)
            for node_id, node_name, node_type, layer, pinned, recorded_at, tags in session.member_heads(
                scope.id, Tier.OPERATIONAL.value, SCAN
            )
            if node_type not in structure
            and node_id not in in_force
            and "kind:hygiene" not in tags
            and not pinned
            and recorded_at <= settled_before
        ]
        current = _current(session, DECIDED_TYPE, [node_id for node_id, _, _, tags in old if DECISION_TAG in tags])
        settled = [(node_id, node_name, layer) for node_id, node_name, layer, _ in old if node_id not in current]
        referred = session.linked(
            [node_id for node_id, _, _ in settled],
            [e.value for e in EdgeType if e not in (EdgeType.SUPERSEDES, EdgeType.CONTRADICTS, EdgeType.FALSIFIES)],
        )
        # A current replacement is what the project knows now: hygiene keeps it (`replacements`).
        unreferred = [node_id for node_id, _, layer in settled if node_id not in referred and layer != "cold"]
        kept = _current(session, DECIDED_TYPE, list(replacements(session, unreferred)))
        for node_id, node_name, layer in settled:
            if node_id in kept:
                continue
            if node_id in referred:
                add(
                    "settle_candidate",
                    f"{node_name!r} is settled knowledge others rely on: settle it into the archive",
                    {"tool": "evolve", "arguments": {**base, "mode": "settle", "source": node_id}},
                    node_id,
                    node_name,
                )
            elif layer in IN_CONTEXT:
                add(
                    "archivable",
                    f"{node_name!r} is old and nothing refers to it: move it out of context",
                    {"tool": "layer", "arguments": {**base, "nodes": [node_id], "layer": "cold"}},
                    node_id,
                    node_name,
                )
        for edge in session.dangling_edges([scope.id], SCAN):
            if edge.edge_type == EdgeType.CONSOLIDATED_TO:
                continue  # a settle's record: its source is retracted on purpose (decision 310)
            add(
                "dangling_reference",
                f"{edge.edge_type.value} edge {edge.src} → {edge.dst} points at a forgotten node",
                {
                    "tool": "link",
                    "arguments": {
                        **base,
                        "action": "remove",
                        "from": {"id": edge.src},
                        "to": {"id": edge.dst},
                        "edge_type": edge.edge_type.value,
                    },
                },
            )
        # `same_project`, not `suggest`: a merge is no did-you-mean.
        for close in same_project(scope.name, _merge_candidates(session, scope)):
            add(
                "near_duplicate_initiative",
                f"{close!r} looks like the same project as {scope.name!r}: merge them",
                {"tool": "initiative", "arguments": {"initiative": close, "action": "merge", "to": scope.name}},
            )
        items[:] = _granted_items(session, items)
    return _outcome(scope.name, items, counts)


def _review(base: dict[str, Any], target: Node, edges: list[Edge]) -> tuple[str, str, dict[str, Any], str, str]:
    """An `open_review` item: the node under review, how many doubts, and the close that resolves it."""
    message = f"{target.name!r} is under review ({len(edges)} doubt(s)): resolve and close it"
    return (
        "open_review",
        message,
        {"tool": "review", "arguments": {**base, "action": "close", "target": target.id}},
        target.id,
        target.name,
    )


def _outcome(name: str, items: list[ReflectItem], counts: dict[str, int]) -> ReflectOutcome:
    """The work-list, each kind past `LIMIT` counted as left out."""
    coverage = Coverage(initiatives=[name])
    for kind, count in counts.items():
        if count > LIMIT:
            coverage.complete = False
            coverage.omitted.append(Omission(kind, count - LIMIT, "limit"))
    return ReflectOutcome(name, items, counts, coverage)


def _merge_candidates(session: Session, scope: Initiative) -> list[str]:
    """The names `reflect` compares with the scope's for a merge (`near_duplicate_initiative`):
    every other initiative's for a caller who sees them all, read as names alone; for a token
    limited to some initiatives, only its granted ones that exist — a merge it could not make is
    never suggested, and its grants are a few names where the vault may hold thousands, so only
    their rows are read (`grants.granted_ids`)."""
    granted = grants.granted_ids(session)
    if granted is None:
        return [name for name in session.initiative_name_list() if name != scope.name]
    return list(session.initiative_names(sorted(granted - {scope.id})).values())


def _granted_items(session: Session, items: list[ReflectItem]) -> list[ReflectItem]:
    """The items a token limited to some initiatives may see: none naming a node outside them (decision 15.K2)."""
    if grants.granted_ids(session) is None:
        return items
    mentioned = [grants.mentioned_ids([it.message, it.node, it.fix]) for it in items]
    visible = grants.visible_ids(session, {n for ids in mentioned for n in ids})
    return [it for it, ids in zip(items, mentioned, strict=True) if ids <= visible]


def _in_force(session: Session, scope: Initiative, today: date, open_tasks: set[str]) -> set[str]:
    """The scope's memory still in force, which `reflect` never offers to archive, settle or forget
    (decisions aside: the caller tests the ones it reads, by their tag): the rules `context` would
    deliver for some task (not released, not past `through`: `context.rule_applies`), the claims
    not yet supported or refuted that nothing falsifies or supersedes (`currentness.decide`), the
    slots' holders (`context` shows them whatever their layer), and `open_tasks`. Each kind is read
    through its own bounded query (the rules' partial index, the claims' status), never by reading
    the scope's members (decisions 16.R2, 80)."""
    rules = session.nodes_by_ids(session.rule_ids(scope.id, SCAN))
    found = {
        i
        for i, rule in rules.items()
        if is_rule(rule) and rule_applies(rule, today, (rule.properties.get("applicability") or {}).get("task"))
    }
    claims, _, _ = session.search(
        SearchQuery(
            initiative_ids=[scope.id],
            types=[NodeType.HYPOTHESIS.value],
            statuses=[s.value for s in HypothesisStatus if s.value not in SETTLED_CLAIMS],
            window=SCAN,
            count_total=False,
        )
    )
    found |= _current(session, NodeType.HYPOTHESIS, [r.id for r in claims])
    found.update(s.node_id for s in session.slots_of(scope.id) if s.node_id)
    return found | open_tasks


def _current(session: Session, node_type: NodeType, node_ids: list[str]) -> set[str]:
    """Which of `node_ids` (of `node_type`, status not refuted) are current by `currentness.decide`
    over the live verdicts against them: nothing supersedes or falsifies them."""
    verdicts = session.verdicts_against(node_ids) if node_ids else {}
    return {i for i in node_ids if decide(node_type, None, False, verdicts.get(i, ()))[0] == Currentness.CURRENT}
