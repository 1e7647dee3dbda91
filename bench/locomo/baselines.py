"""Baselines computed in the harness: Okapi BM25 over single turns, word-overlap `grep`, random.

All three use the product's tokeniser (`kaeru.domain.text.tokens`) and one English stop-word list,
so they differ from kaeru's own calls only in ranking. Each returns turn ids, best first, ties in
dialogue order.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Sequence

from bench.locomo.data import Turn
from kaeru.domain.text import tokens

#: NLTK's English stop-word list (179 words). It includes the pieces that the product tokeniser makes
#: of contractions (`don't` → `don`, `t`), so those are dropped too; the forms with an apostrophe
#: never occur as tokens and are kept only so the list stays the standard one.
ENGLISH_STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves
    he him his himself she she's her hers herself it it's its itself they them their theirs themselves
    what which who whom this that that'll these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on off over
    under again further then once here there when where why how all any both each few more most other
    some such no nor not only own same so than too very s t can will just don don't should should've
    now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn
    hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn
    shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
    """.split()  # noqa: SIM905 — a word list reads better as text
)

BM25_K1 = 1.2
BM25_B = 0.75
DEPTH = 50


def content_tokens(text: str) -> list[str]:
    """The product's tokens of `text` without stop words (in order, repeats kept)."""
    return [t for t in tokens(text) if t not in ENGLISH_STOP_WORDS]


def query_terms(text: str) -> list[str]:
    """Distinct content tokens of a question, first-seen order."""
    return list(dict.fromkeys(content_tokens(text)))


class BM25:
    """Okapi BM25 over one conversation's turns (each turn one document).

    score(d, q) = Σ_{t ∈ q} idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl)),
    idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))   (the non-negative form used by Lucene).
    Query terms are the question's distinct content tokens; only turns sharing a term are ranked.
    """

    def __init__(self, turns: Sequence[Turn], k1: float = BM25_K1, b: float = BM25_B):
        self.ids = [t.dia_id for t in turns]
        self.k1, self.b = k1, b
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self.lengths: list[int] = []
        for i, turn in enumerate(turns):
            terms = content_tokens(turn.text)
            self.lengths.append(len(terms))
            for term, tf in Counter(terms).items():
                self.postings[term].append((i, tf))
        n = len(turns)
        self.avgdl = (sum(self.lengths) / n) if n else 0.0
        self.idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self.postings.items()}

    def rank(self, question: str, depth: int = DEPTH) -> list[str]:
        scores: dict[int, float] = defaultdict(float)
        for term in query_terms(question):
            idf = self.idf.get(term)
            if idf is None:
                continue
            for doc, tf in self.postings[term]:
                norm = self.k1 * (1 - self.b + self.b * self.lengths[doc] / self.avgdl)
                scores[doc] += idf * tf * (self.k1 + 1) / (tf + norm)
        ranked = sorted(scores, key=lambda d: (-scores[d], d))
        return [self.ids[d] for d in ranked[:depth]]


class Grep:
    """Turns ranked by how many distinct question words they contain; ties in dialogue order."""

    def __init__(self, turns: Sequence[Turn]):
        self.ids = [t.dia_id for t in turns]
        self.words = [frozenset(content_tokens(t.text)) for t in turns]

    def rank(self, question: str, depth: int = DEPTH) -> list[str]:
        wanted = query_terms(question)
        counts = [(sum(w in words for w in wanted), i) for i, words in enumerate(self.words)]
        ranked = sorted((c for c in counts if c[0] > 0), key=lambda c: (-c[0], c[1]))
        return [self.ids[i] for _, i in ranked[:depth]]


class RandomRanking:
    """A uniformly random order of all turns, seeded per question (independent of the other systems)."""

    def __init__(self, turns: Sequence[Turn], seed: int):
        self.ids = [t.dia_id for t in turns]
        self.seed = seed

    def rank(self, question_key: str, depth: int = DEPTH) -> list[str]:
        rng = random.Random(f"{self.seed}:{question_key}")
        return rng.sample(self.ids, min(depth, len(self.ids)))
