"""Writing a batch's links as edges: one edge per (from, to, edge type), labelled with every name
the source gives that relation.

The labels of a relation are gathered over the whole source before any chunk writes (`labels_of`):
the memory server appends relations as they are said, so `E0 → E1 "knows"` and, thousands of lines
later, `E0 → E1 "mentors"` are one edge labelled both. Gathered per chunk, each chunk wrote its own
labels over the last one's: such an edge was revised on every import and kept only the last label.
An edge is written once an import, where its first link falls.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import Edge, EdgeType
from kaeru.export.importers import reimport
from kaeru.export.importers.reimport import MARK
from kaeru.service.outcomes import Issue

if TYPE_CHECKING:
    from kaeru.export.importers.core import Link, Report, _Known
    from kaeru.service.mutation import WriteContext

#: The weight of an imported link: the sources say nothing of how load-bearing it is.
LINK_WEIGHT = 0.5

#: A relation as the source names it: (from key, to key, edge type).
Relation = tuple[str, str, EdgeType]


def labels_of(links: Iterable[Link]) -> dict[Relation, list[str]]:
    """Every label the source gives each relation, in the order it first says them."""
    out: dict[Relation, list[str]] = {}
    for link in links:
        said = out.setdefault((link.src, link.dst, link.edge_type), [])
        if link.label and link.label not in said:
            said.append(link.label)
    return out


def write_links(ctx: WriteContext, imported: _Known, links: list[Link], ids: dict[str, str], report: Report) -> None:
    """Write the edges of `links` (one chunk of the batch's): added, given the source's labels, or
    left as they are; a link to an item not written (missing, forgotten) or to itself is skipped
    and said."""
    fmt = imported.format
    missing = [link for link in links if link.src not in ids or link.dst not in ids]
    if missing:
        for key, node in imported.of(ctx).items():
            ids.setdefault(key, node.id)
    order: list[tuple[str, str, EdgeType, list[str]]] = []
    for link in links:
        src, dst = ids.get(link.src), ids.get(link.dst)
        if src is None or dst is None:
            gone = link.src if src is None else link.dst
            why = (
                f"{gone!r} is forgotten in kaeru"
                if gone in imported.kept_keys or imported.forgotten(ctx, gone)
                else f"no item {gone!r} to link"
            )
            report.issues.append(Issue("link_skipped", f"{link.origin}: {why}", "links"))
            continue
        if src == dst:
            report.issues.append(
                Issue("link_skipped", f"{link.origin}: a relation from {link.src!r} to itself is not kept", "links")
            )
            continue
        if (src, dst, link.edge_type.value) in imported.said:
            continue  # written already, with every label the source gives it
        imported.said.add((src, dst, link.edge_type.value))
        order.append((src, dst, link.edge_type, imported.labels.get((link.src, link.dst, link.edge_type), [])))
    added = 0
    for src, dst, edge_type, wanted in order:
        previous = ctx.session.get_edge(src, dst, edge_type)
        live = previous if previous is not None and not previous.retracted else None
        known_labels = live.properties.get("relations", []) if live is not None else []
        # An edge this import wrote has the source's labels; one it did not (a person's link, or an
        # older kaeru's import) keeps its weight and labels, the source's added beside them.
        theirs = live is not None and not reimport.made_by(live, fmt)
        labelled = sorted({*known_labels, *wanted}) if theirs else sorted(set(wanted))
        weight = live.weight if live is not None and theirs else LINK_WEIGHT
        if live is not None and live.weight == weight and sorted(known_labels) == labelled:
            report.edges_unchanged += 1
            continue
        recorded = ctx._stamp(previous.recorded_at if previous else None)
        properties: dict[str, Any] = dict(live.properties) if live is not None else {MARK: {"format": fmt}}
        properties.pop("relations", None)
        if labelled:
            properties["relations"] = labelled
        ctx.put_edge(
            Edge(
                src=src,
                dst=dst,
                edge_type=edge_type,
                weight=weight,
                rev_no=(previous.rev_no + 1) if previous else 1,
                recorded_at=recorded,
                created_at=previous.created_at if previous and not previous.retracted else recorded,
                properties=properties,
            )
        )
        ctx.changes_log.append({"edge": [src, dst, edge_type.value], "weight": weight})
        if live is not None:
            report.edges_revised += 1
        else:
            report.edges_added += 1
        added += 1
    if not added:
        ctx.outcome.state = "unchanged"
