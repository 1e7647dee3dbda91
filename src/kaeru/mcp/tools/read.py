"""Read tools: `search` (literal lookup across initiatives) and `read` (one node in full, or as of then)."""

from __future__ import annotations

from kaeru.api.envelope import READ_KIND
from kaeru.mcp.adapter import ToolRegistry, ToolSpec, reader

SEARCH = """Find memory by the exact words it contains, across initiatives. Text is literal, never query syntax; case and accents are ignored (`match` any or all words; `prefix` for word starts). `filters` narrow by type, tier, layer, status and tags, and alone list the newest nodes. Ranked by BM25, then recency; superseded nodes are left out unless `filters.current` is all.
Changes nothing. Use `recall` when you do not know the words, `read` for a whole body. Returns hits with id and revision, `total`, and the next page in `continuation`."""

READ = """Open one node in full, now or as it was at `at` (a forgotten node too: by id, with `at` before it was forgotten). A body over `budget_chars` is paged (`continuation`); `neighbours` adds its edges.
Changes nothing. Use it after `search`/`recall`, or for the `revision` a `revise` checks. Returns the node (and `edges`)."""


def register(registry: ToolRegistry) -> None:
    registry.add(
        ToolSpec(
            "search",
            "Search memory (literal)",
            SEARCH,
            READ_KIND,
            reader("search"),
            read_only=True,
            idempotent=True,
        )
    )
    registry.add(ToolSpec("read", "Read one node", READ, READ_KIND, reader("read"), read_only=True, idempotent=True))
