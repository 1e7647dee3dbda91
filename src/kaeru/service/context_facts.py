"""`warm`'s standing facts: the notes that say what is true now come before the routine ones.

`warm` showed the layer's newest current notes, by recency alone: a busy session's routine notes
("CI run #39 was green", "Reviewed PR #12") took its places, and the facts an agent came back for —
the port the API listens on now, the library version in use — were in no section of the re-entry
bundle, however little of the budget the chatter left. Two marks tell a fact from chatter without
reading a body: an agent names a note it means to find again (an unnamed note is named by the server
after its first words and its id, `domain.naming.auto_name`), and a node that supersedes another is
the current end of a chain — what the project holds now in place of what it held. `warm` lists those
first, newest first, in at most `FACT_PLACES` of its places, then fills them with the newest of the
rest, so that recent work is still seen there and in `recent`.

Only the names and types of the layer's newest members are read to find them (`member_heads`,
without their bodies), and only `FACT_WINDOW` of them: a fact is found among that many newer notes.
"""

from __future__ import annotations

import re

from kaeru.domain.model import DECISION_TAG, EdgeType, Node, NodeType, Tier
from kaeru.storage.base import Initiative, Session

#: How many of the tier's newest current members are looked at for facts, by name and type only.
FACT_WINDOW = 500
#: At most this many of `warm`'s places go to facts; the rest show its newest notes whatever they are,
#: so that the work of the last session is seen even where the project has many named notes.
FACT_PLACES = 10
#: Types that are work or its bookkeeping, not facts, whatever their names: a task (its own section,
#: or closed), a claim (open ones have their section; a tested one is said by its verdict), a board,
#: an audit record, a saved chain (named by the server after its ends). A task is always named, so it would pass for a fact. A decision is not taken
#: either: `decisions` lists the newest in force, and says how to list the rest (its `filters`); as
#: facts, a project's older decisions would fill `warm` in their place.
NOT_FACTS = (
    NodeType.TASK.value,
    NodeType.HYPOTHESIS.value,
    NodeType.BOARD.value,
    NodeType.AUDIT_EVENT.value,
    NodeType.CHAIN.value,
)


#: The tail of a name the server made (`auto_name`): a dash and six lowercase hex digits of an id.
_AUTO_TAIL = re.compile(r"-[0-9a-f]{6}$")


def given_name(node_id: str, name: str | None) -> bool:
    """Whether `name` was given by the writer, not made by the server (`auto_name`: the body's lowercased
    first words, a dash and the id's last six hex digits). The digits need not be this node's: `evolve`
    (settle, unsettle, a new type) carries the source's name onto its successor, so a settled chat line
    kept the old id's tail and passed for a named fact. A writer's name shaped exactly so (all lowercase,
    ending in six hex digits) is taken for a server's: the cost is a note listed by recency alone."""
    if not name:
        return False
    return not (
        str(name).endswith("-" + node_id.replace("-", "")[-6:]) or (name == name.lower() and _AUTO_TAIL.search(name))
    )


def standing_facts(
    session: Session, scope: Initiative, layer: str, shown: dict[str, Node], cap: int = FACT_PLACES
) -> list[Node]:
    """The `cap` newest current members of the operational `layer` that are named or supersede another
    node, among the tier's `FACT_WINDOW` newest, leaving out those an earlier section shows and the
    types that are not facts. `member_heads` leaves out the members a live member supersedes, as the
    layer sections do; a closed task is not a fact in any case."""
    heads = session.member_heads(scope.id, Tier.OPERATIONAL.value, FACT_WINDOW)
    candidates = [
        (i, name)
        for i, name, kind, of, _pinned, _at, tags in heads
        if of == layer and kind not in NOT_FACTS and DECISION_TAG not in tags and i not in shown
    ]
    unnamed = [i for i, name in candidates if not given_name(i, name)]
    ends = (
        {e.src for e in session.live_edges(unnamed, [EdgeType.SUPERSEDES]) if e.edge_type == EdgeType.SUPERSEDES}
        if unnamed
        else set()
    )
    chosen = [i for i, name in candidates if i in ends or given_name(i, name)][:cap]
    found = session.nodes_by_ids(chosen) if chosen else {}
    return [found[i] for i in chosen if i in found]
