"""The ways to the far end of a walk, and on from a node no longer live (decision 473).

The walks the tools offer page from their oldest item only (`timeline`, a node's `trail` history),
each cursor signed and bound to its call's arguments: a 5,000-node initiative's newest nodes were
100 "later →" clicks away, a 200-revision note's latest change on the fourth history page. Here: the
timeline page (moved out of `pages`) with its latest page, earlier pages and a since/until window —
a page "ending with node X" is `timeline` anchored at X with nothing after, its next pages asked
with the same anchor — and how many entries come before a node's newest history page (`trail`
with `newest`). A forgotten or settled node was a bare
404 whose message named the way out (`read` with `at`, `trail`, the successor) without a link, and
a settled node's successor listed its edge by the raw id of a page that 404s: what `trail` still
says of it gives its name, the moment just before it went, and its successor.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from html import escape
from typing import Any

from starlette.requests import Request

from kaeru.web import newest
from kaeru.web.frame import PREFIX, url
from kaeru.web.graph import Call, ok
from kaeru.web.omitted import coverage_html
from kaeru.web.pages import hit_list, initiative_of, jumps_html, node_link

#: Items a timeline page shows.
PAGE = 50


def _window(request: Request) -> dict[str, str]:
    """The page's since/until, as typed (the tool reads and checks them)."""
    found = ((k, request.query_params.get(k, "").strip()) for k in ("since", "until"))
    return {k: v for k, v in found if v}


async def timeline_page(call: Call, request: Request) -> tuple[str, str, str | None]:
    """A page of the initiative's timeline, within the since/until window: from its start (`cursor`
    on), ending with a node (`ending`, which `latest` finds: the last one), ending just before one
    (`preceding`: the page before the page it begins) or starting with one (`starting`: the page
    after a `preceding` page, whose cursor would pass over the node that page leaves out)."""
    initiative = initiative_of(request)
    params = request.query_params
    window = _window(request)
    ending, preceding, starting = (params.get(k) or None for k in ("ending", "preceding", "starting"))
    if params.get("latest") and not (ending or preceding or starting):
        ending = await newest.last_node(call, initiative, window.get("since"), window.get("until"))
    args: dict[str, Any] = {"initiatives": [initiative], "limit": PAGE, "budget_chars": 16000, **window}
    if ending:
        args.update(anchor={"id": ending}, before=PAGE - 1, after=0)
    elif preceding:
        args.update(anchor={"id": preceding}, before=PAGE, after=0)
    elif starting:
        args.update(anchor={"id": starting}, before=0, after=PAGE - 1)
    cursor = params.get("cursor") or None
    if cursor:
        args["cursor"] = cursor
    envelope = await ok(call, "timeline", args)
    # The node a page ends before was the newer page's first: shown there, not again.
    hits = [h for h in envelope["data"]["hits"] if h["id"] != preceding]
    omitted = (envelope.get("coverage") or {}).get("omitted") or []
    earlier = bool(cursor) or any(o.get("section") == "before" for o in omitted)
    following = envelope.get("continuation")
    jumps, steps = [], []
    if cursor or ending or preceding or starting:
        jumps.append(f'<a id="first-page" href="{escape(url("/timeline", i=initiative, **window))}">oldest</a>')
    if following:
        latest = url("/timeline", i=initiative, latest=1, **window)
        jumps.append(f'<a id="latest-page" href="{escape(latest)}">latest</a>')
    if hits and earlier:
        back = url("/timeline", i=initiative, preceding=hits[0]["id"], **window)
        steps.append(f'<a id="earlier-page" href="{escape(back)}">← earlier</a>')
    if preceding and not cursor:  # the tool's cursor goes on after the node this page leaves out
        nxt = url("/timeline", i=initiative, starting=preceding, **window)
        steps.append(f'<a id="next-page" href="{escape(nxt)}">later →</a>')
    elif following:
        on = following["next_arguments"]["cursor"]
        nxt = url("/timeline", i=initiative, ending=ending, starting=starting, cursor=on, **window)
        steps.append(f'<a id="next-page" href="{escape(nxt)}">later →</a>')
    # `timeline` orders by when a thing happened, then when it was recorded (a back-dated import
    # comes first): the page said "in recording order" (decision 351).
    between = f"; from {window['since']}" if "since" in window else ""
    between += f"; until {window['until']}" if "until" in window else ""
    body = (
        f'<p class="mode">in the order things happened (then were recorded), {PAGE} a page; times in UTC'
        f"{escape(between)}</p>{_window_form(initiative, window)}"
        f"{jumps_html(jumps)}{coverage_html(envelope)}{hit_list(initiative, hits)}"
        + (f'<p class="paging">{" ".join(steps)}</p>' if steps else "")
    )
    return f"Timeline: {initiative}", body, initiative


def _window_form(initiative: str, window: dict[str, str]) -> str:
    """The since/until box: the timeline's window, in the forms the tool reads."""
    hint = "2026-05-01T10:00:00Z, a date, or 2h / 3d"
    boxes = "".join(
        f'<label>{key} <input name="{key}" id="{key}" value="{escape(window.get(key, ""))}" placeholder="{hint}"></label> '
        for key in ("since", "until")
    )
    return (
        f'<form class="window" method="get" action="{PREFIX}/timeline">'
        f'<input type="hidden" name="i" value="{escape(initiative)}">{boxes}<button>Show</button></form>'
    )


def entries_before(trail: dict[str, Any]) -> int:
    """How many entries of a node's history come before its newest page (`trail` with `newest`,
    read from the history's end: walking the pages from the first stopped short of the end of a
    history thousands of entries long, and took a call a page)."""
    data = trail["data"]
    rest = sum(int(o["count"]) for o in (trail.get("coverage") or {}).get("omitted") or [] if o["section"] == "entries")
    return max(0, int(data.get("total") or 0) - len(data["entries"]) - rest)


def just_before(stamp: str) -> str:
    """The moment one microsecond before `stamp` (a stored time): a `read` as of then shows a node
    as it was before the change recorded at `stamp`."""
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) - timedelta(microseconds=1)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def gone(call: Call, initiative: str, node_id: str) -> dict[str, Any] | None:
    """What `trail` still says of a node `read` refuses as forgotten or settled: its last state
    (`node`), the moment just before it went (`before`) and the node it was settled into
    (`successor`, None when forgotten). None for a node never visible here."""
    found = await call(
        "trail",
        {
            "initiative": initiative,
            "node": {"id": node_id},
            "kind": "neighbours",
            "edge_types": ["consolidated_to"],
            "limit": 10,
        },
    )
    if found["state"] == "rejected":
        return None
    node = found["data"].get("subject") or {}
    if node.get("currentness") != "retracted" or not node.get("recorded_at"):
        return None
    onward = [e["node"] for e in found["data"].get("entries") or [] if e.get("direction") == "out" and e.get("node")]
    state = "settled" if onward else "forgotten"
    return {
        "node": {**node, "currentness": state},
        "before": just_before(node["recorded_at"]),
        "successor": (onward or [None])[0],
    }


def gone_link(initiative: str, found: dict[str, Any]) -> str:
    """A forgotten or settled node named by its name, linked as it was just before it went."""
    return node_link(initiative, found["node"], at=found["before"])


async def ways_out(call: Call, initiative: str, node_id: str) -> str:
    """Under a refused node page: the links its message names (as of just before the change, its
    history, the node it was settled into); empty when `trail` knows nothing of it either."""
    found = await gone(call, initiative, node_id)
    if found is None:
        return ""
    node, before = found["node"], found["before"]
    then = url("/node", i=initiative, id=node_id, at=before)
    name = escape(str(node.get("name") or node_id))
    went = escape(str(node["recorded_at"]))
    said = f'<span dir="auto">{name}</span> was {node["currentness"]} at {went}'
    if found["successor"] is not None:
        successor = found["successor"]
        onward = url("/node", i=initiative, id=successor["id"])
        said += (
            f' into <a id="way-successor" dir="auto" href="{escape(onward)}">'
            f"{escape(str(successor.get('name') or successor['id']))}</a>"
        )
    links = (
        f'<a id="way-as-of" href="{escape(then)}">as it was just before</a> · '
        f'<a id="way-history" href="{escape(then)}#history">its history</a>'
    )
    return f'<p class="ways" id="ways">{said}: {links}</p>'
