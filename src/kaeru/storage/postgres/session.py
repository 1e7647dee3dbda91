"""PostgreSQL's session: the shared statements (`storage/sql/`) over a psycopg connection, plus what
is PostgreSQL's own — the replay claim by `INSERT … ON CONFLICT` (writers run concurrently), full-text
search (`search.py`) and the term columns a node write sets (`bm25.py`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from kaeru.domain.model import Node
from kaeru.errors import Unavailable
from kaeru.storage.migrate import INDEX_PENDING
from kaeru.storage.postgres.bm25 import TermDelta, Terms, dump_terms
from kaeru.storage.postgres.copied import CopiedSearch
from kaeru.storage.postgres.db import PgDb
from kaeru.storage.postgres.indexing import node_index
from kaeru.storage.postgres.textcache import PRUNE_SQL, TextCopies
from kaeru.storage.postgres.vectors import PgVectors
from kaeru.storage.records import RequestKey, StoredRequest
from kaeru.storage.sql.graph import SHOWN
from kaeru.storage.sql.replay import pack_hash_bytes, pack_response, unpack_hash, unpack_response
from kaeru.storage.sql.rows import NODE_COLS
from kaeru.storage.sql.session import FILLED_BY, SqlSession

#: The columns a node write sets besides `NODE_COLS`: its request id and actor, tsvectors (matching)
#: and term counts and length (BM25).
_INDEX_COLUMNS = (
    ("request_id", "?"), ("actor", "?"), ("tsv", "?::tsvector"), ("stv", "?::tsvector"), ("ltf", "?::jsonb"),
    ("stf", "?::jsonb"), ("dl", "?"),
)  # fmt: skip
#: "No such key" in a properties lookup (distinct from a JSON null, which counts as present).
_MISSING = object()


def _text_array(values: Iterable[str]) -> str:
    """A text[] literal of `values`, every element quoted (so `null` is a word): ~140 terms a note
    written by a join instead of psycopg's dumper element by element (decision 16.P2)."""
    return "{" + ",".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "}"


class PostgresSession(PgVectors, CopiedSearch, SqlSession):
    """One transaction on one pooled connection."""

    def __init__(self, conn: psycopg.Connection[Any] | PgDb, *, read_only: bool, copies: TextCopies | None = None):
        super().__init__(conn if isinstance(conn, PgDb) else PgDb(conn), read_only=read_only)
        self._counted: dict[tuple[Any, ...], int] = {}
        self._stats: dict[tuple[Any, ...], tuple[int, int, list[int]]] = {}
        #: The store's in-memory copies of the ranking's inputs (decision 16.C1), if any.
        self._copies = copies
        #: The statistics' changes of this transaction's node writes, applied by `flush_term_stats`
        #: (the trigger is off for them: `_counting`; decision 16.M3).
        self._delta = TermDelta()
        self._counting = False
        #: The terms of the node `put_node` is writing (`_node_extra`), counted once it is written.
        self._new_terms: tuple[Terms, Terms, int] | None = None
        #: This transaction's changes to `section_counts` by (initiative, facet), applied with the
        #: statistics (`flush_term_stats`; decision 16.P1).
        self._sections: dict[tuple[int, str], int] = {}
        #: Node revisions this transaction wrote: the store's `planstats.Upkeep` counts them once committed.
        self.nodes_written = 0

    # --- replay -----------------------------------------------------------------------------
    def begin_request(self, key: RequestKey, args_hash: str, now: str) -> StoredRequest | None:
        ident = (key.initiative, key.operation, key.request_id)
        for _ in range(3):
            # The unique key makes a concurrent claimer wait here until the holder commits or rolls back.
            claimed = self._db.one(
                "INSERT INTO requests (initiative, operation, request_id, args_hash, response, created_at) "
                "VALUES (?, ?, ?, ?, NULL, ?) ON CONFLICT DO NOTHING RETURNING 1",
                (*ident, pack_hash_bytes(args_hash), now),
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
                return StoredRequest(unpack_hash(row[0]), unpack_response(row[1]))
            # A committed claim without a response (SQLite replaces such rows too): take it over.
            if self._db.run(
                "UPDATE requests SET args_hash = ?, created_at = ? WHERE initiative = ? AND operation = ? "
                "AND request_id = ? AND response IS NULL",
                (pack_hash_bytes(args_hash), now, *ident),
            ):
                return None
        raise Unavailable(f"request_id {key.request_id!r} is being claimed concurrently; retry")

    def newest_stamp(self) -> str | None:
        """None: every writer of a PostgreSQL vault stamps by the server's clock (decision 404), so
        a write needs no floor from the vault's newest, and reading it cost each write a round trip
        of its own (a write begins with its first statement, 16.L7)."""
        return None

    def finish_request(self, key: RequestKey, response: dict[str, Any]) -> None:
        # The row is this transaction's own claim (locked since `begin_request`): sent with the
        # statements before commit, in one round trip (decision 16.P2).
        self._db.send(
            "UPDATE requests SET response = ? WHERE initiative = ? AND operation = ? AND request_id = ?",
            (pack_response(response), key.initiative, key.operation, key.request_id),
        )

    def gather_statistics(self, kinds: Sequence[str]) -> None:
        # A new vault's `nodes` is analyzed empty by migration 020, and the plan of a statement
        # prepared while a table is small (psycopg prepares one after a few runs) is kept until
        # the table's statistics change: an import's per-record look-ups read the whole of `nodes`,
        # a quadratic import. ANALYZE gives them the table's size and re-plans them; SKIP_LOCKED,
        # so it never waits for a VACUUM; a role that does not own the tables gets a warning only.
        if tables := sorted({table for kind in kinds for table in FILLED_BY[kind]}):
            self._db.run(f"ANALYZE (SKIP_LOCKED) {', '.join(tables)}")

    # --- node revisions ---------------------------------------------------------------------
    #: The term counts a write replaces, read by `put_node`'s locked look-up of the row.
    _replaced_cols = ", ltf, stf, dl"

    def put_node(self, node: Node, *, request_id: str | None, actor: str, new: bool = False) -> None:
        if not self._counting:
            # This transaction counts its own node writes (`_delta`) instead of the trigger, which
            # upserted every term of every node at once: ~150 rows a note, and a row updated n times
            # in one transaction costs the n-th update a walk over n versions (decision 16.M3).
            self._db.send("SELECT set_config('kaeru.bulk_index', 'on', true)")
            self._counting = True
        super().put_node(node, request_id=request_id, actor=actor, new=new)
        self.nodes_written += 1

    def _node_extra(
        self, node: Node, request_id: str | None, actor: str
    ) -> tuple[tuple[tuple[str, str], ...], tuple[Any, ...]]:
        if node.retracted:
            self._new_terms = None
            return _INDEX_COLUMNS, (request_id, actor, None, None, None, None, None)
        tsv, stv, literal, stems, dl = node_index(node)  # both tsvectors and the counts in one pass (16.L4)
        self._new_terms = (literal, stems, dl)
        return _INDEX_COLUMNS, (request_id, actor, tsv, stv, dump_terms(literal), dump_terms(stems), dl)

    def flush_term_stats(self) -> None:
        """Apply this transaction's changes to the statistics (before it commits, and before it
        reads them): one upsert of the terms in one order (writers of one shard never wait on each
        other crosswise), as the trigger's would have left them summed over the shards; and the same
        for the section sizes (`section_counts`, decision 16.P1)."""
        delta = self._delta
        # One row a (term, fields) for both counts (16.L3); the order is the statement's own sort
        # (not Python's, which differs from COLLATE "C" beyond ASCII).
        changed = [(key, n) for key, n in delta.docs.items() if n[0] or n[1]]
        if changed:
            self._db.send(
                "INSERT INTO term_stats AS t (term, fields, shard, literal, stemmed) "
                "SELECT u.t, u.f, pg_backend_pid() % 64, u.l, u.s "
                "FROM unnest(?::text[], ?::smallint[], ?::bigint[], ?::bigint[]) AS u(t, f, l, s) "
                'ORDER BY u.t COLLATE "C", u.f '
                "ON CONFLICT (term, fields, shard) DO UPDATE "
                "SET literal = t.literal + excluded.literal, stemmed = t.stemmed + excluded.stemmed",
                [
                    _text_array(k[0] for k, _ in changed),
                    "{" + ",".join(str(k[1]) for k, _ in changed) + "}",
                    "{" + ",".join(str(n[0]) for _, n in changed) + "}",
                    "{" + ",".join(str(n[1]) for _, n in changed) + "}",
                ],
            )
        if delta.rows or delta.tokens:
            self._db.send(
                "INSERT INTO text_totals AS t (shard, docs, tokens) VALUES (pg_backend_pid() % 64, ?, ?) "
                "ON CONFLICT (shard) DO UPDATE SET docs = t.docs + excluded.docs, tokens = t.tokens + excluded.tokens",
                (delta.rows, delta.tokens),
            )
        delta.clear()
        sections = sorted((key, n) for key, n in self._sections.items() if n)
        self._sections.clear()
        if sections:
            self._db.send(
                "INSERT INTO section_counts AS c (initiative_id, facet, shard, members) "
                "SELECT u.i, u.f, pg_backend_pid() % 64, u.d FROM unnest(?::bigint[], ?::text[], ?::bigint[]) "
                'AS u(i, f, d) ORDER BY u.i, u.f COLLATE "C" '
                "ON CONFLICT (initiative_id, facet, shard) DO UPDATE SET members = c.members + excluded.members",
                [[k[0] for k, _ in sections], [k[1] for k, _ in sections], [n for _, n in sections]],
            )

    def _move_memberships(
        self, seq: int, old: set[int], new: set[int], facet: str | None = None, old_facet: str | None = None
    ) -> None:
        # The rows' changes counted here (the trigger is off: `put_node` set `kaeru.bulk_index`):
        # removed rows carried `old_facet`, kept ones change from it to `facet`, added ones get it.
        counts = self._sections
        for initiative_id, was, now in (
            *((i, old_facet, None) for i in old - new),
            *((i, old_facet, facet) for i in old & new if facet != old_facet),
            *((i, None, facet) for i in new - old),
        ):
            if was is not None:
                counts[initiative_id, was] = counts.get((initiative_id, was), 0) - 1
            if now is not None:
                counts[initiative_id, now] = counts.get((initiative_id, now), 0) + 1
        super()._move_memberships(seq, old, new, facet, old_facet)

    def _facet_sizes(self, initiative_ids: Sequence[int]) -> list[tuple[int, str, int]]:
        # The kept counts (migration 014), this transaction's own changes applied first.
        self.flush_term_stats()
        found = self._db.rows(
            "SELECT c.initiative_id, c.facet, sum(c.members) FROM section_counts c "
            "WHERE c.initiative_id = ANY(?::bigint[]) GROUP BY c.initiative_id, c.facet HAVING sum(c.members) <> 0",
            [list(initiative_ids)],
        )
        return [(int(r[0]), str(r[1]), int(r[2])) for r in found]

    def _facet_count(self, initiative_ids: Sequence[int], wanted: str | None) -> tuple[str, list[Any]]:
        # The kept counts (migration 014), this transaction's own changes applied first.
        self.flush_term_stats()
        cond, more = ("", []) if wanted is None else (" AND c.facet = ?", [wanted])
        return (
            "(SELECT coalesce(sum(c.members), 0) FROM section_counts c "
            f"WHERE c.initiative_id = ANY(?::bigint[]){cond})",
            [list(initiative_ids), *more],
        )

    def _node_written(
        self,
        seq: int,
        node: Node,
        values: tuple[Any, ...],
        request_id: str | None,
        actor: str,
        *,
        indexed: bool,
        replaced: tuple[Any, ...] | None,
    ) -> None:
        if self._copies is not None and self._copies.wrote():
            # Now and then a writer prunes the change log its node writes add to (migration 013).
            self._db.send(PRUNE_SQL)
        if replaced is not None:
            self._delta.add(replaced[0], replaced[1], replaced[2], -1)
        if self._new_terms is not None:
            self._delta.add(*self._new_terms, 1)
            self._new_terms = None

    def rebuild_text_index(self, *, stems_only: bool = False) -> int:
        """Recompute the index columns of every node — after the migration that added some, all but
        the literal tsvector (`stems_only`) — then count the BM25 statistics once: live nodes get
        theirs, retracted ones none, as a write leaves them; the live nodes indexed.

        The section sizes (`section_counts`) are counted anew too: `kaeru reindex --text` is the
        doctor's fix when they disagree with the memberships. Writers that touch the statistics wait
        until this commits (the tables are locked first, in the order writers update them), so what
        they add applies to the recount, never to counts it replaces."""
        self._db.run("LOCK TABLE term_stats, text_totals, section_counts IN EXCLUSIVE MODE")
        if self._copies is not None:
            self._copies.clear()  # every node changes: the copies are read again, not refreshed
        self._db.one("SELECT set_config('kaeru.bulk_index', 'on', true)")
        self._delta.clear()  # the recount below counts this transaction's writes too
        kept = "" if stems_only else "tsv = NULL, "
        self._db.run(f"UPDATE nodes SET {kept}stv = NULL, ltf = NULL, stf = NULL, dl = NULL WHERE retracted")
        count = 0
        for row in self._db.rows(f"SELECT seq, id, {NODE_COLS} FROM nodes WHERE NOT retracted"):
            node = self._d.node(row[0], row[1], row[2:])
            tsv, stv, literal, stems, dl = node_index(node)
            ltf, stf = dump_terms(literal), dump_terms(stems)
            self._db.run(
                f"UPDATE nodes SET {'' if stems_only else 'tsv = ?::tsvector, '}stv = ?::tsvector, ltf = ?::jsonb, "
                "stf = ?::jsonb, dl = ? WHERE seq = ?",
                (*(() if stems_only else (tsv,)), stv, ltf, stf, dl, row[0]),
            )
            count += 1
        self._db.one("SELECT set_config('kaeru.bulk_index', 'off', true)")
        self._counting = False
        self._recount_terms()
        self._db.run(f"DELETE FROM meta WHERE {INDEX_PENDING}")
        return count

    def _recount_terms(self) -> None:
        """The BM25 statistics counted anew from every live node's terms, and the section sizes from
        the memberships (in shard 0)."""
        self._db.run("DELETE FROM term_stats")
        self._db.run("DELETE FROM text_totals")
        self._db.run(
            "INSERT INTO term_stats (term, fields, shard, literal, stemmed) "
            "SELECT c.term, c.fields, 0, sum(c.l), sum(c.s) FROM ("
            "SELECT e.key AS term, kaeru_term_fields(e.value) AS fields, 1 AS l, 0 AS s FROM nodes n, jsonb_each(n.ltf) e "
            "UNION ALL SELECT e.key, kaeru_term_fields(e.value), 0, 1 FROM nodes n, jsonb_each(n.stf) e"
            ") c GROUP BY c.term, c.fields"
        )
        self._db.run(
            "INSERT INTO text_totals (shard, docs, tokens) "
            "SELECT 0, count(*), coalesce(sum(dl), 0) FROM nodes WHERE dl IS NOT NULL"
        )
        self._db.run("DELETE FROM section_counts")
        self._db.run(
            "INSERT INTO section_counts (initiative_id, facet, shard, members) "
            "SELECT initiative_id, facet, 0, count(*) FROM memberships WHERE facet <> '' GROUP BY 1, 2"
        )

    def _walk_timelines(
        self, initiative_ids: Sequence[int], pivots: Sequence[tuple[tuple[str, int], int, int]]
    ) -> list[list[str]]:
        # One statement for every pivot: a `timeline` a pivot was two round trips and two plans
        # each, 16 a recall; its text does not depend on the pivots, so it is prepared once a
        # connection has run it a few times (decision 143).
        side = (
            "SELECT n.created_at, n.seq, n.id FROM nodes n WHERE NOT n.retracted AND " + SHOWN + " AND EXISTS "
            "(SELECT 1 FROM memberships m WHERE m.node_seq = n.seq AND m.initiative_id = ANY(%(scope)s::bigint[])) "
        )
        found = self._db.raw_rows(
            "SELECT p.k, x.created_at, x.seq, x.id FROM unnest(%(at)s::text[], %(seq)s::bigint[], %(before)s::int[], "
            "%(after)s::int[]) WITH ORDINALITY AS p (at, sq, before, after, k) CROSS JOIN LATERAL (("
            f"{side} AND (n.created_at, n.seq) < (p.at, p.sq) ORDER BY n.created_at DESC, n.seq DESC LIMIT p.before"
            f") UNION ALL ({side} AND (n.created_at, n.seq) >= (p.at, p.sq) ORDER BY n.created_at, n.seq "
            "LIMIT p.after + 1)) x",
            {
                "scope": list(initiative_ids),
                "at": [p[0][0] for p in pivots],
                "seq": [p[0][1] for p in pivots],
                "before": [p[1] for p in pivots],
                "after": [p[2] for p in pivots],
            },
        )
        around: list[list[tuple[str, int, str]]] = [[] for _ in pivots]
        for k, moment, seq, node_id in found:
            around[int(k) - 1].append((str(moment), int(seq), str(node_id)))
        # Each pivot's both sides in (created_at, seq) order, as `timeline` gives them (the column's
        # collation is C: Python's order of the text).
        return [[r[2] for r in sorted(rows)] for rows in around]

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
