"""The rankings a process's in-memory copies served, kept in the vault for the next process (decision
270).

An agent's sessions on one project ask in the same words: its next server, warming up after its
first answer (decision 269), replays the latest rankings the last one made (`TextCache.rank` with the
same phrases), so the copies of the project's common words are read before its first recalls ask
for them. What is kept is each ranking's input — its phrases' FTS5 matches, their column weights,
the scope phrases — as JSON under one `meta` key, written when the store closes; the words were
already in the vault's text. A value that does not parse is ignored.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

#: The `meta` key the latest rankings are kept under.
WARM_KEY = "warm_rankings"
#: How many of the latest distinct rankings are kept, and replayed by the next process.
KEPT = 16
#: The upsert that keeps them (`SqliteStore._keep_rankings`).
KEEP = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"

Phrases = tuple[tuple[str, tuple[float, ...]], ...]
#: One ranking's input: `(words, scopes, match_all, scores)`, as `TextCache.rank` takes them.
Ranked = tuple[Phrases, Phrases, bool, bool]


def _phrases(phrases: Sequence[tuple[str, Sequence[float]]]) -> Phrases:
    return tuple((str(match), tuple(float(w) for w in weights)) for match, weights in phrases)


class RecentRankings:
    """The latest `KEPT` distinct rankings' inputs, oldest first; `changed` since `kept`."""

    def __init__(self) -> None:
        self._items: OrderedDict[Ranked, None] = OrderedDict()
        self._lock = threading.Lock()
        self._kept = ""

    def note(
        self,
        words: Sequence[tuple[str, Sequence[float]]],
        scopes: Sequence[tuple[str, Sequence[float]]],
        match_all: bool,
        scores: bool,
    ) -> None:
        key = (_phrases(words), _phrases(scopes), bool(match_all), bool(scores))
        with self._lock:
            self._items[key] = None
            self._items.move_to_end(key)
            while len(self._items) > KEPT:
                self._items.popitem(last=False)

    def dumps(self) -> str:
        """The rankings as the JSON kept in the vault ("" for none)."""
        with self._lock:
            items = list(self._items)
        if not items:
            return ""
        return json.dumps([[[list(p) for p in w], [list(p) for p in s], a, c] for w, s, a, c in items])

    @property
    def changed(self) -> bool:
        """Whether the rankings differ from those last read from or written to the vault."""
        return self.dumps() not in ("", self._kept)

    def kept(self, text: str) -> None:
        """`text` is what the vault holds now (read for a warm-up, or written at close)."""
        self._kept = text


def loads(text: str) -> list[Ranked]:
    """The rankings `dumps` wrote; [] for anything else (an older or damaged value)."""
    try:
        data: Any = json.loads(text)
        return [(_phrases(w), _phrases(s), bool(a), bool(c)) for w, s, a, c in data][-KEPT:]
    except (ValueError, TypeError):
        return []
