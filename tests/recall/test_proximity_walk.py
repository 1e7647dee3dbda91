"""The proximity channel walks a passage for adjacent query words only when it holds two of them
(decision 245): the same score as walking every passage, for any text and question."""

from __future__ import annotations

import math
from itertools import pairwise
from types import SimpleNamespace
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from kaeru.service.recall.bm25 import passage_bounds
from kaeru.service.recall.channels import _proximity
from kaeru.service.runtime import doc_words_memo


class _Fusion:
    def __init__(self, ids: list[str]):
        self.ids = ids
        self.got: dict[str, float] = {}

    def ranked(self) -> list[str]:
        return self.ids

    def put(self, channel: str, node_id: str, value: float) -> None:
        assert channel == "proximity"
        self.got[node_id] = value


def walked_everywhere(doc: tuple[str, ...], stems: list[str], idf: dict[str, float]) -> float:
    """The score as it was computed before: every passage walked pair by pair."""
    wanted = set(stems)
    total = math.fsum(idf.get(w, 0.0) for w in wanted)
    pairs = {(a, b) for a, b in pairwise(stems)}
    best = 0.0
    for start, end in passage_bounds(len(doc)):
        part = doc[start:end]
        present = wanted.intersection(part)
        coverage = math.fsum(idf.get(w, 0.0) for w in present) / total if total else len(present) / len(wanted)
        adjacent = sum(1 for pair in pairwise(part) if pair in pairs)
        best = max(best, coverage**2 + min(adjacent, 3) * 0.25)
    return best


@settings(max_examples=300, deadline=None)
@given(
    docs=st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=300), min_size=1, max_size=6),
    stems=st.lists(st.sampled_from("abcdefghij"), min_size=1, max_size=6),
    weighted=st.booleans(),
)
def test_proximity_scores_as_if_every_passage_were_walked(
    docs: list[list[str]], stems: list[str], weighted: bool
) -> None:
    memo = doc_words_memo()
    pool: dict[str, Any] = {}
    for i, words in enumerate(docs):
        node = SimpleNamespace(id=f"n{i}", revision="r1")
        memo.put((node.id, f"{node.revision}\x1fnear"), tuple(words))
        pool[node.id] = node
    idf = {w: 1.0 + ord(w) % 5 for w in stems} if weighted else {}
    fusion = _Fusion(list(pool))
    _proximity(cast(Any, fusion), pool, stems, idf, memo)
    assert fusion.got == {f"n{i}": walked_everywhere(tuple(words), stems, idf) for i, words in enumerate(docs)}
