"""How `kaeru token list`, `history` and `grant` show a token's grants and times.

A grant is a list of initiative names, and a name may hold a comma: joined with commas as they were,
`foo, bar` (one initiative) read as `foo` and `bar`. A name that could be misread is quoted (JSON
style); a list longer than a line reads well is said as a count (`--json` lists it whole). Times are
on the user's clock, to the minute, in `list` as in `history`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kaeru.service.token_history import TokenEvent

#: A grant of more names than this, or longer than `LONG_CHARS`, is said as "N initiatives".
MOST_NAMES = 6
LONG_CHARS = 80


def quoted(name: str) -> str:
    """`name` as a grant list shows it: as is, or quoted when it could be misread (a comma, a quote,
    spaces at its ends, a control character, `*`, which means every initiative, or nothing)."""
    plain = name and name != "*" and name == name.strip() and not any(c in ',"\\' or not c.isprintable() for c in name)
    return name if plain else json.dumps(name, ensure_ascii=False)


def names(initiatives: Iterable[str], sep: str = ",") -> str:
    """Every name of a grant, unambiguously: `a,"b, c"`."""
    return sep.join(quoted(str(n)) for n in initiatives)


def scope(initiatives: Sequence[str] | None, whole: bool = False) -> str:
    """A grant in a line: `*` for every initiative, its names, or "N initiatives" when long (unless
    `whole`)."""
    if initiatives is None:
        return "*"
    shown = names(initiatives)
    if whole or (len(initiatives) <= MOST_NAMES and len(shown) <= LONG_CHARS):
        return shown
    return f"{len(initiatives)} initiatives"


def clock(stamp: object, zone: tzinfo | None) -> str:
    """A stored UTC time on the user's clock, to the minute, as `kaeru call`'s text shows a time of day."""
    from kaeru.domain.timefmt import parse_ts

    if stamp is None:
        return "never"
    if not isinstance(stamp, str):
        return json.dumps(stamp)  # not a time kaeru writes (a damaged record's): shown as stored
    try:
        return parse_ts(stamp).astimezone(zone).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp  # not a time kaeru writes: shown as stored


def _grant_scope(grant: dict[str, Any]) -> str:
    granted = grant.get("initiatives")
    if isinstance(granted, list):
        return scope([str(n) for n in granted])
    return "*" if granted is None else json.dumps(granted)


def what_changed(event: TokenEvent, zone: tzinfo | None) -> str:
    """A token record's grants (`token list`'s words), a renewal's expiry before → after, or a change
    of grants before → after."""
    if event.expiry is not None:
        return f"expiry {clock(event.expiry[0], zone)} → {clock(event.expiry[1], zone)}"
    grant = event.grant or {}
    if event.operation == "granted":
        return f"{_grant_scope(event.before or {})} → {_grant_scope(grant)}"
    mode = "read-only" if grant.get("read_only") else "read-write"
    ends = f"expires {clock(grant['expires_at'], zone)}" if grant.get("expires_at") else "never expires"
    return f"{'had ' if event.operation == 'revoked' else ''}{_grant_scope(grant)}; {mode}; {ends}"
