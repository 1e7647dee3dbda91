"""Memory: the memos that make tokenising and ranking cheap do not keep a large note alive (issue 15:
a tokeniser cache keyed by whole texts kept ~38 MB alive for one 4 MB note)."""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

from kaeru.api.requests import parse
from kaeru.domain.text import TOKENISER
from kaeru.service import Service

P = "proj"
#: What writing, searching and recalling one 4 MB note may leave allocated in Python objects: the
#: stems of its words and its memoised stem frequencies, not its text or its tokens.
KEPT_LIMIT = 8 << 20


def _large_text(chars: int = 4_000_000) -> str:
    """About `chars` characters of prose-like words (a vocabulary of a few thousand words)."""
    words = [f"{stem}{i}" for i in range(700) for stem in ("alpha", "gamma", "delta", "omega", "sigma")]
    sentence = " ".join(words)
    return (sentence + ". ") * (chars // (len(sentence) + 2))


def _note(service: Service, text: str) -> str:
    outcome, _ = service.note(parse("note", {"initiative": P, "text": text}))
    assert outcome.primary is not None
    return outcome.primary.id


def _calls(service: Service, node_id: str) -> None:
    """A search and a recall that both find (so tokenise, rank and show) `node_id`."""
    found = service.search(parse("search", {"initiatives": [P], "text": "gamma42"}))
    recalled: Any = service.recall(parse("recall", {"initiatives": [P], "query": "gamma42 sigma7 pool"}))
    assert node_id in [h.node.id for h in found.hits]
    assert node_id in [h.node.id for h in recalled.hits]


def test_a_large_note_is_not_kept_alive_by_tokenising_or_ranking(service: Service) -> None:
    small = _note(service, "warm up: gamma42 tuned the sigma7 connection pool")
    _calls(service, small)  # lazy imports, prepared statements, schema validators: allocated once
    text = _large_text()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        large = _note(service, text)
        _calls(service, large)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < KEPT_LIMIT, f"{kept / 2**20:.1f} MiB still allocated after the calls returned"
    assert text not in TOKENISER.streams  # too large to memoise: tokenised again when asked again
