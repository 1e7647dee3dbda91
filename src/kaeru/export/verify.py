"""Verifying a copy merged into a vault that already held memory (`kaeru copy --force`).

A copy into an empty vault is verified whole: the target's memory must be the source's, record for
record (`archive.content_digest` on both sides). Merged into a vault that held memory of its own,
the target holds more than the source, so that comparison failed every time — after everything had
been written. What such a copy must hold is every record of the source: each node, edge, slot
revision, ended initiative and audit record as the source exports it, and each live initiative by
its name (an initiative the target already had keeps its own creation time, properties and name
history: an import does not overwrite them).

The source's records are not held in memory (decision 15.P3): a digest of each is kept in a
temporary SQLite file, and the target's records are looked up there as its export is walked.
"""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kaeru.export import amg
from kaeru.export.import_report import ImportReport
from kaeru.export.tally import LABELS, counted_as, joined, label
from kaeru.export.vault_io import Frame, walk_vault
from kaeru.storage.base import Store


def missing_records(source: Store, target: Store, merged: ImportReport | None = None) -> str | None:
    """What of the source's memory the target lacks, in words (None: it holds all of it). Records
    of how memory came into a vault (`import`, `copy`) are left out, as a whole copy's verification
    leaves them out. `merged`: the merge's report, whose records that diverged from the target's
    (`conflicts`) are why the target lacks them: named, so a merge refused says which (decision 463)."""
    with tempfile.TemporaryDirectory(prefix="kaeru-verify-") as scratch:
        db = sqlite3.connect(Path(scratch) / "source.sqlite3")
        try:
            db.execute(
                "CREATE TABLE wanted (digest BLOB PRIMARY KEY, kind TEXT NOT NULL, n INTEGER NOT NULL, "
                "seen INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID"
            )
            with db:
                db.executemany(
                    "INSERT INTO wanted (digest, kind, n) VALUES (?, ?, 1) "
                    "ON CONFLICT (digest) DO UPDATE SET n = n + 1",
                    ((digest, kind) for kind, digest in _digests(source)),
                )
            with db:
                db.executemany(
                    "UPDATE wanted SET seen = seen + 1 WHERE digest = ?",
                    ((digest,) for _, digest in _digests(target)),
                )
            rows = db.execute("SELECT kind, SUM(n), SUM(MAX(n - seen, 0)) FROM wanted GROUP BY kind").fetchall()
        finally:
            db.close()
    lacking = _lacking({kind: (int(total), int(lacking)) for kind, total, lacking in rows})
    if lacking is None or merged is None or not merged.conflicts:
        return lacking
    said = merged.diverged_words("source", "the target")
    return f"{lacking}: the source and the target diverged — {said}; the rest of the source was merged"


def _digests(store: Store) -> Iterator[tuple[str, bytes]]:
    """(header count, digest) of each record of the vault's memory, as an export streams them."""
    frame = Frame()
    for kind, record in walk_vault(store, None, frame):
        yield counted_as(kind, record), _digest(kind, record)
    for record in frame.initiatives:
        yield "initiatives", _digest("initiative", {"name": record["name"]})
    for record in frame.ended:
        yield "ended_initiatives", _digest("initiative", record)
    for record in frame.slots:
        yield "slot_revisions", _digest("slot", record)


def _digest(kind: str, record: dict[str, Any]) -> bytes:
    return hashlib.blake2b(f"{kind}\n{amg.dumps(record)}".encode(), digest_size=20).digest()


def _lacking(by_kind: dict[str, tuple[int, int]]) -> str | None:
    """`the target lacks 2 of the source's 12 node revisions and …`, in the archive's order."""
    parts = [
        f"{lacking} of the source's {label(key, total)}"
        for key in LABELS
        if (found := by_kind.get(key)) is not None and (lacking := found[1]) and (total := found[0])
    ]
    return f"the target lacks {joined(parts)}" if parts else None
