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
overflow is walked token by token, as PostgreSQL sizes a tsvector. Each tsvector is filled on its
own, so the literal one is walked first and the stems only of the words it holds are made and
walked (`index_held`): a text far past the room (megabytes of an unspaced script, whose pieces are
nearly all distinct) costs what the index holds of it, not what was sent, and what is held and
where it ends are the same as a walk of every word's stem (decision 415).
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable, Sequence
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


#: Tokens a distinct-word bound takes at a time: it stops as soon as the words seen so far could
#: overflow, so a text that will be cut costs a set of about the words the index holds, not of all.
_CHUNK = 1 << 14


def _bytes(words: Iterable[str]) -> int:
    joined = "".join(words)
    return len(joined) if joined.isascii() else len(joined.encode())


def _surely_fit(room: int, rest: Sequence[tuple[str, Sequence[str]]]) -> bool:
    """Whether the (weight, tokens) fields `rest` surely fit in `room` bytes of one tsvector: from
    their lengths (a token of `c` characters adds at most `4c + 5` bytes), else from their distinct
    words — each one's bytes and count once, and two bytes a position each field can keep (a long
    text that repeats its words, which the lengths overstate many times). The distinct words are
    gathered a chunk at a time and the answer is no as soon as those seen could overflow (the bound
    only grows)."""
    if sum(_BYTES_PER_CHAR * sum(map(len, words)) + _BYTES_PER_TOKEN * len(words) for _, words in rest) <= room:
        return True
    distinct: set[str] = set()
    size = 0  # of the distinct words so far, and the positions of the fields done
    for weight, words in rest:
        found: set[str] = set()
        cap = POSITIONS_PER_FIELD[weight]
        for start in range(0, len(words), _CHUNK):
            chunk = set(words[start : start + _CHUNK])
            found |= chunk
            new = chunk - distinct
            distinct |= new
            size += _bytes(new) + _BYTES_PER_TOKEN * len(new)
            if size + 2 * min(min(start + _CHUNK, len(words)), cap * len(found)) > room:
                return False
        size += 2 * min(len(words), cap * len(found))
    return size <= room


class _Room:
    """One tsvector being filled as PostgreSQL sizes it: each distinct lexeme's bytes (padded to
    an even count), its position count and two bytes a kept position. It holds the name and the
    tags whole from the start."""

    def __init__(self, fields: Fields) -> None:
        self.used = 0
        #: Per field (weight), each lexeme's positions so far, counted up to the field's cap.
        self.seen: dict[str, dict[str, int]] = {weight: {} for weight in POSITIONS_PER_FIELD}
        self.lexemes: set[str] = set()
        for weight, words in (("A", fields.name), ("C", fields.tags)):
            self._fill(weight, words, None)

    def _fill(self, weight: str, words: Iterable[str], room: int | None) -> int | None:
        """Add `words` to field `weight` in order, while they fit in `room` bytes (None: all of
        them): how many were added when the next would not fit, else None. A lexeme is lowered as
        PostgreSQL lowers it (ASCII letters only); past its cap in a field, a position adds nothing."""
        seen, lexemes, cap, used = self.seen[weight], self.lexemes, POSITIONS_PER_FIELD[weight], self.used
        for added, word in enumerate(words):
            if not word.islower():
                word = word.translate(_ASCII_LOWER)
            count = seen.get(word, 0)
            if count < cap:
                if word in lexemes:
                    cost = 2
                else:
                    size = len(word) if word.isascii() else len(word.encode())
                    cost = size + (size & 1) + 4
                if room is not None and used + cost > room:
                    self.used = used
                    return added
                seen[word] = count + 1
                lexemes.add(word)
                used += cost
        self.used = used
        return None

    def overflow(self, fields: Fields) -> int | None:
        """Where the description's then the body's tokens overflow this tsvector: the place, in
        that order, of the first that would not fit; None when all fit (nearly always, decided
        without a walk)."""
        rest = (("B", fields.description), ("D", fields.body))
        if _surely_fit(TSVECTOR_BYTES - self.used, rest):
            return None
        place = 0
        for weight, words in rest:
            added = self._fill(weight, words, TSVECTOR_BYTES)
            if added is not None:
                return place + added
            place += len(words)
        return None


def _held(fields: Fields, place: int) -> Fields:
    """`fields` with the description and the body cut to their first `place` tokens in all."""
    description = fields.description[:place]
    return fields._replace(description=description, body=fields.body[: place - len(description)])


def _kept(literal: Fields, place: int | None) -> Kept | None:
    if place is None:
        return None
    description = min(place, len(literal.description))
    return Kept(description, place - description)


def kept(literal: Fields, stems: Fields) -> Kept | None:
    """None when the index holds every token (nearly always, decided without a walk); else how many
    of the description's and the body's tokens fit, in order, in both tsvectors. The name and the
    tags are always held whole (the write path bounds them far below the room). Each tsvector is
    filled on its own, so the words held end where the first of the two overflows: the stems' is
    looked for only in the words the literal one holds (`_hold`, which `index_held` walks too)."""
    return _hold(literal, lambda place: stems if place is None else _held(stems, place)).kept


class Held(NamedTuple):
    """A node's indexed fields as the index holds them, literal and stemmed (`kept` of them cut
    away), and what was cut."""

    literal: Fields
    stems: Fields
    kept: Kept | None


def _hold(literal: Fields, stems_of: Callable[[int | None], Fields]) -> Held:
    """The walk of both tsvectors: the literal one's, then the stemmed one's over `stems_of(place)`,
    the stems of the words the literal one holds (`place`: where it overflows; None: all)."""
    place = _Room(literal).overflow(literal)
    if place is not None:
        literal = _held(literal, place)
    stems = stems_of(place)
    found = _Room(stems).overflow(stems)
    if found is not None:
        place = found
        literal, stems = _held(literal, found), _held(stems, found)
    return Held(literal, stems, _kept(literal, place))


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


def _literal(
    name: str, description: str | None, body: str | None, tags: Sequence[str], lang: str
) -> tuple[Fields, tuple[Sequence[str], Sequence[str]]]:
    """The literal fields, and the stems of the name and of the tags its writer gave."""
    stem_all = TOKENISER.stem_all
    literal = Fields(_stream(name), _stream(" ".join(tags), True), _stream(description), _stream(body))
    return literal, (stem_all(literal.name, lang), stem_all(_stream(manual_tags(tags), True), lang))


def _stems(text: str | None, lang: str) -> Sequence[str]:
    return TOKENISER.stems_of(text, lang) if text else ()


def index_held(name: str, description: str | None, body: str | None, tags: Sequence[str], lang: str) -> Held:
    """A node's indexed fields as tokens, literal and stemmed, as the index holds them (what SQLite's
    row joins, `index_texts`, and PostgreSQL's tsvectors are built from, `postgres/indexing`), cut
    as `kept` says, without stemming the words past the room: in a long text that overflows it (an
    unspaced script's, whose pieces are nearly all distinct), those are most of the words, and
    stemming them cost most of a write (a word's stem is its own, whatever follows it)."""
    literal, heads = _literal(name, description, body, tags, lang)

    def stems_of(place: int | None) -> Fields:
        if place is None:
            return Fields(*heads, _stems(description, lang), _stems(body, lang))
        held, stem_all = _held(literal, place), TOKENISER.stem_all
        return Fields(*heads, stem_all(held.description, lang), stem_all(held.body, lang))

    return _hold(literal, stems_of)


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
    return index_held(name, description, body, tags, lang).kept


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
    literal, stems, _ = index_held(name, description, body, tags, lang)
    return Texts(
        " ".join(literal.name), " ".join(literal.description), " ".join(literal.body), " ".join(literal.tags),
        " ".join(stems.name), " ".join(stems.description), " ".join(stems.body), " ".join(stems.tags),
    )  # fmt: skip
