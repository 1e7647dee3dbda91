"""PostgreSQL's session: the shared statements (`storage/sql/`) over a psycopg connection, plus what
is PostgreSQL's own — the replay claim by `INSERT … ON CONFLICT` (writers run concurrently), full-text
search (`search.py`), and node revisions kept whole in `node_revisions`."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg

from kaeru.domain.model import Node
from kaeru.errors import Unavailable
from kaeru.storage.base import RequestKey, RevisionEntry, StoredRequest
from kaeru.storage.postgres.bm25 import TermDelta, Terms, dump_terms, node_term_counts, node_terms
from kaeru.storage.postgres.db import PgDb
from kaeru.storage.postgres.search import TsSearch
from kaeru.storage.postgres.vectors import PgVectors
from kaeru.storage.sql.rows import NODE_COLS, marks, prefixed
from kaeru.storage.sql.sections import facet
from kaeru.storage.sql.session import SqlSession

_REV_NODE_COLS = prefixed(NODE_COLS, "r")
#: The index columns a node write sets: tsvectors (matching) and term counts and length (BM25).
_INDEX_COLUMNS = (("tsv", "?::tsvector"), ("stv", "?::tsvector"), ("ltf", "?::jsonb"), ("stf", "?::jsonb"), ("dl", "?"))
#: "No such key" in a properties lookup (distinct from a JSON null, which counts as present).
_MISSING = object()


class PostgresSession(PgVectors, TsSearch, SqlSession):
    """One transaction on one pooled connection."""

    def __init__(self, conn: psycopg.Connection[Any], *, read_only: bool):
        super().__init__(PgDb(conn), read_only=read_only)
        self._c = conn
        #: The statistics' changes of this transaction's node writes, applied by `flush_term_stats`
        #: (the trigger is off for them: `_counting`; decision 16.M3).
        self._delta = TermDelta()
        self._counting = False
        #: The terms of the node `put_node` is writing (`_node_extra`), counted once it is written.
        self._new_terms: tuple[Terms, Terms, int] | None = None

    # --- replay -----------------------------------------------------------------------------
    def begin_request(self, key: RequestKey, args_hash: str, now: str) -> StoredRequest | None:
        ident = (key.initiative, key.operation, key.request_id)
        for _ in range(3):
            # The unique key makes a concurrent claimer wait here until the holder commits or rolls back.
            claimed = self._db.one(
                "INSERT INTO requests (initiative, operation, request_id, args_hash, response, created_at) "
                "VALUES (?, ?, ?, ?, NULL, ?) ON CONFLICT DO NOTHING RETURNING 1",
                (*ident, args_hash, now),
            )
            if claimed is not None:
                return None
            row = self._db.one(
                "SELECT args_hash, response FROM requests WHERE initiative = ? AND operation = ? AND request_id = ?",
                ident,
            )
            if row is None:
                continue  # purged between the two statements: claim it again
            if row[1] is not None:
                return StoredRequest(row[0], json.loads(row[1]))
            # A committed claim without a response (SQLite replaces such rows too): take it over.
            if self._db.run(
                "UPDATE requests SET args_hash = ?, created_at = ? WHERE initiative = ? AND operation = ? "
                "AND request_id = ? AND response IS NULL",
                (args_hash, now, *ident),
            ):
                return None
        raise Unavailable(f"request_id {key.request_id!r} is being claimed concurrently; retry")

    def finish_request(self, key: RequestKey, response: dict[str, Any]) -> None:
        self._db.run(
            "UPDATE requests SET response = ? WHERE initiative = ? AND operation = ? AND request_id = ?",
            (json.dumps(response, sort_keys=True), key.initiative, key.operation, key.request_id),
        )

    def purge_requests(self, before: str) -> int:
        return self._db.run("DELETE FROM requests WHERE created_at < ?", (before,))

    # --- node revisions ---------------------------------------------------------------------
    def put_node(self, node: Node, *, request_id: str | None, actor: str) -> None:
        if not self._counting:
            # This transaction counts its own node writes (`_delta`) instead of the trigger, which
            # upserted every term of every node at once: ~150 rows a note, and a row updated n times
            # in one transaction costs the n-th update a walk over n versions (decision 16.M3).
            self._db.send("SELECT set_config('kaeru.bulk_index', 'on', true)")
            self._counting = True
        if node.rev_no == 1 and self._insert_new(node, request_id, actor):
            return
        super().put_node(node, request_id=request_id, actor=actor)

    def _insert_new(self, node: Node, request_id: str | None, actor: str) -> bool:
        """A node's first revision in one statement, without `put_node`'s look-up first (a round
        trip a note); False when its id is taken (`put_node` then says how: a revision conflict)."""
        values = self._node_values(node)
        columns, extra = self._node_extra(node, request_id, actor)
        row = self._db.one(
            f"INSERT INTO nodes (id, {NODE_COLS}, {', '.join(c for c, _ in columns)}) "
            f"VALUES (?, {marks(len(values))}, {', '.join(m for _, m in columns)}) "
            "ON CONFLICT (id) DO NOTHING RETURNING seq",
            (node.id, *values, *extra),
        )
        if row is None:
            return False
        seq = int(row[0])
        self._move_memberships(seq, set(), set() if node.retracted else set(node.initiatives), facet(node), None)
        self._node_written(seq, node, values, request_id, actor, indexed=False)
        return True

    def _node_extra(
        self, node: Node, request_id: str | None, actor: str
    ) -> tuple[tuple[tuple[str, str], ...], tuple[Any, ...]]:
        if node.retracted:
            self._new_terms = None
            return _INDEX_COLUMNS, (None, None, None, None, None)
        literal, stems, dl = self._new_terms = node_term_counts(node)
        return _INDEX_COLUMNS, (*self._index_terms(node), dump_terms(literal), dump_terms(stems), dl)

    def _node_moves_on(self, seq: int) -> None:
        row = self._db.one("SELECT ltf, stf, dl FROM nodes WHERE seq = ?", (seq,))
        if row is not None:
            self._delta.add(row[0], row[1], row[2], -1)

    def flush_term_stats(self) -> None:
        """Apply this transaction's changes to the statistics (before it commits, and before it
        reads them): one upsert of the terms in one order (writers of one shard never wait on each
        other crosswise), as the trigger's would have left them summed over the shards."""
        delta = self._delta
        changed = sorted((key, n) for key, n in delta.docs.items() if n)
        if changed:
            self._db.send(
                "INSERT INTO term_docs AS t (stemmed, term, fields, shard, docs) "
                "SELECT u.s, u.t, u.f, pg_backend_pid() % 64, u.d "
                "FROM unnest(?::boolean[], ?::text[], ?::smallint[], ?::bigint[]) AS u(s, t, f, d) "
                'ORDER BY u.s, u.t COLLATE "C", u.f '
                "ON CONFLICT (stemmed, term, fields, shard) DO UPDATE SET docs = t.docs + excluded.docs",
                [
                    [k[0] for k, _ in changed],
                    [k[1] for k, _ in changed],
                    [k[2] for k, _ in changed],
                    [n for _, n in changed],
                ],
            )
        if delta.rows or delta.tokens:
            self._db.send(
                "INSERT INTO text_totals AS t (shard, docs, tokens) VALUES (pg_backend_pid() % 64, ?, ?) "
                "ON CONFLICT (shard) DO UPDATE SET docs = t.docs + excluded.docs, tokens = t.tokens + excluded.tokens",
                (delta.rows, delta.tokens),
            )
        delta.clear()

    def _node_written(
        self, seq: int, node: Node, values: tuple[Any, ...], request_id: str | None, actor: str, *, indexed: bool
    ) -> None:
        if self._new_terms is not None:
            self._delta.add(*self._new_terms, 1)
            self._new_terms = None
        self._db.send(
            f"INSERT INTO node_revisions (node_seq, {NODE_COLS}, request_id, actor) VALUES (?, {marks(len(values))}, ?, ?)",
            (seq, *values, request_id, actor),
        )

    def rebuild_text_index(self, *, stems_only: bool = False) -> int:
        """Recompute the index columns of every node — after the migration that added some, all but
        the literal tsvector (`stems_only`) — then count the BM25 statistics once: live nodes get
        theirs, retracted ones none, as a write leaves them; the live nodes indexed.

        Writers that touch the statistics wait until this commits (the tables are locked first), so
        what they add applies to the recount, never to counts it replaces."""
        self._db.run("LOCK TABLE term_docs, text_totals IN EXCLUSIVE MODE")
        self._db.one("SELECT set_config('kaeru.bulk_index', 'on', true)")
        self._delta.clear()  # the recount below counts this transaction's writes too
        kept = "" if stems_only else "tsv = NULL, "
        self._db.run(f"UPDATE nodes SET {kept}stv = NULL, ltf = NULL, stf = NULL, dl = NULL WHERE retracted")
        count = 0
        for row in self._db.rows(f"SELECT seq, id, {NODE_COLS} FROM nodes WHERE NOT retracted"):
            node = self._d.node(row[0], row[1], row[2:])
            tsv, stv = self._index_terms(node)
            ltf, stf, dl = node_terms(node)
            self._db.run(
                f"UPDATE nodes SET {'' if stems_only else 'tsv = ?::tsvector, '}stv = ?::tsvector, ltf = ?::jsonb, "
                "stf = ?::jsonb, dl = ? WHERE seq = ?",
                (*(() if stems_only else (tsv,)), stv, ltf, stf, dl, row[0]),
            )
            count += 1
        self._db.one("SELECT set_config('kaeru.bulk_index', 'off', true)")
        self._counting = False
        self._recount_terms()
        self._db.run("DELETE FROM meta WHERE key = 'stem_index_pending'")
        return count

    def _recount_terms(self) -> None:
        """The BM25 statistics counted anew from every live node's terms (in shard 0)."""
        self._db.run("DELETE FROM term_docs")
        self._db.run("DELETE FROM text_totals")
        for stemmed, column in ((False, "ltf"), (True, "stf")):
            self._db.run(
                "INSERT INTO term_docs (stemmed, term, fields, shard, docs) "
                f"SELECT ?, e.key, kaeru_term_fields(e.value), 0, count(*) FROM nodes n, jsonb_each(n.{column}) e "
                "GROUP BY e.key, kaeru_term_fields(e.value)",
                (stemmed,),
            )
        self._db.run(
            "INSERT INTO text_totals (shard, docs, tokens) "
            "SELECT 0, count(*), coalesce(sum(dl), 0) FROM nodes WHERE dl IS NOT NULL"
        )

    def node_at(self, node_id: str, moment: str) -> Node | None:
        row = self._db.one(
            f"SELECT r.node_seq, n.id, {_REV_NODE_COLS} FROM nodes n JOIN node_revisions r ON r.node_seq = n.seq "
            "WHERE n.id = ? AND r.recorded_at <= ? ORDER BY r.rev_no DESC LIMIT 1",
            (node_id, moment),
        )
        return self._d.node(row[0], row[1], row[2:]) if row else None

    def revision_log(self, node_id: str) -> list[RevisionEntry]:
        found = self._db.rows(
            f"SELECT r.node_seq, n.id, {_REV_NODE_COLS}, r.request_id, r.actor "
            "FROM nodes n JOIN node_revisions r ON r.node_seq = n.seq WHERE n.id = ? ORDER BY r.rev_no",
            (node_id,),
        )
        return [RevisionEntry(self._d.node(r[0], r[1], r[2:-2]), r[-2], r[-1]) for r in found]

    def has_revision(self, node_id: str, rev_no: int) -> bool:
        sql = "SELECT 1 FROM nodes n JOIN node_revisions r ON r.node_seq = n.seq WHERE n.id = ? AND r.rev_no = ?"
        return self._db.one(sql, (node_id, rev_no)) is not None

    def _live_at(self, node_ids: Sequence[str], moment: str) -> set[str]:
        found = self._db.rows(
            "SELECT DISTINCT ON (n.id) n.id, r.retracted FROM nodes n JOIN node_revisions r ON r.node_seq = n.seq "
            "WHERE n.id = ANY(?::text[]) AND r.recorded_at <= ? ORDER BY n.id, r.rev_no DESC",
            (list(dict.fromkeys(node_ids)), moment),
        )
        return {node_id for node_id, retracted in found if not retracted}

    def nodes_with_property(self, initiative_ids: Sequence[int], key: str) -> list[str]:
        # Properties are stored as the JSON text json.dumps wrote (see the migration), so the key's
        # encoding narrows the scan and the exact test runs in Python, like SQLite's json_type(p, '$.key').
        path = key.split(".")
        scope, params = self._member_of(initiative_ids)
        found = self._db.rows(
            f"SELECT n.id, n.properties FROM nodes n WHERE NOT n.retracted AND {scope} "
            "AND strpos(n.properties, ?) > 0 ORDER BY n.seq",
            [*params, json.dumps(path[0])],
        )
        out: list[str] = []
        for node_id, properties in found:
            value: Any = json.loads(properties)
            for part in path:
                value = value.get(part, _MISSING) if isinstance(value, dict) else _MISSING
            if value is not _MISSING:
                out.append(node_id)
        return out

    def export_revisions(self, initiative_ids: Sequence[int] | None) -> Iterator[RevisionEntry]:
        where, params = "TRUE", []
        if initiative_ids is not None:
            # Every node that ever belonged to one of these initiatives, with its whole history.
            where = "EXISTS (SELECT 1 FROM node_revisions x WHERE x.node_seq = n.seq AND x.initiatives && ?::bigint[])"
            params = [list(initiative_ids)]
        for row in self._db.stream(
            f"SELECT r.node_seq, n.id, {_REV_NODE_COLS}, r.request_id, r.actor FROM nodes n "
            f"JOIN node_revisions r ON r.node_seq = n.seq WHERE {where} ORDER BY n.seq, r.rev_no",
            params,
        ):
            yield RevisionEntry(self._d.node(row[0], row[1], row[2:-2]), row[-2], row[-1])
