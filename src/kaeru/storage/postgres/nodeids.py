"""The node ids of the rows PostgreSQL's copied rankings return (decision 16.C1): a ranking ends in
row numbers (`seq`), and a page of hits needs their ids. Ids never change, so each one read is kept,
16 bytes by seq, and read again only past the bound (`TextCopies.ids` gives it)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kaeru.storage.postgres.db import PgDb
from kaeru.storage.sql.copies import packed_uuid, uuid_texts

if TYPE_CHECKING:
    import numpy as np

#: The bytes of a node id kept in memory: a UUID's 16 (an id of another form is read each time).
ID_BYTES = 16


class NodeIds:
    """Node ids by seq as 16 bytes (`packed_uuid`) and whether each is known, one pair read at once:
    filled in place (an id before its flag), never invalidated; grown by replacing the pair."""

    def __init__(self) -> None:
        self._held: tuple[np.ndarray, np.ndarray] | None = None
        self._lock = threading.Lock()

    def ids(self, np: Any, db: PgDb, seqs: Sequence[int], max_bytes: int) -> list[str]:
        """The node id of each row of `seqs`: kept ones from memory, the rest read by key (and kept
        while the vault's rows fit `max_bytes`)."""
        at = np.array(seqs, dtype=np.int64)
        held = self._held
        out: list[str] = [""] * len(seqs)
        missing = list(range(len(seqs)))
        if held is not None and len(at):
            ids, known = held
            inside = at < len(known)
            hit = np.zeros(len(at), dtype=bool)
            hit[inside] = known[at[inside]]  # the flag first: a row flagged known has its id
            for i, text in zip(np.flatnonzero(hit).tolist(), uuid_texts(np, ids[at[hit]]), strict=True):
                out[i] = text
            missing = np.flatnonzero(~hit).tolist()
        if not missing:
            return out
        wanted = [int(at[i]) for i in missing]
        found = db.raw_rows("SELECT seq, id FROM nodes WHERE seq = ANY(%(seqs)s::bigint[])", {"seqs": wanted})
        read = {int(r[0]): str(r[1]) for r in found}
        for i, seq in zip(missing, wanted, strict=True):
            out[i] = read[seq]
        self._keep(np, read, max_bytes)
        return out

    def _keep(self, np: Any, read: dict[int, str], max_bytes: int) -> None:
        packed = {seq: raw for seq, text in read.items() if (raw := packed_uuid(text)) is not None}
        if not packed:
            return
        top = max(packed) + 1
        with self._lock:
            held = self._held
            if held is None or top > len(held[1]):
                size = max(top, 2 * len(held[1]) if held is not None else top)
                if size * (ID_BYTES + 1) > max_bytes:
                    return
                grown_ids = np.zeros((size, ID_BYTES), dtype=np.uint8)
                grown_known = np.zeros(size, dtype=bool)
                if held is not None:
                    grown_ids[: len(held[0])] = held[0]
                    grown_known[: len(held[1])] = held[1]
                held = self._held = (grown_ids, grown_known)
            ids, known = held
            seqs = np.array(list(packed), dtype=np.int64)
            ids[seqs] = np.frombuffer(b"".join(packed.values()), dtype=np.uint8).reshape(-1, ID_BYTES)
            known[seqs] = True
