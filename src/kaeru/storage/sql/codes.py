"""Semantic recall's candidates by one-bit codes, for both engines (decisions 17.X1, 17.Y1).

A vector's code is one bit a dimension, set where the float32's sign bit is clear. A store keeps
each model's codes in memory as numpy words (`Codes`: 48 bytes a vector of 384 dimensions, bounded
by `CACHE_BYTES`), picks the codes nearest the query's by Hamming distance, and has its database
rank those candidates' vectors exactly; the vectors themselves never all enter the process. How a
copy is kept current is each engine's own (SQLite: a clock its triggers move; PostgreSQL: the
`text_changes` log and snapshots). `nearest_in_scope` is the rounds both run over the ranked
candidates: keep the live members of the scope, ask for more when too few are, and fall back to
the exact scan.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

#: A float32's last little-endian byte → "1" where its sign bit is clear, "0" where it is set.
_SIGN_CLEAR = bytes(ord("1") if i < 0x80 else ord("0") for i in range(256))

#: Candidates ranked exactly: this many times the limit, and at least `MIN_CANDIDATES` — 2 % of a
#: 100k vault for the semantic channel's 100 (decision 17.X1: on real MiniLM vectors, with 2 % of
#: them as candidates, the top 5 is the exact one on 99 % of queries, the top 10 on 91 %).
OVERSAMPLE = 20
MIN_CANDIDATES = 2_000
#: Rounds of candidates before a scope that still holds too few of them is scanned exactly.
ROUNDS = 3
#: The most memory a store's codes take (codes and ids, all models): 64 MiB is ~1.2 million
#: vectors of 384 dimensions. A model whose codes would not fit is scanned by the database.
CACHE_BYTES = 64 * 2**20

Ranked = list[tuple[str, float]]


def quantize(blob: bytes) -> bytes:
    """A stored vector's code: one bit a dimension, most significant first, set where the float32's
    sign bit is clear (v ≥ +0.0), padded with clear bits to whole bytes."""
    dims = len(blob) // 4
    signs = blob[3::4].translate(_SIGN_CLEAR)  # the high byte of each little-endian float32
    pad = -dims % 8
    return int(signs + b"0" * pad, 2).to_bytes((dims + pad) // 8, "big") if dims else b""


def hamming(a: bytes, b: bytes) -> int:
    """Bits that differ between two codes of the same length, as sqlite-vec counts them."""
    if len(a) != len(b):
        raise ValueError(f"code lengths differ: {len(a)} and {len(b)}")
    return (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).bit_count()


def candidates_for(limit: int) -> int:
    """How many candidates a first round ranks for `limit` results."""
    return max(limit * OVERSAMPLE, MIN_CANDIDATES)


class Codes:
    """One model's codes at one version of the engine's record of changes: ids ascending (SQLite's
    row ids, PostgreSQL's node seqs), and the codes as 64-bit words (zero-padded), one row of
    `words` per word of the code — column-major, so each step of the scan runs over one contiguous
    array (five times faster than row-major at 100k). `version` is the engine's: what it compares."""

    def __init__(self, ids: np.ndarray, words: np.ndarray, width: int, version: Any, removed: int = 0):
        self.ids, self.words, self.width = ids, words, width
        self.version, self.removed = version, removed
        self.nbytes = int(ids.nbytes + words.nbytes)

    @classmethod
    def load(cls, np: Any, rows: list[tuple[Any, ...]], version: Any, removed: int = 0) -> Codes | None:
        """From (id, code) rows in id order; None when the codes' lengths differ."""
        width = len(rows[0][1]) if rows else 0
        if any(len(r[1]) != width for r in rows):
            return None
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        return cls(ids, words(np, [bytes(r[1]) for r in rows], width), width, version, removed)

    def updated(self, np: Any, rows: list[tuple[Any, ...]], version: Any) -> Codes | None:
        """This copy with `rows` (id, code), changed or new since it was taken, applied."""
        if self.ids.size == 0 and rows:
            ordered = sorted(rows, key=lambda r: int(r[0]))
            return Codes.load(np, ordered, version, self.removed)
        if any(len(r[1]) != self.width for r in rows):
            return None
        if not rows:
            return Codes(self.ids, self.words, self.width, version, self.removed)
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        new = words(np, [bytes(r[1]) for r in rows], self.width)
        at = np.searchsorted(self.ids, ids).clip(max=max(len(self.ids) - 1, 0))
        known = (self.ids[at] == ids) if len(self.ids) else np.zeros(len(ids), dtype=bool)
        merged = self.words.copy()
        merged[:, at[known]] = new[:, known]
        if known.all():
            return Codes(self.ids, merged, self.width, version, self.removed)
        added = np.argsort(ids[~known], kind="stable")
        new_ids, new_words = ids[~known][added], new[:, ~known][:, added]
        merged_ids = np.concatenate([self.ids, new_ids])
        merged = np.concatenate([merged, new_words], axis=1)
        if len(self.ids) and new_ids[0] < self.ids[-1]:  # ids are given in order: rarely taken
            order = np.argsort(merged_ids, kind="stable")
            merged_ids, merged = merged_ids[order], np.ascontiguousarray(merged[:, order])
        return Codes(merged_ids, merged, self.width, version, self.removed)

    def nearest(self, np: Any, code: bytes, count: int) -> list[int]:
        """The ids of the `count` codes nearest to `code` by Hamming distance, ties by id,
        ascending (every code when there are no more than `count`)."""
        if count >= len(self.ids):
            return [int(i) for i in self.ids]
        query = words(np, [code], self.width)[:, 0]
        distance = np.zeros(len(self.ids), dtype=np.uint16)
        for word, bits in zip(self.words, query, strict=True):
            if hasattr(np, "bitwise_count"):  # numpy ≥ 2
                distance += np.bitwise_count(word ^ bits)
            else:
                distance += np.unpackbits((word ^ bits).view(np.uint8)).reshape(-1, 64).sum(axis=1, dtype=np.uint16)
        kth = np.partition(distance, count - 1)[count - 1]
        nearer = np.flatnonzero(distance < kth)
        tied = np.flatnonzero(distance == kth)[: count - len(nearer)]
        return [int(i) for i in self.ids[np.sort(np.concatenate([nearer, tied]))]]


def words(np: Any, codes: list[bytes], width: int) -> Any:
    """Codes of `width` bytes as 64-bit words, each code zero-padded to whole words: one column a
    code, one row a word."""
    pad = -width % 8
    flat = b"".join(c + b"\0" * pad for c in codes) if pad else b"".join(codes)
    return np.ascontiguousarray(np.frombuffer(flat, dtype=np.uint64).reshape(len(codes), (width + pad) // 8).T)


def in_scope(live: Callable[[list[str]], set[str]], ranked: Ranked, limit: int) -> tuple[Ranked, float]:
    """The first `limit` of `ranked` that `live` says are live members of the scope, asked a block
    at a time in rank order, and the share of those asked that were."""
    found: Ranked = []
    checked = 0
    block = max(2 * limit, 64)
    while checked < len(ranked) and len(found) < limit:
        part = ranked[checked : checked + block]
        checked += len(part)
        kept = live([i for i, _ in part])
        found.extend(row for row in part if row[0] in kept)
        block *= 2
    return found[:limit], (len(found) / checked if checked else 0.0)


def nearest_in_scope(
    ranked_for: Callable[[int], Ranked | None],
    live: Callable[[list[str]], set[str]],
    exact: Callable[[], Ranked],
    limit: int,
    first_round: Ranked | None = None,
) -> Ranked:
    """The `limit` best live members of the scope: from `ranked_for(count)` — the `count` vectors
    whose codes are nearest the query's, ranked exactly, best first (None: no codes to ask, the
    exact scan answers) — in rounds, asking for more when too few of them are in the scope; the
    `exact` scan when the rounds do not find enough. `first_round` stands for the first call."""
    want = candidates_for(limit)
    asked = want
    for round_no in range(ROUNDS):
        ranked = first_round if round_no == 0 and first_round is not None else ranked_for(asked)
        if ranked is None:
            break
        found, share = in_scope(live, ranked, limit)
        if len(ranked) < asked:
            return found  # every vector of the model was a candidate: the exact answer
        if len(found) >= limit and share * len(ranked) >= want:
            return found  # about `want` of the candidates are live members of the scope
        if share == 0:
            break
        # Too few of the candidates are in the scope: as many more as the share seen says should
        # bring twice `want`.
        asked = max(asked * 2, math.ceil(2 * want / share))
    return exact()


class CodeRanked:
    """`nearest_vectors` and `vector_candidates` as both engines answer them: candidates by their
    codes, ranked exactly, kept to the scope in rounds (`nearest_in_scope`). An engine's vector part
    says how: its `_ranked_candidates` (None: no codes, the exact scan answers), `_live` and `_exact`."""

    def _ranked_candidates(self, model: str, code: bytes, vector: bytes, count: int) -> Ranked | None:
        raise NotImplementedError

    def _live(self, initiative_ids: Sequence[int], ids: list[str]) -> set[str]:
        raise NotImplementedError

    def _exact(self, initiative_ids: Sequence[int], model: str, vector: bytes, limit: int) -> Ranked:
        raise NotImplementedError

    def vector_candidates(self, model: str, vector: bytes, limit: int) -> Ranked | None:
        return self._ranked_candidates(model, quantize(vector), vector, candidates_for(limit))

    def nearest_vectors(
        self,
        initiative_ids: Sequence[int],
        model: str,
        vector: bytes,
        limit: int,
        first_round: Ranked | None = None,
    ) -> Ranked:
        if not initiative_ids or limit <= 0:
            return []
        code = quantize(vector)
        return nearest_in_scope(
            lambda count: self._ranked_candidates(model, code, vector, count),
            lambda ids: self._live(initiative_ids, ids),
            lambda: self._exact(initiative_ids, model, vector, limit),
            limit,
            first_round,
        )
