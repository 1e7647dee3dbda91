"""The memories semantic recall cannot find by meaning — live, with text, and no vector of the model
or one of a text they no longer hold (written or revised without the channel) — counted so `recall`
can say so and name `kaeru reindex`: a vault built without the channel and then served with it
answered a question only a vector would find with no hit and no issue, while `kaeru doctor` counted
them.

Counting reads every live memory (as the doctor's check does), far too much for each recall: a
service counts once, on its warm-up thread (`Service.warm`) or on a thread of its own at its first
semantic recall after a warm-up cut short, and keeps the count; a command that makes one call
does not count (`kaeru doctor` does). While some lack a vector it counts again now and then (a
`kaeru reindex` run by another process mends them); a vault found whole is counted again only when
this process's write could not embed, or after its own reindex. A write by another process without
the channel, while this one runs, is not seen until it restarts (`kaeru doctor` counts it)."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kaeru.service.embedding import node_text, text_digest
from kaeru.service.outcomes import Issue

if TYPE_CHECKING:
    from kaeru.service.runtime import Runtime
    from kaeru.storage.base import Store

log = logging.getLogger(__name__)

#: Seconds after which a count that found memories without a vector is taken again.
RECOUNT_S = 600.0
#: Live memories read at a time.
BATCH = 1000


def count(store: Store, model: str, keep_going: Callable[[], bool] = lambda: True) -> Counter[tuple[str, ...]] | None:
    """How many live memories with text lack a current vector of `model`, by the names of the
    initiatives they belong to; None when `keep_going()` turned false first."""
    found: Counter[tuple[int, ...]] = Counter()
    with store.read() as session:
        known = session.vector_digests(model)
        after = 0
        while batch := session.live_node_batch(after, BATCH):
            if not keep_going():
                return None
            after = batch[-1].seq
            for node in batch:
                text = node_text(node)
                if text.strip() and known.get(node.id) != text_digest(text):
                    found[tuple(node.initiatives)] += 1
        names = session.initiative_names(sorted({i for ids in found for i in ids}))
    named: Counter[tuple[str, ...]] = Counter()
    for ids, n in found.items():
        named[tuple(names[i] for i in ids if i in names)] += n
    return named


class Unembedded:
    """One service's count (`count`), kept between recalls; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_initiatives: Counter[tuple[str, ...]] | None = None
        self._counted_at = 0.0
        self._counting = False
        #: A write of this process could not embed, or it reindexed: the count is taken again.
        self._dirty = False
        #: Whether a server's warm-up asked for a count: a command that makes one call counts nothing.
        self._wanted = False

    def _due(self) -> bool:
        known = self._by_initiatives
        if known is None or self._dirty:
            return True
        return bool(known) and time.monotonic() - self._counted_at >= RECOUNT_S

    def count_now(self, rt: Runtime, keep_going: Callable[[], bool] = lambda: True) -> None:
        """Count on this thread, when a count is due (the server's warm-up thread)."""
        embedder = rt.embedder
        if embedder is None:
            return
        with self._lock:
            self._wanted = True
            if self._counting or not self._due():
                return
            self._counting, self._dirty = True, False
        counted = None
        try:
            counted = count(rt.store, embedder.model_id, keep_going)
        except Exception as exc:  # a count that fails says nothing; recall answers as before
            log.warning("the memories without a vector could not be counted: %s", exc)
        finally:
            with self._lock:
                self._counting = False
                if counted is not None:
                    self._by_initiatives, self._counted_at = counted, time.monotonic()

    def count_soon(self, rt: Runtime) -> None:
        """`count_now` on a thread of its own, when a count is due (after a warm-up asked for one, or
        was cut short by the calls it gives way to): a recall never waits for it."""
        with self._lock:
            if not self._wanted or self._counting or not self._due() or rt.embedder is None:
                return
        threading.Thread(target=self.count_now, args=(rt,), name="kaeru-unembedded", daemon=True).start()

    def changed(self) -> None:
        """This process wrote a memory it could not embed, or reindexed: count again."""
        with self._lock:
            self._dirty = True

    def issue(self, initiatives: Sequence[str]) -> Issue | None:
        """What a recall over `initiatives` says of their memories without a current vector, if any."""
        with self._lock:
            known = self._by_initiatives
        if not known:
            return None
        scope = set(initiatives)
        missing = sum(n for names, n in known.items() if scope.intersection(names))
        if not missing:
            return None
        some = "memory" if missing == 1 else "memories"
        return Issue(
            "not_embedded",
            f"{missing} {some} in these initiatives have no vector of their current text (written or revised "
            "without the semantic channel): recall finds them by their words, not by their meaning, until "
            "`kaeru reindex` adds their vectors",
        )
