"""A question about the rules in force ("what rules apply?", "which rules are in force?", "rules")
brings back the rules, as one about decisions brings back the decisions (decision 319).

A rule says what to do, not that it is one: its kind is a tag kept out of the word index (decision
34). So "what rules apply?" found nothing and was said complete, while `context` listed the rule.
Asked alone (`open_work.asked_alone`), the plan gains the `rules` channel at the weight of the
decisions listed for their question; asked beside words of a subject ("what rules apply to
deployments?"), the words' hits lean toward rules, as decisions do (`plans.LEANING`).

Which rules are in force is not decided here: the channel offers the scope's rules and recall's
filters keep those `rules_in_force` finds in force (active, not past `applicability.through`, of no
closed task: the test `context` applies), counting the others in `coverage.omitted` as
`suppressed` (`include_suppressed` shows them)."""

from __future__ import annotations

import dataclasses
import hashlib
import json

from kaeru.domain.model import RULE_TAG, NodeType
from kaeru.domain.plans import CHANNELS, LEANING, ChannelPlan, Plan, Risk
from kaeru.storage.base import Session

#: The rules channel's weight when the question asks for the rules alone: that of the decisions
#: listed for "what did we decide?" (decision 319).
LISTED = 0.9
#: At most this many of a scope's rules are offered, newest first (`Session.rule_ids`).
RULES_READ = 1000


def with_rules(plan: Plan, phrase: str, alone: bool, disabled: frozenset[str] = frozenset()) -> Plan:
    """`plan` for a query whose `phrase` asks which rules are in force: the `rules` channel at
    `LISTED` when it is asked `alone`, else `kind:rule` leaned on by `LEANING`; `plan` itself
    without a phrase, under `explore_history` (every version, not what holds) or `risk: high`
    beside words (no list added to a strict answer's words)."""
    if not phrase or plan.intent == "explore_history" or (plan.risk == Risk.HIGH.value and not alone):
        return plan
    said = f"the query asks which rules are in force: {phrase!r}"
    channels = list(plan.channels)
    tag_priors = dict(plan.tag_priors)
    if alone:
        if "rules" in disabled:
            return plan
        channels = [c for c in channels if c.name != "rules"]
        channels.append(ChannelPlan("rules", LISTED, f"the rules in force, newest first ({said})"))
    else:
        if "priors" in disabled:
            return plan
        tag_priors["kind:rule"] = round(tag_priors.get("kind:rule", 1.0) * LEANING, 4)
        if not any(c.name == "priors" for c in channels):
            channels.append(ChannelPlan("priors", 1.0, f"{said}, and about its words"))
    channels.sort(key=lambda c: CHANNELS.index(c.name))
    changed = dataclasses.replace(
        plan, channels=tuple(channels), tag_priors=dict(sorted(tag_priors.items())), plan_hash=""
    )
    digest = hashlib.sha256(json.dumps(changed.to_json(), sort_keys=True).encode()).hexdigest()[:16]
    return dataclasses.replace(changed, plan_hash=digest)


def scope_rules(session: Session, scope_ids: list[int]) -> tuple[list[str], bool]:
    """The rules of the searched initiatives, newest first, read as `context` reads them (the
    partial index of rules, the tag tested on the decoded nodes); whether some initiative held more
    than `RULES_READ` (the rest not offered). Which are in force is the filters' to say."""
    found: dict[str, None] = {}  # an id of several searched initiatives, once
    more = False
    for scope_id in scope_ids:
        ids = session.rule_ids(scope_id, RULES_READ)
        more = more or len(ids) >= RULES_READ
        found.update(dict.fromkeys(ids))
    nodes = session.nodes_by_ids(list(found))
    rules = [
        nodes[i]
        for i in found
        if i in nodes
        and nodes[i].node_type == NodeType.CONCEPT
        and RULE_TAG in nodes[i].tags
        and not nodes[i].retracted
    ]
    rules.sort(key=lambda n: n.seq, reverse=True)
    return [n.id for n in rules], more
