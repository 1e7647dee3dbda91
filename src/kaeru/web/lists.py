"""The rules and reviews pages (one `context` section each), and the whole lists behind a page's cut.

A page that cut a list said so and led nowhere: "not shown: 50 rules (budget)" under the rules in
force, "12 more edges not listed" under a node's links. `context` answers a bounded bundle without a
cursor; of a section it cut it names the `search` filters that list the section whole (`filters`):
the rules page links to that listing, `RULES_PAGE` rules a page, paged by `search`'s own
continuation. A node's `read` lists its newest links only; `trail kind=neighbours` pages them all,
which the links page shows. Every call runs as the page's caller, so a token limited to some
initiatives lists only what it may see, and a cursor made for one caller is refused to another.

The reviews section names no `filters` (no `search` filter says "has an open review"): `context`
shows its newest `CAPS["reviews"]`, and a node under review that an earlier section holds (an open
task, a claim) is not among them. Its page links to every open review, `REVIEWS_PAGE` a page, as
`reflect` lists them: newest first, a later page after the last node shown (`reviews_after`).
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from starlette.requests import Request

from kaeru.domain.model import RULE_TAG, NodeType
from kaeru.service.lifecycle import REVIEW_TAG
from kaeru.service.reflect import LIMIT as REVIEWS_PAGE
from kaeru.web.frame import hidden, url
from kaeru.web.graph import Call, ok
from kaeru.web.guard import REASON_CHARS
from kaeru.web.omitted import coverage_html
from kaeru.web.pages import (
    EDGES_SHOWN,
    _short,
    context_section,
    edge_row,
    edit_form,
    hit_list,
    initiative_of,
    node_link,
)

#: Rules on a page of every rule (the most one `search` page holds).
RULES_PAGE = 50
#: Links on a page of a node's links: as many as its own page lists.
LINKS_PAGE = EDGES_SHOWN
#: The `search` filters of `context`'s rules section (what it names as the section's `filters` when
#: it cuts it): every rule of the initiative, in force or not.
RULE_FILTERS = {"types": [NodeType.CONCEPT.value], "tags": [RULE_TAG]}
#: How `search` says a rule it lists is not in force: "rule <id> is not in force (<why>): …"
#: (`rules_in_force.not_in_force`, the form the compact text reads too).
NOT_IN_FORCE = re.compile(r"rule (\S+) is not in force \(([^)]*)\)")


def _count(raw: str | None) -> int:
    return int(raw) if raw and raw.isdigit() else 0


def _pages(where: str, cursor: str | None, following: str | None, after: int, label: str, **keep: Any) -> str:
    """Plain links back to the first page (from a later one) and on to the next: the tool's cursor
    (`following`) and how many items come before it (`after`); empty on a list's only page."""
    links = []
    if cursor:
        links.append(f'<a id="first-page" href="{escape(url(where, **keep))}">first page</a>')
    if following:
        nxt = url(where, **keep, cursor=following, **{"from": after})
        links.append(f'<a id="next-page" href="{escape(nxt)}">{escape(label)} →</a>')
    return f'<p class="paging">{" · ".join(links)}</p>' if links else ""


async def rules_page(call: Call, request: Request) -> tuple[str, str, str | None]:
    """The rules in force, as `context` delivers them; with `all=1`, every rule, a page at a time."""
    initiative = initiative_of(request)
    if request.query_params.get("all"):
        return await _every_rule(call, request, initiative)
    section = await context_section(call, initiative, "rules")
    every = url("/rules", i=initiative, all=1)
    way = f' — <a id="every-rule" href="{escape(every)}">every rule, {RULES_PAGE} a page</a>'
    body = '<p class="mode">the rules in force, as <code>context</code> delivers them</p>'
    body += coverage_html(section["_envelope"], way, ("rules",)) + hit_list(initiative, section.get("items") or [])
    return f"Rules in force: {initiative}", body, initiative


async def _every_rule(call: Call, request: Request, initiative: str) -> tuple[str, str, str | None]:
    """Every rule of the initiative, newest first, `RULES_PAGE` a page through `search`'s cursor;
    each rule `search` says is not in force marked with why, one scoped to a task said to be."""
    params = request.query_params
    cursor, start = params.get("cursor") or None, _count(params.get("from")) if params.get("cursor") else 0
    args: dict[str, Any] = {"initiatives": [initiative], "filters": RULE_FILTERS, "limit": RULES_PAGE}
    args.update(budget_chars=64000, **({"cursor": cursor} if cursor else {}))
    envelope = await ok(call, "search", args)
    hits, total = envelope["data"]["hits"], envelope["data"]["total"]
    why: dict[str, str] = {}
    kept = []
    for issue in envelope.get("issues") or []:
        found = NOT_IN_FORCE.match(str(issue.get("message"))) if issue.get("code") == "not_in_force" else None
        if found:
            why[found.group(1)] = found.group(2)
        else:
            kept.append(issue)

    def mark(hit: dict[str, Any]) -> str:
        if hit["id"] in why:
            return f'<p class="state not-in-force">not in force: {escape(why[hit["id"]])}</p>'
        scoped = ((hit.get("properties") or {}).get("applicability") or {}).get("task")
        return '<p class="state">in force while its task is worked on</p>' if scoped else ""

    following = (envelope.get("continuation") or {}).get("next_arguments", {}).get("cursor")
    shown = f"rules {start + 1}–{start + len(hits)} of {total}" if hits else f"{total} rules"
    label = f"next {RULES_PAGE} rules"
    pages = _pages("/rules", cursor, following, start + len(hits), label, i=initiative, all=1)
    in_force = escape(url("/rules", i=initiative))
    body = (
        '<p class="mode">every rule of the initiative, in force or not, newest first; a rule not in force '
        f'is marked with why (<a href="{in_force}">the rules in force</a>)</p><p class="total" id="total">{shown}</p>'
        f"{coverage_html({**envelope, 'issues': kept})}{hit_list(initiative, hits, mark)}{pages}"
    )
    return f"Every rule: {initiative}", body, initiative


async def links_page(call: Call, request: Request) -> tuple[str, str, str | None]:
    """Every live link of a node to a live node (`trail kind=neighbours`), `LINKS_PAGE` a page in the
    order of their keys, through the trail's own cursor: a node's page lists its newest links only."""
    initiative = initiative_of(request)
    params = request.query_params
    node_id = params.get("id", "")
    cursor, start = params.get("cursor") or None, _count(params.get("from")) if params.get("cursor") else 0
    args: dict[str, Any] = {"initiative": initiative, "node": {"id": node_id}, "kind": "neighbours"}
    args.update(limit=LINKS_PAGE, **({"cursor": cursor} if cursor else {}))
    envelope = await ok(call, "trail", args)
    data = envelope["data"]
    subject, entries = data["subject"], data["entries"]
    rows = []
    for entry in entries:
        edge = entry.get("edge") or {}
        rows.append(edge_row(edge, entry.get("direction") == "out", node_link(initiative, entry["node"])))
    following = (envelope.get("continuation") or {}).get("cursor")
    total = int(data.get("total") or 0)
    shown = f"links {start + 1}–{start + len(entries)} of {total}" if entries else f"{total} links"
    label = f"next {LINKS_PAGE} links"
    pages = _pages("/links", cursor, following, start + len(entries), label, i=initiative, id=node_id)
    body = (
        f'<p class="mode">every live link of {node_link(initiative, subject)} to a node still live, '
        f'{LINKS_PAGE} a page</p><p class="total" id="total">{shown}</p>{coverage_html(envelope)}'
        f'<ul class="edges-list">{"".join(rows) or "<li>none</li>"}</ul>{pages}'
    )
    return f"Links: {subject.get('name') or node_id}", body, initiative


async def reviews_page(call: Call, request: Request) -> tuple[str, str, str | None]:
    """The newest open reviews, as `context` delivers them, each with its reasons and a Close; with
    `all=1`, every open review, a page at a time."""
    initiative = initiative_of(request)
    if request.query_params.get("all"):
        return await _every_review(call, request, initiative)
    section = await context_section(call, initiative, "reviews")
    back = url("/reviews", i=initiative)
    reasons: dict[str, list[str]] = section.get("reasons") or {}
    read: dict[str, dict[str, Any]] = {}
    for note_id in [n for notes in reasons.values() for n in notes][:EDGES_SHOWN]:
        note = await call("read", {"initiative": initiative, "node": {"id": note_id}, "budget_chars": 512})
        if note["state"] != "rejected":
            read[note_id] = note["data"]["hits"][0]

    def reason(n: str, name: str) -> str:
        """A review note's reason; a node that `contradicts` this one and is no review is named as the
        contradiction (its body was shown as if a review's reason, decision 469)."""
        node = read.get(n) or {"body": n, "tags": [REVIEW_TAG]}
        if REVIEW_TAG not in (node.get("tags") or []):
            return f'<li class="reason contradiction">contradicted by {node_link(initiative, node)}</li>'
        link = f'<a href="{escape(url("/node", i=initiative, id=n))}">review{hidden(" of " + name)}</a>'
        return f'<li class="reason">{link}: {escape(_short(node.get("body")))}</li>'

    def close(hit: dict[str, Any]) -> str:
        notes = reasons.get(hit["id"]) or []
        name = str(hit.get("name") or hit["id"])
        why = "".join(reason(n, name) for n in notes)
        form = edit_form(
            request,
            initiative,
            "close",
            f"{back}#card-{hit['id']}",
            f'<input name="resolution" aria-label="How the review of {escape(name)} was resolved (optional)" '
            f'maxlength="{REASON_CHARS}" placeholder="how it was resolved (optional)">',
            "Close review",
            hit["id"],
            name,
        )
        return f'<ul class="reasons">{why}</ul>{form}'

    every = escape(url("/reviews", i=initiative, all=1))
    way = f' — <a id="every-review" href="{every}">every open review, {REVIEWS_PAGE} a page</a>'
    mode = f'<p class="mode">the newest open reviews, as <code>context</code> delivers them{way}</p>'
    # Only the reviews' own cut: the rules `context` serves first (and may cut) are not on this page.
    said = coverage_html(section["_envelope"], way, ("reviews",))
    body = mode + said + hit_list(initiative, section.get("items") or [], close)
    return f"Open reviews: {initiative}", body, initiative


async def _every_review(call: Call, request: Request, initiative: str) -> tuple[str, str, str | None]:
    """Every open review of the initiative, newest first, `REVIEWS_PAGE` a page: `reflect`'s
    `open_review` items, a later page those after the last node the page before showed
    (`reviews_after`, the link's `cursor`), each with a Close that comes back to this page."""
    params = request.query_params
    cursor, start = params.get("cursor") or None, _count(params.get("from")) if params.get("cursor") else 0
    args: dict[str, Any] = {"initiative": initiative, **({"reviews_after": cursor} if cursor else {})}
    envelope = await ok(call, "reflect", args)
    data = envelope["data"]
    items = [i for i in data["items"] if i["kind"] == "open_review"]
    left = sum(
        int(o.get("count") or 0)
        for o in (envelope.get("coverage") or {}).get("omitted") or []
        if o["section"] == "open_review"
    )
    total = start + int((data.get("counts") or {}).get("open_review") or 0)
    here = url("/reviews", i=initiative, all=1, **({"cursor": cursor, "from": start} if cursor else {}))

    def row(item: dict[str, Any]) -> str:
        node_id, name = item["node"], str(item.get("name") or item["node"])
        form = edit_form(
            request,
            initiative,
            "close",
            f"{here}#card-{node_id}",
            f'<input name="resolution" aria-label="How the review of {escape(name)} was resolved (optional)" '
            f'maxlength="{REASON_CHARS}" placeholder="how it was resolved (optional)">',
            "Close review",
            node_id,
            name,
        )
        return (
            f'<li class="hit" id="card-{escape(node_id)}" tabindex="-1" data-id="{escape(node_id)}">'
            f"{node_link(initiative, {'id': node_id, 'name': name})}"
            f'<div class="excerpt" dir="auto">{escape(item["message"])}</div>{form}</li>'
        )

    following = items[-1]["node"] if left and items else None
    shown = f"reviews {start + 1}–{start + len(items)} of {total}" if items else f"{total} open reviews"
    label = f"older reviews ({REVIEWS_PAGE} a page)"
    pages = _pages("/reviews", cursor, following, start + len(items), label, i=initiative, all=1)
    newest = escape(url("/reviews", i=initiative))
    listed = f'<ul class="hits">{"".join(row(i) for i in items)}</ul>' if items else '<p class="empty">nothing</p>'
    body = (
        '<p class="mode">every open review of the initiative, newest first, as <code>reflect</code> lists them '
        f'(<a href="{newest}">the newest, with their reasons</a>)</p><p class="total" id="total">{shown}</p>'
        f"{coverage_html({**envelope, 'coverage': {}})}{listed}{pages}"
    )
    return f"Every open review: {initiative}", body, initiative
