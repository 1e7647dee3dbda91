"""The graph view: a bounded piece of an initiative's graph, gathered through the tools and laid out
on the server as SVG (decision 19.W1).

Two ways to pick the piece, both bounded by `LIMIT` nodes whatever the initiative's size (a
10,000-node initiative draws as fast as a small one, decision 19.W2):

* a window of the initiative's timeline (`timeline`, one page of `LIMIT` nodes, in recording
  order, with a cursor to the next window), each node's edges from `read` with `neighbours`;
* the neighbourhood of a focus node: breadth-first over `read` with `neighbours`, up to `DEPTH`
  steps and `LIMIT` nodes.

What is not drawn is counted and said: nodes of the initiative outside the window, nodes reached
past the limit, edges leading out of the piece, nodes hidden by the filters.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any

from kaeru.domain.graphemes import shortened

Call = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]

#: Most nodes drawn at once (a window of the timeline, or a neighbourhood).
LIMIT = 100
#: How far a neighbourhood reaches from its focus.
DEPTH = 3
#: The most nodes `timeline` shows before its anchor.
SPAN = 50
#: Node colours by type (the legend uses the same). Never the only cue: see `GLYPHS`.
COLOURS = {
    "task": "#e4572e",
    "checklist": "#f3a712",
    "roadmap": "#a8c686",
    "experiment": "#669bbc",
    "hypothesis": "#8e44ad",
    "scratch": "#b0b0b0",
    "draft": "#c9b79c",
    "episode": "#2e86ab",
    "audit_event": "#7f8c8d",
    "chain": "#16a085",
    "board": "#d35400",
    "idea": "#f1c40f",
    "outcome": "#27ae60",
    "reference": "#34495e",
    "concept": "#c0392b",
    "entity": "#1abc9c",
    "summary": "#b3446c",
}
FALLBACK = "#95a5a6"
#: Each type's letters, drawn inside its node and beside its name in the legend: the type told by
#: the colour alone was lost to a reader who cannot tell the colours apart and on a monochrome print
#: (WCAG 1.4.1); every type has its own.
GLYPHS = {
    "task": "T",
    "checklist": "CL",
    "roadmap": "RM",
    "experiment": "EX",
    "hypothesis": "H",
    "scratch": "S",
    "draft": "D",
    "episode": "EP",
    "audit_event": "AU",
    "chain": "CH",
    "board": "B",
    "idea": "I",
    "outcome": "O",
    "reference": "R",
    "concept": "C",
    "entity": "E",
    "summary": "SU",
}
#: A type this viewer does not know (a newer server's) is drawn with this; its name still says it.
UNKNOWN_GLYPH = "?"
#: States whose node the stylesheet draws faded and dashed (`c-superseded`, `c-refuted`).
FADED = ("superseded", "refuted")


class ViewError(Exception):
    """A tool refused what the view asked (its first issue)."""

    def __init__(self, envelope: dict[str, Any]):
        issue = (envelope.get("issues") or [{"code": "rejected", "message": "rejected"}])[0]
        super().__init__(issue["message"])
        self.code: str = issue["code"]
        self.envelope = envelope
        #: HTML the error page shows under the refusal: the ways on from it (a settled node's).
        self.more = ""


async def ok(call: Call, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The envelope of a call, or `ViewError` when it was rejected or named no initiative there is
    (the read tools answer that `ok` with a warning and no hit, which a page showed as empty)."""
    envelope = await call(tool, args)
    if envelope["state"] == "rejected":
        raise ViewError(envelope)
    unknown = [i for i in envelope.get("issues") or [] if i.get("code") == "unknown_initiative"]
    if unknown:
        raise ViewError({"issues": unknown})
    return envelope


@dataclass
class Filters:
    types: frozenset[str] = frozenset()
    layers: frozenset[str] = frozenset()
    current_only: bool = False

    def keeps(self, node: dict[str, Any]) -> bool:
        if self.types and node.get("node_type") not in self.types:
            return False
        if self.layers and node.get("layer") not in self.layers:
            return False
        return not (self.current_only and node.get("currentness") != "current")


@dataclass
class Piece:
    """What the graph view draws, and what it leaves out."""

    mode: str  # "window" or "focus"
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges: list[dict[str, Any]] = field(default_factory=list)
    #: Focus mode: each node's distance from the focus.
    depth: dict[str, int] = field(default_factory=dict)
    #: Nodes of the initiative (from `initiatives`), when known.
    total: int | None = None
    #: Window mode: the window's first position (0-based) and the cursor to the next one.
    start: int = 0
    cursor: str | None = None
    #: Focus mode: nodes reached but not drawn (past `LIMIT` or `DEPTH`), at least.
    beyond: int = 0
    #: Edges with one end outside the piece (of those `read` listed).
    outside_edges: int = 0
    #: How many live edges each node read has in all, listed or not (`read` lists its newest).
    linked: dict[str, int] = field(default_factory=dict)
    #: Whether `read` left out any edge of a node it read (the counts of what is not drawn are then lower bounds).
    unread: bool = False
    #: Nodes gathered but hidden by the filters.
    hidden: int = 0
    types: list[str] = field(default_factory=list)
    layers: list[str] = field(default_factory=list)


def _key(edge: dict[str, Any]) -> tuple[str, str, str]:
    return (edge["from"], edge["to"], edge["edge_type"])


async def _edges_of(
    call: Call, initiative: str, node_id: str, piece: Piece
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """A node (None if it cannot be read) and the live edges `read` lists of it (its newest, both
    directions); how many it has in all is kept in `piece.linked`."""
    envelope = await call(
        "read", {"initiative": initiative, "node": {"id": node_id}, "neighbours": True, "budget_chars": 512}
    )
    if envelope["state"] == "rejected":
        return None, []
    data = envelope["data"]
    edges = list(data.get("edges") or [])
    left = sum(o["count"] for o in (envelope.get("coverage") or {}).get("omitted") or [] if o["section"] == "edges")
    piece.linked[node_id] = len(edges) + left
    piece.unread = piece.unread or left > 0
    return data["hits"][0], edges


async def window(call: Call, initiative: str, cursor: str | None, start: int, ending: str | None = None) -> Piece:
    """`LIMIT` nodes of the initiative's timeline from `cursor` (None: its start), or (`ending`, a
    node's id: `last_node`'s) the `LIMIT` nodes ending with that node: the tool reaches `SPAN`
    nodes before its anchor, so twice, the second time anchored at the first node found. A cursor
    on from such a window is asked with the same `ending` (the tool's cursor holds its call's
    arguments: the first call's, whose nodes end the window)."""
    args: dict[str, Any] = {"initiatives": [initiative], "limit": LIMIT, "budget_chars": 64000}
    if ending:
        args.update(anchor={"id": ending}, before=SPAN, after=0)
    if cursor:
        args["cursor"] = cursor
    envelope = await ok(call, "timeline", args)
    piece = Piece("window", start=start)
    hits = envelope["data"]["hits"]
    if ending and not cursor and hits and hits[0]["id"] != ending and len(hits) < LIMIT:
        head = {**args, "anchor": {"id": hits[0]["id"]}, "before": min(SPAN, LIMIT - len(hits))}
        hits = (await ok(call, "timeline", head))["data"]["hits"] + hits  # its anchor twice: kept once
    for hit in hits:
        piece.nodes[hit["id"]] = hit
    following = envelope.get("continuation")
    piece.cursor = following["next_arguments"].get("cursor") if following else None
    await _link(call, initiative, piece)
    return piece


async def neighbourhood(call: Call, initiative: str, focus: str) -> Piece:
    """Breadth-first from `focus`: at most `LIMIT` nodes, `DEPTH` steps away."""
    piece = Piece("focus")
    seen: dict[str, int] = {focus: 0}
    past: set[str] = set()  # reached one step past `DEPTH`
    queue = [focus]
    edges: dict[tuple[str, str, str], dict[str, Any]] = {}
    while queue:
        node_id = queue.pop(0)
        if len(piece.nodes) >= LIMIT:
            break
        node, found = await _edges_of(call, initiative, node_id, piece)
        if node is None:
            if node_id == focus:
                await ok(call, "read", {"initiative": initiative, "node": {"id": focus}})
            continue
        piece.nodes[node_id] = node
        piece.depth[node_id] = seen[node_id]
        for edge in found:
            edges[_key(edge)] = edge
            other = edge["to"] if edge["from"] == node_id else edge["from"]
            if other in seen:
                continue
            if seen[node_id] < DEPTH:
                seen[other] = seen[node_id] + 1
                queue.append(other)
            else:
                past.add(other)
    piece.beyond = len((set(seen) | past) - set(piece.nodes))
    for edge in edges.values():
        if edge["from"] in piece.nodes and edge["to"] in piece.nodes:
            piece.edges.append(edge)
        else:
            piece.outside_edges += 1
    return piece


def edges_not_drawn(piece: Piece) -> tuple[int, bool]:
    """How many edges the piece does not draw, and whether that is a lower bound: exact when `read`
    listed every edge of the nodes it read; else at least as many as one node has undrawn (all its
    edges less those drawn) — a hub's 53,000 links were said as "1 edges lead to nodes not drawn"."""
    drawn: dict[str, int] = {}
    for edge in piece.edges:
        for end in {edge["from"], edge["to"]}:
            drawn[end] = drawn.get(end, 0) + 1
    undrawn = max((total - drawn.get(node, 0) for node, total in piece.linked.items()), default=0)
    return max(piece.outside_edges, undrawn), piece.unread


async def _link(call: Call, initiative: str, piece: Piece) -> None:
    edges: dict[tuple[str, str, str], dict[str, Any]] = {}
    for node_id in list(piece.nodes):
        _, found = await _edges_of(call, initiative, node_id, piece)
        for edge in found:
            edges[_key(edge)] = edge
    for edge in edges.values():
        if edge["from"] in piece.nodes and edge["to"] in piece.nodes:
            piece.edges.append(edge)
        else:
            piece.outside_edges += 1


def apply(piece: Piece, filters: Filters) -> Piece:
    """The piece with the filters applied (what they hide is counted)."""
    piece.types = sorted({n["node_type"] for n in piece.nodes.values()})
    piece.layers = sorted({n["layer"] for n in piece.nodes.values()})
    kept = {i: n for i, n in piece.nodes.items() if filters.keeps(n)}
    piece.hidden = len(piece.nodes) - len(kept)
    piece.nodes = kept
    piece.edges = [e for e in piece.edges if e["from"] in kept and e["to"] in kept]
    return piece


# --- layout --------------------------------------------------------------------------------------
def layout(piece: Piece) -> dict[str, tuple[float, float]]:
    """Positions: rings by distance around the focus, or (a window) a sunflower spiral in
    breadth-first order so that linked nodes start close; then a force-directed relaxation (springs
    along edges, repulsion between nodes, a pull to the centre) whose length shrinks as the piece
    grows. Deterministic: the same piece draws the same."""
    ids = sorted(piece.nodes, key=lambda i: (piece.nodes[i].get("created_at") or "", i))
    if not ids:
        return {}
    adjacent: dict[str, list[str]] = {i: [] for i in ids}
    for edge in piece.edges:
        adjacent[edge["from"]].append(edge["to"])
        adjacent[edge["to"]].append(edge["from"])
    pos: dict[str, tuple[float, float]] = {}
    if piece.depth:
        rings: dict[int, list[str]] = {}
        for node in ids:
            rings.setdefault(piece.depth.get(node, 1), []).append(node)
        radius = 0.0
        for level in sorted(rings):
            members = rings[level]
            if level == 0 and len(members) == 1:
                pos[members[0]] = (0.0, 0.0)
                continue
            radius = max(radius + 130.0, len(members) * 46.0 / (2 * math.pi))
            for k, node in enumerate(members):
                angle = 2 * math.pi * k / len(members) + level * 0.35
                pos[node] = (radius * math.cos(angle), radius * math.sin(angle))
    else:
        order: list[str] = []
        placed: set[str] = set()
        for root in sorted(ids, key=lambda i: -len(adjacent[i])):
            if root in placed:
                continue
            placed.add(root)
            frontier = [root]
            while frontier:
                order.extend(frontier)
                nxt = []
                for node in frontier:
                    for other in adjacent[node]:
                        if other not in placed:
                            placed.add(other)
                            nxt.append(other)
                frontier = nxt
        for k, node in enumerate(order):
            radius, angle = 70.0 * math.sqrt(k), k * 2.39996
            pos[node] = (radius * math.cos(angle), radius * math.sin(angle))
    _relax(pos, piece.edges, rounds=max(15, min(120, 400_000 // (len(ids) ** 2))))
    return pos


def _relax(pos: dict[str, tuple[float, float]], edges: list[dict[str, Any]], rounds: int) -> None:
    ids = list(pos)
    ideal = 120.0
    reach2 = (2.5 * ideal) ** 2
    for step in range(rounds):
        moves = {i: [0.0, 0.0] for i in ids}
        for a_index, a in enumerate(ids):
            ax, ay = pos[a]
            for b in ids[a_index + 1 :]:
                bx, by = pos[b]
                dx, dy = ax - bx, ay - by
                dist2 = dx * dx + dy * dy or 0.01
                if dist2 > reach2:  # far apart already: no push, so the pieces stay together
                    continue
                push = ideal * ideal / dist2
                moves[a][0] += dx * push
                moves[a][1] += dy * push
                moves[b][0] -= dx * push
                moves[b][1] -= dy * push
        for edge in edges:
            a, b = edge["from"], edge["to"]
            if a == b:
                continue
            (ax, ay), (bx, by) = pos[a], pos[b]
            dx, dy = ax - bx, ay - by
            dist = math.sqrt(dx * dx + dy * dy) or 0.1
            pull = dist / ideal
            moves[a][0] -= dx * pull
            moves[a][1] -= dy * pull
            moves[b][0] += dx * pull
            moves[b][1] += dy * pull
        for node in ids:  # gravity: the components stay together
            x, y = pos[node]
            moves[node][0] -= x * 0.08
            moves[node][1] -= y * 0.08
        limit = 40.0 * (1 - step / rounds) + 2
        for node in ids:
            mx, my = moves[node]
            size = math.sqrt(mx * mx + my * my) or 1.0
            scale = min(size, limit) / size
            x, y = pos[node]
            pos[node] = (x + mx * scale, y + my * scale)


def _label(node: dict[str, Any], size: int = 28) -> str:
    text = str(node.get("name") or node.get("id"))
    return text if len(text) <= size else shortened(text, size - 1) + "…"


def svg(piece: Piece, link: Callable[[str], str], focus: str | None = None) -> str:
    """The piece as inline SVG: nodes coloured by type and marked with its letters (`GLYPHS`;
    `data-id`, `data-type`), superseded and refuted nodes dashed and struck through, edges labelled
    by type and weight, each node a link named with its type, layer and state. Not `role="img"`, whose children are presentational: its node
    links were hidden from screen readers, or read as one run of edge labels without their ends;
    the edges' drawing is hidden from them, `as_text` says the same."""
    pos = layout(piece)
    if not pos:
        return '<svg id="graph" class="graph" viewBox="0 0 400 80"><text x="20" y="45">nothing to draw</text></svg>'
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    margin = 110
    left, top = min(xs) - margin, min(ys) - margin
    width, height = max(xs) - min(xs) + 2 * margin, max(ys) - min(ys) + 2 * margin
    out = [
        f'<svg id="graph" class="graph" viewBox="{left:.0f} {top:.0f} {width:.0f} {height:.0f}" '
        f'aria-label="graph of {len(pos)} nodes, listed with their edges as text below">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="23" refY="5" markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#888"/></marker></defs>',
        '<g class="edges">',
    ]
    for edge in piece.edges:
        (x1, y1), (x2, y2) = pos[edge["from"]], pos[edge["to"]]
        weight = float(edge.get("weight") or 0)
        kind = escape(edge["edge_type"])
        out.append(
            f'<g class="edge e-{kind}" data-from="{escape(edge["from"])}" data-to="{escape(edge["to"])}" '
            f'data-type="{kind}" aria-hidden="true"><line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke-width="{0.6 + 2.4 * weight:.2f}" marker-end="url(#arrow)"/>'
            f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 3:.1f}">{kind} {weight:g}</text></g>'
        )
    out.append('</g><g class="nodes">')
    for node_id, (x, y) in pos.items():
        node = piece.nodes[node_id]
        kind = str(node.get("node_type"))
        state = str(node.get("currentness"))
        classes = f"node t-{escape(kind)} c-{escape(state)}" + (" focus" if node_id == focus else "")
        title = f"{node.get('name')} ({kind}, {node.get('layer')}, {state})"
        named = f"{_label(node)} ({kind}, {node.get('layer')}, {state})"  # begins with the visible label
        out.append(
            f'<a href="{escape(link(node_id))}" aria-label="{escape(named)}"><g class="{classes}" data-id="{escape(node_id)}" '
            f'data-type="{escape(kind)}" data-layer="{escape(str(node.get("layer")))}" data-currentness="{escape(state)}">'
            f"<title>{escape(title)}</title>{_mark(kind, x, y, 14 if node_id == focus else 11, state in FADED)}"
            f'<text class="label" x="{x:.1f}" y="{y + 25:.1f}">{escape(_label(node))}</text></g></a>'
        )
    out.append("</g></svg>")
    return "".join(out)


def _luminance(colour: str) -> float:
    """WCAG's relative luminance of `#rrggbb`."""
    channels = [int(colour[k : k + 2], 16) / 255 for k in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ink(colour: str) -> str:
    """Black or white, whichever reads better on `colour`: one of the two keeps 4.5:1 on any fill."""
    light = _luminance(colour)
    return "#000" if (light + 0.05) / 0.05 >= 1.05 / (light + 0.05) else "#fff"


def _mark(kind: str, x: float, y: float, radius: float, faded: bool) -> str:
    """A node's disc in its type's colour with the type's letters on it. A superseded or refuted
    node's disc is drawn faded (the stylesheet), light whatever its colour: its letters are black."""
    colour = COLOURS.get(kind, FALLBACK)
    size = radius * (0.95 if len(GLYPHS.get(kind, UNKNOWN_GLYPH)) == 1 else 0.8)
    return (
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="{colour}"/>'
        f'<text class="glyph" x="{x:.1f}" y="{y:.1f}" font-size="{size:.1f}" fill="{"#000" if faded else ink(colour)}" '
        f'aria-hidden="true">{escape(GLYPHS.get(kind, UNKNOWN_GLYPH))}</text>'
    )


def dot(colour: str) -> str:
    """A legend's disc of `colour`: drawn (an SVG `fill`), as the pages' Content-Security-Policy
    admits no inline style (`guard.POLICY`); the `<i>` around it is sized by the stylesheet."""
    return (
        '<i><svg viewBox="0 0 2 2" width="100%" height="100%" display="block" aria-hidden="true" focusable="false">'
        f'<circle cx="1" cy="1" r="1" fill="{escape(colour)}"/></svg></i>'
    )


def legend(types: list[str]) -> str:
    """Each type drawn: its mark as the graph draws it (colour and letters) and its name."""
    return "".join(
        f'<span class="swatch key" data-type="{escape(t)}"><i><svg viewBox="-11 -11 22 22" width="100%" height="100%" '
        f'display="block" aria-hidden="true" focusable="false">{_mark(t, 0, 0, 11, False)}</svg></i>{escape(t)}</span>'
        for t in types
    )


def as_text(piece: Piece, link: Callable[[str], str]) -> str:
    """What the SVG draws, as text (a screen reader's, or a reader's who cannot tell the colours
    apart): each drawn node a link with its type and state, and each edge a table row naming both
    ends, its type and weight."""
    if not piece.nodes:
        return ""

    def named(node_id: str) -> str:
        node = piece.nodes[node_id]
        state = str(node.get("currentness"))
        return (
            f'<a class="c-{escape(state)}" dir="auto" href="{escape(link(node_id))}">{escape(str(node.get("name") or node_id))}</a>'
            f' <span class="type">{escape(str(node.get("node_type")))}</span>'
            + (f' <span class="state">{escape(state)}</span>' if state != "current" else "")
        )

    nodes = "".join(f'<li data-id="{escape(i)}">{named(i)}</li>' for i in piece.nodes)
    rows = "".join(
        f'<tr class="edge-text" data-from="{escape(e["from"])}" data-to="{escape(e["to"])}">'
        f"<td>{named(e['from'])}</td><td>{escape(e['edge_type'])}</td><td>{float(e.get('weight') or 0):g}</td>"
        f"<td>{named(e['to'])}</td></tr>"
        for e in piece.edges
    )
    edges = (
        '<table class="graph-edges"><caption>edges drawn</caption><thead><tr><th scope="col">from</th>'
        f'<th scope="col">edge</th><th scope="col">weight</th><th scope="col">to</th></tr></thead><tbody>{rows}</tbody></table>'
        if rows
        else '<p class="empty">no edge between the nodes drawn</p>'
    )
    return (
        f'<section class="graph-text" id="graph-text"><h2>The graph as text</h2>'
        f'<h3>{len(piece.nodes)} nodes drawn</h3><ul class="graph-nodes">{nodes}</ul>'
        f"<h3>{len(piece.edges)} edges drawn</h3>{edges}</section>"
    )
