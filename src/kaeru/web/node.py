"""A node's page (body, tags, facts, edges, history with diffs, the as-of control, the edit forms)
and the edits those forms post (decision 19.W4): each a tool write, answered by a redirect back."""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Awaitable, Callable
from html import escape
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from kaeru.web import ways
from kaeru.web.frame import PREFIX, hidden, state_of, url
from kaeru.web.graph import Call, ViewError, ok
from kaeru.web.guard import REASON_CHARS
from kaeru.web.omitted import coverage_html, omitted_count, without
from kaeru.web.pages import (
    EDGES_SHOWN,
    LAYERS,
    TRAIL_PAGE,
    edge_row,
    edit_form,
    initiative_of,
    new_request_id,
    node_link,
)

if TYPE_CHECKING:
    from kaeru.web.app import Backend
    from kaeru.web.sessions import Notices


#: The words of a changed span compared word by word; a longer span is shown removed and added
#: whole. difflib's matching grows with the product of the two spans: a 20,000-word note revised
#: once held the server's event loop — every viewer and MCP request — for a minute.
DIFF_WORDS = 400
#: Words shown at each end of an unchanged run (and of a span shown whole); the rest is counted.
CONTEXT_WORDS = 12
#: Body characters a node's page shows at once (the most one `read` returns); a longer body is
#: shown in parts, each its own page (`offset=`), the page saying which characters it holds.
BODY_PART = 64000
#: A refused edit of a node changed since its page was drawn (decision 468): the page the person
#: acted on is out of date, and the tool's words ("re-read it and retry") speak to an agent.
CHANGED_SINCE = "changed since you loaded the page: reload it to see what changed, then edit again"


def _diff(before: Any, after: Any) -> str:
    if isinstance(before, str) and isinstance(after, str):
        return _diff_words(before.split(" "), after.split(" "))
    if isinstance(before, list) and isinstance(after, list):
        gone = [v for v in before if v not in after]
        added = [v for v in after if v not in before]
        if not gone and not added:
            return '<span class="same">same items, reordered</span>'
        return " ".join(
            [f"<del>{escape(json.dumps(v, ensure_ascii=False))}</del>" for v in gone]
            + [f"<ins>{escape(json.dumps(v, ensure_ascii=False))}</ins>" for v in added]
        )
    if before is None:
        return f"<ins>{escape(json.dumps(after, ensure_ascii=False))}</ins>"
    return (
        f"<del>{escape(json.dumps(before, ensure_ascii=False))}</del> → "
        f"<ins>{escape(json.dumps(after, ensure_ascii=False))}</ins>"
    )


def _cut_note(change: dict[str, Any]) -> str:
    """What of a long value the history page holds (decision 357 cuts it to the page's bound): a diff
    of the cut texts shows no edit past the cut, and said nothing of it."""
    cuts = [
        f"{side}: characters {r.get('start', 0) + 1:,}–{r['end']:,} of {r['total']:,}"
        for side, r in (("before", change.get("before_range")), ("after", change.get("after_range")))
        if isinstance(r, dict)
    ]
    if not cuts:
        return ""
    return f'<p class="coverage">Compared: {"; ".join(cuts)} (open the revision "as of then" for all of it)</p>'


def _diff_words(old: list[str], new: list[str]) -> str:
    """The words removed (`<del>`) and added (`<ins>`) between two texts, unchanged runs shortened to
    their ends: the common start and end are set aside first (a revision changes a few words of a
    long note), and only a middle of at most `DIFF_WORDS` words a side is compared word by word."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    middle_old, middle_new = old[start : len(old) - end], new[start : len(new) - end]
    parts = [_same(old[:start])]
    if len(middle_old) <= DIFF_WORDS and len(middle_new) <= DIFF_WORDS:
        matcher = difflib.SequenceMatcher(a=middle_old, b=middle_new, autojunk=False)
        for op, a1, a2, b1, b2 in matcher.get_opcodes():
            if op == "equal":
                parts.append(_same(middle_old[a1:a2]))
                continue
            parts.extend(_changed("del", middle_old[a1:a2]) + _changed("ins", middle_new[b1:b2]))
    else:
        parts.extend(_changed("del", middle_old) + _changed("ins", middle_new))
    parts.append(_same(old[len(old) - end :]))
    return " ".join(p for p in parts if p)


def _same(words: list[str]) -> str:
    """An unchanged run: whole when short, else its first and last `CONTEXT_WORDS` words."""
    if len(words) <= 2 * CONTEXT_WORDS + 1:
        return escape(" ".join(words))
    hidden = len(words) - 2 * CONTEXT_WORDS
    return (
        f'{escape(" ".join(words[:CONTEXT_WORDS]))} <span class="same">… {hidden} unchanged words …</span> '
        f"{escape(' '.join(words[-CONTEXT_WORDS:]))}"
    )


def _changed(tag: str, words: list[str]) -> list[str]:
    """A removed or added run, at most `DIFF_WORDS` of its words shown (the rest counted)."""
    if not words:
        return []
    shown = escape(" ".join(words[:DIFF_WORDS]))
    more = f' <span class="same">… {len(words) - DIFF_WORDS} more words</span>' if len(words) > DIFF_WORDS else ""
    return [f"<{tag}>{shown}{more}</{tag}>"]


async def node_page(call: Call, request: Request) -> tuple[str, str, str | None]:
    initiative = initiative_of(request)
    node_id = request.query_params.get("id", "")
    at = request.query_params.get("at") or None
    # Which part of a long body (decision 468): it was cut at 64,000 characters with nothing said.
    offset = _count(request.query_params.get("offset"))
    args: dict[str, Any] = {
        "initiative": initiative,
        "node": {"id": node_id},
        "neighbours": True,
        "budget_chars": BODY_PART,
    }
    if at:
        args["at"] = at
    if offset:
        args["body_offset"] = offset
    try:
        envelope = await ok(call, "read", args)
    except ViewError as error:  # forgotten or settled: the error page links the ways on (decision 473)
        error.more = await ways.ways_out(call, initiative, node_id) if error.code == "not_found" else ""
        raise
    node = envelope["data"]["hits"][0]
    edges = envelope["data"].get("edges") or []
    # The history a page at a time: `trail` is the page's cursor, `from` how many entries came before it.
    cursor = request.query_params.get("trail") or None
    before = _count(request.query_params.get("from")) if cursor else 0
    # Its last page (decision 473), read from the history's end; a page on from it is asked alike.
    last_page = request.query_params.get("history") == "newest"
    asked: dict[str, Any] = {"initiative": initiative, "node": {"id": node_id}, "kind": "history", "limit": TRAIL_PAGE}
    asked.update({"newest": True} if last_page else {})
    trail = await ok(call, "trail", {**asked, "cursor": cursor} if cursor else asked)
    if last_page and not cursor:
        before = ways.entries_before(trail)
    here = url("/node", i=initiative, id=node_id)
    state = str(node.get("currentness"))
    facts = [
        ("type", node.get("node_type")),
        ("layer", node.get("layer")),
        ("pinned", "yes" if node.get("pinned") else "no"),
        ("currentness", state),
        ("status", node.get("status")),
        ("revision", node.get("revision")),
        ("recorded", node.get("recorded_at")),
        ("initiatives", ", ".join(node.get("initiatives") or [])),
    ]
    facts_html = "".join(
        f'<dt>{escape(k)}</dt><dd dir="auto">{escape(str(v))}</dd>' for k, v in facts if v not in (None, "")
    )
    successors = [await _named(call, initiative, other, at) for other in (node.get("successors") or [])[:EDGES_SHOWN]]
    if successors:
        facts_html += f"<dt>superseded by</dt><dd>{', '.join(successors)}</dd>"
    # What the tools keep in properties: a task's due date, a note's url or branch, a rule's scope.
    properties = "".join(
        f'<dt>{escape(str(k))}</dt><dd dir="auto">{escape(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))}</dd>'
        for k, v in sorted((node.get("properties") or {}).items())
    )
    properties_html = f'<dl class="facts properties" id="properties">{properties}</dl>' if properties else ""
    # A reference's description beside its body (the page showed the body alone).
    described = (
        f'<p class="description" dir="auto">{escape(node["description"])}</p>'
        if node.get("body") and node.get("description")
        else ""
    )
    tags = "".join(f'<span class="tag" dir="auto">{escape(t)}</span>' for t in node.get("tags") or [])
    when = (
        f'<p class="asof" id="as-of-shown">as of {escape(at)}</p>'
        if at
        else '<p class="asof" id="as-of-shown">as it is now</p>'
    )
    asof = (
        f'<form class="asof-form" method="get" action="{PREFIX}/node"><input type="hidden" name="i" value="{escape(initiative)}">'
        f'<input type="hidden" name="id" value="{escape(node_id)}"><label>as of <input name="at" id="at" '
        f'value="{escape(at or "")}" placeholder="2026-05-01T10:00:00Z, a date, or 2h / 3d"></label><button>Show</button>'
        f"{' <a href=' + chr(34) + escape(here) + chr(34) + '>now</a>' if at else ''}</form>"
    )
    edge_rows = []
    for edge in edges[:EDGES_SHOWN]:
        out = edge["from"] == node_id
        shown = await _named(call, initiative, edge["to"] if out else edge["from"], at)
        edge_rows.append(edge_row(edge, out, shown))
    # `read` lists its newest links only (the rest counted in its coverage), this page fewer: every
    # one is a link away, a page at a time (`lists.links_page`).
    every = f' — <a class="every-link" href="{escape(url("/links", i=initiative, id=node_id))}">every link, a page at a time</a>'
    # One count of the links not listed: those `read` left out and those it gave past this page's
    # (the coverage line said the first, the list the second, of one thing).
    unlisted = max(0, len(edges) - EDGES_SHOWN) + omitted_count(envelope, "edges")
    if unlisted:
        edge_rows.append(f'<li class="coverage">{unlisted} more edges not listed{every}</li>')
    history = []
    for entry in trail["data"]["entries"]:
        if entry["kind"] == "revision":
            changes = "".join(
                f'<tr><th>{escape(c["field"])}</th><td class="diff" dir="auto">{_diff(c.get("before"), c.get("after"))}'
                f"{_cut_note(c)}</td></tr>"
                for c in entry.get("changes") or []
            )
            revision = (entry.get("node") or {}).get("revision", "")
            history.append(
                f'<li class="revision" data-revision="{escape(str(revision))}"><span class="when">{escape(entry["at"])}</span> '
                f"<strong>{escape(str(entry.get('action')))}</strong> by {escape(str(entry.get('actor')))} "
                f'<a class="asof-link" href="{escape(url("/node", i=initiative, id=node_id, at=entry["at"]))}">as of then{hidden(" (" + str(entry["at"]) + ")")}</a>'
                f'<table class="changes">{changes}</table></li>'
            )
        elif entry["kind"] == "edge":
            edge = entry.get("edge") or {}
            # Who made the change, as its edge revision (or, for an older one, its audit record) says.
            who = f"by {escape(str(entry['actor']))}" if entry.get("actor") else "actor unknown"
            history.append(
                f'<li class="edge-event"><span class="when">{escape(str(entry.get("at")))}</span> edge '
                f"{escape(str(entry.get('action')))}: {escape(str(edge.get('edge_type')))} "
                f"{escape(str(entry.get('direction')))} {escape(str(edge.get('weight')))} {who}</li>"
            )
    pager = _trail_pager(initiative, node_id, at, trail, before, last_page)
    # Oldest first, as `trail` pages it: its latest changes a link away, above the first entry.
    latest = escape(url("/node", i=initiative, id=node_id, at=at, history="newest"))
    newest = (
        ""
        if trail.get("continuation") is None or last_page
        else f'<p class="trail-pages">oldest first · <a id="trail-newest" href="{latest}#history">latest changes</a></p>'
    )
    part, rest = _body_part(initiative, node_id, at, node, envelope)
    back = here
    edits = "" if at else _node_edits(request, initiative, node, back)
    body = (
        f'{_not_in_force(state, successors)}<div class="node-head">{when}{asof}</div>{coverage_html(without(envelope, "edges"))}'
        f'<section class="node-body c-{escape(state)}">{described}{part}'
        f'<div dir="auto"><pre id="body">{escape(node.get("body") or node.get("description") or "")}</pre></div>{rest}'
        f'<p class="tags">{tags}</p><dl class="facts">{facts_html}</dl>{properties_html}'
        f'<p><a id="centre" href="{escape(url("/graph", i=initiative, focus=node_id))}">centre the graph here</a></p></section>'
        f'<section><h2>Edges</h2><ul class="edges-list">{"".join(edge_rows) or "<li>none</li>"}</ul></section>'
        f"{edits}"
        f'<section><h2>History</h2>{newest}{coverage_html(trail)}<ol class="history" id="history" start="{before + 1}">'
        f"{''.join(history)}</ol>"
        f"{pager}</section>"
    )
    return str(node.get("name") or node_id), body, initiative


def _not_in_force(state: str, successors: list[str]) -> str:
    """Under the heading, before the body: that the node is no longer in force and what replaced it.
    It was the fourth fact, below the body, which was read first at full strength."""
    if state in ("current", "None", ""):
        return ""
    replaced = f" by {', '.join(successors)}" if successors else ""
    return (
        f'<p class="not-in-force" id="not-in-force"><strong>{escape(state.capitalize())}</strong>{replaced}: '
        "what follows is no longer in force.</p>"
    )


async def _named(call: Call, initiative: str, other: str, at: str | None) -> str:
    """A link to another node, by its name as it was at the page's moment `at` (renamed since, the
    name it had; forgotten since, still found), the link keeping the moment; its id when unread."""
    moment = {"at": at} if at else {}
    named = await call("read", {"initiative": initiative, "node": {"id": other}, "budget_chars": 512, **moment})
    if named["state"] != "rejected":
        return node_link(initiative, named["data"]["hits"][0], **moment)
    # Forgotten or settled (a successor's `consolidated_to` edge): its name, as it was just before.
    found = await ways.gone(call, initiative, other)
    if found is not None:
        return ways.gone_link(initiative, found)
    return f'<a href="{escape(url("/node", i=initiative, id=other, **moment))}">{escape(other)}</a>'


def _body_part(
    initiative: str, node_id: str, at: str | None, node: dict[str, Any], envelope: dict[str, Any]
) -> tuple[str, str]:
    """Above a long body, which characters the page shows of how many, with links to the first part
    and to the next (the `read`'s own continuation); below it, the link on again. Empty for a body
    shown whole. The page showed the first 64,000 characters as the whole note (decision 468)."""
    cut = node.get("body_range")
    if not isinstance(cut, dict):
        return "", ""
    start, end, total = int(cut.get("start") or 0), int(cut["end"]), int(cut["total"])
    said = f"characters {start + 1:,}–{end:,} of {total:,}"
    parts = [f'<span id="body-shown">{said}</span>']
    if start:
        first = url("/node", i=initiative, id=node_id, at=at)
        parts.append(f'<a id="body-first" href="{escape(first)}">first part</a>')
    following = ""
    continued = envelope.get("continuation")
    if continued is not None:
        offset = continued["next_arguments"]["body_offset"]
        onward = escape(url("/node", i=initiative, id=node_id, at=at, offset=offset))
        parts.append(f'<a id="body-next" href="{onward}">next part</a>')
        following = (
            f'<p class="coverage body-part"><a id="body-on" href="{onward}">next part: from character '
            f"{offset + 1:,} of {total:,}</a></p>"
        )
    return f'<p class="coverage body-part" id="body-part">{" · ".join(parts)}</p>', following


def _count(raw: str | None) -> int:
    """A page's `from` (entries before it; shown only, never trusted for paging): 0 unless a count."""
    return int(raw) if raw and raw.isdigit() and len(raw) < 10 else 0


def _trail_pager(
    initiative: str, node_id: str, at: str | None, trail: dict[str, Any], before: int, newest: bool
) -> str:
    """Which history entries the page shows of how many, a link to the next page (the trail's own
    cursor) and, past the first, one back to it."""
    shown = len(trail["data"]["entries"])
    total = int(trail["data"].get("total") or 0)
    if not before and trail.get("continuation") is None:
        return ""
    parts = [f'<span id="trail-shown">entries {before + 1}–{before + shown} of {total}</span>']
    if before:
        first = url("/node", i=initiative, id=node_id, at=at)
        parts.append(f'<a id="trail-first" href="{escape(first)}#history">first page</a>')
    continued = trail.get("continuation")
    if continued is not None:
        since = {"from": before + shown, "history": "newest" if newest else None}
        following = url("/node", i=initiative, id=node_id, at=at, trail=continued["cursor"], **since)
        parts.append(f'<a id="trail-next" href="{escape(following)}#history">next page</a>')
    return f'<p class="trail-pages">{" · ".join(parts)}</p>'


def _node_edits(request: Request, initiative: str, node: dict[str, Any], back: str) -> str:
    node_id = node["id"]
    options = "".join(
        f'<option value="{v}"{" selected" if v == node.get("layer") else ""}>{v}</option>' for v in LAYERS
    )
    pinned = " checked" if node.get("pinned") else ""
    # What the page showed, so that only what the person changed is sent (`_layer_asked`).
    shown = (
        f'<input type="hidden" name="layer_was" value="{escape(str(node.get("layer") or ""))}">'
        f'<input type="hidden" name="pinned_was" value="{"1" if node.get("pinned") else ""}">'
    )
    layer_form = edit_form(
        request,
        initiative,
        "layer",
        back,
        f'<label for="layer-select">layer</label> <select name="layer" id="layer-select">{options}</select>'
        f'<label><input type="checkbox" name="pin" value="1" id="pin-box"{pinned}> pinned</label>{shown}',
        "Set layer / pin",
        node_id,
    )
    flag_form = edit_form(
        request,
        initiative,
        "flag",
        back,
        '<label for="flag-reason">reason</label> '
        f'<input name="reason" id="flag-reason" maxlength="{REASON_CHARS}" placeholder="what is doubtful, and why" required>',
        "Flag for review",
        node_id,
    )
    close_form = edit_form(
        request,
        initiative,
        "close",
        back,
        '<label for="close-resolution">resolution</label> '
        f'<input name="resolution" id="close-resolution" maxlength="{REASON_CHARS}" '
        'placeholder="how it was resolved (optional)">',
        "Close its reviews",
        node_id,
    )
    return f'<section class="edits"><h2>Edit</h2>{layer_form}{flag_form}{close_form}</section>'


def _request_id(form_id: str, tool: str, args: dict[str, Any]) -> str:
    """The form's request id with what it asks: the same form sent twice (a double click, a reload)
    replays the first answer, but sent again changed (back, another reason) it is a new edit — it
    was refused `request_id_reused`, naming a request id the person never chose."""
    asked = json.dumps([tool, args], sort_keys=True, ensure_ascii=False).encode()
    return f"{form_id}-{hashlib.sha256(asked).hexdigest()[:12]}"


async def _layer_asked(backend: Backend, form: dict[str, str], common: dict[str, Any]) -> dict[str, Any]:
    """The `layer` call's layer and pin: each only when the person changed it from what the page
    showed (`layer_was`, `pinned_was`). The form sent both, so a page loaded before an agent pinned
    the node unpinned it when the person changed only the layer (decision 468); `layer` takes no
    `expected_revision`. A form changing neither sends the node's layer as it is now (read afresh,
    so nothing an agent set is undone): the tool still checks the person's rights and answers."""
    asked: dict[str, Any] = {}
    if form.get("layer") != form.get("layer_was"):
        asked["layer"] = form.get("layer")
    pin = form.get("pin") == "1"
    if pin != (form.get("pinned_was") == "1"):
        asked["pin"] = pin
    if not asked:
        now = await backend.call("read", {**common, "node": {"id": form.get("node", "")}, "budget_chars": 512})
        hit = now["data"]["hits"][0] if now["state"] != "rejected" else {}
        asked["layer"] = hit.get("layer") or form.get("layer")
    return asked


def edit_handler(backend: Backend, notices: Notices) -> Callable[[Request], Awaitable[Response]]:
    """POST /ui/edit: one tool write from a page's form (read, bounded and checked by the app: its
    Origin, its size, the session's CSRF token), then back to the page, whose notice says what
    happened — kept in `notices`, the URL naming it by a random id."""

    async def handle(request: Request) -> Response:
        form: dict[str, str] = state_of(request, "form") or {}
        initiative = form.get("i", "")
        node = {"id": form.get("node", "")}
        op = form.get("op")
        common = {"initiative": initiative}
        tool: str
        args: dict[str, Any]
        if op == "flag":
            tool, args = "review", {**common, "action": "flag", "target": node, "reason": form.get("reason", "")}
        elif op == "close":
            tool, args = "review", {**common, "action": "close", "target": node}
            if form.get("resolution", "").strip():
                args["resolution"] = form["resolution"].strip()
        elif op == "layer":
            tool, args = "layer", {**common, "nodes": [node], **await _layer_asked(backend, form, common)}
        elif op == "move":
            tool, args = "task_update", {**common, "task": node, "status": form.get("status", "")}
            if form.get("expected_revision"):  # the card's revision: a task changed since is refused
                args["expected_revision"] = form["expected_revision"]
        else:
            return Response("unknown edit", status_code=400)
        args["request_id"] = _request_id(form.get("request_id") or new_request_id(), tool, args)
        envelope = await backend.call(tool, args)
        refused = envelope["state"] == "rejected"
        if refused:
            issue = envelope["issues"][0]
            said = f"{op}: refused — {issue['code']}: {issue['message']}"
            if issue["code"] == "revision_conflict":
                said = f"{op}: refused — {CHANGED_SINCE} ({issue['code']}: {issue['message']})"
        else:  # a form sent twice as it was: the first answer, said to be one
            said = f"{op}: {envelope['state']}" + (
                " (already done: the same form was sent twice)" if envelope.get("replayed") else ""
            )
        back, _, anchor = form.get("back", "").partition("#")
        if not back.startswith(PREFIX + "/") or back.startswith("//"):
            back, anchor = url("/", i=initiative), ""
        joiner = "&" if "?" in back else "?"
        told = urlencode({"edited": notices.add(said, refused, state_of(request, "owner") or "")})
        # Back to the card edited (a board's moved task), else to the notice: the page opened at its top.
        return RedirectResponse(f"{back}{joiner}{told}#{quote(anchor or 'edited')}", status_code=303)

    return handle
