"""Read tools: `search` (literal lookup across initiatives) and `read` (one node in full, or as of then)."""

from __future__ import annotations

from kaeru.api.envelope import READ_KIND
from kaeru.mcp.adapter import ToolRegistry, ToolSpec, reader

SEARCH = """Find memory by the exact words it contains, across one or more initiatives.

What it does: literal token search over name, description, body and tags. Your text is never \
query syntax — quotes, `*`, `:`, `AND`, parentheses are ordinary characters; words and numbers are \
matched case- and accent-insensitively. `match: all` requires every word, `any` (default) at least \
one; `prefix: true` lets each word match as a prefix (`migr` finds `migration`). `filters` narrow \
by types, tiers, layers, statuses and tags (a node must carry every listed tag); filters alone \
list the newest matching nodes. Ranked by BM25 (name weighted highest), then recency. With \
`filters.current: preferred` (default) a node superseded by a live node in the searched scopes is \
left out and counted in `coverage.omitted` (reason `superseded`); `all` shows every version with \
its `currentness`.
Changes nothing (read-only).
Use it when you know the words; use `read` to open one node in full (search bodies are cut to fit \
`budget_chars`).
Returns SearchData {hits: NodeData[], total}: each hit with id, revision (for `expected_revision`), \
type, tier, layer, currentness, successors, tags, the scopes it matched in `initiatives`, and a \
body excerpt with `body_range` when cut. `coverage.omitted` says what was left out and why \
(`limit`: the hits after this page); \
`continuation.next_arguments` is the exact call for the next page (stable while others write)."""

READ = """Open one node in full: its whole record now, or exactly as it was at a past moment.

What it does: resolves `node` (an id, an exact name in `initiative`, or {initiative, name}; a name \
shared by several live nodes is rejected with `ambiguous_ref` listing their ids) and returns every \
field. `at` (RFC 3339, a date, or a past offset like `5m`, `2d`) returns the revision that was \
current then — body, name, tags, layer and currentness as they were — even for a node forgotten \
since (name it by id). A body longer than `budget_chars` is paged: `body_range` says which part \
you got and `continuation.next_arguments` (with `body_offset`) fetches the rest. `neighbours: true` \
adds the node's edges in both directions.
Changes nothing (read-only).
Use it after `search` when an excerpt is not enough, or to check a node's `revision` before a \
compare-and-set `revise`.
Returns SearchData with exactly one hit (NodeData), plus `edges` [{from, to, edge_type, weight}] \
when `neighbours` is set."""


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
