"""BM25F over recall's candidates, with the word statistics of the searched scope."""

from __future__ import annotations

from kaeru.domain.model import Node
from kaeru.domain.text import indexed_name, manual_tags, stem_words, tokens
from kaeru.service.runtime import DocStems

#: BM25F over the candidates with the statistics of the searched scope (`scope_idf`): the usual
#: saturation and length normalisation, and the field weights the full-text index ranks with
#: (name, description, body, tags).
BM25_K1 = 1.2
BM25_B = 0.75
FIELD_WEIGHTS = (4.0, 2.0, 1.0, 2.0)


def bm25f(stems: list[str], idf: dict[str, float], nodes: dict[str, Node], memo: DocStems) -> list[tuple[str, float]]:
    """BM25F of `nodes` (in their given order for ties) for the query words, with weights `idf`."""
    docs = [(i, *_doc_stems(n, memo)) for i, n in nodes.items()]
    if not docs:
        return []
    average = sum(length for _, _, length in docs) / len(docs) or 1.0
    rows = []
    for node_id, tf, length in docs:
        norm = BM25_K1 * (1 - BM25_B + BM25_B * length / average)
        score = sum(idf[w] * tf[w] * (BM25_K1 + 1) / (tf[w] + norm) for w in stems if w in tf)
        rows.append((node_id, score))
    rows.sort(key=lambda r: -r[1])
    return rows


def _doc_stems(node: Node, memo: DocStems) -> tuple[dict[str, float], float]:
    """Field-weighted stem frequencies of one node revision, and its weighted length (memoised in
    the runtime's `doc_stems`, bounded by bytes)."""
    key = (node.id, node.revision)
    found = memo.get(key)
    if found is None:
        fields = (indexed_name(node), node.description or "", node.body or "", manual_tags(node.tags))
        found = memo.put(key, _field_stems(fields))
    return found


def _field_stems(fields: tuple[str, str, str, str]) -> tuple[dict[str, float], float]:
    tf: dict[str, float] = {}
    length = 0.0
    for weight, text in zip(FIELD_WEIGHTS, fields, strict=True):
        found = stem_words(tokens(text))
        length += weight * len(found)
        for word in found:
            tf[word] = tf.get(word, 0.0) + weight
    return tf, length
