"""`context`: the re-entry bundle an agent loads at the start of every session.

Rules come first, always, and `coverage.rules_complete` is true only when every active applicable
rule is in the answer whole. Every section that was capped or cut by the budget is listed in
`coverage.omitted` with a count and a reason, and a rule whose body was cut to the budget is named in
a `budget_truncated` warning, so nothing is dropped silently.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import DECISION_TAG, RULE_TAG, EdgeType, Node, NodeType, Tier
from kaeru.domain.timefmt import parse_ts
from kaeru.errors import UnknownInitiative
from kaeru.service import grants, hygiene, tasks
from kaeru.service.checks import normalise_initiative
from kaeru.service.context_current import (
    CURRENT_ONLY,
    EAGER_LAYERS,
    Stale,
    eager,
    newest,
    newest_current,
    of_layer,
    waiting_notice,
    waiting_rules,
)
from kaeru.service.context_facts import standing_facts
from kaeru.service.context_fit import CAPS, Section, fit
from kaeru.service.mutation import run_mutation
from kaeru.service.open_reviews import open_reviews
from kaeru.service.outcomes import Coverage, Issue, Omission
from kaeru.service.reminders import not_yet, record_seen, reminder_due, seen_day
from kaeru.service.requests.reads import ON_REQUEST, SECTIONS
from kaeru.service.resolve import resolve_node
from kaeru.service.rules_in_force import replaced, rule_applies
from kaeru.service.runtime import Runtime
from kaeru.storage.base import Initiative, SearchQuery, Session

if TYPE_CHECKING:
    from kaeru.service.requests import ContextRequest

RECENT_FACETS = [f"{tier.value}:{layer}" for tier in Tier for layer in EAGER_LAYERS]
#: Typed sections claim their nodes in this order. A due reminder comes first: it is delivered (and
#: its window started) in `reminders` whatever its node is, which returns after the window (82).
CLAIM_FIRST = ("reminders", "slots", "tasks", "claims", "reviews")


@dataclass
class ContextOutcome:
    initiative: str
    today: str
    task: str | None
    sections: list[Section]
    coverage: Coverage
    notices: list[str] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)


def _open_work(
    session: Session, scope: Initiative, window: int = 5000, *, claims: bool = False, **filters: Any
) -> tuple[list[Node], int]:
    """The scope's current nodes matching `filters`: one superseded (its successor is listed, 294) or
    falsified (376; not an open claim: that still awaits its verdict) is not open work or in force."""
    rows, total, _ = session.search(SearchQuery(initiative_ids=[scope.id], window=window, **filters))
    nodes = session.nodes_by_ids([r.id for r in rows])
    verdicts = session.verdicts_against(list(nodes))
    refuted = set() if claims else {i for i, v in verdicts.items() if any(k == EdgeType.FALSIFIES for _, k in v)}
    return [nodes[r.id] for r in rows if r.id in nodes and r.id not in refuted], total - len(refuted)


def _gather(
    session: Session, scope: Initiative, wanted: list[str], today: date, task_id: str | None, attention: list[Node]
) -> list[Section]:
    sections: list[Section] = []
    #: The nodes an earlier section shows (or deliberately hides: inactive rules), by id.
    shown: dict[str, Node] = {}
    #: Per capped section: how many nodes were held when it had claimed its own, and which of the
    #: nodes claimed after it its query matches (None: only its own fetched nodes can be told).
    after: dict[str, tuple[int, Any]] = {}

    def add(
        name: str,
        nodes: list[Node],
        total: int | None = None,
        matches: Any = None,
        hidden: int = 0,
        listing: dict[str, Any] | None = None,
        **extra: Any,
    ) -> None:
        """A section of `nodes` (the first of `total` matches). Nodes an earlier section holds are
        left to it; only those within the section's cap are claimed, so a node the cap leaves out
        can still appear in a later section. The section's total counts only the matches no earlier
        section holds: `matches(node)` tells which earlier nodes the section's query also matches
        (else those among `nodes` are subtracted); `hidden` matches are never shown (boards…)."""
        fresh = [n for n in nodes if n.id not in shown and n.node_type not in (NodeType.BOARD, NodeType.AUDIT_EVENT)]
        cap = CAPS.get(name)
        shown.update((n.id, n) for n in (fresh if cap is None else fresh[:cap]))
        if cap is not None:
            after[name] = (len(shown), matches)
        if total is None:
            held = len(nodes) - len(fresh)
        else:
            own = {f.id for f in fresh}
            earlier = [n for i, n in shown.items() if i not in own]
            boards = sum(1 for n in nodes if n.node_type in (NodeType.BOARD, NodeType.AUDIT_EVENT))
            held = (sum(1 for n in earlier if matches(n)) if matches else len(nodes) - len(fresh) - boards) + boards
            held += hidden
        sections.append(
            Section(
                name,
                fresh,
                max(len(fresh), (total if total is not None else len(nodes)) - held),
                extra,
                listing=listing,
            )
        )

    # Rules through their partial index, the tag tested on the decoded nodes (decision 16.R1).
    # The replaced rules too (`rules_in_force.replaced`): not in force, yet still kept out of the
    # layer sections below, as a released one is.
    rule_ids = session.rule_ids(scope.id, 5000, with_replaced=True)
    loaded = session.nodes_by_ids(rule_ids)
    listing: dict[str, Any] | None = {"types": [NodeType.CONCEPT.value], "tags": [RULE_TAG]}
    rule_nodes = [
        loaded[i]
        for i in rule_ids
        if i in loaded and loaded[i].node_type == NodeType.CONCEPT and RULE_TAG in loaded[i].tags
    ]
    gone = replaced(session, rule_nodes)
    rules = [n for n in rule_nodes if n.id not in gone and rule_applies(n, today, task_id)]
    rules.sort(key=lambda n: n.seq)
    add("rules", rules, listing=listing)
    # No search filter says "in force" (`rule_applies`): the listing also finds the rules that do not
    # apply here, and says how many. Withheld when any did, it left the rules the budget left out
    # (whole rules, so more of them) with a count and no way to read them. A superseded rule is not
    # counted: the listing (search) leaves it out for its successor.
    superseded = sum(1 for successors in gone.values() if successors)
    sections[0].unapplied = len(rule_nodes) - len(rules) - superseded
    stale = Stale(session, scope)
    if task_id is None:  # the rules in force for each task they are scoped to, by its id
        counts: dict[str, int] = {}
        for rule in rule_nodes:
            scoped = (rule.properties.get("applicability") or {}).get("task")
            if scoped and rule.id not in gone and rule_applies(rule, today, scoped):
                counts[scoped] = counts.get(scoped, 0) + 1
        sections[0].waiting = waiting_rules(session, scope, counts, stale)
    # Rules that do not apply (replaced, released, expired, other task) are never shown as ordinary notes either.
    shown.update((n.id, n) for n in rule_nodes)
    # Nor is a reminder before its `after` ("not relevant" till then, SPEC 1.6; `recall` holds it back,
    # 17.C3), once the typed sections have shown their open work: claimed unseen, counted by none.
    pending = [n for n in attention if not_yet(n, today)]
    withheld: set[str] = set()
    # Typed sections claim their nodes before the layer sections do; the output keeps display order.
    for name in sorted(wanted, key=lambda n: (n not in CLAIM_FIRST, CLAIM_FIRST.index(n) if n in CLAIM_FIRST else 0)):
        if name == "rules":
            continue
        if name not in CLAIM_FIRST and pending:
            withheld.update(n.id for n in pending if n.id not in shown)
            shown.update((n.id, n) for n in pending if n.id in withheld)
            pending = []
        if name == "slots":
            states = [s for s in session.slots_of(scope.id) if s.node_id]
            holders = session.nodes_by_ids([s.node_id for s in states if s.node_id])
            live = [holders[s.node_id] for s in states if s.node_id in holders and not holders[s.node_id].retracted]
            # A holder whose reminder is due is shown under `reminders`; `holders` still names it. A
            # node holding two slots is shown once (it was listed, and paid for, twice).
            live = list({n.id: n for n in live if n.id not in shown}.values())
            sections.append(Section("slots", live, len(live), {"holders": {s.slot: s.node_id for s in states}}))
            shown.update((n.id, n) for n in live)
        elif name in ("core", "hot", "warm", "cold", "frozen"):
            facets = [f"{Tier.OPERATIONAL.value}:{name}"]
            match = of_layer(name)
            if name in CURRENT_ONLY:
                # The earlier sections' nodes its total counts: those of its layer, less the stale ones read.
                nodes, total = newest_current(session, scope, facets, CAPS[name], shown, stale)
                if name == "warm":  # the named notes and the current ends of chains first (`context_facts`)
                    facts = standing_facts(session, scope, name, shown)
                    nodes = list({n.id: n for n in (*facts, *nodes)}.values())
                add(name, nodes, total, lambda n, match=match: match(n) and stale.current(n))
            else:
                window = 5000 if name == "core" else CAPS[name] + len(shown) + 1
                nodes, total = newest(session, scope, facets, window)
                add(name, nodes, total, match)
        elif name == "decisions":
            # What was decided and is in force, newest first, ahead of `warm`'s routine notes (319).
            window = CAPS["decisions"] + len(shown) + 1
            listing = {"tags": [DECISION_TAG], "layers": list(EAGER_LAYERS)}
            nodes, total = _open_work(session, scope, window, **listing)
            add("decisions", nodes, total, _DecisionsMatched(session), listing=listing)
        elif name == "cortex":
            # Capped: only the nodes within the cap (and those earlier sections hold) can be claimed.
            window = CAPS["cortex"] + len(shown) + 1
            nodes, total = newest(session, scope, [f"{Tier.ARCHIVAL.value}:{x}" for x in ("core", "hot")], window)
            add("cortex", nodes, total, lambda n: n.layer.value in ("core", "hot") and n.tier == Tier.ARCHIVAL)
        elif name == "tasks":
            cols = stale.columns
            listing = {"types": [NodeType.TASK.value], "statuses": tasks.open_keys(cols)}
            nodes, open_total = _open_work(session, scope, **listing)
            overdue = [n for n in nodes if n.properties.get("due") and date.fromisoformat(n.properties["due"]) < today]
            overdue.sort(key=lambda n: (n.properties["due"], n.seq))
            late = {n.id for n in overdue}  # by id: a list's `in` compared whole nodes, n² of them
            rest = [n for n in nodes if n.id not in late]
            rest.sort(key=lambda n: (n.properties.get("due") or "9999-12-31", -n.seq))
            # `total` counts the open tasks no other section shows (one node, one section: the newest
            # can be in `warm` or `recent`); `open_total` is every open task of the board.
            late_ids = [n.id for n in overdue]
            add(
                "tasks",
                overdue + rest,
                len(nodes),
                listing=listing,
                overdue=late_ids,
                columns=cols,
                open_total=open_total,
            )
            if waiting := sections[0].waiting:  # which open tasks have rules that apply while on them
                sections[-1].extra["scoped_rules"] = {n.id: waiting[n.id][1] for n in nodes if n.id in waiting}
        elif name == "claims":
            listing = {"types": [NodeType.HYPOTHESIS.value], "statuses": ["open"]}
            nodes, total = _open_work(session, scope, claims=True, **listing)
            add(
                "claims",
                nodes,
                total,
                lambda n: n.node_type == NodeType.HYPOTHESIS and n.status == "open",
                listing=listing,
            )
        elif name == "reviews":
            reviews = open_reviews(session, scope)
            nodes = [node for node, _ in reviews]
            add("reviews", nodes, len(nodes), reasons={node.id: [e.src for e in edges] for node, edges in reviews})
        elif name == "reminders":
            due = [n for n in attention if reminder_due(n, today, seen_day(scope, n, today))]
            due.sort(key=lambda n: (n.properties["reminder"]["after"], n.seq))
            add("reminders", due, len(due))
        elif name == "recent":
            # The newest nodes of the layers that come back by themselves: a cold or frozen node
            # comes back only when its section is named, however new it is.
            nodes, total = newest_current(session, scope, RECENT_FACETS, CAPS["recent"], shown, stale)
            reports = sum(1 for n in nodes if REPORT_TAG in n.tags)
            add(
                "recent",
                [n for n in nodes if REPORT_TAG not in n.tags],
                total,
                lambda n: eager(n) and stale.current(n),
                reports,
            )
    # A node a section's cap left out but a later section shows is not left out.
    held = list(shown.values())
    stale.among([n for n in held if eager(n)])  # whether each is current, asked at once for the totals below
    for section in sections:
        if section.name in after:
            mark, matches = after[section.name]
            later = [n for n in held[mark:] if n.id not in withheld]
            if matches is not None:
                section.total -= sum(1 for n in later if matches(n))
            else:
                claimed = {n.id for n in later}
                section.total -= sum(1 for n in section.nodes[CAPS[section.name] :] if n.id in claimed)
    order = {name: i for i, name in enumerate(wanted)}
    return [sections[0], *sorted(sections[1:], key=lambda sec: order.get(sec.name, len(order)))]


REPORT_TAG = hygiene.REPORT_TAG


class _DecisionsMatched:
    """Which nodes the `decisions` section's query matches — a decision of an eager layer no live
    node supersedes or falsifies — for the nodes other sections show: a superseded one shown in
    `hot` was subtracted from a total that never counted it (session 38). Read once a node."""

    def __init__(self, session: Session):
        self._session = session
        self._ended: dict[str, bool] = {}

    def __call__(self, node: Node) -> bool:
        if DECISION_TAG not in node.tags or node.layer.value not in EAGER_LAYERS:
            return False
        if node.id not in self._ended:
            verdicts = self._session.verdicts_against([node.id]).get(node.id, [])
            self._ended[node.id] = any(kind in (EdgeType.SUPERSEDES, EdgeType.FALSIFIES) for _, kind in verdicts)
        return not self._ended[node.id]


def _attention(session: Session, scope: Initiative) -> list[Node]:
    """The live members that may hold a reminder or a hygiene report, oldest first, through the
    partial index `nodes_attention` (decision 16.R1); callers test their properties."""
    ids = session.attention_ids([scope.id])
    nodes = session.nodes_by_ids(ids)
    return [nodes[i] for i in ids if i in nodes]


def _name_only_what_is_shown(sections: list[Section], cut: set[str]) -> None:
    """The ids a section's extras name, cut to the nodes the bundle shows, with their full count: the
    overdue tasks and the slots' holders listed every one whatever the budget (2,000 overdue tasks
    made an 87 KB answer that showed 30 of them; 1,000 slots a 50,000-character line). A section in
    `cut` (one that left nodes out) names the `search` filters that list them all."""
    shown = {v.node.id for section in sections for v in section.views}
    for section in sections:
        if section.listing is not None and section.name in cut:
            section.extra["filters"] = section.listing
            section.extra.update({"filters_not_applying": section.unapplied} if section.unapplied else {})
        if section.name == "tasks" and "overdue" in section.extra:
            overdue = section.extra["overdue"]
            section.extra["overdue"] = [i for i in overdue if i in shown]
            section.extra["overdue_total"] = len(overdue)
            if "scoped_rules" in section.extra:
                scoped = {i: n for i, n in section.extra.pop("scoped_rules").items() if i in shown}
                section.extra.update({"scoped_rules": scoped} if scoped else {})
        elif section.name == "slots" and "holders" in section.extra:
            holders = section.extra["holders"]
            section.extra["holders"] = {slot: i for slot, i in holders.items() if i in shown}
            section.extra["slots_total"] = len(holders)


def context(rt: Runtime, request: ContextRequest, actor: str) -> ContextOutcome:
    """Build the re-entry bundle; stamps first sight of due reminders and runs hygiene when enabled,
    neither for a read-only token: a person's glance would start a reminder's window (decision 365)."""
    name = normalise_initiative(request.initiative)
    budget = request.budget_chars
    requested = request.sections
    wanted = list(SECTIONS)
    if requested:
        wanted = ["rules", *[s for s in (*SECTIONS, *ON_REQUEST) if s in requested and s != "rules"]]
    notices: list[str] = []
    writes = (principal := grants.current()) is None or not principal.read_only  # decision 365
    if rt.settings.hygiene and writes:
        with suppress(UnknownInitiative):
            run_hygiene(rt, name, automatic=True)
    today = rt.today()
    with rt.store.read() as session:
        scope = session.initiative_by_name(name)
        if scope is None:
            from kaeru.service.former_names import unknown_hint

            raise UnknownInitiative(f"no initiative named {name!r}{unknown_hint(session, name)}", field="initiative")
        task_id: str | None = None
        issues: list[Issue] = []
        if request.task is not None:
            asked = tasks.require_task(resolve_node(session, request.task, scope, "task"), "task")
            task_id, issues = asked.id, _closed_task(session, scope, asked)
        attention = _attention(session, scope)
        sections = _gather(session, scope, wanted, today, task_id, attention)
        coverage = Coverage(initiatives=[scope.name])
        fit(session, sections, budget, coverage)
        issues += _rules_cut(sections[0], budget)
        _name_only_what_is_shown(sections, {o.section for o in coverage.omitted})
        _blocked_by(session, sections)
        if grants.granted_ids(session) is not None:
            # What a token limited to some initiatives may see: no node outside them (decision 15.K2).
            named = set().union(*(grants.mentioned_ids(s.extra) for s in sections))
            named.update(v.node.id for s in sections for v in s.views)
            visible = grants.visible_ids(session, named)
            for section in sections:
                section.extra = grants.scrub(section.extra, visible)
                section.views = [v for v in section.views if v.node.id in visible]
        waiting = sections[0].waiting
        if waiting and grants.granted_ids(session) is not None:
            # A task outside the grants cannot be named in `task`: its rules wait for no call of this token.
            seen = grants.visible_ids(session, list(waiting))
            waiting = {i: w for i, w in waiting.items() if i in seen}
        if waiting:
            # Left out by rule, as `search` leaves superseded hits out: `complete` and `rules_complete`
            # keep their meaning (every rule that applies without a task is here), the omission and
            # the notice say which rules wait for which task.
            coverage.omitted.append(Omission("rules", sum(c for _, c in waiting.values()), "task_scoped"))
            notices.append(waiting_notice(waiting))
        attention.sort(key=lambda n: -n.seq)
        reports = [
            n
            for n in attention
            if REPORT_TAG in n.tags
            and n.node_type != NodeType.AUDIT_EVENT
            and "hygiene" in n.properties
            and hygiene.unread(n, scope) > 0
        ]
        to_stamp = [
            v.node.id for s in sections if s.name == "reminders" for v in s.views if not seen_day(scope, v.node, today)
        ]
        reminding = {n.id: n.properties["reminder"]["after"] for n in attention if "reminder" in n.properties}
    # Hygiene's report is marked shown by a whole re-entry only: a look at some sections (the web
    # viewer's board and rules pages, which show no notices) left the agent's next re-entry without it.
    # Marked shown up to the moves read here (a pass appending since leaves its own unread), for
    # every agent of the vault: the first re-entry to show a move is the only one to say it.
    shown = {r.id: hygiene.moves_of(r) for r in reports} if not requested and writes else {}
    if writes and (to_stamp or shown):
        record_seen(rt, name, {i: reminding[i] for i in to_stamp}, shown, today.isoformat(), actor)
    notices.extend(hygiene.unread_notice(r, scope) for r in reports)
    return ContextOutcome(name, today.isoformat(), task_id, sections, coverage, notices, issues)


def _blocked_by(session: Session, sections: list[Section]) -> None:
    """`blocked_by` of the tasks section: for each task shown that an open task blocks (a `blocks`
    edge from the blocker), {blocker id: name}. Two queries for all the tasks shown (`blocking`),
    which leaves out the blockers a limited token may not read: the grants' scrub below drops their
    ids, yet left `{task: {}}`, a blocker outside the grants said all the same."""
    for section in sections:
        if section.name == "tasks" and section.views:
            from kaeru.service.blocking import open_blockers  # imported when first needed (16.S1)

            found = open_blockers(session, [v.node.id for v in section.views], section.extra["columns"])
            section.extra.update({"blocked_by": found} if found else {})


def _closed_task(session: Session, scope: Initiative, task: Node) -> list[Issue]:
    """A `task_closed` warning when the `task` a `context` is for is closed: its rules are given as
    asked, and without a word an agent took the task for work still to do."""
    if task.node_type != NodeType.TASK:
        return []
    cols = tasks.columns(session, scope)
    if task.status not in tasks.closing_keys(cols) and "done_at" not in task.properties:
        return []
    said = (
        f"task {task.name!r} is closed ({task.status!r}): the rules scoped to it are given as asked, but no work "
        "on it is open; `task_update` it to an open column if it is not finished"
    )
    return [Issue("task_closed", said, "task")]


def _rules_cut(rules: Section, budget: int) -> list[Issue]:
    """A `budget_truncated` warning naming the rule whose body was cut to the budget (only a first
    rule longer than the rules' whole share is, `context_fit.whole_rules`): not delivered whole, so
    `rules_complete` is false, and nothing said which (decision 459)."""
    cut_rules = [v.node for v in rules.views if v.body_range is not None]
    if not cut_rules:
        return []
    named = ", ".join(f"{n.name!r} ({n.id})" for n in cut_rules[:5]) + (", …" if len(cut_rules) > 5 else "")
    said = f"{len(cut_rules)} rule(s) cut to fit budget_chars={budget}: {named}; `read` them whole"
    return [Issue("budget_truncated", said, "budget_chars")]


#: How often `context` runs a hygiene pass by itself (`KAERU_HYGIENE=1`), per initiative: its
#: rules count days, so the re-entry call pays for a pass at most once an hour (decision 84).
AUTOMATIC_HYGIENE_EVERY = timedelta(hours=1)
#: The initiative property that records when `context` last ran one.
HYGIENE_AT = "hygiene_at"


def run_hygiene(rt: Runtime, initiative: str, *, automatic: bool = False) -> list[hygiene.Move]:
    """One hygiene pass as its own transaction; its report surfaces once, in the next `context`.
    `automatic` (from `context`): skipped when the last automatic pass of the initiative was less
    than `AUTOMATIC_HYGIENE_EVERY` ago, which a read tells without opening a write."""
    moved: list[hygiene.Move] = []
    if automatic:
        with rt.store.read() as session:
            scope = session.initiative_by_name(normalise_initiative(initiative))
        last = scope.properties.get(HYGIENE_AT) if scope is not None else None
        # A last pass "in the future" was stamped by a clock that ran ahead: run now, or hygiene
        # would stay off until that date came round.
        if isinstance(last, str) and timedelta(0) <= rt.now() - parse_ts(last) < AUTOMATIC_HYGIENE_EVERY:
            return moved

    def body(ctx: Any) -> None:
        if automatic:
            properties = {**ctx.initiative.properties, HYGIENE_AT: ctx.now_s}
            ctx.session.set_initiative_properties(ctx.initiative.id, properties)
        moves = hygiene.apply_pass(ctx)
        if not moves:
            ctx.outcome.state = "unchanged"
        moved[:] = moves  # a run again (`run_mutation`) reports its own moves, not both runs'

    run_mutation(
        rt,
        operation="hygiene",
        initiative=initiative,
        request_id=None,
        args={},
        actor="hygiene",
        body=body,
        create=False,
        exclusive=True,  # it rewrites the initiative's properties, as `record_seen` does
    )
    return moved
