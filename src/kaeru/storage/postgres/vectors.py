"""PostgreSQL's vectors (decision 17.V1): `real[]` rows (migration 010), ranked by an exact scan in SQL.

The similarity is the dot product, summed in double precision over `unnest` of the stored and the
query vector: the cosine similarity, since an `Embedder` returns unit-length vectors. Each row of
the scope is scanned (no approximate index: the scope filter stays exact); only the best `limit`
rows leave the server.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from kaeru.storage.sql.db import Part


def _floats(blob: bytes) -> list[float]:
    """A stored vector's float32 little-endian bytes as numbers (`service.embedding.pack`)."""
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


class PgVectors(Part):
    def put_vector(self, node_id: str, model: str, text_sha: str, vector: bytes) -> None:
        self._db.run(
            "INSERT INTO node_vectors (node_id, model, text_sha, embedding) VALUES (?, ?, ?, ?::real[]) "
            "ON CONFLICT (node_id, model) DO UPDATE SET text_sha = excluded.text_sha, embedding = excluded.embedding",
            (node_id, model, text_sha, _floats(vector)),
        )

    def vector_digests_of(self, model: str, node_ids: Sequence[str]) -> dict[str, str]:
        """node id → the digest of the text its vector of `model` was computed from, for `node_ids`
        (those without one are left out): in one statement, for recall's candidates."""
        found = self._db.rows(
            "SELECT node_id, text_sha FROM node_vectors WHERE model = ? AND node_id = ANY(?::text[])",
            (model, list(node_ids)),
        )
        return {r[0]: r[1] for r in found}

    def stored_vectors(self, after: tuple[str, str] | None, limit: int) -> list[tuple[str, str, str, bytes]]:
        where, params = ("WHERE (node_id, model) > (?, ?) ", [*after]) if after is not None else ("", [])
        found = self._db.rows(
            f"SELECT node_id, model, text_sha, embedding FROM node_vectors {where}ORDER BY node_id, model LIMIT ?",
            [*params, limit],
        )
        return [(r[0], r[1], r[2], struct.pack(f"<{len(r[3])}f", *r[3])) for r in found]

    def vector_candidates(self, model: str, vector: bytes, limit: int) -> list[tuple[str, float]] | None:
        return None  # one exact scan of the scope's rows

    def nearest_vectors(
        self,
        initiative_ids: Sequence[int],
        model: str,
        vector: bytes,
        limit: int,
        first_round: list[tuple[str, float]] | None = None,
    ) -> list[tuple[str, float]]:
        if not initiative_ids or limit <= 0:
            return []
        scope, params = self._member_of(initiative_ids)
        found = self._db.rows(
            "SELECT v.node_id, (SELECT sum(a::float8 * b) FROM unnest(v.embedding, ?::real[]) AS t (a, b)) AS sim "
            "FROM node_vectors v JOIN nodes n ON n.id = v.node_id "
            f"WHERE v.model = ? AND n.retracted = {self._d.false} AND {scope} ORDER BY sim DESC, v.node_id LIMIT ?",
            [_floats(vector), model, *params, limit],
        )
        return [(r[0], float(r[1])) for r in found]
