"""`kaeru copy`'s second half: the semantic channel's stored vectors, carried from source to target.

The copy moves records through an amg archive, which holds none (vectors are derived data, made by
one model; an archive is the memory itself). Left behind, a vault moved between backends lost
semantic recall for every copied memory until someone thought of `kaeru reindex`, which embeds
everything again. Vectors are data: they are carried whether or not the `[semantic]` extra is
installed or switched on here.

After the records are copied and verified, the source's vectors of every model are read a page at
a time (keyset on (node id, model): never all in memory) and each is written in the target only
where its node exists, is live and says the text the vector was computed from — the digest rule
write-time embedding keeps (`service.recall.indexing._put_current`). So a merge (`copy --force`)
into a target whose node of the same id says another text never gives that node a vector of a text
it does not say; and one the target already holds of the same text is left as it is (a copy run
again writes none).
"""

from __future__ import annotations

from collections.abc import Callable

from kaeru.service.embedding import node_text, text_digest
from kaeru.service.mutation import give_writers_a_turn
from kaeru.storage.base import Store

#: Vectors read, then written, a transaction at a time: the write lock is held for one page only.
PAGE = 256


def copy_vectors(
    source: Store, target: Store, progress: Callable[[str, int], None] | None = None, page_size: int = PAGE
) -> int:
    """Write `source`'s stored vectors into `target` where its node says the same text; how many
    were written (those the target already held, or whose node is missing, retracted or says
    another text, are not)."""
    written = 0
    after: tuple[str, str] | None = None
    while True:
        with source.read() as session:
            page = session.stored_vectors(after, page_size)
        if not page:
            return written
        after = page[-1][0], page[-1][1]
        with target.write() as session:  # the node's text is checked where the vector is written
            nodes = session.nodes_by_ids([node_id for node_id, _, _, _ in page])
            held = {
                model: session.vector_digests_of(model, [n for n, m, _, _ in page if m == model])
                for model in {m for _, m, _, _ in page}
            }
            for node_id, model, digest, vector in page:
                node = nodes.get(node_id)
                if node is None or node.retracted or held[model].get(node_id) == digest:
                    continue
                if text_digest(node_text(node)) == digest:
                    session.put_vector(node_id, model, digest, vector)
                    written += 1
        if progress is not None:
            progress("vectors", written)
        if len(page) < page_size:
            return written
        give_writers_a_turn()
