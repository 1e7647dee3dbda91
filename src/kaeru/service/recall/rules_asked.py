"""The `rules` channel's candidates: the rules of the searched initiatives, newest first, for a
question about the rules in force ("what rules apply?", "which rules are in force?", "rules") and
for the intents that want them (`apply_preference`, `review_change`).

A rule says what to do, not that it is one: its kind is a tag kept out of the word index (decision
34). So "what rules apply?" found nothing and was said complete, while `context` listed the rule.
The plan adds the channel for such a question as it adds the decisions for "what did we decide?"
(`plans.compile_plan`, `open_work.rules_phrase`, decision 319).

Which rules are in force is not decided here: the channel offers the scope's rules and recall's
filters keep those `rules_in_force` finds in force (active, not past `applicability.through`, of no
closed task: the test `context` applies), counting the others in `coverage.omitted` as
`suppressed` (`include_suppressed` shows them)."""

from __future__ import annotations

from kaeru.domain.model import RULE_TAG, NodeType
from kaeru.storage.base import Session

#: At most this many of a scope's rules are offered, newest first (`Session.rule_ids`).
RULES_READ = 1000
#: The ids of at most this many rules of an initiative are read, to count those not offered (ids
#: only, through the partial index: no rule decoded); past it the count is a floor.
RULES_COUNTED = 50 * RULES_READ


def scope_rules(session: Session, scope_ids: list[int]) -> tuple[list[str], int]:
    """The rules of the searched initiatives, newest first, read as `context` reads them (the
    partial index of rules, the tag tested on the decoded nodes); and how many of their rules were
    not offered, past the first `RULES_READ` of an initiative (counted, not decoded: the count said
    in `coverage.omitted`; an initiative of exactly `RULES_READ` rules leaves none out). Which are
    in force is the filters' to say."""
    found: dict[str, None] = {}  # an id of several searched initiatives, once
    past: set[str] = set()
    for scope_id in scope_ids:
        ids = session.rule_ids(scope_id, RULES_COUNTED)
        found.update(dict.fromkeys(ids[:RULES_READ]))
        past.update(ids[RULES_READ:])
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
    return [n.id for n in rules], len(past - found.keys())
