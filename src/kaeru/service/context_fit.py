"""`context`'s budget: which sections' nodes the answer's characters go to, and what it says it cut.

The answer lists its sections in the documented order (`requests.reads.SECTIONS`), but the budget is
granted in `PRIORITY` order: what an agent re-entering must not miss first. Granted in section
order, a busy session's routine notes (`warm`) took the budget before the open tasks and claims,
which come after them in the list, and the answer showed notes and no open work. Granted by
priority alone, though, a long first section (open tasks months overdue) took everything the rules
left: when not every section fits, each first gets its leading nodes, within an even share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kaeru.domain.budget import MIN_EXCERPT, cut
from kaeru.domain.model import Node
from kaeru.service.outcomes import Coverage, NodeView, Omission
from kaeru.service.views import build_views
from kaeru.storage.base import Session

CAPS = {
    "hot": 15,
    "decisions": 10,
    "warm": 15,
    "cortex": 30,
    "tasks": 30,
    "claims": 20,
    "reviews": 20,
    "reminders": 20,
    "recent": 10,
    "cold": 30,
    "frozen": 30,
}
ITEM_EXCERPT = 240
#: When the active rules do not all fit the budget, 1 / OTHERS_SHARE of it is kept for the other
#: sections (when they have something to show): all rules first while they fit, else the rules
#: that fit whole in 3/4 (153).
OTHERS_SHARE = 4
#: The order the budget is granted in after the rules (which always come first): where work
#: stands (the slots: the handoff), the open work (tasks, overdue first, then open claims), what
#: was asked to come back today (due reminders), the standing knowledge (core, current decisions)
#: and what of it is doubted (reviews), then what is fresh (hot, warm), what is settled (cortex)
#: and the newest nodes, which mostly repeat hot and warm (recent). Cold and frozen, only shown
#: when named, come last. Reviews come before `warm`: a doubted node is shown in no other section,
#: and once `warm` led with its standing facts (`context_facts`), long named notes took what the
#: budget left and an agent re-entering was not told which of its beliefs await a verdict.
PRIORITY = (
    "slots",
    "tasks",
    "claims",
    "reminders",
    "core",
    "decisions",
    "reviews",
    "hot",
    "warm",
    "cortex",
    "recent",
    "cold",
    "frozen",
)


@dataclass
class Section:
    name: str
    nodes: list[Node]
    total: int
    extra: dict[str, Any] = field(default_factory=dict)
    views: list[NodeView] = field(default_factory=list)
    #: The `search` filters of the query that chose the section (`SearchQuery`'s fields of the same
    #: names), handed on as its `filters` when it leaves nodes out: the text's "all …: search" line.
    listing: dict[str, Any] | None = None
    #: Rules only, without `task`: the rules in force for each open task they are scoped to, by the
    #: task's id, with how to name the task and their count — not delivered (they apply while
    #: working on it), but counted and named (SPEC §1.5, `context_current.waiting_rules`).
    waiting: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: Rules only: how many of the rules `listing` finds do not apply here (released, ended, or scoped
    #: to a task the call did not name), handed on as `filters_not_applying` with the `filters`.
    unapplied: int = 0


def _rank(section: Section) -> int:
    return PRIORITY.index(section.name) if section.name in PRIORITY else len(PRIORITY)


def whole_rules(lengths: list[int], share: int) -> list[int]:
    """The characters granted to the first rules, in their order, when they cannot all fit `share`:
    each whole while it fits, and none after the first that does not (they are left out, counted,
    and listed by the section's `search`). Only a first rule longer than the whole share is cut to
    it, so that a rule too long for any share is still named.

    Every rule once got an equal share, at least `MIN_EXCERPT`: many short rules were each cut to
    their first words, whatever the budget, and a rule cut short says something else ("always sign
    commits before touching area"). A rule is delivered whole or left out (decision 153 revised).
    """
    grants: list[int] = []
    for length in lengths:
        if length > share:
            if not grants:
                grants.append(share)
            break
        grants.append(length)
        share -= length
    return grants


def _candidates(section: Section) -> list[Node]:
    cap = CAPS.get(section.name)
    return section.nodes if cap is None else section.nodes[:cap]


@dataclass
class _Grant:
    """What a section keeps of its capped candidates: always their first nodes, in their order."""

    candidates: list[Node]
    kept: list[Node] = field(default_factory=list)
    bodies: dict[str, tuple[str | None, Any]] = field(default_factory=dict)


def _take(grant: _Grant, remaining: int, share: int | None = None) -> int:
    """Grant the section's next candidates, each cut to `ITEM_EXCERPT`, while the budget lasts (and,
    given a `share`, while each after the first fits what is left of it); returns what is left."""
    spent = 0
    for node in grant.candidates[len(grant.kept) :]:
        length = len(node.body or "")
        allowance = min(length, ITEM_EXCERPT, remaining)
        if length and allowance < min(length, MIN_EXCERPT):
            break
        if share is not None and grant.kept and min(length, ITEM_EXCERPT) > share - spent:
            break
        piece = cut(node.body or "", 0, allowance)
        grant.bodies[node.id] = (piece.text if node.body is not None else None, piece if piece.truncated else None)
        remaining -= len(piece.text)
        spent += len(piece.text)
        grant.kept.append(node)
    return remaining


def _fill(grants: list[_Grant], remaining: int, *, fair: bool) -> None:
    """Grant `remaining` to the sections in `PRIORITY` order. `fair` first gives each section with
    candidates its leading nodes within an even share of `remaining`, at least one while the budget
    lasts; then what is left goes by priority, each section continuing from where its leading nodes
    stopped. What a section does not use of its share goes by priority too, not to the sections
    after it: `recent` mostly repeats `hot` and `warm`, and should not be the one to gain."""
    if fair:
        share = remaining // max(1, sum(1 for grant in grants if grant.candidates))
        for grant in grants:
            remaining = _take(grant, remaining, share)
    for grant in grants:
        remaining = _take(grant, remaining)


def fit(session: Session, sections: list[Section], budget: int, coverage: Coverage) -> None:
    """Cut bodies to the budget: rules first and whole (all of them when they fit; when they cannot
    all fit, those that fit whole in at most 3/4 of the budget, `OTHERS_SHARE`, `whole_rules`), then
    every other section in `PRIORITY` order: all their capped candidates when they fit, else each
    section's leading nodes first and the rest by priority (`_fill`). The omissions are listed in
    the sections' own order."""
    remaining = budget
    rules = sections[0]
    lengths = [len(n.body or "") for n in rules.nodes]
    if sum(lengths) <= remaining:
        grants = lengths
    else:
        # The rules are incomplete whatever is done: they leave the other sections a share, or an
        # agent re-entering a project of many rules (or asking for its tasks) would get nothing else.
        others = any(s.nodes for s in sections[1:])
        grants = whole_rules(lengths, remaining - (remaining // OTHERS_SHARE if others else 0))
    kept_rules = rules.nodes[: len(grants)]
    bodies: dict[str, tuple[str | None, Any]] = {}
    for node, grant in zip(kept_rules, grants, strict=True):
        piece = cut(node.body or "", 0, grant)
        bodies[node.id] = (piece.text if node.body is not None else None, piece if piece.truncated else None)
        remaining -= len(piece.text)
    if len(kept_rules) < len(rules.nodes):
        coverage.rules_complete = False
        coverage.complete = False
        coverage.omitted.append(Omission("rules", len(rules.nodes) - len(kept_rules), "budget"))
    if any(bodies[n.id][1] is not None for n in kept_rules):
        # A rule cut short is not the rule: "always sign commits before touching area" (SPEC §1.5).
        coverage.rules_complete = False
        coverage.complete = False
    rules.views = build_views(session, kept_rules, bodies=bodies)
    ranked = [index for index, _ in sorted(enumerate(sections[1:], 1), key=lambda pair: _rank(pair[1]))]
    granted = {index: _Grant(_candidates(sections[index])) for index in ranked}
    _fill([granted[index] for index in ranked], remaining, fair=False)
    if any(len(grant.kept) < len(grant.candidates) for grant in granted.values()):
        # Granted by priority alone, the first long section (a year's overdue tasks) took all the
        # budget the rules left, and the current decisions, hot and warm facts and reviews were cut
        # whole: each section first gets its leading nodes, then the rest goes by priority.
        granted = {index: _Grant(_candidates(sections[index])) for index in ranked}
        _fill([granted[index] for index in ranked], remaining, fair=True)
    # Said in the answer's order: each section's nodes past its cap, then those the budget left out.
    for index, section in enumerate(sections[1:], 1):
        cap = CAPS.get(section.name)
        candidates = len(section.nodes) if cap is None else min(cap, len(section.nodes))
        beyond = section.total - candidates
        if beyond > 0:
            coverage.omitted.append(Omission(section.name, beyond, "limit"))
            coverage.complete = False
        kept, section_bodies = granted[index].kept, granted[index].bodies
        if len(kept) < candidates:
            coverage.omitted.append(Omission(section.name, candidates - len(kept), "budget"))
            coverage.complete = False
        section.nodes = kept
        section.views = build_views(session, kept, bodies=section_bodies)
