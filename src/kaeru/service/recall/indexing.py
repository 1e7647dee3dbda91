"""Write-time and batch embedding of nodes for recall's semantic channel."""

from __future__ import annotations

from typing import Any

from kaeru.errors import InvalidArgument
from kaeru.service.embedding import node_text, pack, text_digest
from kaeru.service.runtime import Runtime


def embed_nodes(rt: Runtime, node_ids: list[str]) -> None:
    """Embed freshly written nodes (write-time indexing when the semantic channel is on)."""
    embedder = rt.embedder
    if embedder is None or not node_ids:
        return
    with rt.store.read() as session:
        nodes = [n for n in session.nodes_by_ids(node_ids).values() if not n.retracted]
    todo = [(n.id, node_text(n)) for n in nodes]
    todo = [(i, t) for i, t in todo if t.strip()]
    if not todo:
        return
    vectors = embedder.embed([t for _, t in todo])
    with rt.store.write() as session:
        for (node_id, text), vector in zip(todo, vectors, strict=True):
            session.put_vector(node_id, embedder.model_id, text_digest(text), pack(vector))


def reindex(rt: Runtime, progress: Any = None, batch: int = 256) -> int:
    """Embed every live node whose vector is missing or computed from older text."""
    embedder = rt.embedder
    if embedder is None:
        raise InvalidArgument("semantic recall is off: install kaeru-memory[semantic] and set KAERU_SEMANTIC=1")
    with rt.store.read() as session:
        known = session.vector_digests(embedder.model_id)
    written = 0
    after = 0
    while True:
        with rt.store.read() as session:
            nodes = session.live_node_batch(after, batch)
        if not nodes:
            return written
        after = nodes[-1].seq
        todo = []
        for node in nodes:
            text = node_text(node)
            digest = text_digest(text)
            if text.strip() and known.get(node.id) != digest:
                todo.append((node.id, digest, text))
        if todo:
            vectors = embedder.embed([t for _, _, t in todo])
            with rt.store.write() as session:
                for (node_id, digest, _), vector in zip(todo, vectors, strict=True):
                    session.put_vector(node_id, embedder.model_id, digest, pack(vector))
            written += len(todo)
        if progress is not None:
            progress(written, after)
