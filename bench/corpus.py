"""A deterministic synthetic corpus that looks like an agent's notes, statistically.

* A vocabulary of ~5,000 made-up words drawn with Zipf-like frequencies (rank r has weight 1/r^1.07),
  so a handful of words appear in nearly every note and most appear rarely — like real text.
* Bodies of 20–200 words in sentences, a few kinds, several initiatives of unequal size, and some
  manual tags and links.
* **Selective** query words: extra words outside the vocabulary, each planted in 5–20 notes of the
  main initiative only, so a selective search has a known, small hit count.
* **Broad** query words: the most frequent vocabulary words, which match most of the vault.

Everything comes from one `random.Random(seed)`, so the same seed and size give the same vault text.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kaeru.domain.stopwords import STOP_WORDS

VOCAB_SIZE = 5_000
ZIPF_EXPONENT = 1.07
BODY_WORDS = (20, 200)
SELECTIVE_HITS = (5, 20)
BROAD_WORDS = 8

#: Initiatives and their share of the notes; the first is where every measured call goes.
INITIATIVES: tuple[tuple[str, float], ...] = (
    ("kaeru-core", 0.40),
    ("billing-service", 0.20),
    ("mobile-app", 0.15),
    ("infra-migration", 0.10),
    ("research-notes", 0.10),
    ("personal", 0.05),
)
MAIN = INITIATIVES[0][0]

KINDS: tuple[tuple[str, float], ...] = (
    ("observation", 0.50),
    ("decision", 0.15),
    ("jot", 0.15),
    ("idea", 0.10),
    ("concept", 0.05),
    ("checklist", 0.05),
)

_TAG_FAMILIES = (
    ("area", ("api", "storage", "search", "auth", "ui", "ops", "docs", "tests", "perf", "billing")),
    ("prio", ("high", "medium", "low")),
    ("team", ("core", "mobile", "infra", "data")),
    ("status", ("todo", "doing", "done", "blocked")),
)
TAGS = (
    *(f"{family}:{value}" for family, values in _TAG_FAMILIES for value in values),
    "flaky",
    "customer",
    "incident",
    "followup",
    "question",
    "benchmark",
)

_ONSETS = ("b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "tr", "st")
_NUCLEI = ("a", "e", "i", "o", "u", "ai", "ou", "ea")
_CODAS = ("", "", "", "n", "r", "s", "l", "m", "k", "nd", "st")


def _word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(_ONSETS) + rng.choice(_NUCLEI) + rng.choice(_CODAS) for _ in range(syllables))


def _words(rng: random.Random, count: int, syllables: tuple[int, ...], taken: set[str]) -> list[str]:
    out: list[str] = []
    while len(out) < count:
        word = _word(rng, rng.choice(syllables))
        if len(word) < 3 or word in STOP_WORDS or word in taken:
            continue
        taken.add(word)
        out.append(word)
    return out


@dataclass
class NoteSpec:
    """One note as the `note` tool would receive it (`link_to` is an index into earlier notes)."""

    initiative: str
    kind: str
    text: str
    name: str | None
    tags: list[str]
    link_to: int | None = None

    def args(self) -> dict[str, Any]:
        args: dict[str, Any] = {"initiative": self.initiative, "kind": self.kind, "text": self.text}
        if self.name is not None:
            args["name"] = self.name
        if self.tags:
            args["tags"] = self.tags
        return args


@dataclass
class Corpus:
    seed: int
    size: int
    vocab: list[str]
    selective: dict[str, int] = field(default_factory=dict)  # word -> notes it was planted in
    broad: dict[str, int] = field(default_factory=dict)  # word -> notes containing it (all initiatives)
    broad_main: dict[str, int] = field(default_factory=dict)  # word -> notes containing it in MAIN

    def describe(self) -> dict[str, Any]:
        sel = sorted(self.selective.values())
        return {
            "seed": self.seed,
            "notes": self.size,
            "vocabulary": len(self.vocab),
            "zipf_exponent": ZIPF_EXPONENT,
            "body_words": list(BODY_WORDS),
            "initiatives": {name: share for name, share in INITIATIVES},
            "searched_initiative": MAIN,
            "selective_words": len(self.selective),
            "selective_hits_min_max": [sel[0], sel[-1]] if sel else None,
            "broad_words": dict(self.broad_main),
            "broad_words_all_initiatives": dict(self.broad),
        }


class CorpusBuilder:
    """Generates the notes of one vault; call `notes()` once, then read `corpus` for the query words."""

    def __init__(self, size: int, seed: int = 20240601):
        self.size = size
        self.rng = random.Random(seed)
        taken: set[str] = set()
        vocab = _words(self.rng, VOCAB_SIZE, (1, 2, 2, 3), taken)
        self._cum = list(itertools.accumulate(1.0 / (r**ZIPF_EXPONENT) for r in range(1, VOCAB_SIZE + 1)))
        self.corpus = Corpus(seed, size, vocab)
        # Every note's initiative is fixed up front so the selective words can be planted in MAIN only.
        names = [n for n, _ in INITIATIVES]
        shares = [s for _, s in INITIATIVES]
        self._initiatives = self.rng.choices(names, weights=shares, k=size)
        main_notes = [i for i, name in enumerate(self._initiatives) if name == MAIN]
        # Rare words: enough for many distinct selective queries, each planted in 5–20 MAIN notes.
        count = max(8, len(main_notes) // 40)
        rare = _words(self.rng, count, (3, 4), taken)
        self._planted: dict[int, list[str]] = {}
        for word in rare:
            hits = min(len(main_notes), self.rng.randint(*SELECTIVE_HITS))
            for index in self.rng.sample(main_notes, hits):
                self._planted.setdefault(index, []).append(word)
            self.corpus.selective[word] = hits
        self._seen: dict[str, list[int]] = {}
        self._broad = set(vocab[:BROAD_WORDS])
        self.corpus.broad = dict.fromkeys(vocab[:BROAD_WORDS], 0)
        self.corpus.broad_main = dict.fromkeys(vocab[:BROAD_WORDS], 0)

    def initiative_of(self, index: int) -> str:
        return self._initiatives[index]

    def zipf_words(self, rng: random.Random, count: int) -> list[str]:
        """`count` words drawn (with repeats) by the corpus's own Zipf frequencies, with `rng`."""
        return rng.choices(self.corpus.vocab, cum_weights=self._cum, k=count)

    def body(self, extra: list[str] | None = None) -> str:
        """One body of 20–200 Zipf-distributed words in sentences, with `extra` words mixed in."""
        rng = self.rng
        count = rng.randint(*BODY_WORDS)
        words = rng.choices(self.corpus.vocab, cum_weights=self._cum, k=count)
        for word in extra or ():
            words.insert(rng.randrange(len(words) + 1), word)
        out: list[str] = []
        start = 0
        while start < len(words):
            end = start + rng.randint(6, 16)
            sentence = words[start:end]
            out.append(sentence[0].capitalize() + (" " + " ".join(sentence[1:]) if len(sentence) > 1 else "") + ".")
            start = end
        return " ".join(out)

    def note(self, index: int) -> NoteSpec:
        rng = self.rng
        initiative = self._initiatives[index]
        text = self.body(self._planted.get(index))
        present = self._broad.intersection(text.lower().replace(".", " ").split())
        for word in present:
            self.corpus.broad[word] += 1
            if initiative == MAIN:
                self.corpus.broad_main[word] += 1
        kind = rng.choices([k for k, _ in KINDS], weights=[w for _, w in KINDS])[0]
        name = None
        if rng.random() < 0.3:
            title = " ".join(rng.choices(self.corpus.vocab[:2000], k=rng.randint(2, 5)))
            name = f"{title.capitalize()} #{index}"
        tags = rng.sample(TAGS, rng.choice((0, 0, 1, 1, 2, 3)))
        earlier = self._seen.setdefault(initiative, [])
        link_to = rng.choice(earlier) if earlier and rng.random() < 0.1 else None
        earlier.append(index)
        return NoteSpec(initiative, kind, text, name, tags, link_to)

    def notes(self) -> Iterator[NoteSpec]:
        for index in range(self.size):
            yield self.note(index)

    def fresh_note(self) -> dict[str, Any]:
        """Arguments for a new `note` call during measurement (not part of the built vault)."""
        tags = self.rng.sample(TAGS, self.rng.choice((0, 1, 2)))
        args: dict[str, Any] = {"initiative": MAIN, "kind": "observation", "text": self.body()}
        if tags:
            args["tags"] = tags
        return args
