"""What an answer left out, as a page says it: its `coverage.omitted` counts (decision 87).

A walk that counts what it leaves out only so far says two things of one section: the counted ones
(`limit`) and "at least one more" past them (`window`). The timeline's newest page said "200 before
(limit), 1 before (window)" of 24,000 earlier nodes; the two read together are "200+ earlier".
"""

from __future__ import annotations

from html import escape
from typing import Any

#: A section's name as a page says it (the timeline's `before`/`after`: the nodes earlier and later).
_SAID = {"before": "earlier", "after": "later"}


def omissions(envelope: dict[str, Any], only: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The envelope's omitted counts, of the sections `only` (None: all)."""
    found = (envelope.get("coverage") or {}).get("omitted") or []
    return [o for o in found if not only or o["section"] in only]


def omitted_count(envelope: dict[str, Any], section: str) -> int:
    """How many of `section` the answer left out (0: none, or not said)."""
    return sum(int(o.get("count") or 0) for o in omissions(envelope, (section,)))


def without(envelope: dict[str, Any], section: str) -> dict[str, Any]:
    """The envelope with `section`'s omitted count taken out: a page that says it elsewhere, once."""
    coverage = envelope.get("coverage") or {}
    kept = [o for o in coverage.get("omitted") or [] if o["section"] != section]
    return {**envelope, "coverage": {**coverage, "omitted": kept}}


def _said(omitted: list[dict[str, Any]]) -> str:
    """The counts as words: a section's counted ones and a `window`'s "at least one more" after
    them as one lower bound ("200+ earlier"); any other as "count section (reason)"."""
    beyond = {o["section"] for o in omitted if o["reason"] == "window"}
    counted = {o["section"] for o in omitted if o["reason"] == "limit"}
    parts = []
    for o in omitted:
        section = o["section"]
        name = _SAID.get(section, section)
        if section in beyond and section in counted:
            if o["reason"] == "limit":
                parts.append(f"{o['count']}+ {name}")
            continue
        parts.append(f"{o['count']} {name} ({o['reason']})")
    return ", ".join(parts)


def coverage_html(envelope: dict[str, Any], way: str = "", only: tuple[str, ...] | None = None) -> str:
    """What the answer says beside its hits: its warnings (why a search found nothing: "emoji and
    punctuation are not indexed") and what it left out — of the sections `only` (None: all), with
    `way`, a link to the rest, after it (`web/lists.py`)."""
    warned = "".join(
        f'<p class="warning" data-code="{escape(str(i.get("code")))}">{escape(str(i.get("message")))}</p>'
        for i in envelope.get("issues") or []
    )
    omitted = omissions(envelope, only)
    if not omitted:
        return warned
    return f'{warned}<p class="coverage">not shown: {escape(_said(omitted))}{way}</p>'
