"""Recall's raw fallback (decision 17.C5): when the curated hits are fewer than asked (and risk is not
high), the query's words are looked up literally in the full text of the stored sources — the
verbatim documents, transcripts and pages that `note kind=reference source=…` keeps as a body — and
the matching passages are returned apart from the hits, as `raw_hits`.

A source is long and ranks poorly among short notes, and its words are the source's, not the
agent's: the fallback finds the passage that holds the query's words and shows it with its offset,
so `read … body_offset=<offset>` opens the source there.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kaeru.domain.model import NodeType
from kaeru.domain.text import content_tokens
from kaeru.service import grants
from kaeru.service.revise import has_source
from kaeru.storage.base import Initiative, SearchQuery, Session

#: How many sources the literal search considers at most.
WINDOW = 50
#: The longest passage shown per raw hit, in characters; a small token budget shows less, down to
#: `MIN_EXCERPT` (a budget without room for one such passage gets no raw hit).
EXCERPT = 320
MIN_EXCERPT = 80
#: At most this many occurrences of the query's words are looked at in one source.
OCCURRENCES = 2000


@dataclass(frozen=True)
class RawHit:
    id: str
    revision: str
    name: str
    initiatives: list[str]
    #: The passage: `chars` characters of the source starting at `offset`.
    excerpt: str
    offset: int
    #: The source's length in characters.
    chars: int
    #: The query's words the passage holds.
    matched: list[str]

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "revision": self.revision,
            "name": self.name,
            "initiatives": self.initiatives,
            "excerpt": self.excerpt,
            "offset": self.offset,
            "chars": self.chars,
            "matched": self.matched,
        }


def search_sources(
    session: Session,
    scopes: Sequence[Initiative],
    query: str,
    exclude: Collection[str],
    wanted: int,
    chars: int,
) -> list[RawHit]:
    """The best `wanted` sources in scope (not in `exclude`) whose text holds a word of `query`, each
    with its best passage; `chars` bounds the passages together."""
    words = content_tokens(query)[:64]
    if not words or wanted <= 0:
        return []
    rows, _, _ = session.search(
        SearchQuery(
            initiative_ids=[s.id for s in scopes],
            tokens=words,
            types=[NodeType.REFERENCE.value],
            fields=("body",),
            omit_superseded=False,
            window=WINDOW,
            count_total=False,
        )
    )
    ids = [r.id for r in rows if r.id not in exclude]
    if grants.granted_ids(session) is not None:
        visible = grants.visible_ids(session, ids)
        ids = [i for i in ids if i in visible]
    nodes = session.nodes_by_ids(ids)
    sources = [nodes[i] for i in ids if i in nodes and not nodes[i].retracted and has_source(nodes[i])][:wanted]
    if not sources:
        return []
    names = {s.id: s.name for s in scopes}
    width = max(MIN_EXCERPT, min(EXCERPT, chars // len(sources)))
    hits = []
    for node in sources:
        body = node.body or ""
        offset, matched = best_passage(body, words, width)
        hits.append(
            RawHit(
                id=node.id,
                revision=node.revision,
                name=node.name,
                initiatives=[names[i] for i in node.initiatives if i in names],
                excerpt=body[offset : offset + width],
                offset=offset,
                chars=len(body),
                matched=matched,
            )
        )
    return hits


def best_passage(body: str, words: Sequence[str], width: int) -> tuple[int, list[str]]:
    """Where the `width` characters holding the most distinct query words start (a little before the
    first of them), and those words. Words are matched whole and case-insensitively."""
    pattern = re.compile(r"(?<!\w)(" + "|".join(re.escape(w) for w in words) + r")(?!\w)", re.IGNORECASE)
    found: list[tuple[int, str]] = []
    for match in pattern.finditer(body):
        found.append((match.start(), match.group(1).lower()))
        if len(found) >= OCCURRENCES:
            break
    if not found:
        return 0, []
    best_start, best_words = found[0][0], {found[0][1]}
    j = 0
    for i, (start, _) in enumerate(found):
        j = max(j, i)
        while j + 1 < len(found) and found[j + 1][0] < start + width * 3 // 4:
            j += 1
        inside = {w for _, w in found[i : j + 1]}
        if len(inside) > len(best_words):
            best_start, best_words = start, inside
    offset = max(0, best_start - width // 5)
    if offset:  # start on a word boundary when one is near
        space = body.rfind(" ", max(0, offset - 20), offset + 1)
        if space >= 0:
            offset = space + 1
    return offset, [w for w in words if w in best_words]
