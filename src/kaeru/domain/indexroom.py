"""How much of a node's text the full-text index holds: all of it, unless its words overflow the
room of one PostgreSQL `tsvector`.

A tsvector holds at most 1,048,575 bytes of distinct lexemes and their positions. SQLite's FTS5 has
no such cap, so a note with a huge vocabulary (a pasted log of ids, a long text in an unspaced
script, whose two-character pieces are nearly all distinct) was accepted on SQLite and refused on
PostgreSQL, and a copy, an import or a revise of such a note into PostgreSQL failed. Now both
engines index the same tokens: every token of the name and the tags, then the description's and
the body's in order up to the first that would not fit in either of the node's two tsvectors
(literal and stemmed). The text itself is always stored whole; only the words past that point are
not searchable, on both engines alike (a memory one backend accepts, the other accepts too).

`kept` decides from the fields' lengths alone in the common case (a note far below the room: no
walk, no set), from a long text's distinct words next; only a text whose distinct words could
overflow is walked token by token, as PostgreSQL sizes a tsvector.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import NamedTuple

from kaeru.domain.text import TOKENISER, manual_tags

#: The bytes of lexemes and positions one tsvector may hold (PostgreSQL's `MAXSTRPOS`).
TSVECTOR_BYTES = (1 << 20) - 1
#: tsvector positions are 14-bit; later positions are clamped (they only affect ranking).
MAX_POSITION = 16383
#: Positions kept per lexeme and field; the body keeps one, which bounds the tsvector of a huge body
#: to its distinct words.
POSITIONS_PER_FIELD = {"A": 8, "B": 8, "C": 8, "D": 1}

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
#: The most a token can add to a tsvector for each character it has, and on its own: four bytes a
#: character (UTF-8), the alignment byte, the position count and one position.
_BYTES_PER_CHAR = 4
_BYTES_PER_TOKEN = 5


class Fields(NamedTuple):
    """One variant's tokens of a node's indexed fields (literal, or their stems)."""

    name: Sequence[str]
    tags: Sequence[str]
    description: Sequence[str]
    body: Sequence[str]


class Kept(NamedTuple):
    """How many of the description's and the body's tokens the index holds."""

    description: int
    body: int


def _fit(texts: Sequence[str], count: int) -> bool:
    """Whether `count` fields held as `texts` (their tokens space-joined, or just joined) surely fit
    a tsvector, both variants in one, from their lengths alone: a token of `c` characters takes at
    most `c + 1` characters of them and `4c + 5` bytes."""
    return _BYTES_PER_CHAR * sum(map(len, texts)) + _BYTES_PER_TOKEN * count <= TSVECTOR_BYTES


def _distinct_bound(fields: Fields) -> int:
    """The most the fields could take in a tsvector, from their distinct words: each one's bytes
    and count once, and two bytes a position each field can keep (for a long text that repeats its
    words, which the lengths alone overstate many times)."""
    found = [set(words) for words in fields]
    distinct = set().union(*found)
    joined = "".join(distinct)
    size = (len(joined) if joined.isascii() else len(joined.encode())) + _BYTES_PER_TOKEN * len(distinct)
    for weight, words, words_found in zip("ACBD", fields, found, strict=True):
        size += 2 * min(len(words), POSITIONS_PER_FIELD[weight] * len(words_found))
    return size


class _Room:
    """One tsvector being filled as PostgreSQL sizes it: each distinct lexeme's bytes (padded to
    an even count), its position count and two bytes a kept position."""

    def __init__(self) -> None:
        self.used = 0
        self.seen: dict[tuple[str, str], int] = {}  # (lexeme, weight) -> occurrences so far
        self.lexemes: set[str] = set()

    def cost(self, word: str, weight: str) -> int:
        """What adding `word` to field `weight` would add (0: a position past the field's cap)."""
        word = word if word.islower() else word.translate(_ASCII_LOWER)
        if self.seen.get((word, weight), 0) >= POSITIONS_PER_FIELD[weight]:
            return 0
        if word in self.lexemes:
            return 2
        size = len(word) if word.isascii() else len(word.encode())
        return size + (size & 1) + 4

    def add(self, word: str, weight: str, cost: int) -> None:
        word = word if word.islower() else word.translate(_ASCII_LOWER)
        key = (word, weight)
        self.seen[key] = self.seen.get(key, 0) + 1
        self.lexemes.add(word)
        self.used += cost


def kept(literal: Fields, stems: Fields) -> Kept | None:
    """None when the index holds every token (nearly always, decided without a walk); else how many
    of the description's and the body's tokens fit, in order, in both tsvectors. The name and the
    tags are always held whole (the write path bounds them far below the room)."""
    if _fit([*map("".join, literal), *map("".join, stems)], sum(map(len, literal)) + sum(map(len, stems))):
        return None
    if _distinct_bound(literal) <= TSVECTOR_BYTES and _distinct_bound(stems) <= TSVECTOR_BYTES:
        return None
    rooms = (_Room(), _Room())
    for room, fields in zip(rooms, (literal, stems), strict=True):
        for weight, words in (("A", fields.name), ("C", fields.tags)):
            for word in words:
                room.add(word, weight, room.cost(word, weight))
    counts = []
    full = False
    for weight, pair in (("B", (literal.description, stems.description)), ("D", (literal.body, stems.body))):
        count = 0
        if not full:
            for word, stem in zip(*pair, strict=True):
                a, b = rooms[0].cost(word, weight), rooms[1].cost(stem, weight)
                if rooms[0].used + a > TSVECTOR_BYTES or rooms[1].used + b > TSVECTOR_BYTES:
                    full = True
                    break
                rooms[0].add(word, weight, a)
                rooms[1].add(stem, weight, b)
                count += 1
        counts.append(count)
    description, body = counts
    if description == len(literal.description) and body == len(literal.body):
        return None
    return Kept(description, body)


class Texts(NamedTuple):
    """A node's fields as SQLite's full-text row holds them: space-joined tokens, then their stems."""

    name: str
    description: str
    body: str
    tags: str
    stem_name: str
    stem_description: str
    stem_body: str
    stem_tags: str


def _stream(text: str | None, once: bool = False) -> Sequence[str]:
    return TOKENISER.stream(text, once) if text else ()


def index_fields(
    name: str, description: str | None, body: str | None, tags: Sequence[str], lang: str
) -> tuple[Fields, Fields]:
    """A node's indexed fields as tokens, literal and stemmed: what SQLite's row joins
    (`index_texts`) and PostgreSQL's tsvectors are built from (`postgres/indexing.node_index`)."""
    stem_all = TOKENISER.stem_all
    literal = Fields(_stream(name), _stream(" ".join(tags), True), _stream(description), _stream(body))
    stems = Fields(
        stem_all(literal.name, lang), stem_all(_stream(manual_tags(tags), True), lang),
        _stems(description, lang), _stems(body, lang),
    )  # fmt: skip
    return literal, stems


def _stems(text: str | None, lang: str) -> Sequence[str]:
    return TOKENISER.stems_of(text, lang) if text else ()


#: Fields of at most this many characters in all surely fit (`cut_of` then tokenises nothing): a
#: character folds into at most 18 (NFKD's longest expansion; an unspaced script's two-character
#: pieces double it), each of at most 4 UTF-8 bytes, and starts at most one token, whose alignment,
#: position count and one position take 7 more — under 80 bytes a character in one tsvector, under
#: 160 in both together.
SURELY_FITS_CHARS = TSVECTOR_BYTES // 160


def cut_of(name: str, description: str | None, body: str | None, tags: Sequence[str], lang: str) -> Kept | None:
    """What the index holds of a node's description and body when it cannot hold every word of them
    (`kept`), else None: what a write tells its caller (decision 234). A node of ordinary length is
    decided from its characters alone."""
    chars = len(name) + len(description or "") + len(body or "") + sum(len(t) + 1 for t in tags)
    if chars <= SURELY_FITS_CHARS:
        return None
    return kept(*index_fields(name, description, body, tags, lang))


def index_cut_message(cut: Kept) -> str:
    """The `index_truncated` warning: what a write stored whole but the index does not hold."""
    where = (
        f"the body's first {cut.body:,} words"
        if cut.body > 0
        else f"the description's first {cut.description:,} words and none of the body"
    )
    return (
        f"the text was stored whole, but the full-text index holds only {where}: a node's index holds as "
        "many distinct words as one PostgreSQL tsvector (about 1 MB), on both backends alike; the words "
        "after them are not found by search or recall. Split the text into several notes to search all of it"
    )


def index_texts(name: str, description: str | None, body: str | None, tags: Sequence[str], lang: str) -> Texts:
    """The index texts of a node's fields (`name` as `text.indexed_name` gives it, stems by `lang`;
    the same as `text.index_text` and `text.stem_text` of each): the tags' stems only of the tags
    its writer gave; a description and a body whose words overflow a tsvector cut to the words
    `kept` holds, the words a PostgreSQL vault finds too."""
    literal, stems = index_fields(name, description, body, tags, lang)
    texts = Texts(
        " ".join(literal.name), " ".join(literal.description), " ".join(literal.body), " ".join(literal.tags),
        " ".join(stems.name), " ".join(stems.description), " ".join(stems.body), " ".join(stems.tags),
    )  # fmt: skip
    if _fit(texts, sum(map(len, texts)) + len(texts)):
        return texts
    room = kept(literal, stems)
    if room is None:
        return texts
    return texts._replace(
        description=" ".join(literal.description[: room.description]),
        body=" ".join(literal.body[: room.body]),
        stem_description=" ".join(stems.description[: room.description]),
        stem_body=" ".join(stems.body[: room.body]),
    )
