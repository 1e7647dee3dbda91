"""How the in-memory copies of `impacts` are laid out: exact narrow types, FTS5's varints, packed ids.

Split from `impacts` (decision 16.E1) so that the module ranking a search reads as the ranking: these
are the encodings it relies on, each checked against what it encodes by
`tests/storage/test_impacts_layout.py`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import numpy as np
    from numpy import ndarray


def narrowest(np: Any, values: np.ndarray) -> Any:
    """The smallest dtype holding every one of `values` (≥ 0, float64) exactly: uint8, uint16,
    float32 or float64 — each holds the values of the ones before it, so two are joined by the
    later (`wider`)."""
    if len(values) == 0:
        return np.dtype(np.uint8)
    top = float(values.max())
    if bool((values == np.floor(values)).all()) and float(values.min()) >= 0:
        if top < 256:
            return np.dtype(np.uint8)
        if top < 65536:
            return np.dtype(np.uint16)
    if bool((values.astype(np.float32).astype(np.float64) == values).all()):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


_LADDER = ("uint8", "uint16", "float32", "float64")


def wider(np: Any, one: Any, other: Any) -> Any:
    """The later of two dtypes of `narrowest`'s ladder."""
    return np.dtype(_LADDER[max(_LADDER.index(np.dtype(one).name), _LADDER.index(np.dtype(other).name))])


def row_sizes(np: Any, blobs: Sequence[bytes]) -> np.ndarray:
    """Each row's `D` from its `nodes_fts_docsize.sz` blob: the sum of the blob's varints (one a
    column, `sqlite3Fts5GetVarint`: big-endian groups of 7 bits, the high bit set on all but the
    last byte), decoded for all blobs at once (int64)."""
    lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    data = np.frombuffer(b"".join(blobs), dtype=np.uint8)
    ends = np.cumsum(lengths)
    # A row's blob holds whole varints (FTS5 writes one a column): otherwise, or past 8 bytes a
    # varint (never, for column sizes), each blob is decoded by itself.
    if len(data) and int(lengths.min()) > 0 and not bool((data[ends - 1] >= 0x80).any()):
        at = np.arange(len(data), dtype=np.int64)
        last = np.where(data < 0x80, at, len(data))  # the last byte of each varint, at that byte
        to_end = np.minimum.accumulate(last[::-1])[::-1] - at  # bytes after this one in its varint
        if int(to_end.max()) <= 7:
            values = (data & 0x7F).astype(np.int64) << (7 * to_end)
            return cast("ndarray", np.add.reduceat(values, ends - lengths))
    return cast("ndarray", np.array([sum(_varints(b)) for b in blobs], dtype=np.int64))


def _varints(block: bytes) -> Iterator[int]:
    at = 0
    while at < len(block):
        value, at = _varint(block, at)
        yield value


def _varint(block: bytes, at: int) -> tuple[int, int]:
    """One SQLite varint (FTS5's `sqlite3Fts5GetVarint`) at `at`: its value and the next offset."""
    value = 0
    for _ in range(8):
        byte = block[at]
        at += 1
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at
    return (value << 8) | block[at], at + 1


def averages(block: bytes) -> tuple[int, int]:
    """The rows and the tokens of all columns in FTS5's `averages` record (`xRowCount`,
    `xColumnTotalSize(-1)`): a varint of rows, then one of tokens per column."""
    rows, at = _varint(block, 0)
    tokens = 0
    while at < len(block):
        size, at = _varint(block, at)
        tokens += size
    return rows, tokens


_HEX = b"0123456789abcdef"


def packed_uuid(text: str) -> bytes | None:
    """The 16 bytes of a UUID in its canonical text (lower-case, hyphens at 8-4-4-4-12), else None."""
    digits = text.replace("-", "")
    if len(text) != 36 or len(digits) != 32:
        return None
    try:
        raw = bytes.fromhex(digits)
    except ValueError:
        return None
    canonical = f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
    return raw if raw.hex() == digits and canonical == text else None


def uuid_texts(np: Any, raw: np.ndarray) -> list[str]:
    """The canonical texts of rows of 16 bytes (`packed_uuid` undone), all at once."""
    if len(raw) == 0:
        return []
    table = np.frombuffer(_HEX, dtype=np.uint8)
    digits = table[np.stack((raw >> 4, raw & 15), axis=-1).reshape(len(raw), 32)]
    text = np.full((len(raw), 36), ord("-"), dtype=np.uint8)
    for src, dst, width in ((0, 0, 8), (8, 9, 4), (12, 14, 4), (16, 19, 4), (20, 24, 12)):
        text[:, dst : dst + width] = digits[:, src : src + width]
    return list(map(bytes.decode, text.view("S36").ravel().tolist()))
