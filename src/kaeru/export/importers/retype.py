"""A re-imported item whose source now gives it another node type: a new node superseding the old.

A revision keeps a node's type (SPEC: `revise`), so a note whose front matter went `type: decision`
→ `type: note` cannot be revised into a note: the import writes a new node of the new type that
supersedes the old one, as `evolve` mode `supersede` does — in the chunk's one transaction, the old
node kept as history (`read` of its id: superseded, its successor named). The new node carries the
source's text, tags and properties and the import's mark, and what a person added to the old node
in kaeru (its tags and properties, as a revision keeps them: `reimport.revised`), its initiatives
and the slots it held. The old node loses the mark (its earlier revision keeps it), so the next
import finds the item's node by its key alone, and a person forgetting the new node leaves the item
forgotten rather than found again in the old one.

Edges: those the import wrote (`reimport.made_by`) are the source's links, which it now says of the
new node: moved onto it (retracted from the old one), so the import's links find them in place. An
edge a person made stays where they made it, as `supersede` leaves a superseded node's edges: it
reaches the item's current version through the supersession (`current_state`, `read`'s
`successors`), and kaeru does not rewrite what a person linked.

A node something already supersedes in kaeru is not replaced again (a second successor would fork
its current version): it keeps its type and is revised, and `type_kept` says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaeru.domain.model import Node, NodeType
from kaeru.export.importers import reimport
from kaeru.export.importers.reimport import LISTED, MARK
from kaeru.service import tasks
from kaeru.service.evolve import DROPPED_FAMILIES, NOT_CARRIED, hand_on_slots
from kaeru.service.outcomes import Issue
from kaeru.service.supersession import ahead_of, supersede_the_current

if TYPE_CHECKING:
    from kaeru.export.importers.core import Item
    from kaeru.service.mutation import WriteContext


def possible(ctx: WriteContext, node: Node, item: Item) -> bool:
    """Whether `item` gives `node` another type and `node` can be replaced by one of it: nothing
    supersedes it yet."""
    return item.node_type != node.node_type and not ahead_of(ctx.session, node.id).superseded


def replace(
    ctx: WriteContext, fmt: str, node: Node, item: Item, status: str | None, cols: list[dict[str, str]]
) -> Node:
    """The new node of `item`'s type that supersedes `node` (row-locked by the caller), written with
    `status` (the new type's, as a first import places it; `cols`: the board, read for a task)."""
    source, tags, properties, _ = reimport.revised(node, item, status, retyped=True)
    # What the old node had beyond the source's tags, as `evolve` carries them: not its derived or
    # status tags (written again for the new node), nor a `due:` of another type's.
    tags = [t for t in tags if t in source or t == f"status:{status}" or not t.startswith(DROPPED_FAMILIES)]
    properties = {k: v for k, v in properties.items() if k not in NOT_CARRIED}
    if isinstance(reminder := properties.get("reminder"), dict) and "seen" in reminder:
        properties["reminder"] = {k: v for k, v in reminder.items() if k != "seen"}
    if not (item.node_type == NodeType.TASK and status in tasks.closing_keys(cols)):
        properties.pop("done_at", None)  # a finished task's, or one no longer a task
    # The old node first lets go of the item (its earlier revision keeps the mark).
    old = ctx.update_node(node, properties={k: v for k, v in node.properties.items() if k != MARK})
    new = ctx.create_node(
        node_type=item.node_type,
        body=item.body,
        name=item.name,
        description=node.description,
        tags=tags,
        layer=item.layer,
        tier=item.tier,
        status=status,
        properties={**properties, MARK: reimport.mark(fmt, item, source, status)},
        initiatives=tuple(dict.fromkeys((*node.initiatives, ctx.initiative.id))),
    )
    _move_imported_edges(ctx, fmt, old, new)
    supersede_the_current(ctx, new, old, 1.0, "path")
    hand_on_slots(ctx, old, new)
    ctx.mark_affected(ctx.session.get_node(old.id) or old)
    return new


def _move_imported_edges(ctx: WriteContext, fmt: str, old: Node, new: Node) -> None:
    """The live edges an import of `fmt` wrote on `old`, both ways, moved onto `new` with their
    weight and properties (labels, mark)."""
    for edge in ctx.session.live_edges([old.id]):
        if not reimport.made_by(edge, fmt):
            continue
        outgoing = edge.src == old.id
        other_id = edge.dst if outgoing else edge.src
        other = new if other_id == old.id else ctx.session.get_node(other_id)
        ctx.retract_edge(edge)
        if other is None or other.retracted:
            continue
        src, dst = (new, other) if outgoing else (other, new)
        ctx.add_edge(src, dst, edge.edge_type, edge.weight, edge.properties)


def said(changed: list[tuple[str, str, str, str]]) -> Issue | None:
    """The one issue naming the items (origin, name, old type, new type) replaced by a node of the
    type their source now gives."""
    named = [f"{origin}: {name!r} {before} → {after}" for origin, name, before, after in changed]
    if not named:
        return None
    shown = "; ".join(named[:LISTED]) + ("; …" if len(named) > LISTED else "")
    return Issue(
        "type_changed",
        f"{len(named)} item(s) of the source now have another node type: each is a new node of that type that "
        f"supersedes the old one (a revision keeps a node's type), carrying the source's text and what a person "
        f"added; the old node stays in history, and links a person made to it reach the new one through the "
        f"supersession (`current_state`): {shown}",
        "type",
    )
