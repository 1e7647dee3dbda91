"""The pinned `tools/list` answer, `tools.json`: generated from the built tools by
`scripts/gen_tools_doc.py` and checked against them by `tests/contract/test_tools_snapshot.py`.

Read without the MCP SDK or any tool being built: `kaeru serve` answers its first `tools/list` from
it (decision 16.O3) and `kaeru tools` prints it (decision 194), each in a fraction of the time
building every tool's schemas takes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LISTING = Path(__file__).with_name("tools.json")


def pinned_listing(structured: bool = True) -> list[dict[str, Any]] | None:
    """The tools as `tools/list` gives them (without `outputSchema` when results carry no
    structured content, `KAERU_STRUCTURED=off`); None when the file is not there (a checkout
    mid-change: the caller builds the tools instead)."""
    try:
        entries: list[dict[str, Any]] = json.loads(LISTING.read_text(encoding="utf-8"))
    except OSError:
        return None
    return entries if structured else [without_output(entry) for entry in entries]


def without_output(entry: dict[str, Any]) -> dict[str, Any]:
    """A listed tool without its output schema."""
    return {key: value for key, value in entry.items() if key != "outputSchema"}
