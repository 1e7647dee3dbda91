"""The one did-you-mean of a value out of a closed list: a board's columns and a schema's enums.

A board column unknown to `task`/`task_update` was refused with the columns alone while `search`
offered the close one, and `Done` was not offered `done`: two tests of one mistake had drifted.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

#: How alike a value and an allowed one are to be offered as each other (difflib's ratio).
CLOSE = 0.75


def close_key(value: str, allowed: Sequence[str]) -> str | None:
    """The allowed value `value` most likely meant: itself in another case or with `_` for `-` (or
    the reverse), else the closest spelling; None when none is close."""
    lowered = value.strip().lower()
    for spelt in dict.fromkeys(
        (
            lowered,
            lowered.replace("_", "-"),
            lowered.replace("-", "_"),
            lowered.replace(" ", "-"),
            lowered.replace(" ", "_"),
        )
    ):
        if spelt in allowed:
            return spelt
    close = difflib.get_close_matches(lowered, list(allowed), n=1, cutoff=CLOSE)
    return close[0] if close else None


def did_you_mean(value: str, allowed: Sequence[str]) -> str:
    """`; did you mean 'x'?` for the allowed value `value` most likely meant, or nothing."""
    close = close_key(value, allowed)
    return f"; did you mean {close!r}?" if close is not None else ""
