"""The re-entry ritual over a real stdio server, driven by the text blocks alone (issue 18).

An agent whose client hands it only `content` must still chain every call: ids and revisions,
the next page's exact arguments, conflicts it can act on. With `KAERU_STRUCTURED=off` the server
sends no `structuredContent` and lists no `outputSchema`, so the text is all there is.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.wire.support import connect

HANDLE = re.compile(r"id=(\S+) rev=(\S+)")


async def _text(client: Any, tool: str, args: dict[str, Any], *, error: bool = False) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error is error, result
    [block] = result.content
    text: str = block.text
    assert not text.lstrip().startswith("{"), "compact text, not the JSON envelope"
    return text


def _next_call(text: str) -> tuple[str, dict[str, Any]]:
    [line] = [line for line in text.splitlines() if line.startswith("next: ")]
    tool, arguments = line.removeprefix("next: ").split(" ", 1)
    parsed: dict[str, Any] = json.loads(arguments)
    return tool, parsed


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.timeout(120)
@pytest.mark.parametrize("structured", ["on", "off"])
async def test_the_ritual_reading_only_the_text(server_env: dict[str, str], tmp_path: Path, structured: str) -> None:
    env = {**server_env, "KAERU_STRUCTURED": structured}
    async with connect("stdio", env, tmp_path) as client:
        listing = await client.list_tools()
        assert all((tool.output_schema is not None) is (structured == "on") for tool in listing.tools)
        for i in range(3):
            await _text(client, "note", {"initiative": "heron", "kind": "observation", "text": f"heron {i} waded"})
        await _text(
            client,
            "note",
            {"initiative": "heron", "kind": "decision", "name": "ring-plan", "text": "ring herons at dawn"},
        )

        initiatives = await _text(client, "initiatives", {})
        [initiative] = re.findall(r"^- (\S+) · ", initiatives, re.M)
        assert initiative == "heron"

        context = await _text(client, "context", {"initiative": initiative})
        assert re.search(r"ring-plan · decision · \d{4}-\d\d-\d\d · id=", context) and "ring herons at dawn" in context

        first = await _text(client, "search", {"initiatives": [initiative], "text": "heron", "limit": 2})
        assert first.startswith("search ok: 2 of 3 hits")
        seen = [m.group(1) for m in HANDLE.finditer(first)]
        tool, arguments = _next_call(first)
        second = await _text(client, tool, arguments)
        seen += [m.group(1) for m in HANDLE.finditer(second)]
        assert len(set(seen)) == 3 and "next: " not in second

        read = await _text(client, "read", {"initiative": initiative, "node": seen[0]})
        node, revision = HANDLE.search(read).groups()  # type: ignore[union-attr]
        assert node == seen[0]
        revised = await _text(
            client,
            "revise",
            {
                "initiative": initiative,
                "node": node,
                "patch": {"description": "first sighting"},
                "expected_revision": revision,
            },
        )
        assert revised.startswith(f"revise applied: id={node} rev=")
        assert "description: null → first sighting" in revised
        stale = await _text(
            client,
            "revise",
            {"initiative": initiative, "node": node, "patch": {"description": "again"}, "expected_revision": revision},
            error=True,
        )
        assert "! revision_conflict [expected_revision] (retryable)" in stale
        again = await _text(client, "read", {"initiative": initiative, "node": node})
        assert HANDLE.search(again).group(2) == HANDLE.search(revised).group(2)  # type: ignore[union-attr]
        assert "description: first sighting" in again


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_the_texts_days_are_the_users_days(server_env: dict[str, str], tmp_path: Path) -> None:
    """`KAERU_TIMEZONE` decides the day a node line shows, as it decides `today=` (session 51): a
    note that happened at 20:00 UTC on 4 January happened on the 5th, at 09:00, in Auckland."""
    env = {**server_env, "KAERU_TIMEZONE": "Pacific/Auckland"}
    async with connect("stdio", env, tmp_path) as client:
        args = {"initiative": "heron", "name": "dusk", "text": "the heron left", "occurred_at": "2026-01-04T20:00:00Z"}
        await _text(client, "note", args)
        text = await _text(client, "read", {"initiative": "heron", "node": {"name": "dusk", "initiative": "heron"}})
        assert "dusk · observation · 2026-01-05 09:00 " in text, text
