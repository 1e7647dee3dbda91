"""What `kaeru doctor` learns from a vault's storage, the same shape on both backends.

The backend modules (`storage/sqlite/health.py`, `storage/postgres/health.py`) open a vault
read-only — never creating, migrating or writing it — and answer these facts; the service's doctor
turns them into checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: How many disagreeing node ids a report names at most (the counts are always exact).
SAMPLE_IDS = 10
#: The WAL size above which the doctor warns: 128 MiB, far past the few MiB the checkpointer keeps
#: it at (decision 16.I1) — a WAL this large means checkpoints are being starved (a reader held a
#: snapshot for a long time), and every read pays for scanning it.
WAL_WARN_BYTES = 128 * 1024 * 1024


@dataclass(frozen=True)
class IndexAgreement:
    """Whether the full-text index holds exactly one row per live node."""

    live_nodes: int
    indexed_rows: int
    #: Live nodes without a full-text row (search cannot find them), a sample of their ids.
    missing: list[str] = field(default_factory=list)
    missing_count: int = 0
    #: Full-text rows of no live node (a deleted or retracted node still matches), a sample.
    stale: list[str] = field(default_factory=list)
    stale_count: int = 0
    #: The index is due a rebuild on the next read-write open (a migration asked for it).
    rebuild_pending: bool = False

    @property
    def agrees(self) -> bool:
        return not self.missing_count and not self.stale_count and not self.rebuild_pending
