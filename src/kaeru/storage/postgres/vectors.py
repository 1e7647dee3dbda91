"""PostgreSQL's vectors (decision 17.V1): `real[]` rows (migration 010), ranked exactly.

The similarity is the dot product of the stored and the query vector, in double precision: the
cosine similarity, since an `Embedder` returns unit-length vectors. With the store's `VectorCodes`
(`vectorcodes`), candidates come from one-bit codes held in memory as on SQLite (17.X1, 17.Y1) and
only their vectors are read, by a binary COPY, and ranked exactly here (`sql.codes.nearest_in_scope`
runs the same rounds as SQLite's). Without a usable copy (see `vectorcodes`) or when the rounds find
too few in the scope, the exact scan in SQL answers: `unnest` over every row of the scope, only the
best `limit` rows leaving the server. A trigger names the node of each written vector in
`text_changes` (migration 024), so every process's copy reads its code again, whoever wrote it.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from kaeru.storage.postgres.textcache import PRUNE_SQL
from kaeru.storage.postgres.vectorcodes import VectorCodes
from kaeru.storage.sql.codes import CodeRanked, Ranked
from kaeru.storage.sql.copies import numpy_module
from kaeru.storage.sql.db import Part

#: The binary form of a one-dimensional array (`array_send`) before its elements: dimensions, null
#: flag, element type, size, lower bound; then each element's length and value.
_ARRAY_HEADER = 20


def _floats(blob: bytes) -> list[float]:
    """A stored vector's float32 little-endian bytes as numbers (`service.embedding.pack`)."""
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


class PgVectors(CodeRanked, Part):
    #: The store's vector codes (`PostgresStore` hands them to each read session); None: SQL scans.
    _codes: VectorCodes | None = None

    def use_codes(self, codes: VectorCodes) -> None:
        self._codes = codes

    def put_vector(self, node_id: str, model: str, text_sha: str, vector: bytes) -> None:
        self._db.run(
            "INSERT INTO node_vectors (node_id, model, text_sha, embedding) VALUES (?, ?, ?, ?::real[]) "
            "ON CONFLICT (node_id, model) DO UPDATE SET text_sha = excluded.text_sha, embedding = excluded.embedding",
            (node_id, model, text_sha, _floats(vector)),
        )
        # The trigger logged the node (migration 024); the session's `TextCopies` counts the log's rows.
        copies = getattr(self, "_copies", None)
        if copies is not None and copies.wrote():
            self._db.run(PRUNE_SQL)

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

    def _ranked_candidates(self, model: str, code: bytes, vector: bytes, count: int) -> Ranked | None:
        """The `count` vectors whose codes are nearest to `code`, ranked by their exact similarity
        to `vector`, best first, ties by node id (scope not yet applied); None without a copy."""
        np = numpy_module()
        seqs = None if self._codes is None or np is None else self._codes.nearest(self._db, model, code, count)  # type: ignore[arg-type]
        if seqs is None:
            return None
        if not seqs:
            return []
        # A row a candidate, its vector in binary form (`array_send`): a third of the time of the
        # array's own text or binary form through psycopg.
        found = self._db.rows(
            "SELECT n.id, array_send(v.embedding) FROM nodes n JOIN node_vectors v ON v.node_id = n.id "
            "AND v.model = ? WHERE n.seq = ANY(?::bigint[])",
            (model, seqs),
        )
        if not found:
            return []
        ids, blob = [r[0] for r in found], b"".join(bytes(r[1]) for r in found)
        query = np.frombuffer(vector, dtype="<f4").astype(np.float64)
        if len(blob) != (_ARRAY_HEADER + 8 * len(query)) * len(ids):
            return None  # another dimension than the query's: the exact scan says what SQL says
        values = (
            np.frombuffer(blob, dtype=">i4").reshape(len(ids), -1)[:, _ARRAY_HEADER // 4 :].reshape(len(ids), -1, 2)
        )
        if (values[:, :, 0] != 4).any():  # each element's length: -1 for a NULL
            return None
        sims = np.ascontiguousarray(values[:, :, 1]).view(">f4").astype(np.float64) @ query
        ranked = [(node_id, float(sim)) for node_id, sim in zip(ids, sims, strict=True)]
        ranked.sort(key=lambda r: (-r[1], r[0]))
        return ranked

    def _live(self, initiative_ids: Sequence[int], ids: list[str]) -> set[str]:
        """Which of `ids` are live members of the scope."""
        scope, params = self._member_of(initiative_ids)
        found = self._db.rows(
            f"SELECT n.id FROM nodes n WHERE n.id = ANY(?::text[]) AND n.retracted = {self._d.false} AND {scope}",
            [list(ids), *params],
        )
        return {r[0] for r in found}

    def _exact(self, initiative_ids: Sequence[int], model: str, vector: bytes, limit: int) -> Ranked:
        """The exact scan of the scope's vectors in SQL (decision 17.V1)."""
        scope, params = self._member_of(initiative_ids)
        found = self._db.rows(
            "SELECT v.node_id, (SELECT sum(a::float8 * b) FROM unnest(v.embedding, ?::real[]) AS t (a, b)) AS sim "
            "FROM node_vectors v JOIN nodes n ON n.id = v.node_id "
            f"WHERE v.model = ? AND n.retracted = {self._d.false} AND {scope} ORDER BY sim DESC, v.node_id LIMIT ?",
            [_floats(vector), model, *params, limit],
        )
        return [(r[0], float(r[1])) for r in found]
