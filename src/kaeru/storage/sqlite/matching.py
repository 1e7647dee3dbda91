"""How a query's words become an FTS5 match, and what a store remembers about matches across its
sessions: which words are common, their in-memory copies (`TextCache`), the scopes' sizes.

Split from `search` so that the planner reads as the planner; `store` builds the match of its own
re-index check from the same function.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from kaeru.domain.naming import forms
from kaeru.domain.text import tokens
from kaeru.storage.sqlite.impacts import TextCache


def scope_tokens(initiative_ids: Sequence[int]) -> str:
    """The `scope` column of a node's index rows: one token per initiative."""
    return " ".join(f"s{i}" for i in initiative_ids)


def fts_match(
    tokens: Sequence[str],
    match_all: bool,
    prefix: bool,
    scope: Sequence[int] = (),
    fields: Sequence[str] = ("name", "description", "body", "tags"),
    stemmed: bool = False,
) -> str:
    """An FTS5 query that means exactly "these literal tokens" (or these stems, in the stem columns):
    each quoted, joined by AND/OR, limited to rows of the given initiatives (so ranking work is
    spent on the scope only)."""
    star = "*" if prefix else ""
    parts = ['"' + t.replace('"', '""') + '"' + star for t in tokens]
    columns = " ".join(("stem_" + f if stemmed else f) for f in fields if f in ("name", "description", "body", "tags"))
    words = "{" + columns + "} : (" + (" AND " if match_all else " OR ").join(parts) + ")"
    if not scope:
        return words
    return "scope : (" + " OR ".join(f'"s{int(i)}"' for i in scope) + ") AND " + words


def tags_match(tags: Sequence[str], scope: Sequence[int]) -> str | None:
    """The MATCH of the scope's index rows whose tags column holds every word of every one of
    `tags` (a superset of the rows carrying them: a caller still tests the tags exactly), so that
    a search by tags without words reads those rows, not every member's JSON tags (decision 278);
    None when a tag has no word or is spelt two ways (`naming.forms`)."""
    words = [tokens(tag) for tag in tags]
    if not tags or not all(words) or any(len(forms(tag)) > 1 for tag in tags):
        return None
    return fts_match(list(dict.fromkeys(w for found in words for w in found)), True, False, scope, ("tags",))


def tags_held(tags: Sequence[str], listed: int) -> list[tuple[str, list[Any]]]:
    """Clauses, with their parameters, that a node `n` carries every one of `tags`, each in either
    spelling `naming.forms` gives (decision 184): a clause a tag, or past `listed` tags one clause
    for them all, bound as one parameter. A search may name thousands of tags, and SQLite refuses
    an expression nested a thousand deep as it refuses more than 32,766 parameters."""
    if len(tags) <= listed:
        held = "EXISTS (SELECT 1 FROM json_each(n.tags) t WHERE t.value IN ({}))"
        return [(held.format(", ".join("?" * len(forms(tag)))), list(forms(tag))) for tag in tags]
    every = (
        "NOT EXISTS (SELECT 1 FROM json_each(?) w WHERE NOT EXISTS (SELECT 1 FROM json_each(n.tags) t "
        "WHERE t.value IN (SELECT value FROM json_each(w.value))))"
    )
    return [(every, [json.dumps([list(forms(tag)) for tag in tags])])]


class CommonWords:
    """Word queries known to match more than `search.SCOPE_THRESHOLD` rows, so a search goes straight to the
    scoped plan instead of counting them twice first. Vaults grow, so a common query stays common;
    one that became rare again only runs the other plan, which gives the same results. Bounded:
    forgotten all at once when full."""

    def __init__(self, size: int = 4096, *, search_cache_bytes: int | None = None):
        self._size = size
        self._known: set[str] = set()
        #: Whether the full-text index holds no `audit_event` node (decision 16.K1): then a scoped
        #: match is exactly the live members of the scope, and counts need no join. None: not read yet.
        self.audit_free: bool | None = None
        #: Broad searches ranked in memory (decision 16.B4), shared by the store's sessions.
        self.text = TextCache(search_cache_bytes)
        #: `scope_size` by (initiatives, watermark) (decision 16.E4); forgotten all at once when full.
        self.scope_sizes: dict[tuple[tuple[int, ...], tuple[int, int]], int] = {}

    def __contains__(self, match: str) -> bool:
        return match in self._known

    def add(self, match: str) -> None:
        if len(self._known) >= self._size:
            self._known.clear()
        self._known.add(match)
