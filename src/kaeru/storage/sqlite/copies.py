"""FTS5's own encodings the in-memory copies of `impacts` read: its varints, the row sizes and the
`averages` record (the engine-neutral layout — exact narrow types, packed ids — is `storage/sql/copies.py`).

Split from `impacts` (decision 16.E1) so that the module ranking a search reads as the ranking: these
are the encodings it relies on, each checked against what it encodes by
`tests/storage/test_impacts_layout.py`.
"""

from __future__ import annotations

import array
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from kaeru.storage.sql.db import Db

if TYPE_CHECKING:
    import numpy as np
    from numpy import ndarray


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


def watermark(db: Db) -> tuple[int, int]:
    """`(max(nodes.seq), max(past_revisions.rev_seq))` in this snapshot: every write of a node (its
    index row, its memberships) moves it (`impacts`' docstring)."""
    now = db.one("SELECT (SELECT max(seq) FROM nodes), (SELECT max(rev_seq) FROM past_revisions)")
    return (int(now[0] or 0), int(now[1] or 0)) if now is not None else (0, 0)


def read_sizes(db: Db, where: str, params: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    """`(row id, sz)` of the rows of `nodes_fts_docsize` that `where` keeps (all: "")."""
    return db.stream(f"SELECT id, sz FROM nodes_fts_docsize{where}", params)


def put_sizes(np: Any, size: np.ndarray, rows: Iterable[tuple[Any, ...]], chunk: int = 65_536) -> np.ndarray:
    """`size` with the `(row id, sz)` rows' `D` written in, `chunk` rows decoded at a time (a million
    never sit in Python lists); widened to uint32 when one needs it (then a new array)."""
    it = iter(rows)
    while part := list(itertools.islice(it, chunk)):
        ids = np.fromiter((r[0] for r in part), dtype=np.int64, count=len(part))
        d = row_sizes(np, [bytes(r[1]) for r in part])
        if size.dtype == np.uint16 and len(d) and int(d.max()) >= 65536:
            size = size.astype(np.uint32)
        size[ids] = d
    return size


class ImpactReader:
    """The auxiliary function a phrase's copy is read whole by (`impacts.TextCache._load`): for each
    row FTS5 calls it for, the row id and its bm25 `aFreq` of the query's first phrase (the weight
    of each instance's column, summed over the columns the phrase is in, as `impact` sums
    them) are appended to two arrays, and it returns NULL, which the statement's condition (`… IS NOT
    NULL`) drops: no row crosses into Python. Returned, each row cost a result tuple, the column
    weights converted again as the function's arguments, and its share of `fromiter` over the
    chunks — Python work a row beside the function's own. Reads take the cache's lock, so one
    reader serves a store's connections; `start` sets the weights and empties the arrays, `taken`
    hands them over."""

    __slots__ = ("_add_count", "_add_id", "counts", "freqs", "ids", "weights")

    def __init__(self) -> None:
        self.weights: tuple[float, ...] = ()
        self.start(())

    def start(self, weights: tuple[float, ...]) -> None:
        """Empty arrays, and the columns' weights `__call__` sums by."""
        self.weights = weights
        self.ids, self.freqs, self.counts = array.array("q"), array.array("d"), array.array("q")
        # `count` calls these once a row: bound once here, not looked up a row.
        self._add_id, self._add_count = self.ids.append, self.counts.append

    def taken(self) -> tuple[array.array[int], array.array[float]]:
        found = self.ids, self.freqs
        self.ids, self.freqs = array.array("q"), array.array("d")
        return found

    def __call__(self, api: Any, *_: Any) -> None:
        weights = self.weights
        freq = 0.0
        for column in api.phrase_columns(0):
            freq += weights[column] * len(api.phrase_column_offsets(0, column))
        self.ids.append(api.rowid)
        self.freqs.append(freq)

    def count(self, api: Any, *_: Any) -> None:
        """The function for a phrase in one column (`read_impacts`): the row id and the phrase's
        instances in the row (FTS5 counts them; no offsets listed), into `ids` and `counts`."""
        self._add_id(api.rowid)
        self._add_count(api.inst_count)

    def counted(self) -> tuple[array.array[int], array.array[int]]:
        """`count`'s row ids and instance counts, handed over (the arrays then start empty)."""
        found = self.ids, self.counts
        self.start(self.weights)
        return found


#: `read_impacts` sums a phrase's columns by sorting its rows when they are fewer than 1/SPARSE_SUM
#: of the largest row id, and over a dense array (one value a row of the vault) otherwise.
SPARSE_SUM = 16
#: The SQL names the reader's functions are registered under (`impacts.TextCache.rank`).
READER = "kaeru_impacts"
COUNTER = "kaeru_instances"
#: One phrase (a quoted string, `""` an inner quote) over a set of columns, as `matching.fts_match`
#: writes a single word.
_ONE_PHRASE = re.compile(r'\{([a-z_ ]+)\} : (\("(?:[^"]|"")*"\))', re.DOTALL)


def read_impacts(
    np: Any,
    db: Db,
    reader: ImpactReader,
    match: str,
    weights: tuple[float, ...],
    columns: Sequence[str],
    sparse_sum: int = SPARSE_SUM,
    within: str = "",
) -> tuple[np.ndarray, np.ndarray]:
    """The rows holding `match`'s first phrase and its `aFreq` in each (int64, float64; ascending
    rows). A single phrase over a set of columns is read a column at a time, each statement's
    function counting the row's instances there (`ImpactReader.count`), and the counts summed by
    row: cheaper than listing the columns and then each one's offsets a row (the same whole
    numbers: column weights times counts). Any other MATCH is read whole by `ImpactReader`, and so
    is one `within` a scope's rows (`(match) AND (within)`): a statement a column would walk the
    scope tokens' doclist again for each."""
    found = _ONE_PHRASE.fullmatch(match)
    if found is None or within or any(c not in columns for c in found[1].split()):
        reader.start(weights)
        db.one(
            f"SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ? AND {READER}(nodes_fts) IS NOT NULL",
            (f"({match}) AND ({within})" if within else match,),
        )
        ids, freqs = reader.taken()
        return np.frombuffer(ids, dtype=np.int64), np.frombuffer(freqs, dtype=np.float64)
    parts = []
    for column in found[1].split():
        if weight := weights[columns.index(column)]:
            reader.start(weights)
            db.one(
                f"SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ? AND {COUNTER}(nodes_fts) IS NOT NULL",
                (f"{column} : {found[2]}",),
            )
            ids, counts = reader.counted()
            parts.append((np.frombuffer(ids, dtype=np.int64), np.frombuffer(counts, dtype=np.int64) * weight))
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    ids, values = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    if len(ids) == 0:
        return ids, values
    if len(ids) * sparse_sum < int(ids.max()):  # a few rows of a large vault: sorted and summed
        rows, where = np.unique(ids, return_inverse=True)
        return rows, np.bincount(where, weights=values, minlength=len(rows))
    summed = np.bincount(ids, weights=values)  # by row over a dense array: no sort of the rows
    rows = np.flatnonzero(summed)
    return rows, summed[rows]


#: The bytes of a node id kept in memory: a UUID's 16 (its canonical text is rebuilt from them; an
#: id of another form is read each time).
ID_BYTES = 16


class Facts:
    """Node ids (16 bytes of a UUID) and refuted flags by row id at one watermark: `state` 0 for a
    row not read yet, 1 kept, 2 kept and refuted."""

    def __init__(self, ids: np.ndarray, state: np.ndarray, mark: tuple[int, int]):
        self.ids, self.state, self.mark = ids, state, mark
        self.nbytes = int(ids.nbytes + state.nbytes)

    @classmethod
    def after(cls, np: Any, old: Facts | None, revised: list[int] | None, mark: tuple[int, int]) -> Facts:
        """`old` moved to `mark` (copied: a reader at its watermark may still hold it), forgetting the
        `revised` rows; empty when there is none or too much was revised."""
        size = mark[0] + 1
        ids = np.zeros((size, ID_BYTES), dtype=np.uint8)
        state = np.zeros(size, dtype=np.uint8)
        if old is not None and revised is not None:
            ids[: len(old.ids)] = old.ids
            state[: len(old.state)] = old.state
            state[np.array(revised, dtype=np.int64)] = 0
        return cls(ids, state, mark)


def read_facts(db: Db, seqs: Sequence[int], refuted_sql: str) -> tuple[list[str], list[bool]]:
    rows = db.rows(
        f"SELECT n.seq, n.id, {refuted_sql} FROM json_each(?) j CROSS JOIN nodes n INDEXED BY nodes_head "
        "ON n.seq = j.value",
        (json.dumps(sorted(seqs)),),
    )
    read = {int(r[0]): (str(r[1]), bool(r[2])) for r in rows}
    ids = [read[s][0] for s in seqs]
    return ids, [read[s][1] for s in seqs]


def impact(api: Any, *weights: Any) -> float:
    """FTS5's bm25 `aFreq` for this row and the query's first phrase: the weight of each instance's
    column, summed — over the columns the phrase is in (`xPhraseFirstColumn`, cheaper than listing
    every column's offsets). (Its `D`, `xColumnSize(-1)`, is a look-up in `nodes_fts_docsize` per
    row: the sizes are read in bulk instead, `impacts.TextCache._sizes_at`.)"""
    freq = 0.0
    for column in api.phrase_columns(0):
        freq += weights[column] * len(api.phrase_column_offsets(0, column))
    return freq


class Sizes:
    """The indexed rows' `D` (`xColumnSize(-1)`) at one watermark, dense by row id: 0 for a row not
    read yet (every indexed row holds a scope token, so its `D` is at least 1) unless `complete`.
    Rows are read as rankings need them (`impacts.TextCache._sizes_for`) and never change at a watermark."""

    __slots__ = ("complete", "mark", "nbytes", "size")

    def __init__(self, size: np.ndarray, mark: tuple[int, int], complete: bool):
        self.size, self.mark, self.complete = size, mark, complete
        self.nbytes = int(size.nbytes)


def within_scopes(scopes: Sequence[tuple[str, tuple[float, ...]]]) -> str:
    """The MATCH of rows in any of `scopes` (each `(MATCH, weights)`)."""
    return " OR ".join(f"({match})" for match, _ in scopes)


def count_matching(db: Db, match: str, where: str, params: Sequence[Any]) -> int:
    """The rows matching `match` (and `where`), walked without a function a row."""
    row = db.one(f"SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH ?{where}", (match, *params))
    return int(row[0]) if row else 0


def revised_since(db: Db, since: tuple[int, int], limit: int) -> list[int] | None:
    """The rows (existing at watermark `since`) revised after it, or None past `limit` of them."""
    found = db.rows(
        "SELECT DISTINCT node_seq FROM past_revisions WHERE rev_seq > ? AND node_seq <= ? LIMIT ?",
        (since[1], since[0], limit + 1),
    )
    return None if len(found) > limit else sorted(int(r[0]) for r in found)
