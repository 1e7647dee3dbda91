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
        _put_current(
            session, embedder.model_id, [(i, text_digest(t), v) for (i, t), v in zip(todo, vectors, strict=True)]
        )


def _put_current(session: Any, model: str, embedded: list[tuple[str, str, list[float]]]) -> int:
    """Store each (node id, digest of the text embedded, vector) whose node still says that text;
    how many. The embedding ran outside any transaction, for seconds: a `revise` that landed
    meanwhile has stored its own text's vector, which an unconditional write replaced with the
    older text's — the node then dropped out of semantic recall (decision 453)."""
    current = session.nodes_by_ids([node_id for node_id, _, _ in embedded])
    written = 0
    for node_id, digest, vector in embedded:
        node = current.get(node_id)
        if node is not None and not node.retracted and text_digest(node_text(node)) == digest:
            session.put_vector(node_id, model, digest, pack(vector))
            written += 1
    return written


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
                written += _put_current(
                    session, embedder.model_id, [(i, d, v) for (i, d, _), v in zip(todo, vectors, strict=True)]
                )
        if progress is not None:
            progress(written, after)
