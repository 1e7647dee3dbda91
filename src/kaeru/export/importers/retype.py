"""A re-imported item whose source now gives it another node type: a new node superseding the old.

A revision keeps a node's type (SPEC: `revise`), so a note whose front matter went `type: decision`
→ `type: note` cannot be revised into a note: the import writes a new node of the new type that
supersedes the old one, as `evolve` mode `supersede` does — in the chunk's one transaction, the old
node kept as history (`read` of its id: superseded, its successor named). The new node carries the
source's text, tags and properties and the import's mark, and what a person added to the old node
in kaeru (its tags and properties, as a revision keeps them: `reimport.revised`), its initiatives
and the slots it held. The old node loses the mark (its earlier revision keeps it), and so does any
older version still holding it (`evolve` copies the mark to a successor), so the next import finds
the item's node by its key alone, and a person forgetting the new node leaves the item forgotten
rather than found again in an older version.

Edges: those the import wrote (`reimport.made_by`) are the source's links, which it now says of the
new node: moved onto it (retracted from the old one), so the import's links find them in place. An
edge a person made stays where they made it, as `supersede` leaves a superseded node's edges: it
reaches the item's current version through the supersession (`current_state`, `read`'s
`successors`), and kaeru does not rewrite what a person linked.

Only a type the source changed is followed: the mark records the type the import wrote, and the
node is replaced when the source now says another and the node still has that type. A node whose
type a person changed in kaeru (`evolve` supersede with `new_type` copies the mark to the new node)
keeps it while it differs from the one the import wrote, and a node something already supersedes in
kaeru is not replaced again: the import does not override a successor or a type a person made. Both are revised in place
and `type_kept` says so. A mark written before it recorded the type: the source's type is compared
with the node's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaeru.domain.model import Node, NodeType
from kaeru.export.importers import reimport
from kaeru.export.importers.reimport import MARK, listed
from kaeru.service.evolve import carried_properties, carried_tags, hand_on_slots
from kaeru.service.outcomes import Issue
from kaeru.service.supersession import ahead_of, supersede_the_current

if TYPE_CHECKING:
    from kaeru.export.importers.core import Item
    from kaeru.service.mutation import WriteContext


def recorded(node: Node) -> str | None:
    """The node type the import wrote, as `node`'s mark records it (None: a mark from before it did)."""
    found = node.properties.get(MARK)
    typed = found.get("type") if isinstance(found, dict) else None
    return typed if isinstance(typed, str) else None


def possible(ctx: WriteContext, node: Node, item: Item) -> bool:
    """Whether the source changed `item`'s type and `node` can be replaced by one of it: the item's
    type is not the one the import wrote (the node's own, for a mark that does not record it), the
    node still has the type the import wrote (not one a person gave it), and nothing supersedes it."""
    wrote = recorded(node) or node.node_type.value
    return (
        item.node_type.value != wrote
        and node.node_type.value == wrote
        and not ahead_of(ctx.session, node.id).superseded
    )


def written(node: Node, item: Item) -> str | None:
    """The type a revision of `node` from `item` records in the mark: the item's when the node has it,
    else the one recorded before (the import did not write the type the node keeps)."""
    return item.node_type.value if node.node_type == item.node_type else recorded(node)


def replace(
    ctx: WriteContext, fmt: str, node: Node, item: Item, status: str | None, cols: list[dict[str, str]]
) -> Node:
    """The new node of `item`'s type that supersedes `node` (row-locked by the caller), written with
    `status` (the new type's, as a first import places it; `cols`: the board, read for a task)."""
    source, tags, properties, _ = reimport.revised(node, item, status, retyped=True)
    # What the old node had beyond the source's tags, as `evolve` carries them: not its derived or
    # status tags (written again for the new node), nor a `due:` of another type's; a task placed in
    # a closing column has `done_at`.
    kept = set(carried_tags(tags))
    tags = [t for t in tags if t in source or t == f"status:{status}" or t in kept]
    properties = carried_properties(properties, item.node_type, status, cols, ctx.now_s)
    if item.node_type != NodeType.TASK:
        properties.pop("done_at", None)  # a finished task's, on a node no longer a task
    # The old node first lets go of the item (its earlier revision keeps the mark), and so does any
    # older node still holding it (`evolve` copies the mark to a successor): a person forgetting the
    # new node leaves the item forgotten, not found again in an older version.
    for holder in _holders(ctx, fmt, item.key, node.id):
        _unmark(ctx, holder)
    old = _unmark(ctx, node)
    new = ctx.create_node(
        node_type=item.node_type,
        body=item.body,
        name=item.name,
        description=node.description,
        tags=tags,
        layer=item.layer,
        tier=item.tier,
        status=status,
        properties={**properties, MARK: reimport.mark(fmt, item, source, status, item.node_type.value)},
        initiatives=tuple(dict.fromkeys((*node.initiatives, ctx.initiative.id))),
    )
    _move_imported_edges(ctx, fmt, old, new)
    supersede_the_current(ctx, new, old, 1.0, "path")
    hand_on_slots(ctx, old, new)
    ctx.mark_affected(ctx.session.get_node(old.id) or old)
    return new


def _holders(ctx: WriteContext, fmt: str, key: str, but: str) -> list[Node]:
    """The initiative's live nodes other than `but` holding the mark of `key` from `fmt`."""
    found = ctx.session.nodes_with_property([ctx.initiative.id], MARK)
    return [
        n
        for n in ctx.session.nodes_by_ids(found).values()
        if n.id != but
        and not n.retracted
        and isinstance(mark := n.properties.get(MARK), dict)
        and (mark.get("format"), mark.get("key")) == (fmt, key)
    ]


def _unmark(ctx: WriteContext, node: Node) -> Node:
    """`node` (row-locked here) without the import's mark."""
    locked = ctx.session.get_node(node.id, for_update=True) or node
    return ctx.update_node(locked, properties={k: v for k, v in locked.properties.items() if k != MARK})


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
    shown = listed(named)
    return Issue(
        "type_changed",
        f"{len(named)} item(s) of the source now have another node type: each is a new node of that type that "
        f"supersedes the old one (a revision keeps a node's type), carrying the source's text and what a person "
        f"added; the old node stays in history, and links a person made to it reach the new one through the "
        f"supersession (`current_state`): {shown}",
        "type",
    )
