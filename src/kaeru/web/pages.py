"""The viewer's pages: each one a few tool calls (`Backend.call`) rendered as HTML on the server.

Reads are the tools' reads (`initiatives`, `context`, `timeline`, `read`, `trail`, `search`,
`recall`); the edits a person may make are the tools' writes (`review`, `layer`, `task_update`),
posted by forms to `/ui/edit` and answered with a redirect back to the page (`web/node.py`, which
also holds a node's page; decision 19.W4). The timeline page is in `web/ways.py`; the rules and
reviews pages, and the whole lists behind a page's cut, in `web/lists.py`.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from datetime import date
from html import escape
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from kaeru.domain.graphemes import shortened
from kaeru.domain.naming import canonical
from kaeru.service import tasks
from kaeru.service.grants import Principal
from kaeru.web import graph, newest
from kaeru.web.frame import PREFIX, csrf_field, frame, hidden, url
from kaeru.web.graph import Call, ViewError, ok
from kaeru.web.omitted import coverage_html

if TYPE_CHECKING:
    from kaeru.web.app import Backend

LAYERS = ("core", "hot", "warm", "cold", "frozen")
#: Edges a node's page lists (each names its other end: one `read` apiece).
EDGES_SHOWN = 60
#: History entries (revisions and edge events) a node's page shows at once: one `trail` page, with
#: links to the next page and back to the first (decision 107).
TRAIL_PAGE = 60
#: Tasks a board column shows.
CARDS = 50
#: HTTP status of a page whose read was refused, by the issue's code.
STATUS = {"forbidden": 403, "not_found": 404, "unknown_initiative": 404}

Page = Callable[[Call, Request], Awaitable[tuple[str, str, str | None]]]


def principal_of(request: Request) -> Principal | None:
    state: Any = request.scope.get("state", {})
    found = state.get("principal") if isinstance(state, dict) else None
    return found if isinstance(found, Principal) else None


def handler(backend: Backend, page: Page) -> Callable[[Request], Awaitable[Response]]:
    """A route: the page's body inside the common frame; a refused read becomes an error page."""

    async def handle(request: Request) -> Response:
        initiative = request.query_params.get("i")
        principal = principal_of(request)
        who = principal.name if principal is not None else backend.local_actor
        try:
            title, body, initiative = await page(backend.call, request)
        except ViewError as error:
            body = f'<p class="error" role="alert" data-code="{escape(error.code)}">{escape(error.code)}: {escape(str(error))}</p>'
            body += error.more  # the ways on from a refused node page (`ways.ways_out`)
            return HTMLResponse(
                frame("refused", body, who, initiative, request), status_code=STATUS.get(error.code, 400)
            )
        return HTMLResponse(frame(title, body, who, initiative, request))

    return handle


# --- small pieces --------------------------------------------------------------------------------
def _short(text: Any, size: int = 160) -> str:
    value = "" if text is None else str(text)
    return value if len(value) <= size else shortened(value, size - 1) + "…"


def edge_row(edge: dict[str, Any], out: bool, other: str) -> str:
    """One link of a node as its page and its every-link page list it: direction, type, the names an
    imported relation kept, weight, and `other` (the HTML of the node at its other end)."""
    named = (edge.get("properties") or {}).get("relations")  # an imported relation's own names
    label = (
        f' <span class="relation" dir="auto">{escape(", ".join(map(str, named)))}</span>'
        if isinstance(named, list)
        else ""
    )
    return (
        f'<li class="edge-row">{"→" if out else "←"} <span class="etype">{escape(str(edge.get("edge_type")))}</span>'
        f"{label} {escape(str(edge.get('weight')))} {other}</li>"
    )


def node_link(initiative: str, node: dict[str, Any], **extra: Any) -> str:
    name = node.get("name") or node.get("id")
    kind = escape(str(node.get("node_type")))
    state = str(node.get("currentness", "current"))
    marked = f' <span class="state c-{escape(state)}">{escape(state)}</span>' if state != "current" else ""
    return (
        f'<a class="node-link c-{escape(state)}" data-id="{escape(node["id"])}" dir="auto" '
        f'href="{escape(url("/node", i=initiative, id=node["id"], **extra))}">{escape(str(name))}</a>'
        f' <span class="type t-{kind}">{kind}</span>{marked}'
    )


def hit_list(initiative: str, hits: list[dict[str, Any]], extra: Callable[[dict[str, Any]], str] | None = None) -> str:
    if not hits:
        return '<p class="empty">nothing</p>'
    rows = []
    for hit in hits:
        more = extra(hit) if extra else ""
        rows.append(
            f'<li class="hit" id="card-{escape(hit["id"])}" tabindex="-1" data-id="{escape(hit["id"])}">{node_link(initiative, hit)}'
            f'<span class="when">{escape(_when(hit.get("created_at")))}</span>'
            f'<div class="excerpt" dir="auto">{escape(_short(hit.get("body") or hit.get("description")))}</div>{more}</li>'
        )
    return f'<ul class="hits">{"".join(rows)}</ul>'


def _when(stamp: object) -> str:
    """A stored time to the minute, saying its zone (`2025-01-10 00:00 UTC`): the `Z` was cut off
    with the seconds, and a meeting at 09:00 in Tokyo read as held at midnight."""
    text = str(stamp or "")
    return f"{text[:10]} {text[11:16]} UTC" if len(text) >= 16 else text


def new_request_id() -> str:
    return "ui-" + secrets.token_hex(8)


def edit_form(
    request: Request, initiative: str, op: str, back: str, fields: str, button: str, node: str, what: str = ""
) -> str:
    """A form posting one edit, with the session's CSRF token (`csrf_field`); `what` (a task's name)
    is said after the button's word to screen readers, which heard four identical "Move" buttons on
    a board."""
    said = escape(button) + (hidden(" " + what) if what else "")
    return (
        f'<form class="edit" method="post" action="{PREFIX}/edit" data-op="{op}">{csrf_field(request)}'
        f'<input type="hidden" name="i" value="{escape(initiative)}">'
        f'<input type="hidden" name="op" value="{op}"><input type="hidden" name="node" value="{escape(node)}">'
        f'<input type="hidden" name="back" value="{escape(back)}">'
        f'<input type="hidden" name="request_id" value="{new_request_id()}">{fields}<button>{said}</button></form>'
    )


def initiative_of(request: Request) -> str:
    name = request.query_params.get("i")
    if not name:
        raise ViewError({"issues": [{"code": "invalid_argument", "message": "name an initiative (?i=NAME)"}]})
    return name


# --- pages ---------------------------------------------------------------------------------------
async def initiatives_page(call: Call, request: Request) -> tuple[str, str, str | None]:
    """Every initiative the caller may see, most active first, a page at a time; `prefix` keeps those
    whose names start with it, as the `initiatives` tool's own `prefix` does (case-insensitive): past
    a page of initiatives, "less active →" was the only way to one of them."""
    prefix = request.query_params.get("prefix", "").strip()
    cursor = request.query_params.get("cursor")
    args = {k: v for k, v in (("prefix", prefix), ("cursor", cursor)) if v}
    envelope = await ok(call, "initiatives", args)
    rows = []
    for item in envelope["data"]["initiatives"]:
        name = item["name"]
        counts = item.get("counts") or {}
        rows.append(
            f'<tr class="initiative" data-name="{escape(name)}"><td><a dir="auto" href="{escape(url("/graph", i=name))}">{escape(name)}</a></td>'
            f"<td>{counts.get('total', 0)}</td><td>{counts.get('operational', 0)}</td><td>{counts.get('archival', 0)}</td>"
            f"<td>{escape(str(item.get('last_activity') or '')[:19])}</td>"
            f"<td>{' · '.join(_view_link(view, name) for view in ('board', 'timeline', 'reviews', 'rules'))}</td></tr>"
        )
    starting = f" whose name starts with “{escape(prefix)}”" if prefix else ""
    body = (
        '<table class="initiatives"><thead><tr><th>initiative</th><th>nodes</th><th>operational</th>'
        f"<th>archival</th><th>last activity</th><th>views</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        if rows
        else f'<p class="empty">no initiative{starting or " yet"}</p>'
    )
    following = envelope.get("continuation")
    if following or prefix or cursor:
        body = f'<p class="mode" id="listed">most active first{starting}, {len(rows)} of {envelope["data"]["total"]}</p>{body}'
    ways = [f'<a id="first-page" href="{escape(url("/", prefix=prefix))}">← most active</a>'] if cursor else []
    if following:
        nxt = url("/", prefix=prefix, cursor=following["next_arguments"]["cursor"])
        ways.append(f'<a id="next-page" href="{escape(nxt)}">less active →</a>')
    if prefix:
        ways.append(f'<a id="every-initiative" href="{escape(url("/"))}">every initiative</a>')
    paging = f'<p class="paging">{" · ".join(ways)}</p>' if ways else ""
    form = (
        f'<form class="filters" id="by-name" method="get" action="{PREFIX}/" role="search" aria-label="initiatives by name">'
        f'<label for="prefix">Name starts with</label><input id="prefix" name="prefix" dir="auto" autocomplete="off" '
        f'value="{escape(prefix)}"><button>Show</button></form>'
    )
    return "Initiatives", form + body + paging, None


def _view_link(view: str, initiative: str) -> str:
    """A view's link in the initiatives table: "board", its initiative said to screen readers (each
    word was there once per initiative, each time going elsewhere)."""
    return f'<a href="{escape(url("/" + view, i=initiative))}">{view}{hidden(" of " + initiative)}</a>'


async def _node_total(call: Call, initiative: str) -> int | None:
    """How many nodes the initiative named exactly `initiative` holds (None: no such initiative),
    from `initiatives` by prefix, page after page until it is found."""
    args: dict[str, Any] = {"prefix": initiative, "limit": 500}
    while True:
        listed = await ok(call, "initiatives", args)
        for item in listed["data"]["initiatives"]:
            if canonical(item["name"]) == canonical(initiative):  # either Unicode form (decision 184)
                total: int = item["counts"]["total"]
                return total
        if not listed.get("continuation"):
            return None
        args = listed["continuation"]["next_arguments"]


def _filters(request: Request) -> graph.Filters:
    params = request.query_params
    return graph.Filters(
        types=frozenset(params.getlist("type")),
        layers=frozenset(params.getlist("layer")),
        current_only=params.get("current") == "1",
    )


async def graph_page(call: Call, request: Request) -> tuple[str, str, str | None]:
    initiative = initiative_of(request)
    params = request.query_params
    focus, ending = params.get("focus"), None
    if focus:
        piece = await graph.neighbourhood(call, initiative, focus)
    else:
        start = int(params.get("start", "0") or 0) if params.get("start", "0").isdigit() else 0
        # The newest window (`latest`): the one ending with the walk's last node (decision 473).
        ending = params.get("ending") or (await newest.last_node(call, initiative) if params.get("latest") else None)
        piece = await graph.window(call, initiative, params.get("cursor"), start, ending)
    total = await _node_total(call, initiative)
    if total is None:
        raise ViewError({"issues": [{"code": "not_found", "message": f"no initiative named {initiative!r}"}]})
    gathered = len(piece.nodes)
    if not focus and ending and not params.get("cursor"):
        piece.start = max(0, total - gathered)
    piece.total = total
    filters = _filters(request)
    graph.apply(piece, filters)
    left_out = []
    if piece.mode == "window" and total is not None and gathered < total:
        left_out.append(
            f"{total - gathered} of the initiative's {total} nodes are outside this window "
            f"(nodes {piece.start + 1}–{piece.start + gathered} in recording order)"
        )
    # A node's `read` lists its newest links: past them, the counts are at least what is said.
    undrawn, bound = graph.edges_not_drawn(piece)
    least = "at least " if bound else ""
    if piece.beyond:
        left_out.append(
            f"{least}{piece.beyond} more nodes lie past the limit of {graph.LIMIT} nodes or {graph.DEPTH} steps"
        )
    if undrawn:
        left_out.append(
            f"{least}{undrawn} edges are not drawn" if bound else f"{undrawn} edges lead to nodes not drawn"
        )
    if piece.hidden:
        left_out.append(f"{piece.hidden} nodes hidden by the filters")
    said = (
        f'<p class="coverage" id="not-shown">not shown: {escape("; ".join(left_out))}.</p>'
        if left_out
        else '<p class="coverage" id="not-shown">everything in view is drawn.</p>'
    )
    checks = "".join(
        f'<label><input type="checkbox" name="type" value="{escape(t)}"{" checked" if t in filters.types else ""}>{escape(t)}</label>'
        for t in piece.types
    )
    layer_checks = "".join(
        f'<label><input type="checkbox" name="layer" value="{escape(t)}"{" checked" if t in filters.layers else ""}>{escape(t)}</label>'
        for t in piece.layers
    )
    keep = f'<input type="hidden" name="focus" value="{escape(focus)}">' if focus else ""
    if not focus and params.get("cursor"):
        keep += f'<input type="hidden" name="cursor" value="{escape(params["cursor"])}">'
        keep += f'<input type="hidden" name="start" value="{escape(params.get("start", "0"))}">'
    if not focus and ending:
        keep += f'<input type="hidden" name="ending" value="{escape(ending)}">'
    form = (
        f'<form class="filters" method="get" action="{PREFIX}/graph"><input type="hidden" name="i" value="{escape(initiative)}">{keep}'
        f"<fieldset><legend>type</legend>{checks}</fieldset><fieldset><legend>layer</legend>{layer_checks}</fieldset>"
        f'<fieldset><legend>currentness</legend><label><input type="checkbox" name="current" value="1"'
        f"{' checked' if filters.current_only else ''}>current only</label></fieldset><button>Filter</button></form>"
    )
    paging: list[str] = []
    jumps: list[str] = []
    if focus:
        paging.append(f'<a href="{escape(url("/graph", i=initiative))}">whole initiative (timeline windows)</a>')
    elif piece.cursor:
        nxt = url("/graph", i=initiative, cursor=piece.cursor, start=piece.start + gathered, ending=ending)
        paging.append(f'<a id="next-window" href="{escape(nxt)}">next {graph.LIMIT} nodes →</a>')
        jumps.append(f'<a id="latest-window" href="{escape(url("/graph", i=initiative, latest=1))}">newest nodes</a>')
    if not focus and (ending or params.get("cursor")):
        jumps.insert(0, f'<a id="first-window" href="{escape(url("/graph", i=initiative))}">oldest nodes</a>')
    mode = (
        f"neighbourhood of a node, up to {graph.DEPTH} steps and {graph.LIMIT} nodes"
        if focus
        else f"a window of at most {graph.LIMIT} nodes; click a node, then “centre the graph here”, for its neighbourhood"
    )

    def link(node_id: str) -> str:
        return url("/node", i=initiative, id=node_id)

    body = (
        f'<p class="mode">{escape(mode)}</p>{jumps_html(jumps)}{form}{said}'
        f'<p class="legend">{graph.legend(piece.types)}<span class="swatch dashed">superseded / refuted</span></p>'
        f'<div class="graph-box">{graph.svg(piece, link, focus)}</div><p class="paging">{" ".join(paging)}</p>'
        f"{graph.as_text(piece, link)}"
    )
    return f"Graph: {initiative}", body, initiative


def jumps_html(links: list[str]) -> str:
    """The links to a walk's oldest and newest pages, above the page (decision 473)."""
    return f'<p class="paging jumps">{" · ".join(links)}</p>' if links else ""


async def context_section(call: Call, initiative: str, section: str) -> dict[str, Any]:
    """One section of `context` (rules always come first, sharing its budget), its envelope as `_envelope`."""
    envelope = await ok(call, "context", {"initiative": initiative, "sections": [section], "budget_chars": 64000})
    for found in envelope["data"]["sections"]:
        if found["name"] == section:
            found["_envelope"] = envelope
            return dict(found)
    return {"items": [], "total": 0, "_envelope": envelope}


async def board_page(call: Call, request: Request) -> tuple[str, str, str | None]:
    """The board's columns (from `context`), each column's tasks from `search` by type and status (the
    terminal column's too), overdue first, `CARDS` a page; `column`, `cursor` page one on (decision 469)."""
    initiative = initiative_of(request)
    section = await context_section(call, initiative, "tasks")
    columns = section.get("columns") or [{"key": "open", "label": "Open"}]
    # Overdue by the service's own rule (`tasks.is_overdue`) against the user's today as `context`
    # answers it: `context` names only the overdue tasks its bundle shows, a column lists more.
    today = date.fromisoformat(section["_envelope"]["data"]["today"])
    overdue_total = int(section.get("overdue_total") or len(section.get("overdue") or []))
    back = url("/board", i=initiative)
    # A column lists its newest tasks: one long overdue sat past its first page, unmarked under "1
    # overdue". `context` lists them first, the longest overdue first; so does each column here.
    late_first = [t for t in section.get("items") or [] if t["id"] in (section.get("overdue") or [])]
    paged, cursor, start = (request.query_params.get(k, "") for k in ("column", "cursor", "start"))
    cols = []
    for column in columns:
        key, label = column["key"], column["label"]
        args: dict[str, Any] = {"initiatives": [initiative], "filters": {"types": ["task"], "statuses": [key]}}
        args.update(limit=CARDS, budget_chars=16000, **({"cursor": cursor} if cursor and paged == key else {}))
        found = await ok(call, "search", args)
        hits, total = found["data"]["hits"], found["data"]["total"]
        offset = int(start) if "cursor" in args and start.isdigit() else 0
        first = [] if "cursor" in args else [t for t in late_first if t.get("status") == key]
        listed = first + [t for t in hits if t["id"] not in {f["id"] for f in first}]
        cards = []
        if "cursor" in args:  # which of the column's tasks this page shows, and the way back
            cards.append(
                f'<li class="coverage" data-status="{escape(key)}">tasks {offset + 1}–{offset + len(hits)} of {total}, '
                f'newest first; <a href="{escape(back)}">first page{hidden(" of " + label)}</a></li>'
            )
        for task in listed:
            choices = "".join(
                f'<option value="{escape(c["key"])}"{" selected" if c["key"] == column["key"] else ""}>'
                f"{escape(c['label'])}</option>"
                for c in columns
            )
            name = str(task.get("name") or task["id"])
            select = f'<select name="status" aria-label="Move {escape(name)} to">{choices}</select>'
            # The card's revision: a task changed since (an agent finished it) is refused (decision 468).
            select += f'<input type="hidden" name="expected_revision" value="{escape(task["revision"])}">'
            move = edit_form(request, initiative, "move", f"{back}#card-{task['id']}", select, "Move", task["id"], name)
            due = (task.get("properties") or {}).get("due")
            late = ' <span class="state">overdue</span>' if tasks.is_overdue(due, column["key"], columns, today) else ""
            cards.append(
                f'<li class="card" id="card-{escape(task["id"])}" tabindex="-1" data-id="{escape(task["id"])}">{node_link(initiative, task)}{late}'
                f'<div class="excerpt" dir="auto">{escape(_short(task.get("body")))}</div>{move}</li>'
            )
        more, following = total - offset - len(listed), (found.get("continuation") or {}).get("next_arguments", {})
        if more > 0:
            cards.append(f'<li class="coverage">{more} more not shown</li>')
        if more > 0 and following.get("cursor"):
            nxt = escape(url("/board", i=initiative, column=key, cursor=following["cursor"], start=offset + len(hits)))
            cards.append(f'<li class="paging"><a class="more" href="{nxt}">more{hidden(" in " + label)} →</a></li>')
        cols.append(
            f'<div class="column" data-status="{escape(column["key"])}"><h2>{escape(column["label"])}</h2>'
            f"<ul>{''.join(cards) or '<li class=empty>—</li>'}</ul></div>"
        )
    ahead = f"; the {len(late_first)} due earliest head their columns" if overdue_total > len(late_first) else ""
    note = f'<p class="coverage">{overdue_total} overdue{ahead}</p>' if overdue_total else ""
    return f"Board: {initiative}", note + f'<div class="board">{"".join(cols)}</div>', initiative


async def search_page(call: Call, request: Request) -> tuple[str, str, str | None]:
    initiative = initiative_of(request)
    query = request.query_params.get("q", "").strip()
    if not query:
        return f"Search: {initiative}", '<p class="empty">type words to look for</p>', initiative
    args: dict[str, Any] = {"initiatives": [initiative], "text": query, "limit": 50}
    if request.query_params.get("cursor"):
        args["cursor"] = request.query_params["cursor"]
    envelope = await ok(call, "search", args)
    hits = envelope["data"]["hits"]
    body = f'<p class="total" id="total">{envelope["data"]["total"]} hit(s) for “{escape(query)}”</p>'
    following = envelope.get("continuation")
    more = ""
    if following and following.get("next_arguments", {}).get("cursor"):
        nxt = url("/search", i=initiative, q=query, cursor=following["next_arguments"]["cursor"])
        more = f'<p class="paging"><a id="next-page" href="{escape(nxt)}">more hits →</a></p>'
    return f"Search: {initiative}", body + coverage_html(envelope) + hit_list(initiative, hits) + more, initiative


async def recall_page(call: Call, request: Request) -> tuple[str, str, str | None]:
    initiative = initiative_of(request)
    query = request.query_params.get("q", "").strip()
    if not query:
        return f"Recall: {initiative}", '<p class="empty">say what you need</p>', initiative
    args: dict[str, Any] = {"initiatives": [initiative], "query": query, "explain": True}
    if request.query_params.get("cursor"):
        args["cursor"] = request.query_params["cursor"]
    envelope = await ok(call, "recall", args)
    data = envelope["data"]
    explain: dict[str, dict[str, float]] = data.get("explain") or {}
    channels = [c["name"] for c in (data.get("retrieval_plan") or {}).get("channels") or []]
    palette = [f"#{c:06x}" for c in (0x2E86AB, 0xE4572E, 0xF3A712, 0x8E44AD, 0x27AE60, 0xC0392B)]
    palette += [f"#{c:06x}" for c in (0x16A085, 0x7F8C8D, 0xD35400, 0x34495E, 0xE84393, 0xA8C686)]
    colour = {name: palette[k % len(palette)] for k, name in enumerate(channels)}

    def shares(hit: dict[str, Any]) -> str:
        """The hit's score split by channel: a bar drawn in SVG (widths and colours as attributes:
        the Content-Security-Policy admits no inline style), and the same shares as text."""
        scores = explain.get(hit["id"]) or {}
        if not scores:
            return ""
        total = sum(v for v in scores.values() if v > 0) or 1.0
        parts: list[str] = []
        start = 0.0
        for name, value in scores.items():
            if value <= 0:
                continue
            width = 100 * value / total
            parts.append(
                f'<rect class="share" data-channel="{escape(name)}" x="{start:.2f}" y="0" width="{width:.2f}" '
                f'height="1" fill="{colour.get(name, "#999")}"><title>{escape(name)} {value:g}</title></rect>'
            )
            start += width
        bar = (
            '<svg class="shares" viewBox="0 0 100 1" preserveAspectRatio="none" aria-hidden="true" '
            f'focusable="false">{"".join(parts)}</svg>'
        )
        listed = ", ".join(f"{escape(name)} {100 * value / total:.0f}%" for name, value in scores.items() if value > 0)
        return f'{bar}<div class="share-text">{listed}</div>'

    keys = "".join(f'<span class="swatch">{graph.dot(colour[n])}{escape(n)}</span>' for n in channels)
    # A later page (`continuation`, as search's) comes from the first page's ranking, without scores.
    bars = "each bar is the hit's score split by channel" if explain or "cursor" not in args else "bars on page 1 only"
    following = (envelope.get("continuation") or {}).get("next_arguments", {}).get("cursor")
    nxt = escape(url("/recall", i=initiative, q=query, cursor=following))
    more = f'<p class="paging"><a id="next-page" href="{nxt}">more hits →</a></p>' if following else ""
    body = (
        f'<p class="total" id="total">{data["total"]} hit(s); {escape(bars)}</p>'
        f'<p class="legend">{keys}</p>{coverage_html(envelope)}{hit_list(initiative, data["hits"], shares)}{more}'
    )
    return f"Recall: {initiative}", body, initiative
