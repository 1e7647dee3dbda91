"""What every use case needs: the store, the settings, a clock and a source of entropy.

Clock and entropy are injected so tests can pin time (reminders, as-of reads) without patching.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from kaeru.config import Settings
from kaeru.domain.ids import uuid7
from kaeru.service.embedding import Embedder
from kaeru.storage.base import Store


def system_clock() -> datetime:
    return datetime.now(UTC)


@dataclass
class Runtime:
    store: Store
    settings: Settings
    clock: Callable[[], datetime] = system_clock
    entropy: Callable[[int], bytes] = field(default=os.urandom)
    #: The optional semantic channel's embedder (None: recall is purely lexical).
    embedder: Embedder | None = None

    def now(self) -> datetime:
        return self.clock()

    def new_id(self, at: datetime) -> str:
        return uuid7(int(at.timestamp() * 1000), self.entropy(10))
