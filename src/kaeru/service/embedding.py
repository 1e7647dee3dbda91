"""Vectors for the optional semantic channel: the embedder protocol and the stored vector format.

Nothing here loads a model. An `Embedder` is injected by the edge (`kaeru.semantic`), and only
when the `[semantic]` extra is installed and enabled; without it `recall` is purely lexical.
"""

from __future__ import annotations

import hashlib
import struct
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol

from kaeru.domain.text import indexed_name

if TYPE_CHECKING:
    from kaeru.domain.model import Node
    from kaeru.storage.base import Store


class Embedder(Protocol):
    """Turns texts into unit-length vectors; loads its model lazily, on the first call."""

    model_id: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class EmbedWorker:
    """The one thread that embeds recall's queries (decision 17.X2), made at its first use and owned
    by the service's `Runtime` (no module-level state): recall starts it first and collects it when
    its semantic channel comes, so the query's embedding (the model's forward pass) and the
    candidates' scan run beside the lexical channels instead of before them. One worker: the
    embedder runs one query at a time anyway (decision 17.V3)."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._made = threading.Lock()

    def submit(
        self, embedder: Embedder, text: str, store: Store | None = None, limit: int = 0
    ) -> Future[tuple[bytes, list[tuple[str, float]] | None]]:
        """`text`'s vector, packed, and with a `store`, the first round of its `limit` nearest
        vectors' candidates (`Session.vector_candidates`, in a read snapshot of its own)."""
        if self._pool is None:
            with self._made:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kaeru-embed")

        def work() -> tuple[bytes, list[tuple[str, float]] | None]:
            vector = pack(embedder.embed([text])[0])
            if store is None:
                return vector, None
            with store.read() as session:
                return vector, session.vector_candidates(embedder.model_id, vector, limit)

        return self._pool.submit(work)


def pack(vector: Sequence[float]) -> bytes:
    """float32, little-endian: the same bytes on every backend and machine."""
    return struct.pack(f"<{len(vector)}f", *vector)


def unpack(blob: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


#: How to install the `[semantic]` extra, as the README says it (torch first, pinned: its CPU wheel);
#: said by `kaeru.semantic` and `kaeru doctor` alike.
EXTRA_INSTALL = "pip install torch==2.13.0 && pip install 'kaeru-memory[semantic]'"


def text_of(name: str, description: str | None, body: str | None, limit: int = 2000) -> str:
    """What a node's vector represents: its name, description and the start of its body."""
    return " ".join(part for part in (name, description or "", (body or "")[:limit]) if part)


def node_text(node: Node) -> str:
    """The text a node's vector is computed from (its name only when the index holds it: not an
    auto-name), so a stored vector's digest can be checked against the node as it is now."""
    return text_of(node.name if indexed_name(node) else "", node.description, node.body)


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
