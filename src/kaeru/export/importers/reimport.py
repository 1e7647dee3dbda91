"""What a re-import does with a node or edge an earlier import wrote and kaeru has kept since.

A re-import makes an imported node say what the source now says, and keeps what a person added in
kaeru: the mark (`properties.imported_from`) lists the tags and property keys the import wrote, so a
revision replaces those and keeps the rest (a tag a person added, a property kaeru set). A revision
keeps a node's id and type, so an item the source now gives another type becomes a new node of that
type superseding the old one (`retype`) when the source changed the type; a node someone superseded
in kaeru, or whose type a person changed, keeps its type and the change is said (`type_kept`), the
rest applied.

A task's or claim's status is the source's when the source changed it, else the node's: the mark
records the status the import wrote, so a task a person finished in kaeru stays finished.

An imported edge carries `properties.imported_from = {format}`. One the source no longer says,
between two items the source still has, is retracted: only such an edge, never one a person made
(or linked since: `link` takes the mark off, at the weight it had too). An item a person forgot in
kaeru stays forgotten: its key is found among the initiative's forgotten imported nodes and it is
not written again, whether or not its source changed (`forgotten_kept`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import Edge, Node
from kaeru.service.graph import IMPORT_MARK
from kaeru.service.outcomes import Issue

if TYPE_CHECKING:
    from kaeru.export.importers.core import Item
    from kaeru.service.mutation import WriteContext

#: The property that marks an imported node or edge (and finds the node again on a re-import); a
#: person's `link` of a marked edge takes the mark off (`graph.link`).
MARK = IMPORT_MARK
#: The property keys this package's readers put in `Item.extra`: what an import wrote before its
#: mark listed them (an older kaeru's import), replaced on a re-import as the listed ones are.
EARLIER_KEYS = frozenset({"path", "note_type", "entity_type", "status"})
#: Names a report lists at most.
LISTED = 10


def mark(
    fmt: str, item: Item, tags: list[str], status: str | None = None, node_type: str | None = None
) -> dict[str, Any]:
    """The mark of a node written from `item` with the source's `tags` and `status` (a task's or
    claim's, as the import placed it), and `node_type`: the type the import wrote (`retype`: the
    source changed it when it now says another; a mark copied by `evolve` onto a node of another
    type tells a person's type from the source's); None leaves it out (none known)."""
    found = {"format": fmt, "key": item.key, "sha256": item.digest(), "tags": tags, "properties": sorted(item.extra)}
    if node_type is not None:
        found["type"] = node_type
    return found if status is None else {**found, "status": status}


def status_kept(node: Node, item: Item, source: str | None) -> str | None:
    """The status a re-import gives `node` when the source's is `source`: the source's when it
    differs from the one the last import wrote (the source moved it), else the node's own — a
    person who finished the task in kaeru keeps it finished, as their tags are kept. A mark
    written before it recorded the status: the node's own unless the source states another (a
    page's `status`), so an unchanged open task is not opened again."""
    before = node.properties.get(MARK)
    wrote = before.get("status") if isinstance(before, dict) else None
    if source is None or node.status is None:
        return source
    if wrote is None:
        return source if "status" in item.extra else node.status
    return node.status if wrote == source else source


def moved(properties: dict[str, Any], closing: bool, now: str) -> None:
    """`properties` of a task the import moves to another column, as `task_update` keeps them: one
    moved to a column that closes it has `done_at` (kept, or now), one moved to an open column none
    (it was left on a reopened task)."""
    if closing:
        properties.setdefault("done_at", now)
    else:
        properties.pop("done_at", None)


def revised(
    node: Node, item: Item, status: str | None, *, retyped: bool = False
) -> tuple[list[str], list[str], dict[str, Any], Issue | None]:
    """`node` revised to what `item` says: the source's tags (for the mark), every tag (before the
    derived ones), the properties (the mark aside), and the issue when the source gave it another
    node type (which is kept). `retyped`: for the new node of the item's type that replaces `node`
    (`retype`): the source's kind tag, and none of `node`'s status tags (another type's).

    What the last import wrote (its mark's `tags` and `properties`; an older mark without them: the
    kind tag and `EARLIER_KEYS`) is replaced by the item's; everything else on the node stays. A
    task's or claim's status tag follows its status, as on a first import."""
    before = node.properties.get(MARK)
    before = before if isinstance(before, dict) else {}
    wrote = before.get("tags")
    earlier = set(wrote) if isinstance(wrote, list) else {t for t in node.tags if t.startswith("kind:")}
    keys = before.get("properties")
    written_keys = set(keys) if isinstance(keys, list) else EARLIER_KEYS
    source = list(item.tags)
    issue = None
    if item.node_type != node.node_type and not retyped:
        kinds = [t for t in node.tags if t.startswith("kind:")]
        said = next((t for t in item.tags if t.startswith("kind:")), item.node_type.value)
        source = [*kinds, *(t for t in source if not t.startswith("kind:"))]
        typed = before.get("type")
        why = (
            f"a person made it {_a(node.node_type.value)} in kaeru (`evolve`; the import wrote {_a(typed)})"
            if isinstance(typed, str) and typed != node.node_type.value
            else "something in kaeru already supersedes it (`current_state` names its current version)"
        )
        issue = Issue(
            "type_kept",
            f"{item.origin or item.key}: the source makes {item.name!r} a {item.node_type.value} ({said}); "
            f"the node stays a {node.node_type.value}, with its kind tag: {why}, and the import does not "
            "override a successor or a type a person made (a revision keeps a node's type). The rest of the "
            "source's change is applied",
            "type",
        )
    added = [
        t for t in node.tags if t not in earlier and not ((status is not None or retyped) and t.startswith("status:"))
    ]
    tags = list(dict.fromkeys([*source, *added, *([f"status:{status}"] if status else [])]))
    kept = {k: v for k, v in node.properties.items() if k not in written_keys and k != MARK}
    return source, tags, {**kept, **item.extra}, issue


def made_by(edge: Edge, fmt: str) -> bool:
    """Whether `edge` is one an import of `fmt` wrote (and nobody re-asserted since)."""
    found = edge.properties.get(MARK)
    return isinstance(found, dict) and found.get("format") == fmt


def remove_stale(ctx: WriteContext, fmt: str, mine: set[str], said: set[tuple[str, str, str]]) -> int:
    """Retract the live edges an import of `fmt` wrote between two of `mine` (the nodes of the items
    this source still has) whose key is not `said` (what its links make now); how many."""
    gone = 0
    for edge in ctx.session.live_edges(sorted(mine)):
        if edge.src in mine and edge.dst in mine and made_by(edge, fmt) and edge.key not in said:
            ctx.retract_edge(edge)
            gone += 1
    if not gone:
        ctx.outcome.state = "unchanged"
    return gone


def forgotten(ctx: WriteContext, fmt: str) -> set[str]:
    """The keys of the initiative's nodes imported from `fmt` that were forgotten (retracted while
    in it). Read once an import, and only when an item's key matches no live node: from the current
    rows of the forgotten nodes; reading every past revision of the initiative's nodes to find them
    made a one-item import into a large initiative several times slower."""
    return set(ctx.session.forgotten_marked(ctx.initiative.id, MARK, fmt))


def forgotten_issue(kept: Iterable[tuple[str, str]]) -> Issue | None:
    """The one issue naming the items (origin, name) left out because they were forgotten in kaeru."""
    named = [f"{origin}: {name!r}" for origin, name in kept]
    if not named:
        return None
    shown = listed(named)
    return Issue(
        "forgotten_kept",
        f"{len(named)} item(s) of the source were forgotten in kaeru and stay forgotten (not imported again, "
        f"changed in the source or not; their relations are left out): {shown}. kaeru does not un-forget: "
        "`read` with `at` before the forget shows such a node; an item under another key (an entity's name, "
        "a note's path or id) imports as a new node",
        "path",
    )


def _a(word: str) -> str:
    """`word` with its indefinite article ("an episode", "a concept")."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def listed(named: list[str]) -> str:
    """The first `LISTED` of `named` for an issue's message, "…" when there are more."""
    return "; ".join(named[:LISTED]) + ("; …" if len(named) > LISTED else "")
