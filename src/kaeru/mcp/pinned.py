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
#: The `_meta` key by which a tool tells Claude Code how long an answer it keeps in the conversation:
#: past its default (50,000 characters) a result is written to a file and the model shown a short
#: preview of it, so a `context` of the default size reached the model as a file name. Other clients
#: ignore a `_meta` key they do not know (MCP reserves `_meta` for such declarations).
RESULT_SIZE_KEY = "anthropic/maxResultSizeChars"
#: The ceiling Claude Code takes. Below it no figure is sure: `budget_chars` and `token_budget` bound
#: the bodies an answer shows, not the nodes' other fields (names, tags, properties), and `limit`
#: lets a page list hundreds of nodes (`initiatives` 500, `trail` 500 neighbours, `timeline` 100 and
#: its window), so the reads' largest answers reach it; a smaller figure would send an answer the
#: caller asked for to a file.
RESULT_SIZE_CHARS = 500_000
#: The tools whose answer can pass the default: every read (a page of nodes, one long body, a
#: chain's predecessors, a list of findings naming nodes). A mutation answers with what it wrote,
#: its changes' texts bounded (`revise`), and stays under it.
LARGE_ANSWERS = frozenset(
    {"initiatives", "context", "recall", "timeline", "reflect", "search", "read", "trail", "current_state"}
)


def pinned_listing(structured: bool = True) -> list[dict[str, Any]] | None:
    """The tools as `tools/list` gives them (without `outputSchema` when results carry no
    structured content, `KAERU_STRUCTURED=off`); None when the file is not there (a checkout
    mid-change: the caller builds the tools instead)."""
    try:
        entries: list[dict[str, Any]] = json.loads(LISTING.read_text(encoding="utf-8"))
    except OSError:
        return None
    return entries if structured else [without_output(entry) for entry in entries]


def result_meta(name: str) -> dict[str, Any] | None:
    """The `_meta` the tool `name` is listed with: the answer size it may keep whole (None: none),
    listed whether or not results carry structured content (the text alone can pass the default)."""
    return {RESULT_SIZE_KEY: RESULT_SIZE_CHARS} if name in LARGE_ANSWERS else None


def without_output(entry: dict[str, Any]) -> dict[str, Any]:
    """A listed tool without its output schema."""
    return {key: value for key, value in entry.items() if key != "outputSchema"}
