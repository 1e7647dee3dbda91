"""The newest end of an initiative's timeline walk (decision 473): the node the timeline page's
"latest" and the graph's newest window end with. Moved out of `graph` (the view's drawing).
"""

from __future__ import annotations

from typing import Any

from kaeru.web.graph import LIMIT, Call, ok

#: The most timeline pages `last_node` walks past the newest recorded node (nodes dated later).
WALK_PAGES = 50


async def last_node(call: Call, initiative: str, since: str | None = None, until: str | None = None) -> str | None:
    """The id of the timeline walk's last node in [`since`, `until`] (None: an empty walk). The walk
    pages from its oldest node only: a 5,000-node initiative's newest nodes were 100 windows away.
    Its order is when things happened, then recorded; the newest recorded node (`search` without
    words, newest first) is almost always the last, and a walk on from it (`timeline` anchored
    there, a page of `LIMIT` at a time, at most `WALK_PAGES`) finds any dated after it."""
    found = await ok(
        call, "search", {"initiatives": [initiative], "filters": {"current": "all"}, "limit": 1, "budget_chars": 512}
    )
    hits = found["data"]["hits"]
    if not hits:
        return None
    window = {k: v for k, v in (("since", since), ("until", until)) if v}
    args: dict[str, Any] = {"initiatives": [initiative], "limit": LIMIT, "budget_chars": 512, **window}
    args.update(anchor={"id": hits[0]["id"]}, before=1, after=0)
    last: str | None = None
    for _ in range(WALK_PAGES):
        page = await ok(call, "timeline", args)
        last = page["data"]["hits"][-1]["id"] if page["data"]["hits"] else last
        following = page.get("continuation")
        if not following:
            break
        args = following["next_arguments"]
    return last
