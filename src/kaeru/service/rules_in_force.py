"""Whether a rule is in force: one test for `context`, `recall`, `reflect`, `search` and `read`.

A rule is in force while it is current (no live node supersedes or falsifies it: replaced the way
`note`'s `link_to` says, it stayed among the rules to follow, marked "superseded by" its own
successor, `replaced`), active, its `applicability.through` day has not passed, and the task it is
scoped to (if any) is open. `context` held back the rule of a dropped task while `recall`,
which tested `constraint_state` and `through` only, still ranked it among the rules to follow
under `apply_preference` (decision 471). A task is closed as `context` tells it
(`context_current.Stale.closed`: a closing column of its board, or `done_at`); one forgotten or gone
leaves nothing to work on either.

`search` and `read` show every rule they find, in force or not (a listing of the memory, not of what
to follow), and say of each rule not in force why, by the same test (`not_in_force`): after a
holiday freeze had ended, `search "deploy freeze"` and `read rule-freeze` showed it as any rule in force.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import date

from kaeru.domain.currentness import decide
from kaeru.domain.model import RULE_TAG, Currentness, Node, NodeType
from kaeru.service import grants
from kaeru.service.context_current import Stale
from kaeru.service.outcomes import Issue
from kaeru.storage.base import Initiative, Session


def rule_applies(node: Node, today: date, task_id: str | None) -> bool:
    """An active rule applies unless its `through` date has passed or it is scoped to another task."""
    props = node.properties
    if props.get("constraint_state", "active") != "active":
        return False
    applicability = props.get("applicability") or {}
    through = applicability.get("through")
    if through and date.fromisoformat(through) < today:
        return False
    scoped = applicability.get("task")
    return not (scoped and scoped != task_id)


def replaced(session: Session, rules: Iterable[Node]) -> dict[str, list[str]]:
    """Of `rules`, those no longer current by `currentness.decide` over the live verdicts against
    them (across initiatives, SPEC 1.2), each with the ids of its successors (none: refuted). Read
    in one query; `Session.rule_ids` leaves these out unless asked for them."""
    found = {r.id: r for r in rules}
    verdicts = session.verdicts_against(list(found)) if found else {}
    out: dict[str, list[str]] = {}
    for rule_id, against in verdicts.items():
        rule = found[rule_id]
        state, successors = decide(rule.node_type, rule.status, rule.retracted, against)
        if state in (Currentness.SUPERSEDED, Currentness.REFUTED):
            out[rule_id] = successors if state == Currentness.SUPERSEDED else []
    return out


def scoped_task(rule: Node) -> str | None:
    """The id of the task `rule` applies to while it is worked on (None: every task)."""
    applicability = rule.properties.get("applicability")
    scoped = applicability.get("task") if isinstance(applicability, dict) else None
    return scoped if isinstance(scoped, str) and scoped else None


def closed_tasks(
    session: Session, task_ids: Iterable[str], scopes: list[Initiative], found: Mapping[str, Node] | None = None
) -> set[str]:
    """Of `task_ids`, those no longer worked on: forgotten or gone, or closed on the board of the
    first of `scopes` holding the task (else of the first initiative holding it). The tasks are
    read in one query (none when the caller read them: `found`), each board once."""
    wanted = list(dict.fromkeys(task_ids))
    if found is None:
        found = session.nodes_by_ids(wanted) if wanted else {}
    boards: dict[int, Stale] = {}
    others: dict[int, Initiative] | None = None
    closed: set[str] = set()
    for task_id in wanted:
        task = found.get(task_id)
        if task is None or task.retracted:
            closed.add(task_id)
            continue
        home = next((s for s in scopes if s.id in task.initiatives), None)
        if home is None and task.initiatives:
            if others is None:
                others = {i.id: i for i in session.all_initiatives()}
            home = others.get(task.initiatives[0])
        if home is None:
            continue
        if home.id not in boards:
            boards[home.id] = Stale(session, home)
        if boards[home.id].closed(task):
            closed.add(task_id)
    return closed


def not_in_force(
    session: Session, nodes: Iterable[Node], today: Callable[[], date], scopes: list[Initiative]
) -> list[Issue]:
    """A `not_in_force` issue for each rule among `nodes` that `context` would not give as in force
    today (`replaced`, `rule_applies` on its own task, `closed_tasks`), saying why and what to do. `today` is
    asked only when a rule is shown; the tasks of the rules scoped to one are read in one query, the
    boards once each: nothing is read for a page without rules."""
    rules = [n for n in nodes if n.node_type == NodeType.CONCEPT and RULE_TAG in n.tags and not n.retracted]
    if not rules:
        return []
    day = today()
    scoped = list(dict.fromkeys(t for r in rules if (t := scoped_task(r)) is not None))
    found = session.nodes_by_ids(scoped) if scoped else {}
    closed = closed_tasks(session, scoped, scopes, found) if scoped else set()
    # A rule may be scoped to a task of another initiative: a token limited to the rule's learns
    # nothing of that task, not its name nor what became of it (decision 15.K2).
    granted = grants.granted_ids(session) if scoped else None
    gone = replaced(session, rules)
    # A successor outside a limited token's grants is not named, as the rule's view leaves it out of
    # `successors` (the rule still reads superseded: decision 15.K2).
    hidden = grants.hidden_ids(session, (s for successors in gone.values() for s in successors))
    issues: list[Issue] = []
    for rule in rules:
        task_id = scoped_task(rule)
        if rule.id not in gone and rule_applies(rule, day, task_id) and task_id not in closed:
            continue
        task = found.get(task_id) if task_id else None
        if rule.id in gone:  # settled first: reviving or extending a replaced rule would not bring it back
            why, said, remedy = _replaced(gone[rule.id], hidden)
        else:
            why, said, remedy = _why(rule, day, task, task is None or grants.node_visible(task, granted))
        issues.append(
            # Starts `rule <id> is not in force (<why>)`, `why` free of parentheses: the compact text
            # writes it on the rule's own line (`mcp/render.py`), as NodeData has no field for it.
            Issue(
                "not_in_force",
                f"rule {rule.id} is not in force ({why}): {rule.name!r} {said}. Do not follow it (`context` "
                f"lists the rules in force){remedy}",
            )
        )
    return issues


def _why(rule: Node, today: date, task: Node | None, seen: bool) -> tuple[str, str, str]:
    """Why `rule` is not in force: a short reason (no parentheses), what happened, what to do.
    `seen`: whether the caller may see `task`; if not, only that it is closed is said."""
    state = rule.properties.get("constraint_state", "active")
    if state != "active":
        return "released", f"was released (constraint_state {state})", "; if it applies again, `revise` it active."
    through = (rule.properties.get("applicability") or {}).get("through")
    if through and date.fromisoformat(through) < today:
        return (
            f"ended {through}",
            f"applied through {through} and today is {today.isoformat()}",
            "; to extend it, `revise` its applicability.",
        )
    task_id = scoped_task(rule)
    if not seen:
        return "its task is closed", "applied while its task was worked on, and that task is closed", "."
    if task is None or task.retracted:
        return "its task was forgotten", f"applied while task {task_id} was worked on, which was forgotten", "."
    status = task.status or "closed"
    return (
        f"its task is {status}",
        f"applied while task {task.name!r} ({task.id}) was worked on, and that task is {status}",
        "; if the work goes on, `task_update` the task open again.",
    )


def _replaced(successors: list[str], hidden: set[str]) -> tuple[str, str, str]:
    """Why a rule a live verdict replaced is not in force (`replaced`), in `_why`'s form: the
    successors are named once, in what happened (the rule's line already says whom it is superseded
    by), but for those in `hidden` (outside the token's grants), which are not named at all."""
    if not successors:
        return "refuted", "was refuted (a live node falsifies it)", "."
    shown = [s for s in successors if s not in hidden]
    if not shown:
        return "superseded", "was superseded", "."
    named = ", ".join(shown)
    return "superseded", f"was superseded by {named}", f"; `read` {named}, which replaced it."
