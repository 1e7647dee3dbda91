"""What the full-text index holds of a text whose words overflow a PostgreSQL tsvector: the same
words on both engines, as many as fit (`domain.indexroom`), checked against a plain sizing of the
tsvector PostgreSQL would build from them."""

from __future__ import annotations

import random

import pytest

from kaeru.domain.indexroom import POSITIONS_PER_FIELD, TSVECTOR_BYTES, index_texts
from kaeru.domain.text import index_text, manual_tags, stem_text


def _size(fields: list[tuple[str, str]]) -> int:
    """The bytes PostgreSQL's tsvector input counts for these (weight, space-joined tokens) fields,
    in order: each distinct lexeme's UTF-8 bytes padded to even, its position count, and two bytes
    a kept position (per field up to its cap; clamped positions counted, an over-count)."""
    positions: dict[str, int] = {}
    per_field: dict[tuple[str, str], int] = {}
    for weight, text in fields:
        for word in text.split():
            word = word.lower() if word.isascii() else word
            if per_field.get((word, weight), 0) < POSITIONS_PER_FIELD[weight]:
                per_field[(word, weight)] = per_field.get((word, weight), 0) + 1
                positions[word] = positions.get(word, 0) + 1
    total = 0
    for word, count in positions.items():
        size = len(word.encode())
        total += size + (size & 1) + 2 + 2 * count
    return total


@pytest.mark.parametrize(
    ("name", "description", "body", "tags"),
    [
        ("", None, "Decided to keep the retry budget at three attempts; see Tuesday's incident.", ["lang:en"]),
        ("retry budget", "why three", "Running runs ran: caching CACHES café ﬁle 東京のデータ", ["ops", "topic:retry"]),
        ("x", "", "", []),
    ],
)
def test_an_ordinary_note_is_indexed_whole_as_before(
    name: str, description: str | None, body: str, tags: list[str]
) -> None:
    texts = index_texts(name, description, body, tags, "en")
    assert tuple(texts) == (
        index_text(name), index_text(description), index_text(body), index_text(" ".join(tags)),
        stem_text(name), stem_text(description), stem_text(body), stem_text(manual_tags(tags)),
    )  # fmt: skip


def _distinct_cjk(count: int) -> str:
    rng = random.Random(7)
    return "".join(chr(rng.randrange(0x4E00, 0x9FFF)) for _ in range(count))


@pytest.mark.parametrize(
    "body",
    [" ".join(f"w{i}" for i in range(120_000)), _distinct_cjk(150_000)],
    ids=["distinct-ascii-words", "unspaced-script"],
)
def test_a_text_past_the_room_keeps_the_longest_start_that_fits_both_tsvectors(body: str) -> None:
    tags = ["ops", "topic:w1"]
    texts = index_texts("huge", "a description", body, tags, "en")
    whole = index_texts("huge", "a description", body[:10_000], tags, "en")  # a start far below the room
    assert whole.body == index_text(body[:10_000])
    held = texts.body.split()
    every = index_text(body).split()
    assert 0 < len(held) < len(every) and held == every[: len(held)]
    assert texts.stem_body.split() == stem_text(body).split()[: len(held)]

    def sizes(body_words: list[str], stem_words: list[str]) -> tuple[int, int]:
        literal = [("A", texts.name), ("C", texts.tags), ("B", texts.description), ("D", " ".join(body_words))]
        stems = [("A", texts.stem_name), ("C", texts.stem_tags), ("B", texts.stem_description)]
        return _size(literal), _size([*stems, ("D", " ".join(stem_words))])

    stems = stem_text(body).split()
    assert max(sizes(held, stems[: len(held)])) <= TSVECTOR_BYTES
    assert max(sizes(every[: len(held) + 1], stems[: len(held) + 1])) > TSVECTOR_BYTES  # the next one would not fit


def test_the_length_shortcut_never_skips_a_text_that_would_be_cut() -> None:
    """`cut_of` decides a node under `SURELY_FITS_CHARS` characters without tokenising it: even the
    text that expands most when folded (U+FDFA, 18 characters under NFKD), an unspaced script's
    pieces and long words are held whole at that length, with room to spare."""
    from kaeru.domain.indexroom import SURELY_FITS_CHARS, cut_of

    for unit in ("\ufdfa ", "漢字仮名交じり文", "w" * 63 + " "):
        body = (unit * (SURELY_FITS_CHARS // len(unit) + 1))[:SURELY_FITS_CHARS]
        assert cut_of("n", None, body, [], "en") is None
        texts = index_texts("n", None, body, [], "en")
        assert texts.body == index_text(body)  # not cut
        assert _size([("D", texts.body)]) < TSVECTOR_BYTES and _size([("D", texts.stem_body)]) < TSVECTOR_BYTES
