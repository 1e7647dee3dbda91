"""The text a model reads of a search, recall or timeline over many initiatives does not repeat
their names (scale probe of session 40: 10 hits across 3,000 initiatives were 46.8 KB of text, the
`next:` line naming all 3,000).

The `next:` line names a long list argument by its count; the model sends it as it did in its call
(every continuation repeats the call's own arguments, and its cursor was made for them). The
envelope's `continuation.next_arguments` keep every argument: the published `search` input requires
`initiatives`, so a program repeats them verbatim.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from kaeru.mcp.render import compact
from kaeru.service import Service
from tests.schema_checked import checked_calls

SCOPES = [f"scope-{i:02d}" for i in range(30)]
Call = Any


@pytest.fixture
def call(service: Service) -> Call:
    run = checked_calls(service)
    for name in SCOPES:
        run("note", initiative=name, text=f"This build uses gradle {len(name)}.")
    return run


def _next(text: str, asked: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The next call as a model reads it off the text: the line's arguments, and each list it names
    taken from the model's own call."""
    [line] = [line for line in text.splitlines() if line.startswith("next: ")]
    tool, rest = line.removeprefix("next: ").split(" ", 1)
    arguments, end = json.JSONDecoder().raw_decode(rest)
    for name in re.findall(r'"(\w+)" \(\d+ items\)', rest[end:]):
        arguments[name] = asked[name]
    return tool, arguments


@pytest.mark.parametrize(
    "tool,asked",
    [
        ("search", {"initiatives": SCOPES, "text": "gradle", "limit": 4}),
        ("recall", {"initiatives": SCOPES, "query": "gradle build", "limit": 4}),
        ("timeline", {"initiatives": SCOPES, "since": "1d", "limit": 4}),
    ],
)
def test_the_next_line_names_many_initiatives_by_their_count_and_still_continues(
    call: Call, tool: str, asked: dict[str, Any]
) -> None:
    first = call(tool, **asked)
    assert first["continuation"]["next_arguments"]["initiatives"] == SCOPES, "the envelope keeps them all"
    text = compact(first)
    [line] = [line for line in text.splitlines() if line.startswith("next: ")]
    named = [name for name in SCOPES if name in text]  # (recall's `next_step` reads each hit in its own)
    assert len(named) <= len(first["data"]["hits"]) and not any(name in line for name in SCOPES)
    assert len(line) < 400 and f'plus "initiatives" ({len(SCOPES)} items) exactly as in this call' in line
    seen = [h["id"] for h in first["data"]["hits"]]
    following = first
    while following.get("continuation"):
        name, arguments = _next(compact(following), asked)
        assert name == tool
        following = call(name, **arguments)
        assert following["state"] == "ok" and not following["issues"], following["issues"]
        seen += [h["id"] for h in following["data"]["hits"]]
        if tool != "search":
            break  # one page shows the line is enough to go on; search pages to its end
    if tool == "search":
        assert len(seen) == len(set(seen)) == len(SCOPES)


def test_a_short_list_stays_on_the_next_line(call: Call) -> None:
    asked = {"initiatives": SCOPES[:3], "text": "gradle", "limit": 1}
    [line] = [line for line in compact(call("search", **asked)).splitlines() if line.startswith("next: ")]
    assert json.loads(line.split(" ", 2)[2])["initiatives"] == SCOPES[:3]
