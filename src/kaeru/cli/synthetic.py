"""The synthetic memories and calls `kaeru bench` measures: made here, from a seed, in memory.

An installed server has no benchmark data beside it, and nothing may be downloaded, so the scratch
vault is written from generated text. What matters for timing is the shape, not the meaning: notes
of 20–40 words drawn from a vocabulary with a Zipf distribution (as words are in real text), so a
few words are in most notes (a *common* word: the broad search, the costly one) and most words in
very few (a *rare* word: the selective search an agent usually makes). Three initiatives share the
vault; the calls search the largest, which holds 60 % of the notes.
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

#: The initiative the calls search, and the two others that share the vault.
MAIN = "bench-main"
OTHERS = ("bench-side", "bench-archive")
VOCABULARY = 3_000
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "tr", "pl")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")
#: Note kinds in the proportions a working agent writes them.
_KINDS = ("observation",) * 6 + ("decision", "rule", "reference", "idea")
#: The words that most notes hold: searched as the broad queries.
COMMON_WORDS = 8
#: A rare query word is in at least one and at most this many of the searched notes.
RARE_AT_MOST = 10


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    """`size` distinct pronounceable pseudo-words of two or three syllables, in rank order."""
    syllables = [o + v for o, v in itertools.product(_ONSETS, _VOWELS)]
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(syllables) for _ in range(rng.choice((2, 2, 3))))] = None
    return list(words)


@dataclass
class Workload:
    """A seeded generator of notes to write and of the arguments of each measured call."""

    seed: int = 20261202
    words: list[str] = field(init=False)
    _weights: list[float] = field(init=False)
    _rng: random.Random = field(init=False)
    #: Ids of the notes written to the searched initiative, for `read`.
    main_ids: list[str] = field(default_factory=list)
    #: In how many of the searched initiative's notes each word is (the rare queries are found there).
    _found: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self.words = _vocabulary(self._rng, VOCABULARY)
        self._weights = list(itertools.accumulate(1.0 / rank for rank in range(1, VOCABULARY + 1)))

    def _text(self) -> str:
        count = self._rng.randint(20, 40)
        chosen = self._rng.choices(self.words, cum_weights=self._weights, k=count)
        return " ".join(chosen).capitalize() + "."

    def note(self, index: int) -> dict[str, Any]:
        """The `note` arguments of the `index`-th note of the scratch vault."""
        initiative = MAIN if index % 5 < 3 else OTHERS[index % 2]
        text = self._text()
        if initiative == MAIN:
            self._found.update(set(text.rstrip(".").lower().split()))
        return {"initiative": initiative, "text": text, "kind": self._rng.choice(_KINDS)}

    def common(self) -> list[str]:
        return self.words[:COMMON_WORDS]

    def rare(self) -> list[str]:
        """Words of the vocabulary's tail that the searched initiative holds, each in at most
        `RARE_AT_MOST` of its notes (any tail word while it holds none: an empty vault)."""
        tail = self.words[VOCABULARY // 2 :]
        return [w for w in tail if 0 < self._found[w] <= RARE_AT_MOST] or tail

    def call(self, operation: str) -> tuple[str, dict[str, Any]]:
        """The tool and the arguments of one measured call of `operation` (see `OPERATIONS`)."""
        rng = self._rng
        if operation == "note":
            return "note", {**self.note(rng.randrange(1 << 30)), "request_id": uuid.uuid4().hex}
        if operation == "read":
            return "read", {"initiative": MAIN, "node": rng.choice(self.main_ids)}
        if operation == "context":
            return "context", {"initiative": MAIN}
        tool, breadth = operation.split("_")
        word = rng.choice(self.common() if breadth == "common" else self.rare())
        key = "text" if tool == "search" else "query"
        return tool, {"initiatives": [MAIN], key: word}


#: What `kaeru bench` measures, in the order it prints them: the calls an agent makes most.
OPERATIONS = ("note", "read", "search_rare", "search_common", "recall_rare", "recall_common", "context")
