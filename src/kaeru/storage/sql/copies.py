"""What both engines' in-memory copies of the bm25 inputs share (decisions 16.B4, 16.E1, 16.C1):
numpy (a dependency since decision 164), the narrowest exact types a copy is kept in, node ids packed in 16
bytes, the score itself, computed operation for operation as FTS5's `bm25()` and PostgreSQL's
`bm25.score_sql` compute it (the same formula in the same order), the ranking of the matches, and
one phrase's copy kept dense or sparse, whichever is smaller (`PhraseCopy`, SQLite's so far).

SQLite reads its copies from FTS5 (`sqlite/impacts.py`, with FTS5's own encodings in
`sqlite/copies.py`), PostgreSQL from its term counts (`postgres/textcache.py`).
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import numpy as np
    from numpy import ndarray

#: The bm25 constants of both engines (FTS5's `fts5Bm25Function`, PostgreSQL's `bm25.K1`/`B`).
K1 = 1.2
B = 0.75


def numpy_module() -> Any:
    """numpy, a dependency (decision 164); None where an install left it out (`pip install --no-deps`):
    SQL then ranks, with the same answers and none of the copies' speed."""
    if importlib.util.find_spec("numpy") is None:
        return None
    import numpy

    return numpy


def idf(rows: int, docs: int) -> float:
    """The inverse document frequency of a phrase that `docs` of `rows` rows hold (FTS5's)."""
    value = math.log((rows - docs + 0.5) / (docs + 0.5))
    return value if value > 0.0 else 1e-6


def bm25_scores(
    np: Any, freqs: Sequence[np.ndarray], idfs: Sequence[float], sizes: np.ndarray, avgdl: float
) -> np.ndarray:
    """The scores of some rows, from each phrase's weighted frequency in them (`freqs`, float64),
    its idf and the rows' lengths: FTS5's `fts5Bm25Function` and PostgreSQL's `score_sql`, operation
    for operation, so the doubles are theirs to the bit — `k1 · ((1 − b) + (b · D) / avgdl)`, then
    each phrase's `idf · ((f · (k1 + 1)) / (f + norm))` summed in the query's order (from 0.0),
    and the sum negated (`-1.0 ·`)."""
    norm = K1 * ((1 - B) + (B * sizes.astype(np.float64)) / avgdl)
    total = np.zeros(len(sizes), dtype=np.float64)
    for freq, weight in zip(freqs, idfs, strict=True):
        total = total + weight * ((freq * (K1 + 1.0)) / (freq + norm))
    return cast("ndarray", -1.0 * total)


class Ranking:
    """The matches of one query in scope, scored as the engine's SQL scores them: row ids and scores."""

    def __init__(self, np: Any, rows: np.ndarray | None, scores: np.ndarray | None, count: int | None = None):
        self.np, self.rows, self.scores = np, rows, scores
        self.count = len(rows) if rows is not None else int(count or 0)

    def top(self, cap: int) -> tuple[list[int], list[float]]:
        """The best `cap` matches, row ids and scores, by score then row id descending (the order of
        `ORDER BY score, seq DESC`)."""
        np, rows, scores = self.np, self.rows, self.scores
        assert rows is not None and scores is not None
        if cap < len(rows):
            kth = np.partition(scores, cap - 1)[cap - 1]
            keep = np.flatnonzero(scores <= kth)  # every row tied with the last one kept, too
            rows, scores = rows[keep], scores[keep]
        order = np.lexsort((-rows, scores))[:cap]
        return rows[order].tolist(), scores[order].tolist()


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


def fit(np: Any, values: np.ndarray, length: int) -> np.ndarray:
    """`values` zero-padded to `length` rows (itself when long enough)."""
    if len(values) >= length:
        return values
    grown = np.zeros(length, dtype=values.dtype)
    grown[: len(values)] = values
    return cast("ndarray", grown)


def put_rows(np: Any, base: np.ndarray | None, seqs: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`base` (a copy: never changed) with `values` at rows `seqs`, widened as they need (flags stay
    flags)."""
    length = max(len(base) if base is not None else 0, int(seqs.max()) + 1 if len(seqs) else 0)
    if values.dtype == np.bool_:
        dtype = values.dtype
    else:
        dtype = narrowest(np, values) if base is None else wider(np, base.dtype, narrowest(np, values))
    out = np.zeros(length, dtype=dtype)
    if base is not None:
        out[: len(base)] = base
    out[seqs] = values
    return cast("ndarray", out)


#: A phrase's copy is kept sparse — its rows' ids (`SPARSE_ID`, 4 bytes) beside their values — when
#: that takes at most 1/`SPARSE_SHARE` of the dense array (one value for every row of the vault): a
#: word in fewer than ~1 in 10 rows. Dense, every word cost a byte a row of the vault whatever its
#: matches, so the cache's bound held ~60 words at 1M nodes and a question's middle words evicted
#: each other (decisions 126, 198); sparse they cost what they match. Past the share, the dense
#: array is both smaller and cheaper to combine.
SPARSE_SHARE = 2
SPARSE_ID = "uint32"


class PhraseCopy:
    """One phrase's rows at one watermark (`mark`): each row's value (a bm25 `aFreq`, or 1 for a row
    a scope token marks) in `narrowest`'s type, 0 for a row without the phrase. Dense — `freq` by
    row id, `rows` None — or sparse — `rows` the ids holding the phrase, ascending, `freq` their
    values (`of` picks the smaller). Never changed once made: a ranking reads it without a lock."""

    __slots__ = ("freq", "hits", "mark", "nbytes", "rows", "used", "vault_hits")

    def __init__(self, freq: np.ndarray, mark: tuple[int, int], rows: np.ndarray | None, overhead: int):
        self.freq, self.mark, self.rows = freq, mark, rows
        self.hits = int((freq > 0).sum()) if rows is None else len(rows)
        #: The rows of the whole vault holding the phrase (bm25's `nHit`): `hits`, unless the copy
        #: holds only a scope's rows (SQLite's words, decision 259), which sets it.
        self.vault_hits = self.hits
        # A sparse copy keeps a second array, its header and its data (`__sizeof__` counts both for
        # an array owning its data; the first array's header is in `overhead`).
        extra = 0 if rows is None else rows.__sizeof__() + (rows.nbytes if rows.base is not None else 0)
        self.nbytes = int(freq.nbytes) + int(extra) + overhead
        #: The cache's ranking count when a ranking last used it.
        self.used = 0

    @classmethod
    def of(
        cls,
        np: Any,
        ids: np.ndarray,
        values: np.ndarray,
        mark: tuple[int, int],
        overhead: int,
        share: int = SPARSE_SHARE,
    ) -> PhraseCopy:
        """The copy of rows `ids` (distinct) holding `values`: sparse when that takes at most 1/`share`
        of the dense array's bytes (0: always sparse), else dense."""
        keep = values > 0
        ids, values = ids[keep], values[keep]
        dtype = narrowest(np, values)
        length = mark[0] + 1
        sparse = len(ids) * (np.dtype(SPARSE_ID).itemsize + dtype.itemsize) * share
        if sparse <= length * dtype.itemsize and length <= np.iinfo(SPARSE_ID).max:
            order = np.argsort(ids, kind="stable") if bool((ids[1:] < ids[:-1]).any()) else slice(None)
            return cls(values[order].astype(dtype), mark, ids[order].astype(SPARSE_ID), overhead)
        freq = np.zeros(length, dtype=dtype)
        freq[ids] = values
        return cls(freq, mark, None, overhead)

    def refreshed(
        self,
        np: Any,
        revised: Sequence[int],
        parts: Sequence[tuple[np.ndarray, np.ndarray]],
        mark: tuple[int, int],
        overhead: int,
        share: int = SPARSE_SHARE,
    ) -> PhraseCopy:
        """This copy at `mark`: the `revised` rows dropped, then the rows and values of `parts` (rows
        written or revised since, read again) put in. A dense copy stays dense (a copy and a
        scatter); a sparse one is merged and may turn dense as it grows."""
        if self.rows is None:
            dtype = self.freq.dtype
            for _, values in parts:
                dtype = wider(np, dtype, narrowest(np, values))
            freq = np.zeros(mark[0] + 1, dtype=dtype)
            freq[: len(self.freq)] = self.freq
            if revised:
                freq[np.array(revised, dtype=np.int64)] = 0
            for ids, values in parts:
                freq[ids] = values
            return PhraseCopy(freq, mark, None, overhead)
        rows, values = self.rows.astype(np.int64), self.freq.astype(np.float64)
        if revised:
            kept = ~np.isin(rows, np.array(revised, dtype=np.int64))
            rows, values = rows[kept], values[kept]
        ids = np.concatenate([rows, *(p[0] for p in parts)])
        return PhraseCopy.of(np, ids, np.concatenate([values, *(p[1] for p in parts)]), mark, overhead, share)

    def mask(self, np: Any, length: int) -> np.ndarray:
        """Whether each of `length` rows holds the phrase (bool, by row id)."""
        if self.rows is None:
            return cast("ndarray", self.freq > 0)
        out = np.zeros(length, dtype=np.bool_)
        out[self.rows] = True
        return cast("ndarray", out)

    def at(self, np: Any, rows: np.ndarray) -> np.ndarray:
        """The values of `rows` (ascending row ids), float64: 0 for a row without the phrase."""
        if self.rows is None:
            return cast("ndarray", self.freq[rows].astype(np.float64))
        if len(self.rows) == 0:
            return cast("ndarray", np.zeros(len(rows), dtype=np.float64))
        where = np.minimum(np.searchsorted(self.rows, rows), len(self.rows) - 1)
        found = self.rows[where] == rows
        return cast("ndarray", np.where(found, self.freq[where], 0).astype(np.float64))
