"""What recall's channels read of a very long body: its head and the windows around the query's
words, not all of it (decision 226).

`recall` re-scores its candidates in Python — BM25F by passages, proximity, the updates test, a
neighbour's brevity — and each of them tokenised and stemmed a candidate's whole body, on every call
it was a candidate in: a note of a million characters (a pasted document, a log) made every such
`recall` take seconds (figures in decision 226). The full-text index still finds such a note by
the words it holds (all of them up to about 1 MB of distinct words, decision 234; SQL ranks them);
only the re-scoring reads an excerpt, and only of a body longer than `LONG_BODY_CHARS`, far above
any message of the benchmark sets. The excerpt depends on the query, so its node carries a revision
of its own (`<revision>~<digest of the spans>`) for the memos keyed by revision; the answer's views
are built from the stored node, never from this one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import replace

from kaeru.domain.model import Node

#: A body longer than this (characters) is read through `excerpt`.
LONG_BODY_CHARS = 50_000
#: What an excerpt holds at most (characters): the head, then windows in the order of the text.
EXCERPT_CHARS = 40_000
#: The head kept whatever the query (characters).
HEAD_CHARS = 4_000
#: Characters kept on either side of an occurrence of a query word.
WINDOW_CHARS = 1_500
#: Occurrences of one query word looked for (the first ones, in the order of the text).
HITS_PER_WORD = 12


def readable(node: Node, needles: Iterable[str]) -> Node:
    """`node`, or for a body over `LONG_BODY_CHARS` a copy whose body is its `excerpt` for
    `needles` (the query's words and stems, lower case) and whose revision names the excerpt."""
    body = node.body
    if body is None or len(body) <= LONG_BODY_CHARS:
        return node
    spans = excerpt_spans(body, needles)
    digest = hashlib.blake2b(repr(spans).encode(), digest_size=6).hexdigest()
    return replace(node, body="\n".join(body[a:b] for a, b in spans), revision=f"{node.revision}~{digest}")


def excerpt_spans(body: str, needles: Iterable[str]) -> list[tuple[int, int]]:
    """The spans of `body` an excerpt keeps: `[0, HEAD_CHARS)` and `WINDOW_CHARS` either side of the
    first `HITS_PER_WORD` occurrences of each needle (case-insensitively, where lower-casing keeps
    the text's length), merged, in order, cut to `EXCERPT_CHARS`, each span's ends moved to
    whitespace so no word is cut in two."""
    wanted = [(0, min(len(body), HEAD_CHARS))]
    lower = body.lower()
    haystack = lower if len(lower) == len(body) else body
    for needle in dict.fromkeys(n for n in needles if len(n) > 1):
        at = haystack.find(needle)
        for _ in range(HITS_PER_WORD):
            if at < 0:
                break
            wanted.append((max(0, at - WINDOW_CHARS), min(len(body), at + len(needle) + WINDOW_CHARS)))
            at = haystack.find(needle, at + len(needle))
    wanted.sort()
    merged: list[tuple[int, int]] = []
    for a, b in wanted:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    spans: list[tuple[int, int]] = []
    room = EXCERPT_CHARS
    for a, b in merged:
        if room <= 0:
            break
        b = min(b, a + room)
        a, b = _to_whitespace(body, a, b)
        if b > a:
            spans.append((a, b))
            room -= b - a
    return spans


def _to_whitespace(body: str, a: int, b: int) -> tuple[int, int]:
    """`[a, b)` narrowed to whole words: a start inside a word moves to the next word, an end inside
    one moves back before it (the text's own ends stay)."""
    if a > 0 and not body[a - 1].isspace():
        while a < b and not body[a].isspace():
            a += 1
        while a < b and body[a].isspace():
            a += 1
    if b < len(body) and not body[b].isspace():
        while b > a and not body[b - 1].isspace():
            b -= 1
        while b > a and body[b - 1].isspace():
            b -= 1
    return a, b
