"""A tag filter that matched nothing because the tag is spelled otherwise in the vault.

Tags match exactly, case and accents included (`filters.tags` in `search`, `tags` in `recall`): an
agent that tagged its notes `Backend` in one session and filters on `backend` in the next got `ok`
and no hit, and read "nothing there" — while `search`'s words ignore case and accents, which is
what it expects of tags too. Matching tags case-insensitively would change which nodes every tag filter
keeps, on both engines; instead, when a filtered read finds nothing, it says which tags no node in
scope carries as asked and how the scope does spell them, so the next call is the right one.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from kaeru.domain.text import query_tokens
from kaeru.service.checks import MAX_TAG_CHARS
from kaeru.service.outcomes import Issue
from kaeru.storage.base import SearchQuery, Session

#: Tags looked at per call (a filter holds a few; each costs up to two searches of the scope).
TAGS_LOOKED_AT = 3
#: A longer filter tag has no other spelling here: a stored tag is at most `MAX_TAG_CHARS`, and case
#: folding at most doubles a character (`ß` → `ss`). Its words are not looked up (a tag of thousands
#: of words made each empty answer cost seconds).
LONGEST_LOOKED_AT = 2 * MAX_TAG_CHARS
#: Nodes whose tags are read for another spelling of one tag (those whose tags hold its words).
NODES_READ = 50
#: Other spellings named per tag.
SPELLINGS_NAMED = 3


def unheld_tags(
    session: Session, scope_ids: Sequence[int], tags: Sequence[str], field: str, *, alone: bool = False
) -> list[Issue]:
    """A warning for each of `tags` that no node in the scopes carries, spelled as asked, while some
    carry it with another case or accents (`field.<i>`: the filter's position). Nothing is said of
    a tag no node carries in any spelling: an empty answer says that already. `alone`: the one tag
    was the whole query, so the empty answer already says no node carries it as asked."""
    issues: list[Issue] = []
    for i, tag in enumerate(tags[:TAGS_LOOKED_AT]):
        words = query_tokens(tag) if len(tag) <= LONGEST_LOOKED_AT else []
        if not words:
            continue
        if not alone:
            exact = SearchQuery(
                initiative_ids=scope_ids, tags=[tag], omit_superseded=False, window=1, count_total=False
            )
            if session.search(exact)[0]:
                continue  # carried as asked: the other filters or the words left it out
        near = SearchQuery(
            initiative_ids=scope_ids,
            tokens=words,
            match_all=True,
            fields=("tags",),
            omit_superseded=False,
            window=NODES_READ,
            count_total=False,
        )
        rows = session.search(near)[0]
        wanted = _unmarked(tag)
        nodes = session.nodes_by_ids([r.id for r in rows])
        spellings = sorted({t for n in nodes.values() for t in n.tags if t != tag and _unmarked(t) == wanted})
        if spellings:
            named = " or ".join(repr(s) for s in spellings[:SPELLINGS_NAMED])
            issues.append(
                Issue(
                    "invalid_argument",
                    f"no node here carries the tag {tag!r}, so it matched nothing; tags match exactly, case "
                    f"and accents included, and nodes here carry {named}",
                    f"{field}.{i}",
                )
            )
    return issues


def _unmarked(tag: str) -> str:
    """`tag` case-folded and without its accents (`Café` → `cafe`), as `search`'s words match."""
    decomposed = unicodedata.normalize("NFD", tag.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))
