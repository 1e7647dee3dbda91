"""The PostgreSQL backend (psycopg 3): many stateless servers over one database.

Semantics mirror `storage/sqlite/store.py` exactly; only the concurrency mechanics differ. SQLite
serialises every writer with `BEGIN IMMEDIATE`; here writers run concurrently in READ COMMITTED
and meet only where they touch the same rows:

* `get_node`/`get_slot(for_update=True)` take row locks (`SELECT … FOR UPDATE`), so a
  compare-and-set sees the latest committed revision and holds it until commit;
* keys that may be claimed by two transactions at once — a replay `request_id`, a new
  initiative's name, a free slot — are claimed with `INSERT … ON CONFLICT`: the unique index makes
  the loser wait for the winner and then see its committed row, without application locks.

Reads run in REPEATABLE READ READ ONLY transactions: one consistent snapshot per call.
Full-text lexemes and queries are built in Python from `kaeru.domain.text` tokens (never by a
PostgreSQL text-search parser), so what matches is identical to the SQLite FTS5 index.
"""

from __future__ import annotations

import bisect
import json
import os
import secrets
import string
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import psycopg
from psycopg_pool import ConnectionPool

from kaeru.domain.model import (
    VERDICT_EDGES,
    Edge,
    EdgeType,
    HypothesisStatus,
    Layer,
    NameSpan,
    Node,
    NodeType,
    Tier,
    Visibility,
)
from kaeru.domain.text import indexed_name, manual_tags, stem, tokens
from kaeru.errors import Internal, InvalidArgument, KaeruError, RevisionConflict, SlotConflict, Unavailable
from kaeru.storage.base import (
    AuditRecord,
    EndedInitiative,
    Initiative,
    RequestKey,
    RevisionEntry,
    SearchQuery,
    SearchRow,
    SlotState,
    StoredRequest,
    TokenRecord,
)
from kaeru.storage.migrate import load_migrations, newest_version, refuse_newer

_NODE_COLS = (
    "rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, "
    "properties, initiatives, created_at, recorded_at, retracted, pinned"
)
_NODE_COL_LIST = [c.strip() for c in _NODE_COLS.split(",")]
_REV_NODE_COLS = ", ".join("r." + c for c in _NODE_COL_LIST)
_NODE_MARKS = ", ".join(["%s"] * len(_NODE_COL_LIST))
_EDGE_COLS = "src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted"
_E_EDGE_COLS = ", ".join("e." + c.strip() for c in _EDGE_COLS.split(","))
#: "No such key" in a properties lookup (distinct from a JSON null, which counts as present).
_MISSING = object()
_VERDICTS = sorted(e.value for e in VERDICT_EDGES)
_INITIATIVE_COLS = "id, name, created_at, last_activity, properties"

#: Key of the advisory lock that serialises migrations of one database across processes.
_MIGRATION_LOCK = 0x6B6165727500  # "kaeru\0"

#: tsvector positions are 14-bit; later positions are clamped (they only affect ranking).
_MAX_POSITION = 16383
#: Positions kept per lexeme and field; the body keeps one, which bounds the tsvector of a huge body
#: to its distinct words (PostgreSQL caps a tsvector at 1 MB).
_POSITIONS_PER_FIELD = {"A": 8, "B": 8, "C": 8, "D": 1}
#: The tsvector weight of each indexed field (tsquery weight labels select fields, like FTS5 columns).
FIELD_WEIGHTS = {"name": "A", "description": "B", "tags": "C", "body": "D"}
#: ts_rank weights {D, C, B, A} = body, tags, description, name: the SQLite bm25 weights 1:2:2:4.
_RANK = "ts_rank('{{0.25,0.5,0.5,1.0}}'::float4[], n.{vector}, %(q)s::tsquery, 1)"
#: Whether a hit is a refuted hypothesis (a currentness tie-break of search).
_REFUTED = f"coalesce(n.node_type = '{NodeType.HYPOTHESIS}' AND n.status = '{HypothesisStatus.REFUTED}', FALSE)"

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)

_BEGIN_WRITE = "BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE"
_BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"


def term(token: str) -> str:
    """The index term of a `domain.text` token, as FTS5's `ascii` tokenizer stores it.

    Tokens are already case-folded, but folding can leave ASCII capitals (NFKD turns the
    mathematical letter "𝐀", which has no case mapping, into "A"); FTS5 lowercases ASCII letters,
    and only those, on both the indexed and the query side, so the lexemes here do the same.
    """
    return token.translate(_ASCII_LOWER)


def _lexeme(token: str) -> str:
    """One literal lexeme for tsvector/tsquery input: quoted, with quotes and backslashes escaped."""
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(
    name: str,
    description: str | None,
    tags: Sequence[str],
    body: str | None,
    fold: Callable[[str], str] | None = None,
) -> str:
    """The tsvector text of one node: its `domain.text` tokens (or their `fold`, e.g. stems) as
    lexemes, weighted by field.

    Built here rather than with `to_tsvector`, whose parser would re-split and re-normalise tokens
    differently from FTS5 (e.g. letters unknown to the server's locale); this way the lexemes are
    exactly the terms SQLite indexes.
    """
    positions: dict[str, list[str]] = {}
    per_field: dict[tuple[str, str], int] = {}
    position = 0
    # Name and tags are short, so they come first and never reach the clamped last position, where
    # a lexeme seen in two fields would keep only one weight (and escape a field filter).
    for weight, text in (("A", name), ("C", " ".join(tags)), ("B", description), ("D", body)):
        for raw in tokens(text):
            token = term(fold(raw) if fold is not None else raw)
            position += 1
            key = (token, weight)
            kept = per_field.get(key, 0)
            if kept < _POSITIONS_PER_FIELD[weight]:
                per_field[key] = kept + 1
                positions.setdefault(token, []).append(f"{min(position, _MAX_POSITION)}{weight}")
    return " ".join(f"{_lexeme(t)}:{','.join(p)}" for t, p in positions.items())


def tsquery_literal(
    query_tokens: Sequence[str],
    match_all: bool,
    prefix: bool,
    fields: Sequence[str] = tuple(FIELD_WEIGHTS),
) -> str:
    """A tsquery that means exactly "these literal tokens": each quoted, joined by & or |, and
    limited to the weights of `fields` (FTS5's `{name tags} : (…)` column filter).

    User text never reaches the tsquery syntax: tokens come from `domain.text` and are quoted.
    """
    weights = "".join(sorted({FIELD_WEIGHTS[f] for f in fields if f in FIELD_WEIGHTS}))
    label = ("*" if prefix else "") + ("" if len(weights) == len(FIELD_WEIGHTS) else weights)
    suffix = f":{label}" if label else ""
    return (" & " if match_all else " | ").join(_lexeme(term(t)) + suffix for t in query_tokens)


def _vector(query: SearchQuery) -> str:
    """The tsvector column a query matches: stems for `recall`, literal tokens for `search`."""
    return "stv" if query.stemmed else "tsv"


def _node(row: Sequence[Any]) -> Node:
    (
        seq,
        node_id,
        rev_no,
        revision,
        node_type,
        tier,
        name,
        body,
        description,
        tags,
        layer,
        visibility,
        status,
        properties,
        initiatives,
        created_at,
        recorded_at,
        retracted,
        pinned,
    ) = row
    return Node(
        id=node_id,
        rev_no=rev_no,
        revision=revision,
        node_type=NodeType(node_type),
        tier=Tier(tier),
        name=name,
        body=body,
        description=description,
        tags=tuple(tags),
        layer=Layer(layer),
        visibility=Visibility(visibility),
        status=status,
        properties=json.loads(properties),
        initiatives=tuple(int(i) for i in initiatives),
        created_at=created_at,
        recorded_at=recorded_at,
        retracted=bool(retracted),
        pinned=bool(pinned),
        seq=int(seq),
    )


def _edge(row: Sequence[Any]) -> Edge:
    src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted = row
    return Edge(
        src=src,
        dst=dst,
        edge_type=EdgeType(edge_type),
        weight=float(weight),
        rev_no=rev_no,
        properties=json.loads(properties),
        created_at=created_at,
        recorded_at=recorded_at,
        retracted=bool(retracted),
    )


def _initiative(row: Sequence[Any]) -> Initiative:
    return Initiative(int(row[0]), row[1], row[2], row[3], json.loads(row[4]))


def _translate(exc: Exception) -> KaeruError:
    """Driver errors as the project's errors: transient ones retryable, the rest internal."""
    if isinstance(exc, psycopg.errors.ProgramLimitExceeded):
        # SQLSTATE class 54 is an OperationalError in psycopg, but retrying cannot help. In practice:
        # a text whose distinct words overflow a tsvector (1 MB), which SQLite's FTS5 would accept.
        return InvalidArgument(
            f"the text is too large for PostgreSQL's full-text index ({exc}); split it into several notes"
        )
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        # Connection loss, pool exhaustion, lock timeout, deadlock, serialisation failure, shutdown.
        return Unavailable(f"the database is unavailable or busy ({type(exc).__name__}: {exc}); retry shortly")
    if isinstance(exc, psycopg.DataError) and "NUL" in str(exc):
        return InvalidArgument("text must not contain NUL characters (PostgreSQL cannot store them)")
    return Internal(f"storage error: {type(exc).__name__}: {exc}")


def redact_url(url: str) -> str:
    """`url` without its password (in the user part or a `password=` parameter), for `describe()`."""
    parts = urlsplit(url)
    if parts.password is not None:
        userinfo, host = parts.netloc.rsplit("@", 1)
        parts = parts._replace(netloc=f"{userinfo.split(':', 1)[0]}:***@{host}")
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if any(k == "password" for k, _ in pairs):
        parts = parts._replace(query=urlencode([(k, "***" if k == "password" else v) for k, v in pairs], safe="*/"))
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{parts.netloc}{parts.path}{query}"


class PostgresSession:
    """One transaction on one pooled connection."""

    def __init__(self, conn: psycopg.Connection[Any], *, read_only: bool):
        self._c = conn
        self._read_only = read_only

    def _cursor(self, sql: str, params: Sequence[Any] | dict[str, Any]) -> psycopg.Cursor[Any]:
        try:
            return self._c.execute(sql, params)
        except (psycopg.Error, UnicodeEncodeError) as exc:
            raise _translate(exc) from exc

    def _rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return list(self._cursor(sql, params).fetchall())
        except psycopg.Error as exc:
            raise _translate(exc) from exc

    def _one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> tuple[Any, ...] | None:
        try:
            row = self._cursor(sql, params).fetchone()
        except psycopg.Error as exc:
            raise _translate(exc) from exc
        return tuple(row) if row is not None else None

    def _run(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        return int(self._cursor(sql, params).rowcount)

    def _lock(self, for_update: bool) -> str:
        # A read snapshot cannot lock rows (and has no need to); writes lock what they will change.
        return " FOR UPDATE" if for_update and not self._read_only else ""

    # --- vault metadata -------------------------------------------------------------------
    def vault_secret(self) -> bytes:
        row = self._one("SELECT value FROM meta WHERE key = 'secret'")
        if row is None:
            raise Internal("vault has no secret; was it migrated?")
        return bytes.fromhex(row[0])

    # --- initiatives ------------------------------------------------------------------------
    def initiative_by_name(self, name: str) -> Initiative | None:
        row = self._one(f"SELECT {_INITIATIVE_COLS} FROM initiatives WHERE name = %s", (name,))
        return _initiative(row) if row else None

    def initiative_names(self, ids: Sequence[int]) -> dict[int, str]:
        if not ids:
            return {}
        rows = self._rows("SELECT id, name FROM initiatives WHERE id = ANY(%s::bigint[])", (sorted(set(ids)),))
        return {int(r[0]): r[1] for r in rows}

    def all_initiatives(self) -> list[Initiative]:
        return [_initiative(r) for r in self._rows(f"SELECT {_INITIATIVE_COLS} FROM initiatives ORDER BY name")]

    def create_initiative(self, name: str, now: str) -> Initiative:
        # A concurrent creator of the same name makes this wait on the unique index, then do nothing:
        # its committed row is then the initiative both calls meant.
        row = self._one(
            "INSERT INTO initiatives (name, created_at, last_activity) VALUES (%s, %s, %s) "
            f"ON CONFLICT (name) DO NOTHING RETURNING {_INITIATIVE_COLS}",
            (name, now, now),
        )
        if row is not None:
            self._open_name(int(row[0]), name, now)
        if row is None:
            row = self._one(f"SELECT {_INITIATIVE_COLS} FROM initiatives WHERE name = %s", (name,))
        if row is None:
            raise Unavailable(f"initiative {name!r} was created and removed concurrently; retry")
        return _initiative(row)

    def touch_initiative(self, initiative_id: int, now: str) -> None:
        self._run(
            "UPDATE initiatives SET last_activity = %s WHERE id = %s AND last_activity < %s",
            (now, initiative_id, now),
        )

    def rename_initiative(self, initiative_id: int, name: str, at: str) -> None:
        try:
            self._c.execute("UPDATE initiatives SET name = %s WHERE id = %s", (name, initiative_id))
        except psycopg.errors.UniqueViolation as exc:
            # The service checked the name was free; another transaction took it since. A retry re-checks.
            raise Unavailable(f"initiative {name!r} was created concurrently; retry") from exc
        except psycopg.Error as exc:
            raise _translate(exc) from exc
        self._run(
            "UPDATE initiative_names SET valid_to = %s WHERE initiative_id = %s AND valid_to IS NULL",
            (at, initiative_id),
        )
        self._open_name(initiative_id, name, at)

    def _open_name(self, initiative_id: int, name: str, at: str) -> None:
        self._run(
            "INSERT INTO initiative_names (initiative_id, name, valid_from, valid_to) VALUES (%s, %s, %s, NULL) "
            "ON CONFLICT (initiative_id, valid_from) DO UPDATE SET name = EXCLUDED.name, valid_to = NULL",
            (initiative_id, name, at),
        )

    def delete_initiative(self, initiative_id: int, at: str) -> None:
        row = self._one("SELECT name, created_at FROM initiatives WHERE id = %s", (initiative_id,))
        self._run("DELETE FROM slots WHERE initiative_id = %s", (initiative_id,))
        self._run("DELETE FROM initiatives WHERE id = %s", (initiative_id,))
        if row is None:
            return
        self._run(
            "UPDATE initiative_names SET valid_to = %s WHERE initiative_id = %s AND valid_to IS NULL",
            (at, initiative_id),
        )
        self._run(
            "INSERT INTO initiative_ends (initiative_id, name, created_at, ended_at) VALUES (%s, %s, %s, %s)",
            (initiative_id, row[0], row[1], at),
        )

    def name_history(self, initiative_ids: Sequence[int] | None) -> dict[int, list[NameSpan]]:
        params: tuple[Any, ...] = ()
        if initiative_ids is None:
            where = "TRUE"
        else:
            unique = sorted(set(initiative_ids))
            if not unique:
                return {}
            where, params = "initiative_id = ANY(%s::bigint[])", (unique,)
        out: dict[int, list[NameSpan]] = {}
        for initiative_id, name, valid_from, valid_to in self._rows(
            f"SELECT initiative_id, name, valid_from, valid_to FROM initiative_names WHERE {where} "
            "ORDER BY initiative_id, valid_from",
            params,
        ):
            out.setdefault(int(initiative_id), []).append(NameSpan(name, valid_from, valid_to))
        return out

    def ended_initiatives(self) -> list[EndedInitiative]:
        rows = self._rows(
            "SELECT initiative_id, name, created_at, ended_at FROM initiative_ends ORDER BY ended_at, initiative_id"
        )
        return [EndedInitiative(int(r[0]), r[1], r[2], r[3]) for r in rows]

    def tier_counts(self, initiative_ids: Sequence[int]) -> dict[int, dict[str, int]]:
        out: dict[int, dict[str, int]] = {i: {} for i in initiative_ids}
        if not initiative_ids:
            return out
        rows = self._rows(
            "SELECT m.initiative_id, n.tier, count(*) FROM memberships m JOIN nodes n ON n.seq = m.node_seq "
            "WHERE m.initiative_id = ANY(%s::bigint[]) AND NOT n.retracted "
            "AND n.node_type NOT IN ('audit_event', 'board') GROUP BY m.initiative_id, n.tier",
            (list(initiative_ids),),
        )
        for initiative_id, tier, count in rows:
            out[int(initiative_id)][tier] = int(count)
        return out

    def member_ids(self, initiative_id: int) -> list[str]:
        rows = self._rows(
            "SELECT n.id FROM memberships m JOIN nodes n ON n.seq = m.node_seq "
            "WHERE m.initiative_id = %s AND NOT n.retracted ORDER BY n.seq",
            (initiative_id,),
        )
        return [r[0] for r in rows]

    # --- replay -----------------------------------------------------------------------------
    def begin_request(self, key: RequestKey, args_hash: str, now: str) -> StoredRequest | None:
        ident = (key.initiative, key.operation, key.request_id)
        for _ in range(3):
            # The unique key makes a concurrent claimer wait here until the holder commits or rolls back.
            claimed = self._one(
                "INSERT INTO requests (initiative, operation, request_id, args_hash, response, created_at) "
                "VALUES (%s, %s, %s, %s, NULL, %s) ON CONFLICT DO NOTHING RETURNING 1",
                (*ident, args_hash, now),
            )
            if claimed is not None:
                return None
            row = self._one(
                "SELECT args_hash, response FROM requests WHERE initiative = %s AND operation = %s AND request_id = %s",
                ident,
            )
            if row is None:
                continue  # purged between the two statements: claim it again
            if row[1] is not None:
                return StoredRequest(row[0], json.loads(row[1]))
            # A committed claim without a response (SQLite replaces such rows too): take it over.
            taken = self._run(
                "UPDATE requests SET args_hash = %s, created_at = %s WHERE initiative = %s AND operation = %s "
                "AND request_id = %s AND response IS NULL",
                (args_hash, now, *ident),
            )
            if taken:
                return None
        raise Unavailable(f"request_id {key.request_id!r} is being claimed concurrently; retry")

    def finish_request(self, key: RequestKey, response: dict[str, Any]) -> None:
        self._run(
            "UPDATE requests SET response = %s WHERE initiative = %s AND operation = %s AND request_id = %s",
            (json.dumps(response, sort_keys=True), key.initiative, key.operation, key.request_id),
        )

    def purge_requests(self, before: str) -> int:
        return self._run("DELETE FROM requests WHERE created_at < %s", (before,))

    # --- nodes ------------------------------------------------------------------------------
    def get_node(self, node_id: str, *, for_update: bool = False) -> Node | None:
        row = self._one(f"SELECT seq, id, {_NODE_COLS} FROM nodes WHERE id = %s{self._lock(for_update)}", (node_id,))
        return _node(row) if row else None

    def nodes_by_ids(self, ids: Sequence[str]) -> dict[str, Node]:
        return self._nodes_where("id", "text", ids)

    def nodes_by_seqs(self, seqs: Sequence[int]) -> dict[str, Node]:
        return self._nodes_where("seq", "bigint", seqs)

    def _nodes_where(self, column: str, sql_type: str, keys: Sequence[Any]) -> dict[str, Node]:
        """Current nodes whose `column` (id or seq, of `sql_type`) is one of `keys`, by id."""
        if not keys:
            return {}
        rows = self._rows(
            f"SELECT seq, id, {_NODE_COLS} FROM nodes WHERE {column} = ANY(%s::{sql_type}[])",
            (list(dict.fromkeys(keys)),),
        )
        return {r[1]: _node(r) for r in rows}

    def live_nodes_named(self, name: str, initiative_ids: Sequence[int] | None) -> list[Node]:
        sql = f"SELECT seq, id, {_NODE_COLS} FROM nodes n WHERE name = %s AND NOT retracted"
        params: list[Any] = [name]
        if initiative_ids is not None:
            sql += (
                " AND EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq "
                "AND m.initiative_id = ANY(%s::bigint[]))"
            )
            params.append(list(initiative_ids))
        return [_node(r) for r in self._rows(sql + " ORDER BY recorded_at DESC, seq DESC", params)]

    def name_candidates(self, wanted: str, initiative_ids: Sequence[int] | None, limit: int) -> list[str]:
        # lower() under COLLATE "C" folds ASCII only, like SQLite's built-in lower().
        head = wanted.strip()[:3].lower()
        sql = (
            "SELECT DISTINCT name FROM nodes n WHERE NOT retracted AND node_type <> 'audit_event' "
            "AND (lower(name) LIKE %s ESCAPE '\\' OR lower(name) LIKE %s ESCAPE '\\')"
        )
        escaped = wanted.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        head_esc = head.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        params: list[Any] = [f"%{escaped[:24]}%", f"{head_esc}%"]
        if initiative_ids is not None:
            sql += (
                " AND EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq "
                "AND m.initiative_id = ANY(%s::bigint[]))"
            )
            params.append(list(initiative_ids))
        params.append(int(limit))
        return [r[0] for r in self._rows(sql + " LIMIT %s", params)]

    def initiatives_holding_name(self, name: str) -> list[int]:
        rows = self._rows(
            "SELECT DISTINCT m.initiative_id FROM nodes n JOIN memberships m ON m.node_seq = n.seq "
            "WHERE n.name = %s AND NOT n.retracted",
            (name,),
        )
        return [int(r[0]) for r in rows]

    def put_node(self, node: Node, *, request_id: str | None, actor: str) -> None:
        values = (
            node.rev_no,
            node.revision,
            node.node_type.value,
            node.tier.value,
            node.name,
            node.body,
            node.description,
            list(node.tags),
            node.layer.value,
            node.visibility.value,
            node.status,
            json.dumps(node.properties, sort_keys=True),
            list(node.initiatives),
            node.created_at,
            node.recorded_at,
            node.retracted,
            node.pinned,
        )
        tsv, stv = (None, None) if node.retracted else self._index_terms(node)
        existing = self._one(
            "SELECT seq, initiatives, retracted, rev_no FROM nodes WHERE id = %s FOR UPDATE", (node.id,)
        )
        if existing is None:
            row = self._one(
                f"INSERT INTO nodes (id, {_NODE_COLS}, tsv, stv) VALUES (%s, {_NODE_MARKS}, %s::tsvector, %s::tsvector) "
                "RETURNING seq",
                (node.id, *values, tsv, stv),
            )
            assert row is not None
            seq = int(row[0])
            old_members: set[int] = set()
        else:
            seq = int(existing[0])
            if int(existing[3]) >= node.rev_no:
                # Only reachable when the caller skipped `get_node(for_update=True)`: never lose an update.
                raise RevisionConflict(
                    f"node {node.id} changed concurrently (now at revision number {existing[3]}); re-read it and retry"
                )
            old_members = {int(i) for i in existing[1]} if not existing[2] else set()
            assignments = ", ".join(f"{c} = %s" for c in _NODE_COL_LIST)
            self._run(
                f"UPDATE nodes SET {assignments}, tsv = %s::tsvector, stv = %s::tsvector WHERE seq = %s",
                (*values, tsv, stv, seq),
            )
        self._run(
            f"INSERT INTO node_revisions (node_seq, {_NODE_COLS}, request_id, actor) "
            f"VALUES (%s, {_NODE_MARKS}, %s, %s)",
            (seq, *values, request_id, actor),
        )
        new_members = set() if node.retracted else set(node.initiatives)
        gone = sorted(old_members - new_members)
        added = sorted(new_members - old_members)
        if gone:
            self._run("DELETE FROM memberships WHERE node_seq = %s AND initiative_id = ANY(%s::bigint[])", (seq, gone))
        if added:
            self._run(
                "INSERT INTO memberships (initiative_id, node_seq) SELECT unnest(%s::bigint[]), %s "
                "ON CONFLICT DO NOTHING",
                (added, seq),
            )

    @staticmethod
    def _index_terms(node: Node) -> tuple[str, str]:
        """The literal and the stemmed tsvector of a live node: the same field texts SQLite puts in
        the literal and the stem columns of nodes_fts (an auto-generated name is not indexed; the stemmed index
        leaves out the kind/status/lang tag families)."""
        name = indexed_name(node)
        return (
            tsvector_literal(name, node.description, node.tags, node.body),
            tsvector_literal(name, node.description, [manual_tags(node.tags)], node.body, stem),
        )

    def reindex_stems(self) -> int:
        """Fill the stemmed index for every live node (after the migration that created it)."""
        self._run("UPDATE nodes SET stv = NULL")
        count = 0
        for row in self._rows(f"SELECT seq, id, {_NODE_COLS} FROM nodes WHERE NOT retracted"):
            node = _node(row)
            self._run("UPDATE nodes SET stv = %s::tsvector WHERE seq = %s", (self._index_terms(node)[1], node.seq))
            count += 1
        self._run("DELETE FROM meta WHERE key = 'stem_index_pending'")
        return count

    def node_at(self, node_id: str, moment: str) -> Node | None:
        row = self._one(
            f"SELECT r.node_seq, n.id, {_REV_NODE_COLS} FROM nodes n JOIN node_revisions r ON r.node_seq = n.seq "
            "WHERE n.id = %s AND r.recorded_at <= %s ORDER BY r.rev_no DESC LIMIT 1",
            (node_id, moment),
        )
        return _node(row) if row else None

    def revision_log(self, node_id: str) -> list[RevisionEntry]:
        rows = self._rows(
            f"SELECT r.node_seq, n.id, {_REV_NODE_COLS}, r.request_id, r.actor "
            "FROM nodes n JOIN node_revisions r ON r.node_seq = n.seq WHERE n.id = %s ORDER BY r.rev_no",
            (node_id,),
        )
        return [RevisionEntry(_node(r[:-2]), r[-2], r[-1]) for r in rows]

    # --- edges ------------------------------------------------------------------------------
    def get_edge(self, src: str, dst: str, edge_type: EdgeType) -> Edge | None:
        row = self._one(
            f"SELECT {_EDGE_COLS} FROM edges WHERE src = %s AND dst = %s AND edge_type = %s",
            (src, dst, edge_type.value),
        )
        return _edge(row) if row else None

    def put_edge(self, edge: Edge) -> None:
        values = (
            edge.src,
            edge.dst,
            edge.edge_type.value,
            edge.weight,
            edge.rev_no,
            json.dumps(edge.properties, sort_keys=True),
            edge.created_at,
            edge.recorded_at,
            edge.retracted,
        )
        # Edges are read without row locks; the revision-number guard turns a concurrent change of the
        # same edge into a retryable conflict instead of a lost update or a duplicate revision.
        moved = self._one(
            f"INSERT INTO edges ({_EDGE_COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (src, dst, edge_type) DO UPDATE SET weight = EXCLUDED.weight, rev_no = EXCLUDED.rev_no, "
            "properties = EXCLUDED.properties, created_at = EXCLUDED.created_at, "
            "recorded_at = EXCLUDED.recorded_at, retracted = EXCLUDED.retracted "
            "WHERE edges.rev_no < EXCLUDED.rev_no RETURNING 1",
            values,
        )
        if moved is None:
            raise RevisionConflict(
                f"edge {edge.src} -{edge.edge_type.value}-> {edge.dst} changed concurrently; re-read and retry"
            )
        self._run(
            f"INSERT INTO edge_revisions ({_EDGE_COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            values,
        )

    def live_edges(self, node_ids: Sequence[str]) -> list[Edge]:
        if not node_ids:
            return []
        ids = list(dict.fromkeys(node_ids))
        rows = self._rows(
            f"SELECT {_EDGE_COLS} FROM edges WHERE NOT retracted AND src = ANY(%(ids)s::text[]) "
            f"UNION SELECT {_EDGE_COLS} FROM edges WHERE NOT retracted AND dst = ANY(%(ids)s::text[])",
            {"ids": ids},
        )
        unique = {e.key: e for e in map(_edge, rows)}
        return [unique[k] for k in sorted(unique)]

    def verdicts_against(self, node_ids: Sequence[str]) -> dict[str, list[tuple[str, EdgeType]]]:
        out: dict[str, list[tuple[str, EdgeType]]] = {}
        if not node_ids:
            return out
        rows = self._rows(
            "SELECT e.dst, e.src, e.edge_type FROM edges e JOIN nodes s ON s.id = e.src "
            "WHERE e.dst = ANY(%s::text[]) AND e.edge_type = ANY(%s::text[]) AND NOT e.retracted AND NOT s.retracted",
            (list(dict.fromkeys(node_ids)), _VERDICTS),
        )
        for dst, src, edge_type in rows:
            out.setdefault(dst, []).append((src, EdgeType(edge_type)))
        return out

    def _edges_as_of(self, where: str, params: dict[str, Any], moment: str) -> list[Edge]:
        """Each edge's latest revision recorded at or before `moment`, if that revision is live."""
        rows = self._rows(
            f"SELECT DISTINCT ON (src, dst, edge_type) {_EDGE_COLS} FROM edge_revisions "
            f"WHERE {where} AND recorded_at <= %(moment)s ORDER BY src, dst, edge_type, rev_no DESC",
            {**params, "moment": moment},
        )
        return [e for e in (_edge(r) for r in rows) if not e.retracted]

    def _live_at(self, node_ids: Sequence[str], moment: str) -> set[str]:
        if not node_ids:
            return set()
        rows = self._rows(
            "SELECT DISTINCT ON (n.id) n.id, r.retracted FROM nodes n JOIN node_revisions r ON r.node_seq = n.seq "
            "WHERE n.id = ANY(%s::text[]) AND r.recorded_at <= %s ORDER BY n.id, r.rev_no DESC",
            (list(dict.fromkeys(node_ids)), moment),
        )
        return {node_id for node_id, retracted in rows if not retracted}

    def verdicts_against_at(self, node_ids: Sequence[str], moment: str) -> dict[str, list[tuple[str, EdgeType]]]:
        out: dict[str, list[tuple[str, EdgeType]]] = {}
        if not node_ids:
            return out
        edges = self._edges_as_of(
            "dst = ANY(%(ids)s::text[]) AND edge_type = ANY(%(verdicts)s::text[])",
            {"ids": list(dict.fromkeys(node_ids)), "verdicts": _VERDICTS},
            moment,
        )
        live_sources = self._live_at([e.src for e in edges], moment)
        for edge in edges:
            if edge.src in live_sources:
                out.setdefault(edge.dst, []).append((edge.src, edge.edge_type))
        return out

    def edges_at(self, node_ids: Sequence[str], moment: str) -> list[Edge]:
        if not node_ids:
            return []
        ids = {"ids": list(dict.fromkeys(node_ids))}
        found: dict[tuple[str, str, str], Edge] = {}
        for edge in (
            *self._edges_as_of("src = ANY(%(ids)s::text[])", ids, moment),
            *self._edges_as_of("dst = ANY(%(ids)s::text[])", ids, moment),
        ):
            found[edge.key] = edge
        return [found[k] for k in sorted(found)]

    def edge_log(self, node_ids: Sequence[str]) -> list[Edge]:
        if not node_ids:
            return []
        rows = self._rows(
            f"SELECT {_EDGE_COLS} FROM edge_revisions WHERE src = ANY(%(ids)s::text[]) "
            f"UNION SELECT {_EDGE_COLS} FROM edge_revisions WHERE dst = ANY(%(ids)s::text[])",
            {"ids": list(dict.fromkeys(node_ids))},
        )
        found = {(*e.key, e.rev_no): e for e in map(_edge, rows)}
        return sorted(found.values(), key=lambda e: (e.recorded_at, e.key, e.rev_no))

    @staticmethod
    def _scope(alias: str = "n") -> str:
        """Membership of `alias` in the initiatives bound as %(scope)s."""
        return (
            f"EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = {alias}.seq "
            "AND m.initiative_id = ANY(%(scope)s::bigint[]))"
        )

    def nodes_with_property(self, initiative_ids: Sequence[int], key: str) -> list[str]:
        # Properties are stored as the JSON text json.dumps wrote (see the migration), so the key's
        # encoding narrows the scan and the exact test runs in Python, like SQLite's json_type(p, '$.key').
        path = key.split(".")
        rows = self._rows(
            f"SELECT n.id, n.properties FROM nodes n WHERE NOT n.retracted AND {self._scope()} "
            "AND strpos(n.properties, %(needle)s) > 0 ORDER BY n.seq",
            {"scope": list(initiative_ids), "needle": json.dumps(path[0])},
        )
        out: list[str] = []
        for node_id, properties in rows:
            value: Any = json.loads(properties)
            for part in path:
                value = value.get(part, _MISSING) if isinstance(value, dict) else _MISSING
            if value is not _MISSING:
                out.append(node_id)
        return out

    def inbound(self, initiative_ids: Sequence[int], edge_types: Sequence[str]) -> dict[str, list[Edge]]:
        rows = self._rows(
            f"SELECT {_E_EDGE_COLS} FROM edges e JOIN nodes t ON t.id = e.dst JOIN nodes s ON s.id = e.src "
            "WHERE NOT e.retracted AND e.edge_type = ANY(%(types)s::text[]) AND NOT t.retracted "
            f"AND NOT s.retracted AND {self._scope('t')}",
            {"scope": list(initiative_ids), "types": list(edge_types)},
        )
        out: dict[str, list[Edge]] = {}
        for row in rows:
            edge = _edge(row)
            out.setdefault(edge.dst, []).append(edge)
        return out

    def orphans(self, initiative_ids: Sequence[int], limit: int) -> list[str]:
        rows = self._rows(
            "SELECT n.id FROM nodes n WHERE NOT n.retracted AND n.node_type NOT IN ('audit_event', 'board') "
            f"AND {self._scope()} AND NOT EXISTS (SELECT 1 FROM edges e WHERE NOT e.retracted AND e.src = n.id) "
            "AND NOT EXISTS (SELECT 1 FROM edges e WHERE NOT e.retracted AND e.dst = n.id) "
            "ORDER BY n.seq LIMIT %(limit)s",
            {"scope": list(initiative_ids), "limit": int(limit)},
        )
        return [r[0] for r in rows]

    def dangling_edges(self, initiative_ids: Sequence[int], limit: int) -> list[Edge]:
        # Ordered like SQLite's UNION (which sorts whole rows), so the same edges survive the limit.
        rows = self._rows(
            f"SELECT {_E_EDGE_COLS} FROM edges e JOIN nodes a ON a.id = e.src JOIN nodes b ON b.id = e.dst "
            f"WHERE NOT e.retracted AND NOT a.retracted AND b.retracted AND {self._scope('a')} "
            f"UNION SELECT {_E_EDGE_COLS} FROM edges e JOIN nodes a ON a.id = e.dst JOIN nodes b ON b.id = e.src "
            f"WHERE NOT e.retracted AND NOT a.retracted AND b.retracted AND {self._scope('a')} "
            "ORDER BY 1, 2, 3 LIMIT %(limit)s",
            {"scope": list(initiative_ids), "limit": int(limit)},
        )
        return [_edge(r) for r in rows]

    def timeline(
        self,
        initiative_ids: Sequence[int],
        *,
        since: str | None,
        until: str | None,
        pivot: tuple[str, int] | None,
        before: int,
        after: int,
    ) -> list[str]:
        params: dict[str, Any] = {"scope": list(initiative_ids), "since": since, "until": until}
        base = f"FROM nodes n WHERE NOT n.retracted AND n.node_type NOT IN ('audit_event', 'board') AND {self._scope()}"
        if since:
            base += " AND n.created_at >= %(since)s"
        if until:
            base += " AND n.created_at <= %(until)s"
        if pivot is None:
            params["after"] = int(after)
            rows = self._rows(f"SELECT n.id {base} ORDER BY n.created_at, n.seq LIMIT %(after)s", params)
            return [r[0] for r in rows]
        params.update(at=pivot[0], seq=pivot[1], before=int(before), after=int(after) + 1)
        earlier = self._rows(
            f"SELECT n.id {base} AND (n.created_at < %(at)s OR (n.created_at = %(at)s AND n.seq < %(seq)s)) "
            "ORDER BY n.created_at DESC, n.seq DESC LIMIT %(before)s",
            params,
        )
        later = self._rows(
            f"SELECT n.id {base} AND (n.created_at > %(at)s OR (n.created_at = %(at)s AND n.seq >= %(seq)s)) "
            "ORDER BY n.created_at, n.seq LIMIT %(after)s",
            params,
        )
        return [r[0] for r in reversed(earlier)] + [r[0] for r in later]

    # --- slots ------------------------------------------------------------------------------
    def get_slot(self, initiative_id: int, slot: str, *, for_update: bool = False) -> SlotState | None:
        row = self._one(
            "SELECT initiative_id, slot, node_id, rev_no, revision, updated_at FROM slots "
            f"WHERE initiative_id = %s AND slot = %s{self._lock(for_update)}",
            (initiative_id, slot),
        )
        return SlotState(int(row[0]), *row[1:]) if row else None

    def put_slot(self, state: SlotState) -> None:
        values = (state.initiative_id, state.slot, state.node_id, state.rev_no, state.revision, state.updated_at)
        # A free slot has no row to lock, so two writers may both see it free: the first insert wins,
        # and the second (waiting on the key, then seeing a row at the same or a later revision number)
        # updates nothing and is told that the slot moved on.
        moved = self._one(
            "INSERT INTO slots (initiative_id, slot, node_id, rev_no, revision, updated_at) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (initiative_id, slot) DO UPDATE SET "
            "node_id = EXCLUDED.node_id, rev_no = EXCLUDED.rev_no, revision = EXCLUDED.revision, "
            "updated_at = EXCLUDED.updated_at WHERE slots.rev_no < EXCLUDED.rev_no RETURNING 1",
            values,
        )
        if moved is None:
            raise SlotConflict(f"slot {state.slot!r} was taken concurrently; re-read it and retry")
        self._run(
            "INSERT INTO slot_revisions (initiative_id, slot, node_id, rev_no, revision, updated_at) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            values,
        )

    _SLOT_COLS = "initiative_id, slot, node_id, rev_no, revision, updated_at"

    def _slots(self, sql: str, params: Sequence[Any]) -> list[SlotState]:
        return [SlotState(int(r[0]), *r[1:]) for r in self._rows(sql, params)]

    def slots_held_by(self, node_id: str) -> list[SlotState]:
        return self._slots(
            f"SELECT {self._SLOT_COLS} FROM slots WHERE node_id = %s ORDER BY initiative_id, slot", (node_id,)
        )

    def slot_history(self, initiative_id: int, slot: str) -> list[SlotState]:
        return self._slots(
            f"SELECT {self._SLOT_COLS} FROM slot_revisions WHERE initiative_id = %s AND slot = %s ORDER BY rev_no",
            (initiative_id, slot),
        )

    def slots_of(self, initiative_id: int) -> list[SlotState]:
        return self._slots(
            f"SELECT {self._SLOT_COLS} FROM slots WHERE initiative_id = %s ORDER BY slot", (initiative_id,)
        )

    # --- audit ------------------------------------------------------------------------------
    def append_audit(self, record: AuditRecord) -> None:
        self._run(
            "INSERT INTO audit (at, operation, actor, request_id, initiative_id, affected, changes) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (
                record.at,
                record.operation,
                record.actor,
                record.request_id,
                record.initiative_id,
                json.dumps(record.affected),
                json.dumps(record.changes, sort_keys=True, default=str),
            ),
        )

    _AUDIT_COLS = "seq, at, operation, actor, request_id, initiative_id, affected, changes"

    @staticmethod
    def _audit(row: Sequence[Any]) -> AuditRecord:
        initiative_id = int(row[5]) if row[5] is not None else None
        return AuditRecord(row[1], row[2], row[3], row[4], initiative_id, json.loads(row[6]), json.loads(row[7]))

    def audit_records(self, initiative_ids: Sequence[int], limit: int) -> list[tuple[int, AuditRecord]]:
        if not initiative_ids:
            return []
        rows = self._rows(
            f"SELECT {self._AUDIT_COLS} FROM audit WHERE initiative_id = ANY(%s::bigint[]) ORDER BY seq DESC LIMIT %s",
            (list(initiative_ids), int(limit)),
        )
        return [(int(r[0]), self._audit(r)) for r in rows]

    def audit_by_seq(self, seqs: Sequence[int]) -> dict[int, AuditRecord]:
        if not seqs:
            return {}
        rows = self._rows(f"SELECT {self._AUDIT_COLS} FROM audit WHERE seq = ANY(%s::bigint[])", (list(seqs),))
        return {int(r[0]): self._audit(r) for r in rows}

    # --- search -----------------------------------------------------------------------------
    def _filters(self, query: SearchQuery) -> tuple[str, str, dict[str, Any]]:
        """WHERE clause for the matches, the "superseded in scope" predicate, and their params."""
        params: dict[str, Any] = {"scope": list(query.initiative_ids)}
        clauses = [
            "NOT n.retracted",
            "n.node_type <> 'audit_event'",
            "EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq AND m.initiative_id = ANY(%(scope)s::bigint[]))",
        ]
        for column, values in (
            ("node_type", query.types),
            ("tier", query.tiers),
            ("layer", query.layers),
            ("status", query.statuses),
        ):
            if values:
                clauses.append(f"n.{column} = ANY(%({column})s::text[])")
                params[column] = list(values)
        if query.tags:
            clauses.append("n.tags @> %(tags)s::text[]")
            params["tags"] = list(query.tags)
        if query.tokens:
            clauses.append(f"n.{_vector(query)} @@ %(q)s::tsquery")
            params["q"] = tsquery_literal(query.tokens, query.match_all, query.prefix, query.fields)
        superseded = (
            "EXISTS (SELECT 1 FROM edges e JOIN nodes s ON s.id = e.src JOIN memberships ms ON ms.node_seq = s.seq "
            "WHERE e.dst = n.id AND e.edge_type = 'supersedes' AND NOT e.retracted AND NOT s.retracted "
            "AND ms.initiative_id = ANY(%(scope)s::bigint[]))"
        )
        return " AND ".join(clauses), superseded, params

    def search(self, query: SearchQuery) -> tuple[list[SearchRow], int, int]:
        if not query.initiative_ids:
            return [], 0, 0
        where, superseded, params = self._filters(query)
        if query.tokens:
            select = f"SELECT n.id, n.seq, {_RANK.format(vector=_vector(query))} AS score, {_REFUTED}"
            order = "ORDER BY score DESC, n.seq DESC"
        else:
            select = f"SELECT n.id, n.seq, 0.0::float8 AS score, {_REFUTED}"
            order = "ORDER BY n.seq DESC"
        keep = f"{where} AND NOT {superseded}" if query.omit_superseded else where
        params["window"] = int(query.window)
        rows = self._rows(f"{select} FROM nodes n WHERE {keep} {order} LIMIT %(window)s", params)
        total = len(rows)
        omitted = 0
        full = total >= query.window and query.count_total
        if query.omit_superseded or full:
            # One pass counts both what was kept and what was hidden as superseded.
            flag = superseded if query.omit_superseded else "FALSE"
            counts = self._one(
                f"SELECT count(*) FILTER (WHERE NOT sup), count(*) FILTER (WHERE sup) "
                f"FROM (SELECT {flag} AS sup FROM nodes n WHERE {where}) hits",
                params,
            )
            assert counts is not None
            if full:
                total = int(counts[0])
            omitted = int(counts[1])
        if omitted and query.superseded_out is not None:
            # The best omitted matches themselves (only when some were), each placed among the rows.
            params["head"] = int(query.superseded_head)
            gone = self._rows(f"{select} FROM nodes n WHERE {where} AND {superseded} {order} LIMIT %(head)s", params)
            ranks = [(-float(r[2]), -int(r[1])) for r in rows]  # ascending in the ranking's order
            query.superseded_out.extend((bisect.bisect_left(ranks, (-float(g[2]), -int(g[1]))), g[0]) for g in gone)
        return [SearchRow(r[0], int(r[1]), float(r[2]), bool(r[3])) for r in rows], total, omitted

    def count_matches(self, query: SearchQuery) -> int:
        if not query.initiative_ids:
            return 0
        where, _, params = self._filters(query)
        row = self._one(f"SELECT count(*) FROM nodes n WHERE {where}", params)
        return int(row[0]) if row else 0

    # --- export / import -----------------------------------------------------------------------
    def _stream(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Iterator[tuple[Any, ...]]:
        """Rows of a server-side cursor, fetched in batches: an export never holds a vault in memory."""
        try:
            with self._c.cursor(name=f"kaeru_export_{secrets.token_hex(4)}") as cur:
                cur.itersize = 500
                cur.execute(sql, params)  # type: ignore[arg-type, unused-ignore]
                yield from cur
        except (psycopg.Error, UnicodeEncodeError) as exc:
            raise _translate(exc) from exc

    def export_revisions(self, initiative_ids: Sequence[int] | None) -> Iterator[RevisionEntry]:
        where = "TRUE"
        params: dict[str, Any] = {}
        if initiative_ids is not None:
            # Every node that ever belonged to one of these initiatives, with its whole history.
            where = "EXISTS (SELECT 1 FROM node_revisions x WHERE x.node_seq = n.seq AND x.initiatives && %(ids)s::bigint[])"
            params["ids"] = list(initiative_ids)
        for row in self._stream(
            f"SELECT r.node_seq, n.id, {_REV_NODE_COLS}, r.request_id, r.actor FROM nodes n "
            f"JOIN node_revisions r ON r.node_seq = n.seq WHERE {where} ORDER BY n.seq, r.rev_no",
            params,
        ):
            yield RevisionEntry(_node(row[:-2]), row[-2], row[-1])

    def export_edges(self, node_ids: set[str] | None) -> Iterator[Edge]:
        for row in self._stream(f"SELECT {_EDGE_COLS} FROM edge_revisions ORDER BY src, dst, edge_type, rev_no"):
            edge = _edge(row)
            if node_ids is None or (edge.src in node_ids and edge.dst in node_ids):
                yield edge

    @staticmethod
    def _in_scope(initiative_ids: Sequence[int] | None) -> tuple[str, dict[str, Any]]:
        if initiative_ids is None:
            return "TRUE", {}
        return "initiative_id = ANY(%(ids)s::bigint[])", {"ids": list(initiative_ids)}

    def export_slots(self, initiative_ids: Sequence[int] | None) -> Iterator[SlotState]:
        where, params = self._in_scope(initiative_ids)
        for row in self._stream(
            f"SELECT {self._SLOT_COLS} FROM slot_revisions WHERE {where} ORDER BY initiative_id, slot, rev_no", params
        ):
            yield SlotState(int(row[0]), *row[1:])

    def export_audit(self, initiative_ids: Sequence[int] | None) -> Iterator[AuditRecord]:
        where, params = self._in_scope(initiative_ids)
        for row in self._stream(f"SELECT {self._AUDIT_COLS} FROM audit WHERE {where} ORDER BY seq", params):
            yield self._audit(row)

    def restore_initiative(
        self, name: str, created_at: str, last_activity: str, properties: dict[str, Any]
    ) -> Initiative:
        existing = self.initiative_by_name(name)
        if existing is not None:
            return existing
        row = self._one(
            "INSERT INTO initiatives (name, created_at, last_activity, properties) VALUES (%s, %s, %s, %s) "
            f"ON CONFLICT (name) DO NOTHING RETURNING {_INITIATIVE_COLS}",
            (name, created_at, last_activity, json.dumps(properties, sort_keys=True)),
        )
        if row is not None:
            self._open_name(int(row[0]), name, created_at)
        if row is None:  # a concurrent creator committed it first: the same initiative
            row = self._one(f"SELECT {_INITIATIVE_COLS} FROM initiatives WHERE name = %s", (name,))
        if row is None:
            raise Unavailable(f"initiative {name!r} was created and removed concurrently; retry")
        return _initiative(row)

    def clear_slots(self, initiative_id: int) -> None:
        self._run("DELETE FROM slots WHERE initiative_id = %s", (initiative_id,))

    def restore_name_history(self, initiative_id: int, spans: Sequence[NameSpan]) -> None:
        self._run("DELETE FROM initiative_names WHERE initiative_id = %s", (initiative_id,))
        for span in spans:
            self._run(
                "INSERT INTO initiative_names (initiative_id, name, valid_from, valid_to) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (initiative_id, valid_from) DO UPDATE SET name = EXCLUDED.name, valid_to = EXCLUDED.valid_to",
                (initiative_id, span.name, span.valid_from, span.valid_to),
            )

    def restore_ended_initiative(self, ended: EndedInitiative, spans: Sequence[NameSpan]) -> tuple[int, bool]:
        row = self._one(
            "SELECT initiative_id FROM initiative_ends WHERE name = %s AND ended_at = %s ORDER BY initiative_id",
            (ended.name, ended.ended_at),
        )
        if row is not None:
            return int(row[0]), False
        # Ids of ended initiatives come from the same sequence as live ones: never reused.
        found = self._one("SELECT nextval(pg_get_serial_sequence('initiatives', 'id'))")
        assert found is not None
        initiative_id = int(found[0])
        self._run(
            "INSERT INTO initiative_ends (initiative_id, name, created_at, ended_at) VALUES (%s, %s, %s, %s)",
            (initiative_id, ended.name, ended.created_at, ended.ended_at),
        )
        self.restore_name_history(initiative_id, spans)
        return initiative_id, True

    def has_revision(self, node_id: str, rev_no: int) -> bool:
        return (
            self._one(
                "SELECT 1 FROM nodes n JOIN node_revisions r ON r.node_seq = n.seq WHERE n.id = %s AND r.rev_no = %s",
                (node_id, rev_no),
            )
            is not None
        )

    def has_edge_revision(self, src: str, dst: str, edge_type: str, rev_no: int) -> bool:
        return (
            self._one(
                "SELECT 1 FROM edge_revisions WHERE src = %s AND dst = %s AND edge_type = %s AND rev_no = %s",
                (src, dst, edge_type, rev_no),
            )
            is not None
        )

    # --- vectors ---------------------------------------------------------------------------------
    def put_vector(self, node_id: str, model: str, text_sha: str, vector: bytes) -> None:
        self._run(
            "INSERT INTO node_vectors (node_id, model, text_sha, vector) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (node_id, model) DO UPDATE SET text_sha = EXCLUDED.text_sha, vector = EXCLUDED.vector",
            (node_id, model, text_sha, vector),
        )

    def vectors(self, initiative_ids: Sequence[int], model: str) -> list[tuple[str, bytes]]:
        rows = self._rows(
            "SELECT v.node_id, v.vector FROM node_vectors v JOIN nodes n ON n.id = v.node_id "
            f"WHERE v.model = %(model)s AND NOT n.retracted AND {self._scope()}",
            {"model": model, "scope": list(initiative_ids)},
        )
        return [(r[0], bytes(r[1])) for r in rows]

    def vector_digests(self, model: str) -> dict[str, str]:
        return {r[0]: r[1] for r in self._rows("SELECT node_id, text_sha FROM node_vectors WHERE model = %s", (model,))}

    def live_node_batch(self, after_seq: int, limit: int) -> list[Node]:
        rows = self._rows(
            f"SELECT seq, id, {_NODE_COLS} FROM nodes WHERE seq > %s AND NOT retracted "
            "AND node_type <> 'audit_event' ORDER BY seq LIMIT %s",
            (after_seq, int(limit)),
        )
        return [_node(r) for r in rows]

    # --- cursors ----------------------------------------------------------------------------
    def save_cursor(self, cursor_id: str, items: list[str], now: str) -> None:
        self._run(
            "INSERT INTO cursors (id, created_at, items) VALUES (%s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at, items = EXCLUDED.items",
            (cursor_id, now, json.dumps(items)),
        )

    def load_cursor(self, cursor_id: str) -> list[str] | None:
        row = self._one("SELECT items FROM cursors WHERE id = %s", (cursor_id,))
        return list(json.loads(row[0])) if row else None

    def purge_cursors(self, before: str) -> int:
        return self._run("DELETE FROM cursors WHERE created_at < %s", (before,))

    # issue 15: tokens (helper K)
    def _token(self, row: Sequence[Any]) -> TokenRecord:
        grants = tuple(json.loads(row[2])) if row[2] is not None else None
        return TokenRecord(row[0], row[1], grants, bool(row[3]), row[4], row[5])

    def add_token(self, token: TokenRecord) -> bool:
        return bool(
            self._run(
                "INSERT INTO tokens (name, digest, initiatives, read_only, created_at, last_used) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (name) DO NOTHING",
                (
                    token.name,
                    token.digest,
                    json.dumps(list(token.initiatives)) if token.initiatives is not None else None,
                    token.read_only,
                    token.created_at,
                    token.last_used,
                ),
            )
        )

    def token_by_digest(self, digest: str) -> TokenRecord | None:
        row = self._one(
            "SELECT name, digest, initiatives, read_only, created_at, last_used FROM tokens WHERE digest = %s",
            (digest,),
        )
        return self._token(row) if row else None

    def list_tokens(self) -> list[TokenRecord]:
        rows = self._rows(
            "SELECT name, digest, initiatives, read_only, created_at, last_used FROM tokens ORDER BY name"
        )
        return [self._token(r) for r in rows]

    def delete_token(self, name: str) -> TokenRecord | None:
        row = self._one(
            "DELETE FROM tokens WHERE name = %s RETURNING name, digest, initiatives, read_only, created_at, last_used",
            (name,),
        )
        return self._token(row) if row else None

    def touch_token(self, name: str, at: str) -> None:
        self._run("UPDATE tokens SET last_used = %s WHERE name = %s", (at, name))

    def has_tokens(self) -> bool:
        return self._one("SELECT 1 FROM tokens LIMIT 1") is not None


class PostgresStore:
    """A PostgreSQL database and a pool of connections to it; migrated on construction."""

    backend = "postgres"

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 16,
        lock_timeout_ms: int = 30_000,
        connect_timeout_s: float = 30.0,
    ):
        """Open the pool and bring the schema up to date.

        Raises:
            Unavailable: the server cannot be reached (or is too busy) within `connect_timeout_s`.
            Internal: a migration failed.
        """
        self.url = url
        self._lock_timeout_ms = lock_timeout_ms
        self._pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True, "application_name": "kaeru"},
            configure=self._configure,
            timeout=connect_timeout_s,
            open=False,
            name="kaeru",
        )
        self.server_version = ""
        try:
            self._pool.open(wait=True, timeout=connect_timeout_s)
            with self._pool.connection() as conn:
                self._migrate(conn)
                version = conn.info.server_version
                self.server_version = f"{version // 10000}.{version % 10000}"
        except BaseException as exc:
            self._pool.close()
            if isinstance(exc, psycopg.Error):
                raise _translate(exc) from exc
            raise

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        """Per-connection settings: lock waits end as `Unavailable` instead of hanging a caller."""
        conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{int(self._lock_timeout_ms)}ms",))

    @staticmethod
    def _up_to_date(conn: psycopg.Connection[Any]) -> bool:
        """One read at open: True when every migration this kaeru ships is applied, the secret exists
        and no re-indexing is pending — then `_migrate` has nothing to do and takes no lock
        (decision 16.O2)."""
        try:  # the connection is in autocommit: a failed read leaves no transaction behind
            row = conn.execute(
                "SELECT (SELECT max(version) FROM schema_migrations), (SELECT count(*) FROM schema_migrations), "
                "EXISTS (SELECT 1 FROM meta WHERE key = 'secret'), "
                "EXISTS (SELECT 1 FROM meta WHERE key = 'stem_index_pending')"
            ).fetchone()
        except psycopg.errors.UndefinedTable:
            return False  # a new database: no tables yet
        newest = newest_version("kaeru.storage.postgres.migrations")
        return row is not None and row[0] == newest and row[1] == newest and bool(row[2]) and not row[3]

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        """Apply pending migrations in one transaction, serialised across processes by an advisory lock."""
        if self._up_to_date(conn):
            return
        conn.execute("BEGIN")
        try:
            # Another process may be migrating (re-stemming a big vault takes a while): wait for it
            # longer than for ordinary row locks.
            conn.execute("SET LOCAL lock_timeout = '600s'")
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at TEXT NOT NULL DEFAULT to_char(clock_timestamp() AT TIME ZONE 'UTC', "
                '\'YYYY-MM-DD"T"HH24:MI:SS.US"Z"\'))'
            )
            done = {int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations").fetchall()}
            migrations = load_migrations("kaeru.storage.postgres.migrations")
            refuse_newer(done, migrations, "PostgreSQL")
            for migration in migrations:
                if migration.version in done:
                    continue
                conn.execute(migration.sql)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                    (migration.version, migration.name),
                )
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('secret', %s) ON CONFLICT (key) DO NOTHING",
                (secrets.token_hex(32),),
            )
            if conn.execute("SELECT 1 FROM meta WHERE key = 'stem_index_pending'").fetchone():
                PostgresSession(conn, read_only=False).reindex_stems()
            conn.execute("COMMIT")
        except BaseException:
            if not conn.broken:
                conn.execute("ROLLBACK")
            raise

    def applied_migrations(self) -> list[tuple[int, str]]:
        with self.read() as session:
            rows = session._rows("SELECT version, name FROM schema_migrations ORDER BY version")
        return [(int(r[0]), str(r[1])) for r in rows]

    def _begin(self, begin: str) -> psycopg.Connection[Any]:
        """A pooled connection inside a fresh transaction; one retry when a pooled connection had died."""
        for attempt in range(2):
            try:
                conn = self._pool.getconn()
            except psycopg.Error as exc:
                raise _translate(exc) from exc
            try:
                conn.execute(begin)
                return conn
            except psycopg.Error as exc:
                broken = conn.broken
                self._pool.putconn(conn)
                if broken and attempt == 0:
                    continue  # nothing ran yet, so a new connection may safely try again
                raise _translate(exc) from exc
        raise AssertionError("unreachable")

    @contextmanager
    def _session(self, begin: str, read_only: bool) -> Iterator[PostgresSession]:
        conn = self._begin(begin)
        try:
            try:
                yield PostgresSession(conn, read_only=read_only)
            except BaseException:
                if not conn.broken:
                    try:
                        conn.execute("ROLLBACK")
                    except psycopg.Error:
                        pass  # the original error matters; the pool discards a broken connection
                raise
            try:
                conn.execute("COMMIT")
            except psycopg.Error as exc:
                raise _translate(exc) from exc
        finally:
            self._pool.putconn(conn)

    def write(self) -> AbstractContextManager[PostgresSession]:
        """One write transaction (READ COMMITTED; rows the mutation depends on are locked explicitly)."""
        return self._session(_BEGIN_WRITE, read_only=False)

    def read(self) -> AbstractContextManager[PostgresSession]:
        """One read snapshot (REPEATABLE READ READ ONLY)."""
        return self._session(_BEGIN_READ, read_only=True)

    def close(self) -> None:
        self._pool.close()

    def describe(self) -> dict[str, Any]:
        stats = self._pool.get_stats()
        return {
            "backend": self.backend,
            "url": redact_url(self.url),
            "postgresql": self.server_version,
            "pool": {"min": self._pool.min_size, "max": self._pool.max_size, "size": stats.get("pool_size", 0)},
            "pid": os.getpid(),
        }
