"""What every use case needs: the store, the settings, a clock and a source of entropy.

Clock and entropy are injected so tests can pin time (reminders, as-of reads) without patching.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple

from kaeru.config import Settings
from kaeru.domain.caches import ENTRY_OVERHEAD, BoundedCache
from kaeru.domain.ids import uuid7
from kaeru.domain.timefmt import parse_ts
from kaeru.service.cursors import CACHED_ITEMS, ResultLists
from kaeru.service.embedding import Embedder, EmbedWorker
from kaeru.service.recent import RecentWrites
from kaeru.storage.base import Store


def system_clock() -> datetime:
    return datetime.now(UTC)


#: How far ahead of a writer's clock the vault's newest write may be for the writer to stamp after
#: it anyway: a clock set to another zone's time (UTC-12 and UTC+14 are 26 hours apart) or a day
#: off, then corrected. A newest write further ahead was stamped by a clock set wrong by more than
#: that: following it would stamp every later write that far off — hygiene would find nothing old,
#: `due: "1d"` would fall weeks out (decision 342's year-fast clock) — so such a write is stamped
#: by the writer's clock, as before.
FOLLOWED_AHEAD = timedelta(days=2)


def after_newest(now: datetime, newest: str | None) -> datetime | None:
    """Just after `newest` (the vault's newest recorded stamp) when `now` is not later and `newest`
    is at most `FOLLOWED_AHEAD` ahead; None when `now` itself is the stamp (`Runtime.write_time`)."""
    try:
        floor = parse_ts(newest) + timedelta(microseconds=1) if newest else None
    except ValueError:  # not a stamp kaeru writes (an imported archive's): no floor
        return None
    return floor if floor is not None and now < floor <= now + FOLLOWED_AHEAD else None


def vault_now(store: Store, source: Callable[[], datetime] = system_clock) -> datetime:
    """This machine's clock corrected by the vault's (`Store.clock_offset`): what a write that no
    `Runtime` stamps (an import's provenance, a token's last use) is stamped by (decision 404)."""
    return source() + store.clock_offset()


class WallClock:
    """What a process stamps its writes and reads "now" by, when no clock is injected: the machine's
    clock corrected by the vault's (`Store.clock_offset`: PostgreSQL's own, which every server on
    the vault shares), never earlier than its previous reading. Each writer stamped with its own
    clock: a server minutes ahead made another's `read at: "now"` miss its writes, a replacement
    read as current before it was made, and an NTP step back stamped a write before the one it
    followed (decision 404). The previous reading is this object's own state, behind a lock."""

    def __init__(self, source: Callable[[], datetime] = system_clock) -> None:
        self._source = source
        self._last: datetime | None = None
        self._lock = threading.Lock()

    def now(self, store: Store) -> datetime:
        reading = vault_now(store, self._source)
        with self._lock:
            if self._last is not None and reading <= self._last:
                reading = self._last + timedelta(microseconds=1)
            self._last = reading
        return reading

    def saw(self, moment: datetime) -> None:
        """This process stamped a write `moment`, after the vault's newest, ahead of its own clock
        (`Runtime.write_time`): its readings go on from there, so that its own `read at: "now"` or
        `timeline since: "5m"` right after does not miss what it wrote."""
        with self._lock:
            if self._last is None or moment > self._last:
                self._last = moment


class DocTerms(NamedTuple):
    """One node revision's words as recall's BM25F counts them (`recall/bm25.py`): per field (name,
    description, body, tags) the words it counts, the body's stems in order when it is scored by
    windows (else empty), and the node's weighted length. Each query
    counts only its own words in them: no table of every word's frequency is kept (decision 128)."""

    counted: tuple[tuple[str, ...], ...]
    body: tuple[str, ...]
    length: float


#: Recall's memo of each candidate revision's `DocTerms`, keyed by (node id, revision): reused from
#: call to call within this budget, and a single revision may take a quarter of it at most. The
#: words are the tokeniser's shared strings (one vocabulary's worth), so an entry is counted by its
#: references, as `doc_words` is: ~1.5 KB for a 100-word note (a dictionary of its words' frequencies
#: took ~10), so 16 MiB holds ~11,000 of them.
DOC_STEMS_BYTES = 16 << 20
DocStems = BoundedCache[tuple[str, str], DocTerms]


def _doc_stems_size(key: tuple[str, str], value: DocTerms) -> int:
    held = {id(t): t for t in (*value.counted, value.body)}  # a field's words often are its stems
    strings = sys.getsizeof(key) + sum(map(sys.getsizeof, key))
    return strings + sum(map(sys.getsizeof, held.values())) + sys.getsizeof(value) + ENTRY_OVERHEAD


def doc_stems_memo() -> DocStems:
    return BoundedCache(DOC_STEMS_BYTES, _doc_stems_size, DOC_STEMS_BYTES // 4)


#: Recall's memo of each candidate revision's word sequences (`recall/bm25.py`'s passages, the
#: proximity channel's text), keyed by (node id, revision and which text): a tuple of stems that are
#: the tokeniser's shared strings (one vocabulary's worth), so an entry is counted by its references.
DOC_WORDS_BYTES = 8 << 20
DocWords = BoundedCache[tuple[str, str], tuple[str, ...]]


def _doc_words_size(key: tuple[str, str], value: tuple[str, ...]) -> int:
    return sys.getsizeof(key) + sum(map(sys.getsizeof, key)) + sys.getsizeof(value) + ENTRY_OVERHEAD


def doc_words_memo() -> DocWords:
    return BoundedCache(DOC_WORDS_BYTES, _doc_words_size, DOC_WORDS_BYTES // 4)


@dataclass
class Runtime:
    store: Store
    settings: Settings
    clock: Callable[[], datetime] = system_clock
    entropy: Callable[[int], bytes] = field(default=os.urandom)
    #: The optional semantic channel's embedder (None: recall is purely lexical).
    embedder: Embedder | None = None
    #: The thread recall's queries are embedded on, made at the first semantic recall.
    embed_worker: EmbedWorker = field(default_factory=EmbedWorker)
    #: The runtime's memos, each bounded by bytes (nothing is cached at module level).
    doc_stems: DocStems = field(default_factory=doc_stems_memo)
    doc_words: DocWords = field(default_factory=doc_words_memo)
    #: The result lists of this service's read cursors (decision 15.P4), bounded by item count.
    cursor_lists: ResultLists = field(default_factory=lambda: ResultLists(CACHED_ITEMS))
    #: The nodes this process's calls without a `request_id` wrote lately (decision 291).
    recent_writes: RecentWrites = field(default_factory=RecentWrites)
    #: Stems a long question found held by more than `RARE_ROWS` memories of the vault (decision
    #: 168), not counted again: vaults grow, so a common stem stays common. Bounded by `_rarest`.
    common_stems: set[str] = field(default_factory=set)

    #: The corrected, never-backwards reading of the system clock (`WallClock`).
    wall: WallClock = field(default_factory=WallClock)

    def now(self) -> datetime:
        """The clock injected (tests pin time with it), else the vault's wall clock."""
        if self.clock is system_clock:
            return self.wall.now(self.store)
        return self.clock()

    def reading(self) -> datetime:
        """The clock injected, else the vault's clock as a server checks a token's expiry by
        (`vault_now`): not `now()`, which never reads earlier than this process's last write stamp,
        and that follows the vault's newest stamp (a clock once ahead leaves it ahead)."""
        return vault_now(self.store) if self.clock is system_clock else self.clock()

    def write_time(self, newest: str | None) -> datetime:
        """What a write is stamped by: `now()`, or just after `newest` — the vault's newest recorded
        stamp — when that is not earlier (and at most `FOLLOWED_AHEAD` ahead). A node's revisions were
        kept in order (`WriteContext._stamp`), and PostgreSQL's writers share the server's clock
        (decision 404: its session reads no `newest`), but on SQLite a laptop clock corrected back between two sessions recorded a
        replacement before the node it replaced: `read at` showed an edge to a node that "did not
        exist", `timeline` listed the replacement first. Its valid time (`created_at`) is that stamp
        too: the vault's newest write says the real time is at least that."""
        now = self.now()
        floor = after_newest(now, newest)
        if floor is None:
            return now
        if self.clock is system_clock:
            self.wall.saw(floor)
        return floor

    def today(self) -> date:
        """The user's calendar day now: in KAERU_TIMEZONE, else the machine's own zone. Due
        dates, reminders and a rule's `through` are days on the user's calendar, and UTC's day
        is another one for hours of every day in most of the world (decision 188)."""
        return self.now().astimezone(self.settings.zone()).date()

    def new_id(self, at: datetime) -> str:
        return uuid7(int(at.timestamp() * 1000), self.entropy(10))
