"""What a reader sees as one character (a grapheme cluster), approximately: where a text can be cut
without splitting one, and how many terminal columns a text takes.

A preview cut by code points split clusters: `e` + U+0301 lost its accent, a family emoji (four
people joined by U+200D) became another emoji and a dangling joiner, a flag (two regional
indicators) a letter in a box. The rules here are the part of Unicode's (UAX #29) that such cuts
meet, without its tables: a cluster goes on through combining marks (Mn, Me, Mc), U+200C/U+200D
and whatever follows U+200D, variation selectors, emoji skin-tone modifiers, tag characters,
halfwidth kana voicing marks and conjoining Hangul vowels and finals, and a CR before LF; regional
indicators pair up. Not covered (a cut there may still split): Prepend characters, a conjoining
Hangul leading consonant before another or before a precomposed syllable, Indic conjuncts (virama
+ consonant).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

#: How far back a cut looks for a cluster's start: past any real cluster (a family emoji with skin
#: tones is 11 code points, a subdivision flag 7); a longer run of marks is cut where it was.
MAX_CLUSTER = 32

_ZWJ = "\u200d"
#: Ranges of code points that extend the cluster before them, beyond the combining categories.
_EXTENDERS = (
    (0x200C, 0x200D),  # zero-width non-joiner and joiner
    (0xFE00, 0xFE0F),  # variation selectors (U+FE0F: emoji presentation)
    (0xFF9E, 0xFF9F),  # halfwidth katakana voiced sound marks
    (0x1160, 0x11FF),  # conjoining Hangul vowels and finals
    (0xD7B0, 0xD7FF),
    (0x1F3FB, 0x1F3FF),  # emoji skin-tone modifiers
    (0xE0020, 0xE007F),  # tag characters (subdivision flags)
    (0xE0100, 0xE01EF),  # variation selectors supplement
)
_MARKS = frozenset(("Mn", "Me", "Mc"))


def _extends(char: str) -> bool:
    code = ord(char)
    if code < 0x300:  # ASCII and Latin-1: no combining character
        return False
    if unicodedata.category(char) in _MARKS:
        return True
    return any(low <= code <= high for low, high in _EXTENDERS)


def _regional(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _joins(text: str, i: int) -> bool:
    """Whether `text[i]` belongs to the cluster of `text[i - 1]` (0 < i < len(text))."""
    prev, char = text[i - 1], text[i]
    if prev == "\r":
        return char == "\n"
    if prev == "\n" or char in "\r\n":
        return False
    if prev == _ZWJ or _extends(char):
        return True
    if _regional(char) and _regional(prev):
        # Indicators pair from the run's start: `char` closes a pair when an odd number precede it.
        run = 1
        while run < MAX_CLUSTER and i - run - 1 >= 0 and _regional(text[i - run - 1]):
            run += 1
        return run % 2 == 1
    return False


def cluster_end(text: str, end: int, floor: int = 0) -> int:
    """Where to cut `text` so that it keeps at most `end` code points: `end` when a cluster starts
    there, else the start of the cluster `end` falls in. Never `floor` or below (`text[floor:]`
    kept nothing: a page of it must hold something), and never further than `MAX_CLUSTER` back:
    then `end` as given."""
    if end <= floor or end >= len(text):
        return end
    i = end
    while i > floor and end - i < MAX_CLUSTER and _joins(text, i):
        i -= 1
    return end if i <= floor or _joins(text, i) else i


def clusters(text: str) -> Iterator[str]:
    """The clusters of `text`, in order."""
    start = 0
    pairing = bool(text) and _regional(text[0])  # the last cluster is one indicator awaiting its pair
    for i in range(1, len(text)):
        joined = pairing if _regional(text[i]) and _regional(text[i - 1]) else _joins(text, i)
        if not joined:
            yield text[start:i]
            start = i
        pairing = _regional(text[i]) and not (joined and pairing)
    if text:
        yield text[start:]


def _width(cluster: str) -> int:
    base = cluster[0]
    if unicodedata.category(base) in ("Mn", "Me", "Cf") or _extends(base):
        return 0  # a mark or format character alone, as a terminal draws it: over the cell before
    if len(cluster) > 1 and ("\ufe0f" in cluster or _regional(base)):
        return 2  # emoji presentation, a flag
    return 2 if any(unicodedata.east_asian_width(c) in ("W", "F") for c in cluster) else 1


def display_width(text: str) -> int:
    """The terminal columns `text` takes: 2 for a wide or fullwidth cluster (CJK, most emoji, a
    flag), 0 for a mark or format character alone, else 1. Approximate where terminals differ."""
    if text.isascii():
        return len(text)
    return sum(_width(cluster) for cluster in clusters(text))


def shortened(text: str, chars: int) -> str:
    """`text` cut to at most `chars` code points (`cluster_end`); `text` itself when it fits."""
    return text if len(text) <= chars else text[: cluster_end(text, chars)]
