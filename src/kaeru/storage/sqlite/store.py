"""The SQLite backend (apsw): one vault file in WAL mode, shared safely by many processes.

Writers take `BEGIN IMMEDIATE`, so every mutation is serialised at the database (not by a process
lock) and concurrent processes wait on the busy timeout instead of failing. Readers run in a
deferred transaction, which WAL turns into a consistent snapshot.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
import zlib
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import apsw
from pydantic_core import from_json

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
from kaeru.domain.text import index_text, indexed_name, manual_tags, stem_text
from kaeru.errors import Internal, KaeruError, Unavailable
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
    chunks,
)
from kaeru.storage.migrate import VaultTooNew, load_migrations, newest_version, refuse_newer

_NODE_COLS = (
    "rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, "
    "properties, initiatives, created_at, recorded_at, retracted, pinned"
)
#: A node revision's columns from `past_revisions r` (past revisions) and from `nodes n` (the current
#: one, which lives there only: migration 010), each with its request id and actor.
_REV_R = ", ".join(f"r.{c.strip()}" for c in _NODE_COLS.split(",")) + ", r.request_id, r.actor"
_REV_N = ", ".join(f"n.{c.strip()}" for c in _NODE_COLS.split(",")) + ", n.request_id, n.actor"
_EDGE_COLS = "src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted"
#: A stored row as `_node` reads it (`seq, id, _NODE_COLS` of the join's `n`), and as many NULLs:
#: the two arms of a rare search's UNION.
_STORED_COLS = ", ".join(f"n.{c.strip()}" for c in f"seq, id, {_NODE_COLS}".split(","))
_NO_STORED_COLS = ", ".join("NULL" for _ in _STORED_COLS.split(","))
_VERDICTS = tuple(sorted(e.value for e in VERDICT_EDGES))
#: Live verdict edges `e`, written exactly as the condition of the partial index `edges_verdicts`
#: (migration 007): SQLite uses a partial index only for a query that repeats its condition.
_LIVE_VERDICT = "e.edge_type IN (" + ", ".join(f"'{v}'" for v in _VERDICTS) + ") AND e.retracted = 0"
#: Whether a live verdict edge points at `n` (its source may be retracted: a superset, never less).
_CONTESTED = f"EXISTS (SELECT 1 FROM edges e WHERE e.dst = n.id AND {_LIVE_VERDICT})"
#: Below this many matching rows, a query skips the scope term and filters by membership instead.
SCOPE_THRESHOLD = 2000
#: When the words match at most this many rows in the whole vault, the ranking joins the rows of
#: `nodes` themselves and reads their stored columns with them: the page then needs no second
#: statement (a read snapshot keeps them, `SqliteSession._stored`).
INLINE_ROWS = 32
#: The background checkpointer waits this long after a write, so bursts share one checkpoint; when
#: no write came meanwhile the vault is idle and the WAL is truncated to nothing.
CHECKPOINT_PAUSE = 2.0
#: A commit that leaves this many pages in the WAL (~4 MB) wakes the checkpointer at once, which
#: copies them so the next writer restarts the log (decision 16.I1): a busy vault's usual bound.
CHECKPOINT_PAGES = 1000
#: Whenever the log restarts, SQLite cuts the WAL file back to this size (`journal_size_limit`), so
#: a burst does not leave its high-water mark on disk.
WAL_LIMIT_BYTES = 4 * 1024 * 1024
#: A writer that leaves this many pages in the WAL (~16 MB) checkpoints it itself, so the next write
#: restarts the log: the hard bound when the background thread cannot keep up. Only a reader that
#: holds one snapshot all along can keep the log growing past it.
WAL_SAFETY_PAGES = 4000
#: How long the checkpointer waits for the write lock and for readers to move on before giving up
#: until the next round: it holds the write lock meanwhile, so writers wait at most about this long.
CHECKPOINT_BUSY_MS = 100
#: Tries to truncate an idle vault's WAL (one a pause) while another connection is in the way.
TRUNCATE_TRIES = 3


#: The join from full-text matches to their nodes, through the slim `nodes_head` index (migration
#: 005): the planner would take the rowid lookup into `nodes`, whose rows carry whole bodies.
_MATCHED_NODES = "JOIN nodes n INDEXED BY nodes_head ON n.seq = nodes_fts.rowid"
#: Whether a hit is a refuted hypothesis (a currentness tie-break of search), from `nodes_head`.
_REFUTED = f"(n.node_type = '{NodeType.HYPOTHESIS}' AND n.status = '{HypothesisStatus.REFUTED}')"
#: bm25 column weights of `nodes_fts` (name, description, body, tags, scope, then the same four as
#: stems): a literal search ranks by the literal columns, a stemmed one by the stem columns.
_LITERAL_WEIGHTS = "4.0, 2.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0"
_STEM_WEIGHTS = "0.0, 0.0, 0.0, 0.0, 0.0, 4.0, 2.0, 1.0, 2.0"


#: `json.dumps(value, sort_keys=True)` without building an encoder per call (a write stores three).
_sorted_json = json.JSONEncoder(sort_keys=True).encode
_compact_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode

#: A stored replay response (decision 16.I2): this byte, then raw deflate data (a 1 KiB window, so
#: compressing ~300 bytes takes ~10 µs) primed with `_RESPONSE_WORDS`, what most responses share.
#: Both are part of the file format: a new dictionary needs a new version byte.
_RESPONSE_V1 = b"\x01"
_RESPONSE_WORDS = (
    b'"kind":"","message":"","field":null,"code":"","state":"unchanged","name":"","initiative":"",'
    b'{"affected":[],"artifacts":[],"changes":[],"created":[{"id":"","revision":"1-"}],"evidence":[],'
    b'"failed_steps":[],"issues":[],"primary":{"id":"","revision":"1-"},"slots":[],"state":"applied"}'
)


def _pack_response(response: dict[str, Any]) -> bytes:
    packer = zlib.compressobj(1, zlib.DEFLATED, -10, 2, zdict=_RESPONSE_WORDS)
    return _RESPONSE_V1 + packer.compress(_compact_json(response).encode("utf-8")) + packer.flush()


def _unpack_response(stored: bytes | str) -> Any:
    """A stored replay response: packed, or JSON text (rows written before migration 010)."""
    if isinstance(stored, str):
        return json.loads(stored)
    if stored[:1] != _RESPONSE_V1:
        raise Internal("a stored replay response has an unknown format")
    unpacker = zlib.decompressobj(-10, zdict=_RESPONSE_WORDS)
    return json.loads(unpacker.decompress(stored[1:]) + unpacker.flush())


def _marks(n: int) -> str:
    return ",".join("?" * n)


# Row decoding runs for every node a search, read or recall shows: enum members by dict lookup
# (an Enum call costs ~1 µs) and JSON lists decoded once per distinct text (tuples are immutable).
_NODE_TYPES = {m.value: m for m in NodeType}
_TIERS = {m.value: m for m in Tier}
_LAYERS = {m.value: m for m in Layer}
_VISIBILITIES = {m.value: m for m in Visibility}


def _from_json(text: str) -> Any:
    """`json.loads`, by pydantic-core's parser (~3× faster on a tag list). That parser refuses a
    lone surrogate escape (`"\\ud800"`), which `json.dumps` writes for such a character in a tag or
    property, so those few rows are read by `json.loads`, as before."""
    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)


@lru_cache(maxsize=8192)
def _json_tuple(text: str) -> tuple[Any, ...]:
    """A JSON list that many rows share (a node's initiatives), decoded once."""
    return tuple(_from_json(text))


def _json_object(text: str) -> dict[str, Any]:
    if text == "{}":
        return {}
    value: dict[str, Any] = _from_json(text)
    return value


def _node(seq: int, node_id: str, row: Sequence[Any]) -> Node:
    (
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
    # Positional, in `Node`'s field order (keywords cost ~0.3 µs a node); tags differ from row to
    # row, so they are decoded without the memo.
    return Node(
        node_id,
        rev_no,
        revision,
        _NODE_TYPES[node_type],
        _TIERS[tier],
        name,
        body,
        description,
        tuple(_from_json(tags)),
        _LAYERS[layer],
        _VISIBILITIES[visibility],
        status,
        _json_object(properties),
        _json_tuple(initiatives),
        created_at,
        recorded_at,
        bool(retracted),
        bool(pinned),
        seq,
    )


def _edge(row: Sequence[Any]) -> Edge:
    src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted = row
    return Edge(
        src=src,
        dst=dst,
        edge_type=EdgeType(edge_type),
        weight=weight,
        rev_no=rev_no,
        properties=json.loads(properties),
        created_at=created_at,
        recorded_at=recorded_at,
        retracted=bool(retracted),
    )


#: The id a new initiative gets: past every live and ended one, so a merged-away or deleted
#: initiative's id (still named by old revisions) is never handed out again.
_NEXT_INITIATIVE_ID = (
    "SELECT max(m) + 1 FROM (SELECT coalesce(max(id), 0) AS m FROM initiatives "
    "UNION ALL SELECT coalesce(max(initiative_id), 0) FROM initiative_ends "
    "UNION ALL SELECT coalesce(max(initiative_id), 0) FROM initiative_names)"
)


def scope_tokens(initiative_ids: Sequence[int]) -> str:
    """The `scope` column of a node's index rows: one token per initiative."""
    return " ".join(f"s{i}" for i in initiative_ids)


def fts_match(
    tokens: Sequence[str],
    match_all: bool,
    prefix: bool,
    scope: Sequence[int] = (),
    fields: Sequence[str] = ("name", "description", "body", "tags"),
    stemmed: bool = False,
) -> str:
    """An FTS5 query that means exactly "these literal tokens" (or these stems, in the stem columns):
    each quoted, joined by AND/OR, limited to rows of the given initiatives (so ranking work is
    spent on the scope only)."""
    star = "*" if prefix else ""
    parts = ['"' + t.replace('"', '""') + '"' + star for t in tokens]
    columns = " ".join(("stem_" + f if stemmed else f) for f in fields if f in ("name", "description", "body", "tags"))
    words = "{" + columns + "} : (" + (" AND " if match_all else " OR ").join(parts) + ")"
    if not scope:
        return words
    return "scope : (" + " OR ".join(f'"s{int(i)}"' for i in scope) + ") AND " + words


def _translate(exc: apsw.Error) -> KaeruError:
    if isinstance(exc, apsw.BusyError | apsw.LockedError):
        return Unavailable(f"the vault is busy ({exc}); retry shortly")
    return Internal(f"storage error: {type(exc).__name__}: {exc}")


class CommonWords:
    """Word queries known to match more than SCOPE_THRESHOLD rows, so a search goes straight to the
    scoped plan instead of counting them twice first. Vaults grow, so a common query stays common;
    one that became rare again only runs the other plan, which gives the same results. Bounded:
    forgotten all at once when full."""

    def __init__(self, size: int = 4096):
        self._size = size
        self._known: set[str] = set()

    def __contains__(self, match: str) -> bool:
        return match in self._known

    def add(self, match: str) -> None:
        if len(self._known) >= self._size:
            self._known.clear()
        self._known.add(match)


class SqliteSession:
    """One transaction on one connection."""

    def __init__(
        self,
        conn: apsw.Connection,
        common: CommonWords | None = None,
        *,
        snapshot: bool = False,
        secret: bytes | None = None,
    ):
        self._c = conn
        self._common = common if common is not None else CommonWords()
        #: The vault's cursor key when the store already knows it (it never changes once written).
        self._secret = secret
        # Replay keys claimed by this transaction: (args_hash, claimed at), written with the response.
        self._claims: dict[RequestKey, tuple[str, str]] = {}
        #: A read snapshot, where nothing changes: stored rows a search has read already (seq → the
        #: `seq, id, _NODE_COLS` row, and id → seq) answer `nodes_by_seqs`/`nodes_by_ids` without SQL.
        #: Never kept in a write transaction, which could change a row after reading it.
        self._snapshot = snapshot
        self._stored: dict[int, tuple[Any, ...]] = {}
        self._stored_seqs: dict[str, int] = {}

    def _rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        return list(self._c.execute(sql, params))

    def _one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> tuple[Any, ...] | None:
        for row in self._c.execute(sql, params):
            return tuple(row)
        return None

    # --- vault metadata -------------------------------------------------------------------
    def vault_secret(self) -> bytes:
        if self._secret is not None:
            return self._secret
        row = self._one("SELECT value FROM meta WHERE key = 'secret'")
        if row is None:
            raise Internal("vault has no secret; was it migrated?")
        return bytes.fromhex(row[0])

    # --- initiatives ------------------------------------------------------------------------
    def _initiative(self, row: Sequence[Any]) -> Initiative:
        return Initiative(row[0], row[1], row[2], row[3], json.loads(row[4]))

    def initiative_by_name(self, name: str) -> Initiative | None:
        row = self._one(
            "SELECT id, name, created_at, last_activity, properties FROM initiatives WHERE name = ?", (name,)
        )
        return self._initiative(row) if row else None

    def initiative_names(self, ids: Sequence[int]) -> dict[int, str]:
        if not ids:
            return {}
        unique = sorted(set(ids))
        return dict(self._rows(f"SELECT id, name FROM initiatives WHERE id IN ({_marks(len(unique))})", unique))

    def all_initiatives(self) -> list[Initiative]:
        rows = self._rows("SELECT id, name, created_at, last_activity, properties FROM initiatives ORDER BY name")
        return [self._initiative(r) for r in rows]

    def create_initiative(self, name: str, now: str) -> Initiative:
        row = self._one(
            f"INSERT INTO initiatives (id, name, created_at, last_activity) VALUES (({_NEXT_INITIATIVE_ID}), ?, ?, ?) "
            "RETURNING id, name, created_at, last_activity, properties",
            (name, now, now),
        )
        assert row is not None
        self._c.execute(
            "INSERT INTO initiative_names (initiative_id, name, valid_from, valid_to) VALUES (?, ?, ?, NULL)",
            (row[0], name, now),
        )
        return self._initiative(row)

    def touch_initiative(self, initiative_id: int, now: str) -> None:
        self._c.execute(
            "UPDATE initiatives SET last_activity = ? WHERE id = ? AND last_activity < ?",
            (now, initiative_id, now),
        )

    def rename_initiative(self, initiative_id: int, name: str, at: str) -> None:
        self._c.execute("UPDATE initiatives SET name = ? WHERE id = ?", (name, initiative_id))
        self._c.execute(
            "UPDATE initiative_names SET valid_to = ? WHERE initiative_id = ? AND valid_to IS NULL", (at, initiative_id)
        )
        self._c.execute(
            "INSERT INTO initiative_names (initiative_id, name, valid_from, valid_to) VALUES (?, ?, ?, NULL)",
            (initiative_id, name, at),
        )

    def delete_initiative(self, initiative_id: int, at: str) -> None:
        row = self._one("SELECT name, created_at FROM initiatives WHERE id = ?", (initiative_id,))
        self._c.execute("DELETE FROM slots WHERE initiative_id = ?", (initiative_id,))
        self._c.execute("DELETE FROM initiatives WHERE id = ?", (initiative_id,))
        if row is None:
            return
        self._c.execute(
            "UPDATE initiative_names SET valid_to = ? WHERE initiative_id = ? AND valid_to IS NULL", (at, initiative_id)
        )
        self._c.execute(
            "INSERT INTO initiative_ends (initiative_id, name, created_at, ended_at) VALUES (?, ?, ?, ?)",
            (initiative_id, row[0], row[1], at),
        )

    def name_history(self, initiative_ids: Sequence[int] | None) -> dict[int, list[NameSpan]]:
        if initiative_ids is None:
            where, params = "1 = 1", []
        else:
            unique = sorted(set(initiative_ids))
            if not unique:
                return {}
            where, params = f"initiative_id IN ({_marks(len(unique))})", unique
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
            "SELECT initiative_id, name, created_at, ended_at FROM initiative_ends ORDER BY ended_at, initiative_id", ()
        )
        return [EndedInitiative(int(r[0]), r[1], r[2], r[3]) for r in rows]

    def tier_counts(self, initiative_ids: Sequence[int]) -> dict[int, dict[str, int]]:
        out: dict[int, dict[str, int]] = {i: {} for i in initiative_ids}
        if not initiative_ids:
            return out
        rows = self._rows(
            "SELECT m.initiative_id, n.tier, count(*) FROM memberships m JOIN nodes n ON n.seq = m.node_seq "
            f"WHERE m.initiative_id IN ({_marks(len(initiative_ids))}) AND n.retracted = 0 "
            "AND n.node_type NOT IN ('audit_event', 'board') GROUP BY m.initiative_id, n.tier",
            list(initiative_ids),
        )
        for initiative_id, tier, count in rows:
            out[initiative_id][tier] = int(count)
        return out

    def member_ids(self, initiative_id: int) -> list[str]:
        rows = self._rows(
            "SELECT n.id FROM memberships m JOIN nodes n ON n.seq = m.node_seq "
            "WHERE m.initiative_id = ? AND n.retracted = 0 ORDER BY n.seq",
            (initiative_id,),
        )
        return [r[0] for r in rows]

    # --- replay -----------------------------------------------------------------------------
    def begin_request(self, key: RequestKey, args_hash: str, now: str) -> StoredRequest | None:
        row = self._one(
            "SELECT args_hash, response FROM requests WHERE request_id = ? AND operation = ? AND initiative = ?",
            (key.request_id, key.operation, key.initiative),
        )
        if row is not None and row[1] is not None:
            return StoredRequest(row[0], _unpack_response(row[1]))
        # Writers are serialised by BEGIN IMMEDIATE: nobody else can claim the key before this transaction
        # ends, so the row is written once, with its response (a claim row then an update cost two writes
        # into a B-tree keyed by random ids).
        self._claims[key] = (args_hash, now)
        return None

    def finish_request(self, key: RequestKey, response: dict[str, Any]) -> None:
        args_hash, now = self._claims.pop(key)
        self._c.execute(
            "INSERT OR REPLACE INTO requests (initiative, operation, request_id, args_hash, response, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (key.initiative, key.operation, key.request_id, args_hash, _pack_response(response), now),
        )

    def purge_requests(self, before: str) -> int:
        # Rows are in the order they were written (migration 010): the purge deletes the prefix older
        # than `before`, reading only that prefix; a row written under a clock that went back waits for
        # a later purge.
        self._c.execute(
            "DELETE FROM requests WHERE seq < coalesce((SELECT seq FROM requests WHERE created_at >= ? "
            "ORDER BY seq LIMIT 1), (SELECT max(seq) + 1 FROM requests))",
            (before,),
        )
        return int(self._c.changes())

    # --- nodes ------------------------------------------------------------------------------
    def get_node(self, node_id: str, *, for_update: bool = False) -> Node | None:
        row = self._one(f"SELECT seq, id, {_NODE_COLS} FROM nodes WHERE id = ?", (node_id,))
        return _node(row[0], row[1], row[2:]) if row else None

    def nodes_by_ids(self, ids: Sequence[str]) -> dict[str, Node]:
        return self._nodes_where("id", ids)

    def nodes_by_seqs(self, seqs: Sequence[int]) -> dict[str, Node]:
        return self._nodes_where("seq", seqs)

    def _nodes_where(self, column: str, keys: Sequence[Any]) -> dict[str, Node]:
        """Current nodes whose `column` (id or seq) is one of `keys`, by id."""
        out: dict[str, Node] = {}
        wanted = list(dict.fromkeys(keys))
        if self._stored:  # rows this snapshot's search already read (decision 64)
            seqs = [self._stored_seqs.get(k) for k in wanted] if column == "id" else wanted
            rest = []
            for key, seq in zip(wanted, seqs, strict=True):
                row = self._stored.get(seq) if seq is not None else None
                if row is None:
                    rest.append(key)
                else:
                    out[row[1]] = _node(row[0], row[1], row[2:])
            wanted = rest
        for part in chunks(wanted):
            for row in self._c.execute(
                f"SELECT seq, id, {_NODE_COLS} FROM nodes WHERE {column} IN ({_marks(len(part))})", part
            ):
                out[row[1]] = _node(row[0], row[1], row[2:])
        return out

    def live_nodes_named(self, name: str, initiative_ids: Sequence[int] | None) -> list[Node]:
        sql = f"SELECT seq, id, {_NODE_COLS} FROM nodes n WHERE name = ? AND retracted = 0"
        params: list[Any] = [name]
        if initiative_ids is not None:
            sql += (
                " AND EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq "
                f"AND m.initiative_id IN ({_marks(len(initiative_ids))}))"
            )
            params.extend(initiative_ids)
        rows = self._rows(sql + " ORDER BY recorded_at DESC", params)
        return [_node(r[0], r[1], r[2:]) for r in rows]

    def name_candidates(self, wanted: str, initiative_ids: Sequence[int] | None, limit: int) -> list[str]:
        head = wanted.strip()[:3].lower()
        sql = (
            "SELECT DISTINCT name FROM nodes n WHERE retracted = 0 AND node_type <> 'audit_event' "
            "AND (lower(name) LIKE ? ESCAPE '\\' OR lower(name) LIKE ? ESCAPE '\\')"
        )
        escaped = wanted.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        head_esc = head.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        params: list[Any] = [f"%{escaped[:24]}%", f"{head_esc}%"]
        if initiative_ids is not None:
            sql += (
                " AND EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq "
                f"AND m.initiative_id IN ({_marks(len(initiative_ids))}))"
            )
            params.extend(initiative_ids)
        return [r[0] for r in self._rows(sql + f" LIMIT {int(limit)}", params)]

    def initiatives_holding_name(self, name: str) -> list[int]:
        rows = self._rows(
            "SELECT DISTINCT m.initiative_id FROM nodes n JOIN memberships m ON m.node_seq = n.seq "
            "WHERE n.name = ? AND n.retracted = 0",
            (name,),
        )
        return [r[0] for r in rows]

    def put_node(self, node: Node, *, request_id: str | None, actor: str) -> None:
        values = (
            node.rev_no,
            node.revision,
            node.node_type.value,
            node.tier.value,
            node.name,
            node.body,
            node.description,
            json.dumps(list(node.tags)),
            node.layer.value,
            node.visibility.value,
            node.status,
            _sorted_json(node.properties),
            json.dumps(list(node.initiatives)),
            node.created_at,
            node.recorded_at,
            int(node.retracted),
            int(node.pinned),
        )
        existing = self._one("SELECT seq, initiatives, retracted FROM nodes WHERE id = ?", (node.id,))
        if existing is None:
            row = self._one(
                f"INSERT INTO nodes (id, {_NODE_COLS}, request_id, actor) "
                f"VALUES (?, {_marks(len(values))}, ?, ?) RETURNING seq",
                (node.id, *values, request_id, actor),
            )
            assert row is not None
            seq = int(row[0])
            old_members: set[int] = set()
            was_indexed = False
        else:
            seq = int(existing[0])
            old_members = set(json.loads(existing[1])) if not existing[2] else set()
            was_indexed = not existing[2]
            # The revision the node moves past joins its history; the new one lives in `nodes` only.
            self._c.execute(
                f"INSERT INTO past_revisions (node_seq, {_NODE_COLS}, request_id, actor) "
                f"SELECT seq, {_NODE_COLS}, request_id, actor FROM nodes WHERE seq = ?",
                (seq,),
            )
            assignments = ", ".join(f"{c.strip()} = ?" for c in _NODE_COLS.split(","))
            self._c.execute(
                f"UPDATE nodes SET {assignments}, request_id = ?, actor = ? WHERE seq = ?",
                (*values, request_id, actor, seq),
            )
        new_members = set() if node.retracted else set(node.initiatives)
        for gone in old_members - new_members:
            self._c.execute("DELETE FROM memberships WHERE initiative_id = ? AND node_seq = ?", (gone, seq))
        for added in new_members - old_members:
            self._c.execute("INSERT OR IGNORE INTO memberships VALUES (?, ?)", (added, seq))
        if was_indexed:
            self._c.execute("DELETE FROM nodes_fts WHERE rowid = ?", (seq,))
        if not node.retracted:
            self._index(seq, node)

    def _index(self, seq: int, node: Node) -> None:
        """One row of the full-text index: literal words (search) and their stems (recall)."""
        name = indexed_name(node)
        self._c.execute(
            "INSERT INTO nodes_fts (rowid, name, description, body, tags, scope, stem_name, stem_description, "
            "stem_body, stem_tags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                seq,
                index_text(name),
                index_text(node.description),
                index_text(node.body),
                index_text(" ".join(node.tags)),
                scope_tokens(node.initiatives),
                stem_text(name),
                stem_text(node.description),
                stem_text(node.body),
                stem_text(manual_tags(node.tags)),
            ),
        )

    def reindex_text(self) -> int:
        """Fill the full-text index for every live node (after a migration that rebuilt it)."""
        self._c.execute("DELETE FROM nodes_fts")
        count = 0
        for row in list(self._c.execute(f"SELECT seq, id, {_NODE_COLS} FROM nodes WHERE retracted = 0")):
            self._index(int(row[0]), _node(row[0], row[1], row[2:]))
            count += 1
        self._c.execute("DELETE FROM meta WHERE key = 'stem_index_pending'")
        return count

    def node_at(self, node_id: str, moment: str) -> Node | None:
        # The current revision (in `nodes`) has the highest rev_no; recorded_at grows with rev_no.
        row = self._one(
            f"SELECT n.seq, n.id, {_REV_N} FROM nodes n WHERE n.id = ? AND n.recorded_at <= ? "
            f"UNION ALL SELECT * FROM (SELECT r.node_seq, n.id, {_REV_R} FROM nodes n "
            "JOIN past_revisions r ON r.node_seq = n.seq WHERE n.id = ? AND r.recorded_at <= ? "
            "ORDER BY r.rev_no DESC LIMIT 1) LIMIT 1",
            (node_id, moment, node_id, moment),
        )
        return _node(row[0], row[1], row[2:-2]) if row else None

    def revision_log(self, node_id: str) -> list[RevisionEntry]:
        rows = self._rows(
            f"SELECT * FROM (SELECT r.node_seq, n.id, {_REV_R} FROM nodes n JOIN past_revisions r "
            "ON r.node_seq = n.seq WHERE n.id = ? ORDER BY r.rev_no) "
            f"UNION ALL SELECT n.seq, n.id, {_REV_N} FROM nodes n WHERE n.id = ?",
            (node_id, node_id),
        )
        return [RevisionEntry(_node(r[0], r[1], r[2:-2]), r[-2], r[-1]) for r in rows]

    # --- edges ------------------------------------------------------------------------------
    def get_edge(self, src: str, dst: str, edge_type: EdgeType) -> Edge | None:
        row = self._one(
            f"SELECT {_EDGE_COLS} FROM edges WHERE src = ? AND dst = ? AND edge_type = ?",
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
            _sorted_json(edge.properties),
            edge.created_at,
            edge.recorded_at,
            int(edge.retracted),
        )
        self._c.execute(f"INSERT OR REPLACE INTO edges ({_EDGE_COLS}) VALUES ({_marks(9)})", values)
        self._c.execute(
            "INSERT INTO edge_revisions (src, dst, edge_type, weight, rev_no, properties, created_at, "
            f"recorded_at, retracted) VALUES ({_marks(9)})",
            values,
        )

    def live_edges(self, node_ids: Sequence[str]) -> list[Edge]:
        out: list[Edge] = []
        for part in chunks(list(dict.fromkeys(node_ids))):
            m = _marks(len(part))
            out.extend(
                _edge(r)
                for r in self._c.execute(
                    f"SELECT {_EDGE_COLS} FROM edges WHERE retracted = 0 AND src IN ({m}) "
                    f"UNION SELECT {_EDGE_COLS} FROM edges WHERE retracted = 0 AND dst IN ({m})",
                    (*part, *part),
                )
            )
        unique = {e.key: e for e in out}
        return [unique[k] for k in sorted(unique)]

    def verdicts_against(self, node_ids: Sequence[str]) -> dict[str, list[tuple[str, EdgeType]]]:
        out: dict[str, list[tuple[str, EdgeType]]] = {}
        for part in chunks(list(dict.fromkeys(node_ids))):
            rows = self._rows(
                "SELECT e.dst, e.src, e.edge_type FROM edges e JOIN nodes s ON s.id = e.src "
                f"WHERE e.dst IN ({_marks(len(part))}) AND {_LIVE_VERDICT} AND s.retracted = 0",
                part,
            )
            for dst, src, edge_type in rows:
                out.setdefault(dst, []).append((src, EdgeType(edge_type)))
        return out

    def _edges_as_of(self, where: str, params: Sequence[Any], moment: str) -> list[Edge]:
        rows = self._rows(
            f"SELECT {_EDGE_COLS} FROM edge_revisions r WHERE {where} AND recorded_at <= ? AND rev_no = ("
            "SELECT max(rev_no) FROM edge_revisions x WHERE x.src = r.src AND x.dst = r.dst "
            "AND x.edge_type = r.edge_type AND x.recorded_at <= ?)",
            (*params, moment, moment),
        )
        return [e for e in (_edge(r) for r in rows) if not e.retracted]

    def _live_at(self, node_ids: Sequence[str], moment: str) -> set[str]:
        live: set[str] = set()
        for part in chunks(list(dict.fromkeys(node_ids))):
            # The revision in force at `moment`: the current one (in `nodes`) if recorded by then, else
            # the latest past one recorded by then (none: the node did not exist yet).
            rows = self._c.execute(
                "SELECT n.id, CASE WHEN n.recorded_at <= ? THEN n.retracted ELSE (SELECT r.retracted "
                "FROM past_revisions r WHERE r.node_seq = n.seq AND r.recorded_at <= ? ORDER BY r.rev_no DESC "
                f"LIMIT 1) END FROM nodes n WHERE n.id IN ({_marks(len(part))})",
                (moment, moment, *part),
            )
            live.update(node_id for node_id, retracted in rows if retracted == 0)
        return live

    def verdicts_against_at(self, node_ids: Sequence[str], moment: str) -> dict[str, list[tuple[str, EdgeType]]]:
        out: dict[str, list[tuple[str, EdgeType]]] = {}
        edges: list[Edge] = []
        for part in chunks(list(dict.fromkeys(node_ids))):
            edges.extend(
                self._edges_as_of(
                    f"dst IN ({_marks(len(part))}) AND edge_type IN ({_marks(len(_VERDICTS))})",
                    (*part, *_VERDICTS),
                    moment,
                )
            )
        live_sources = self._live_at([e.src for e in edges], moment)
        for edge in edges:
            if edge.src in live_sources:
                out.setdefault(edge.dst, []).append((edge.src, edge.edge_type))
        return out

    def edges_at(self, node_ids: Sequence[str], moment: str) -> list[Edge]:
        found: dict[tuple[str, str, str], Edge] = {}
        for part in chunks(list(dict.fromkeys(node_ids))):
            m = _marks(len(part))
            for edge in (
                *self._edges_as_of(f"src IN ({m})", part, moment),
                *self._edges_as_of(f"dst IN ({m})", part, moment),
            ):
                found[edge.key] = edge
        return [found[k] for k in sorted(found)]

    def edge_log(self, node_ids: Sequence[str]) -> list[Edge]:
        found: dict[tuple[str, str, str, int], Edge] = {}
        for part in chunks(list(dict.fromkeys(node_ids))):
            m = _marks(len(part))
            rows = self._c.execute(
                f"SELECT {_EDGE_COLS} FROM edge_revisions WHERE src IN ({m}) "
                f"UNION SELECT {_EDGE_COLS} FROM edge_revisions WHERE dst IN ({m})",
                (*part, *part),
            )
            for row in rows:
                edge = _edge(row)
                found[(*edge.key, edge.rev_no)] = edge
        return sorted(found.values(), key=lambda e: (e.recorded_at, e.key, e.rev_no))

    def _scope(self, initiative_ids: Sequence[int], alias: str = "n") -> tuple[str, list[Any]]:
        return (
            f"EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = {alias}.seq "
            f"AND m.initiative_id IN ({_marks(len(initiative_ids))}))",
            list(initiative_ids),
        )

    def nodes_with_property(self, initiative_ids: Sequence[int], key: str) -> list[str]:
        scope, params = self._scope(initiative_ids)
        rows = self._rows(
            f"SELECT n.id FROM nodes n WHERE n.retracted = 0 AND json_type(n.properties, ?) IS NOT NULL AND {scope} "
            "ORDER BY n.seq",
            ["$." + key, *params],
        )
        return [r[0] for r in rows]

    def inbound(self, initiative_ids: Sequence[int], edge_types: Sequence[str]) -> dict[str, list[Edge]]:
        scope, params = self._scope(initiative_ids, "t")
        rows = self._rows(
            f"SELECT {', '.join('e.' + c.strip() for c in _EDGE_COLS.split(','))} FROM edges e "
            "JOIN nodes t ON t.id = e.dst JOIN nodes s ON s.id = e.src "
            f"WHERE e.retracted = 0 AND e.edge_type IN ({_marks(len(edge_types))}) AND t.retracted = 0 "
            f"AND s.retracted = 0 AND {scope}",
            [*edge_types, *params],
        )
        out: dict[str, list[Edge]] = {}
        for row in rows:
            edge = _edge(row)
            out.setdefault(edge.dst, []).append(edge)
        return out

    def orphans(self, initiative_ids: Sequence[int], limit: int) -> list[str]:
        scope, params = self._scope(initiative_ids)
        rows = self._rows(
            "SELECT n.id FROM nodes n WHERE n.retracted = 0 AND n.node_type NOT IN ('audit_event', 'board') "
            f"AND {scope} AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.retracted = 0 AND e.src = n.id) "
            "AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.retracted = 0 AND e.dst = n.id) "
            f"ORDER BY n.seq LIMIT {int(limit)}",
            params,
        )
        return [r[0] for r in rows]

    def dangling_edges(self, initiative_ids: Sequence[int], limit: int) -> list[Edge]:
        scope, params = self._scope(initiative_ids, "a")
        cols = ", ".join("e." + c.strip() for c in _EDGE_COLS.split(","))
        rows = self._rows(
            f"SELECT {cols} FROM edges e JOIN nodes a ON a.id = e.src JOIN nodes b ON b.id = e.dst "
            f"WHERE e.retracted = 0 AND a.retracted = 0 AND b.retracted = 1 AND {scope} "
            f"UNION SELECT {cols} FROM edges e JOIN nodes a ON a.id = e.dst JOIN nodes b ON b.id = e.src "
            f"WHERE e.retracted = 0 AND a.retracted = 0 AND b.retracted = 1 AND {scope} LIMIT {int(limit)}",
            [*params, *params],
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
        scope, params = self._scope(initiative_ids)
        base = f"FROM nodes n WHERE n.retracted = 0 AND n.node_type NOT IN ('audit_event', 'board') AND {scope}"
        window: list[Any] = []
        if since:
            base += " AND n.created_at >= ?"
            window.append(since)
        if until:
            base += " AND n.created_at <= ?"
            window.append(until)
        if pivot is None:
            rows = self._rows(f"SELECT n.id {base} ORDER BY n.created_at, n.seq LIMIT {int(after)}", [*params, *window])
            return [r[0] for r in rows]
        earlier = self._rows(
            f"SELECT n.id {base} AND (n.created_at, n.seq) < (?, ?) "
            f"ORDER BY n.created_at DESC, n.seq DESC LIMIT {int(before)}",
            [*params, *window, pivot[0], pivot[1]],
        )
        later = self._rows(
            f"SELECT n.id {base} AND (n.created_at, n.seq) >= (?, ?) "
            f"ORDER BY n.created_at, n.seq LIMIT {int(after) + 1}",
            [*params, *window, pivot[0], pivot[1]],
        )
        return [r[0] for r in reversed(earlier)] + [r[0] for r in later]

    # --- slots ------------------------------------------------------------------------------
    def get_slot(self, initiative_id: int, slot: str, *, for_update: bool = False) -> SlotState | None:
        row = self._one(
            "SELECT initiative_id, slot, node_id, rev_no, revision, updated_at FROM slots "
            "WHERE initiative_id = ? AND slot = ?",
            (initiative_id, slot),
        )
        return SlotState(*row) if row else None

    def put_slot(self, state: SlotState) -> None:
        values = (
            state.initiative_id,
            state.slot,
            state.node_id,
            state.rev_no,
            state.revision,
            state.updated_at,
        )
        self._c.execute("INSERT OR REPLACE INTO slots VALUES (?, ?, ?, ?, ?, ?)", values)
        self._c.execute(
            "INSERT INTO slot_revisions (initiative_id, slot, node_id, rev_no, revision, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            values,
        )

    def _slot_rows(self, sql: str, params: Sequence[Any]) -> list[SlotState]:
        return [SlotState(*row) for row in self._rows(sql, params)]

    def slots_held_by(self, node_id: str) -> list[SlotState]:
        return self._slot_rows(
            "SELECT initiative_id, slot, node_id, rev_no, revision, updated_at FROM slots WHERE node_id = ?",
            (node_id,),
        )

    def slot_history(self, initiative_id: int, slot: str) -> list[SlotState]:
        return self._slot_rows(
            "SELECT initiative_id, slot, node_id, rev_no, revision, updated_at FROM slot_revisions "
            "WHERE initiative_id = ? AND slot = ? ORDER BY rev_no",
            (initiative_id, slot),
        )

    def slots_of(self, initiative_id: int) -> list[SlotState]:
        return self._slot_rows(
            "SELECT initiative_id, slot, node_id, rev_no, revision, updated_at FROM slots "
            "WHERE initiative_id = ? ORDER BY slot",
            (initiative_id,),
        )

    # --- audit ------------------------------------------------------------------------------
    def append_audit(self, record: AuditRecord) -> None:
        self._c.execute(
            "INSERT INTO audit (at, operation, actor, request_id, initiative_id, affected, changes) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
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

    def _audit(self, row: Sequence[Any]) -> AuditRecord:
        return AuditRecord(row[1], row[2], row[3], row[4], row[5], json.loads(row[6]), json.loads(row[7]))

    def audit_records(self, initiative_ids: Sequence[int], limit: int) -> list[tuple[int, AuditRecord]]:
        if not initiative_ids:
            return []
        rows = self._rows(
            "SELECT seq, at, operation, actor, request_id, initiative_id, affected, changes FROM audit "
            f"WHERE initiative_id IN ({_marks(len(initiative_ids))}) ORDER BY seq DESC LIMIT {int(limit)}",
            list(initiative_ids),
        )
        return [(int(r[0]), self._audit(r)) for r in rows]

    def audit_by_seq(self, seqs: Sequence[int]) -> dict[int, AuditRecord]:
        if not seqs:
            return {}
        rows = self._rows(
            "SELECT seq, at, operation, actor, request_id, initiative_id, affected, changes FROM audit "
            f"WHERE seq IN ({_marks(len(seqs))})",
            list(seqs),
        )
        return {int(r[0]): self._audit(r) for r in rows}

    # --- search -----------------------------------------------------------------------------
    def _filters(self, query: SearchQuery) -> tuple[str, list[Any], str, list[Any]]:
        """WHERE clause and params for the matches, and the "superseded in scope" predicate."""
        scope = _marks(len(query.initiative_ids))
        clauses = [
            "n.retracted = 0",
            "n.node_type <> 'audit_event'",
            f"EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq AND m.initiative_id IN ({scope}))",
        ]
        params: list[Any] = list(query.initiative_ids)
        for column, values in (
            ("node_type", query.types),
            ("tier", query.tiers),
            ("layer", query.layers),
            ("status", query.statuses),
        ):
            if values:
                clauses.append(f"n.{column} IN ({_marks(len(values))})")
                params.extend(values)
        for tag in query.tags:
            clauses.append("EXISTS (SELECT 1 FROM json_each(n.tags) t WHERE t.value = ?)")
            params.append(tag)
        superseded = (
            "EXISTS (SELECT 1 FROM edges e JOIN nodes s ON s.id = e.src JOIN memberships ms ON ms.node_seq = s.seq "
            f"WHERE e.dst = n.id AND {_LIVE_VERDICT} AND e.edge_type = '{EdgeType.SUPERSEDES}' AND s.retracted = 0 "
            f"AND ms.initiative_id IN ({scope}))"
        )
        return " AND ".join(clauses), params, superseded, list(query.initiative_ids)

    def _matches_at_most(self, match: str, cap: int) -> bool:
        """Whether at most `cap` rows match `match` across the whole vault (an unranked probe).

        Walking the doclists without ranking stops after `cap + 1` rows: ~30 µs for rare words at
        100k nodes, where reading fts5vocab cost 150–800 µs a term.
        """
        row = self._one(
            "SELECT count(*) FROM (SELECT 1 FROM nodes_fts WHERE nodes_fts MATCH ? LIMIT ?)", (match, cap + 1)
        )
        return row is not None and int(row[0]) <= cap

    @staticmethod
    def _match(query: SearchQuery, scoped: bool) -> str:
        """`query`'s MATCH string: its words alone, or intersected with its initiatives' scope tokens."""
        scope = query.initiative_ids if scoped else ()
        return fts_match(query.tokens, query.match_all, query.prefix, scope, query.fields, query.stemmed)

    def _is_rare(self, bare: str) -> bool:
        """Whether the words of `bare` match at most SCOPE_THRESHOLD rows; a common answer is
        remembered (`CommonWords`), so the next search of these words skips the count."""
        if bare in self._common:
            return False
        if self._matches_at_most(bare, SCOPE_THRESHOLD):
            return True
        self._common.add(bare)
        return False

    def _planned_match(self, query: SearchQuery) -> str:
        """Rare words: match them alone and filter by membership (fast). Common words: let the index
        intersect them with the initiative's scope token, so ranking only touches the scope's rows."""
        bare = self._match(query, scoped=False)
        return bare if self._is_rare(bare) else self._match(query, scoped=True)

    def _search_rare(
        self, query: SearchQuery, weights: str, where: str, params: list[Any], superseded: str, sup_params: list[Any]
    ) -> tuple[list[SearchRow], int, int] | None:
        """The search when its words match at most SCOPE_THRESHOLD rows in the whole vault: counted up
        to the cap, then ranked and filtered by membership, in one statement. None when the words are
        more common than that (the caller then lets the index intersect them with the scope)."""
        bare = self._match(query, scoped=False)
        if bare in self._common:
            return None
        gone, gone_params = (superseded, sup_params) if query.omit_superseded else ("0", [])
        flags = f"{_REFUTED}, {gone}, {_CONTESTED}"
        # `m` ranks the first matches, up to one more than INLINE_ROWS, in one pass over the index;
        # when they are all there are (`k`), they are joined to `nodes` itself and bring their
        # stored columns, the page's nodes — one full-text pass for the whole search. Otherwise `c`
        # counts the matches up to the cap without ranking them, and only under the cap does the
        # second arm rank them again and filter them through the slim `nodes_head`. `k` and `c`
        # are the outer loops of their arms, so `c` is never counted for a small search.
        inline = INLINE_ROWS if self._snapshot else 0
        rows = self._rows(
            f"WITH m AS MATERIALIZED (SELECT rowid AS seq, bm25(nodes_fts, {weights}) AS score FROM nodes_fts "
            f"WHERE nodes_fts MATCH ?1 LIMIT {inline + 1}), k AS MATERIALIZED (SELECT count(*) AS n FROM m), "
            "c AS MATERIALIZED (SELECT count(*) AS n FROM "
            f"(SELECT 1 FROM nodes_fts WHERE nodes_fts MATCH ?1 LIMIT {SCOPE_THRESHOLD + 1})) "
            f"SELECT n.id, n.seq, m.score AS score, {flags}, {_STORED_COLS} "
            f"FROM k CROSS JOIN m CROSS JOIN nodes n ON n.seq = m.seq WHERE k.n <= {inline} AND {where} UNION ALL "
            f"SELECT n.id, n.seq, bm25(nodes_fts, {weights}) AS score, {flags}, {_NO_STORED_COLS} "
            f"FROM k CROSS JOIN c CROSS JOIN nodes_fts {_MATCHED_NODES} "
            f"WHERE k.n > {inline} AND c.n <= {SCOPE_THRESHOLD} AND nodes_fts MATCH ?1 AND {where} "
            "ORDER BY score, n.seq DESC",
            [bare, *gone_params, *params, *gone_params, *params],  # each arm binds its own
        )
        if not rows and not self._is_rare(bare):
            return None
        kept = [SearchRow(r[0], r[1], r[2], bool(r[3]), bool(r[5])) for r in rows if not r[4]]
        _note_superseded(query, [(r[0], bool(r[4])) for r in rows])
        for r in rows:
            if r[6] is not None:
                self._stored[r[1]] = r[6:]
                self._stored_seqs[r[0]] = r[1]
        return kept[: query.window], len(kept), len(rows) - len(kept)

    def search(self, query: SearchQuery) -> tuple[list[SearchRow], int, int]:
        where, params, superseded, sup_params = self._filters(query)
        if query.tokens:
            weights = _STEM_WEIGHTS if query.stemmed else _LITERAL_WEIGHTS
            rare = self._search_rare(query, weights, where, params, superseded, sup_params)
            if rare is not None:
                return rare
            match = self._match(query, scoped=True)
            source = f"FROM nodes_fts {_MATCHED_NODES} WHERE nodes_fts MATCH ? AND "
            head: list[Any] = [match]
            columns = f"n.id, n.seq, bm25(nodes_fts, {weights}) AS score, {_REFUTED}"
            order = "ORDER BY score, n.seq DESC"
        else:
            source = "FROM nodes n WHERE "
            head = []
            columns = f"n.id, n.seq, 0.0 AS score, {_REFUTED}"
            order = "ORDER BY n.seq DESC"
        if not query.omit_superseded:
            rows = self._rows(f"SELECT {columns} {source}{where} {order} LIMIT {int(query.window)}", [*head, *params])
            total = len(rows)
            if len(rows) == query.window and query.count_total:
                count = self._one(f"SELECT count(*) {source}{where}", [*head, *params])
                total = int(count[0]) if count else 0
            return [SearchRow(r[0], r[1], r[2], bool(r[3])) for r in rows], total, 0
        # One pass flags superseded rows instead of a second query counting them.
        limit = int(query.window) * 2
        flagged = self._rows(
            f"SELECT {columns}, {superseded} AS gone {source}{where} {order} LIMIT {limit}",
            [*sup_params, *head, *params],
        )
        kept = [r for r in flagged if not r[4]]
        omitted = len(flagged) - len(kept)
        _note_superseded(query, [(r[0], bool(r[4])) for r in flagged])
        total = len(kept)
        if len(flagged) == limit or len(kept) > query.window:
            if query.count_total:
                # One more pass over the matches counts both the kept and the superseded.
                counts = self._one(
                    f"SELECT count(*), coalesce(sum({superseded}), 0) {source}{where}",
                    [*sup_params, *head, *params],
                )
                matched, omitted = (int(counts[0]), int(counts[1])) if counts else (0, 0)
                total = matched - omitted
            kept = kept[: query.window]
        return [SearchRow(r[0], r[1], r[2], bool(r[3])) for r in kept], total, omitted

    def count_matches(self, query: SearchQuery) -> int:
        where, params, _, _ = self._filters(query)
        if not query.tokens:
            row = self._one(f"SELECT count(*) FROM nodes n WHERE {where}", params)
            return int(row[0]) if row else 0
        match = self._planned_match(query)
        row = self._one(
            f"SELECT count(*) FROM nodes_fts {_MATCHED_NODES} WHERE nodes_fts MATCH ? AND {where}",
            [match, *params],
        )
        return int(row[0]) if row else 0

    # --- export / import -----------------------------------------------------------------------
    def _scope_clause(self, initiative_ids: Sequence[int] | None, column: str) -> tuple[str, list[Any]]:
        if initiative_ids is None:
            return "1 = 1", []
        return f"{column} IN ({_marks(len(initiative_ids))})", list(initiative_ids)

    def export_revisions(self, initiative_ids: Sequence[int] | None) -> Iterator[RevisionEntry]:
        if initiative_ids is None:
            where, params = "1 = 1", []
        else:
            marks = _marks(len(initiative_ids))
            where = (
                f"(EXISTS (SELECT 1 FROM json_each(n.initiatives) j WHERE j.value IN ({marks})) OR "
                "EXISTS (SELECT 1 FROM past_revisions x, json_each(x.initiatives) j WHERE x.node_seq = n.seq "
                f"AND j.value IN ({marks})))"
            )
            params = [*initiative_ids, *initiative_ids]
        # Past revisions (`past_revisions`) and the current one (`nodes`): nodes in the order the vault
        # recorded them (an import reproduces it), each node's revisions in rev_no order.
        sql = (
            f"SELECT n.seq AS node_order, r.node_seq, n.id, {_REV_R} FROM nodes n "
            f"JOIN past_revisions r ON r.node_seq = n.seq WHERE {where} "
            f"UNION ALL SELECT n.seq, n.seq, n.id, {_REV_N} FROM nodes n WHERE {where} "
            "ORDER BY node_order, rev_no"
        )
        for row in self._c.execute(sql, [*params, *params]):
            yield RevisionEntry(_node(row[1], row[2], row[3:-2]), row[-2], row[-1])

    def export_edges(self, node_ids: set[str] | None) -> Iterator[Edge]:
        sql = (
            "SELECT src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted "
            "FROM edge_revisions ORDER BY src, dst, edge_type, rev_no"
        )
        for row in self._c.execute(sql):
            edge = _edge(row)
            if node_ids is None or (edge.src in node_ids and edge.dst in node_ids):
                yield edge

    def export_slots(self, initiative_ids: Sequence[int] | None) -> Iterator[SlotState]:
        where, params = self._scope_clause(initiative_ids, "initiative_id")
        for row in self._c.execute(
            "SELECT initiative_id, slot, node_id, rev_no, revision, updated_at FROM slot_revisions "
            f"WHERE {where} ORDER BY initiative_id, slot, rev_no",
            params,
        ):
            yield SlotState(*row)

    def export_audit(self, initiative_ids: Sequence[int] | None) -> Iterator[AuditRecord]:
        where, params = self._scope_clause(initiative_ids, "initiative_id")
        for row in self._c.execute(
            f"SELECT seq, at, operation, actor, request_id, initiative_id, affected, changes FROM audit WHERE {where} "
            "ORDER BY seq",
            params,
        ):
            yield self._audit(row)

    def restore_initiative(
        self, name: str, created_at: str, last_activity: str, properties: dict[str, Any]
    ) -> Initiative:
        existing = self.initiative_by_name(name)
        if existing is not None:
            return existing
        row = self._one(
            f"INSERT INTO initiatives (id, name, created_at, last_activity, properties) "
            f"VALUES (({_NEXT_INITIATIVE_ID}), ?, ?, ?, ?) RETURNING id, name, created_at, last_activity, properties",
            (name, created_at, last_activity, _sorted_json(properties)),
        )
        assert row is not None
        self._c.execute(
            "INSERT INTO initiative_names (initiative_id, name, valid_from, valid_to) VALUES (?, ?, ?, NULL)",
            (row[0], name, created_at),
        )
        return self._initiative(row)

    def clear_slots(self, initiative_id: int) -> None:
        self._c.execute("DELETE FROM slots WHERE initiative_id = ?", (initiative_id,))

    def restore_name_history(self, initiative_id: int, spans: Sequence[NameSpan]) -> None:
        self._c.execute("DELETE FROM initiative_names WHERE initiative_id = ?", (initiative_id,))
        for span in spans:
            self._c.execute(
                "INSERT OR REPLACE INTO initiative_names (initiative_id, name, valid_from, valid_to) VALUES (?, ?, ?, ?)",
                (initiative_id, span.name, span.valid_from, span.valid_to),
            )

    def restore_ended_initiative(self, ended: EndedInitiative, spans: Sequence[NameSpan]) -> tuple[int, bool]:
        row = self._one(
            "SELECT initiative_id FROM initiative_ends WHERE name = ? AND ended_at = ? ORDER BY initiative_id",
            (ended.name, ended.ended_at),
        )
        if row is not None:
            return int(row[0]), False
        found = self._one(_NEXT_INITIATIVE_ID)
        assert found is not None
        initiative_id = int(found[0])
        self._c.execute(
            "INSERT INTO initiative_ends (initiative_id, name, created_at, ended_at) VALUES (?, ?, ?, ?)",
            (initiative_id, ended.name, ended.created_at, ended.ended_at),
        )
        self.restore_name_history(initiative_id, spans)
        return initiative_id, True

    def has_revision(self, node_id: str, rev_no: int) -> bool:
        return (
            self._one(
                "SELECT 1 FROM nodes n WHERE n.id = ? AND (n.rev_no = ? OR EXISTS (SELECT 1 FROM past_revisions r "
                "WHERE r.node_seq = n.seq AND r.rev_no = ?))",
                (node_id, rev_no, rev_no),
            )
            is not None
        )

    def has_edge_revision(self, src: str, dst: str, edge_type: str, rev_no: int) -> bool:
        return (
            self._one(
                "SELECT 1 FROM edge_revisions WHERE src = ? AND dst = ? AND edge_type = ? AND rev_no = ?",
                (src, dst, edge_type, rev_no),
            )
            is not None
        )

    # --- vectors ---------------------------------------------------------------------------------
    def put_vector(self, node_id: str, model: str, text_sha: str, vector: bytes) -> None:
        self._c.execute(
            "INSERT OR REPLACE INTO node_vectors (node_id, model, text_sha, vector) VALUES (?, ?, ?, ?)",
            (node_id, model, text_sha, vector),
        )

    def vectors(self, initiative_ids: Sequence[int], model: str) -> list[tuple[str, bytes]]:
        scope, params = self._scope(initiative_ids)
        rows = self._rows(
            f"SELECT v.node_id, v.vector FROM node_vectors v JOIN nodes n ON n.id = v.node_id "
            f"WHERE v.model = ? AND n.retracted = 0 AND {scope}",
            [model, *params],
        )
        return [(r[0], bytes(r[1])) for r in rows]

    def vector_digests(self, model: str) -> dict[str, str]:
        return dict(self._rows("SELECT node_id, text_sha FROM node_vectors WHERE model = ?", (model,)))

    def live_node_batch(self, after_seq: int, limit: int) -> list[Node]:
        rows = self._rows(
            f"SELECT seq, id, {_NODE_COLS} FROM nodes WHERE seq > ? AND retracted = 0 AND node_type <> 'audit_event' "
            f"ORDER BY seq LIMIT {int(limit)}",
            (after_seq,),
        )
        return [_node(r[0], r[1], r[2:]) for r in rows]

    # --- cursors ----------------------------------------------------------------------------
    def save_cursor(self, cursor_id: str, items: list[str], now: str) -> None:
        self._c.execute(
            "INSERT OR REPLACE INTO cursors (id, created_at, items) VALUES (?, ?, ?)",
            (cursor_id, now, json.dumps(items)),
        )

    def load_cursor(self, cursor_id: str) -> list[str] | None:
        row = self._one("SELECT items FROM cursors WHERE id = ?", (cursor_id,))
        return list(json.loads(row[0])) if row else None

    def purge_cursors(self, before: str) -> int:
        self._c.execute("DELETE FROM cursors WHERE created_at < ?", (before,))
        return int(self._c.changes())

    # issue 15: tokens (helper K)
    def _token(self, row: Sequence[Any]) -> TokenRecord:
        grants = tuple(json.loads(row[2])) if row[2] is not None else None
        return TokenRecord(row[0], row[1], grants, bool(row[3]), row[4], row[5])

    def add_token(self, token: TokenRecord) -> bool:
        self._c.execute(
            "INSERT INTO tokens (name, digest, initiatives, read_only, created_at, last_used) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
            (
                token.name,
                token.digest,
                json.dumps(list(token.initiatives)) if token.initiatives is not None else None,
                int(token.read_only),
                token.created_at,
                token.last_used,
            ),
        )
        return bool(self._c.changes())

    def token_by_digest(self, digest: str) -> TokenRecord | None:
        row = self._one(
            "SELECT name, digest, initiatives, read_only, created_at, last_used FROM tokens WHERE digest = ?", (digest,)
        )
        return self._token(row) if row else None

    def list_tokens(self) -> list[TokenRecord]:
        rows = self._rows(
            "SELECT name, digest, initiatives, read_only, created_at, last_used FROM tokens ORDER BY name"
        )
        return [self._token(r) for r in rows]

    def delete_token(self, name: str) -> TokenRecord | None:
        row = self._one(
            "DELETE FROM tokens WHERE name = ? RETURNING name, digest, initiatives, read_only, created_at, last_used",
            (name,),
        )
        return self._token(row) if row else None

    def touch_token(self, name: str, at: str) -> None:
        self._c.execute("UPDATE tokens SET last_used = ? WHERE name = ?", (at, name))

    def has_tokens(self) -> bool:
        return self._one("SELECT 1 FROM tokens LIMIT 1") is not None


class SqliteStore:
    """A vault file and a small pool of connections to it."""

    backend = "sqlite"

    def __init__(self, path: Path, *, busy_timeout_ms: int = 30_000, pool_size: int = 8):
        self.path = path
        self._busy_timeout_ms = busy_timeout_ms
        #: Idle connections, the last released on top (its page cache is the warmest). A deque's
        #: append and pop are atomic: no lock and condition per call, as a queue.Queue takes.
        self._pool: deque[apsw.Connection] = deque()
        self._pool_size = pool_size
        self._common = CommonWords()
        self._all: list[apsw.Connection] = []
        self._lock = threading.Lock()
        self._secret: bytes | None = None
        self._schema = 0  # the newest migration this code knows; set by `_migrate`
        #: Set by the WAL hook past `WAL_SAFETY_PAGES`: the next committing writer checkpoints itself.
        self._overfull = False
        self._written = threading.Event()
        self._full = threading.Event()
        self._stopping = threading.Event()
        #: One checkpoint at a time in this process (SQLite refuses a second one at once).
        self._checkpointing = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = self._connect()
        try:
            if self._migrate(conn):
                self._written.set()  # a migration's WAL is checkpointed and emptied like a write's
        finally:
            self._release(conn)
        # Checkpointing the WAL on the committing writer put every ~1000th write 10 ms over the
        # others; a background thread checkpoints instead (decision 16.I1): PASSIVE, then RESTART so
        # the next writer starts the log again from its beginning instead of growing it past its
        # high-water mark, and TRUNCATE once the vault went idle.
        self._checkpointer = threading.Thread(target=self._checkpoint_loop, name="kaeru-wal-checkpoint", daemon=True)
        self._checkpointer.start()

    def _checkpoint_loop(self) -> None:
        conn = apsw.Connection(str(self.path))
        conn.set_busy_timeout(CHECKPOINT_BUSY_MS)
        #: Tries left to truncate the WAL since the last write (0: nothing to do until the next one).
        truncate = 0
        try:
            while not self._stopping.is_set():
                if self._written.wait(timeout=CHECKPOINT_PAUSE):
                    self._written.clear()
                    truncate = TRUNCATE_TRIES
                    # Checkpoint when the WAL is full, or after a pause that bursts of writes share.
                    woken = self._full.wait(CHECKPOINT_PAUSE)
                    if self._stopping.is_set():
                        break
                    self._full.clear()
                    if woken or self._written.is_set():
                        with self._checkpointing:
                            done = self._checkpoint(conn, "RESTART")
                        if not done:
                            self._stopping.wait(CHECKPOINT_PAUSE / 4)  # not at every commit while in the way
                        continue
                elif truncate == 0:
                    continue
                # No write for a pause: the vault is idle, the WAL goes back to nothing.
                with self._checkpointing:
                    truncate = 0 if self._checkpoint(conn, "TRUNCATE") else truncate - 1
        finally:
            conn.close()

    @staticmethod
    def _checkpoint(conn: apsw.Connection, mode: str) -> bool:
        """Copy the WAL into the database (PASSIVE: never blocking a writer); then, `mode` RESTART or
        TRUNCATE, take the write lock a moment to copy what writers appended meanwhile and start the
        log again from its beginning (TRUNCATE also empties the file). False if another connection
        was in the way (the busy timeout of `conn` bounds the wait)."""
        try:
            list(conn.execute("PRAGMA wal_checkpoint(PASSIVE)"))
            if mode == "PASSIVE":
                return True
            ((busy, _, _),) = conn.execute(f"PRAGMA wal_checkpoint({mode})")
            return bool(busy == 0)
        except apsw.Error:
            return False  # another process is checkpointing, or the vault is busy: try after the next write

    def _on_wal(self, conn: apsw.Connection, name: str, pages: int) -> int:
        """After each commit (SQLite's WAL hook, in place of its auto-checkpoint): how full the log is."""
        if pages >= CHECKPOINT_PAGES:
            self._full.set()
            if pages >= WAL_SAFETY_PAGES:
                self._overfull = True
        return apsw.SQLITE_OK

    def _connect(self) -> apsw.Connection:
        conn = apsw.Connection(str(self.path))
        conn.set_busy_timeout(self._busy_timeout_ms)
        self._wal_mode(conn)
        for pragma in (
            "synchronous = NORMAL",
            "foreign_keys = ON",
            "temp_store = MEMORY",
            f"journal_size_limit = {WAL_LIMIT_BYTES}",
        ):
            list(conn.execute(f"PRAGMA {pragma}"))
        conn.set_wal_hook(self._on_wal)
        with self._lock:
            self._all.append(conn)
        return conn

    def _wal_mode(self, conn: apsw.Connection) -> None:
        """Switch to WAL, retrying while another process holds the lock: while another server process
        writes a new vault file's first transaction (still in rollback-journal mode), SQLite answers
        "locked" at once, without calling its busy handler."""
        deadline = time.monotonic() + self._busy_timeout_ms / 1000
        while True:
            try:
                list(conn.execute("PRAGMA journal_mode = WAL"))
                return
            except apsw.BusyError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.005)

    def _acquire(self) -> apsw.Connection:
        if self._stopping.is_set():
            raise Unavailable("the vault is closing: this server is shutting down")
        try:
            return self._pool.pop()
        except IndexError:
            return self._connect()

    def _release(self, conn: apsw.Connection) -> None:
        if len(self._pool) < self._pool_size and not self._stopping.is_set():
            self._pool.append(conn)
        else:
            with self._lock:
                if conn in self._all:
                    self._all.remove(conn)
            _close_quietly(conn)

    def _up_to_date(self, conn: apsw.Connection) -> bool:
        """One read at open: True (and the vault's secret kept) when every migration this kaeru ships
        is applied, the secret exists and no re-indexing is pending — then `_migrate` has nothing to
        do and the write lock it takes is not needed (decision 16.O2)."""
        try:
            ((top, applied, secret, pending, schema),) = conn.execute(
                "SELECT (SELECT max(version) FROM schema_migrations), (SELECT count(*) FROM schema_migrations), "
                "(SELECT value FROM meta WHERE key = 'secret'), "
                "EXISTS (SELECT 1 FROM meta WHERE key = 'stem_index_pending'), "
                "(SELECT user_version FROM pragma_user_version)"
            )
        except apsw.SQLError:
            return False  # a new vault: no tables yet
        newest = newest_version("kaeru.storage.sqlite.migrations")
        if top != newest or applied != newest or secret is None or pending or schema != newest:
            return False
        self._secret = bytes.fromhex(secret)
        self._schema = newest
        return True

    def _migrate(self, conn: apsw.Connection) -> bool:
        """Apply pending migrations in one write transaction; whether anything was written."""
        if self._up_to_date(conn):
            return False
        list(conn.execute("BEGIN IMMEDIATE"))
        try:
            list(
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                    "applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))"
                )
            )
            done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
            migrations = load_migrations("kaeru.storage.sqlite.migrations")
            refuse_newer(done, migrations, "SQLite")
            applied = False
            for migration in migrations:
                if migration.version in done:
                    continue
                applied = True
                list(conn.execute(migration.sql))
                list(
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
                        (migration.version, migration.name),
                    )
                )
            # The schema level, read by every transaction of every store on this file (`_session`):
            # a server started before a later migration stops instead of writing the old shape.
            self._schema = migrations[-1].version
            if next(iter(conn.execute("PRAGMA user_version")))[0] < self._schema:
                list(conn.execute(f"PRAGMA user_version = {int(self._schema)}"))
            if not list(conn.execute("SELECT 1 FROM meta WHERE key = 'secret'")):
                list(conn.execute("INSERT INTO meta VALUES ('secret', ?)", (secrets.token_hex(32),)))
            # Written once, by whichever process created the vault (under this write lock), and never
            # changed: read here once instead of by every search that makes a cursor.
            self._secret = SqliteSession(conn).vault_secret()
            if list(conn.execute("SELECT 1 FROM meta WHERE key = 'stem_index_pending'")):
                SqliteSession(conn).reindex_text()
                applied = True
            list(conn.execute("COMMIT"))
            return applied
        except BaseException:
            list(conn.execute("ROLLBACK"))
            raise

    @contextmanager
    def _session(self, begin: str) -> Iterator[SqliteSession]:
        conn = self._acquire()
        try:
            try:
                list(conn.execute(begin))
                schema = next(iter(conn.execute("PRAGMA user_version")))[0]
            except apsw.Error as exc:
                raise _translate(exc) from exc
            if schema != self._schema:
                list(conn.execute("ROLLBACK"))
                raise VaultTooNew(
                    f"the vault was migrated (schema {schema}, this server knows {self._schema}) by another "
                    "kaeru while this server ran: restart it, with the newer kaeru"
                )
            try:
                yield SqliteSession(conn, self._common, snapshot=begin == "BEGIN", secret=self._secret)
            except BaseException:
                if not conn.in_transaction:
                    raise
                list(conn.execute("ROLLBACK"))
                raise
            try:
                list(conn.execute("COMMIT"))
                if begin != "BEGIN":
                    if not self._written.is_set():
                        self._written.set()
                    if self._overfull:
                        self._overfull = False
                        with self._checkpointing:  # after the background thread's round, if one runs
                            self._checkpoint(conn, "PASSIVE")
            except apsw.Error as exc:
                if conn.in_transaction:
                    list(conn.execute("ROLLBACK"))
                raise _translate(exc) from exc
        except apsw.Error as exc:
            raise _translate(exc) from exc
        finally:
            self._release(conn)

    def write(self) -> Any:
        """One serialised write transaction (BEGIN IMMEDIATE)."""
        return self._session("BEGIN IMMEDIATE")

    def read(self) -> Any:
        """One read snapshot."""
        return self._session("BEGIN")

    def close(self) -> None:
        """Stop the checkpointer, truncate the WAL and close every connection.

        The last connection to the file (in any process) then removes the `-wal` and `-shm` files;
        while another server still has the vault open, they stay for it (decision 16.I1).
        """
        self._stopping.set()
        self._written.set()
        self._full.set()
        self._checkpointer.join(timeout=5)
        # Only idle connections are closed here: one still in a call (another thread) is closed when
        # that call releases it (`_release`), so no call loses its connection halfway.
        with self._lock:
            idle = list(self._pool)
            self._pool.clear()
            for conn in idle:
                self._all.remove(conn)
        if idle:
            idle[0].set_busy_timeout(CHECKPOINT_BUSY_MS)
            self._checkpoint(idle[0], "TRUNCATE")
        for conn in idle:
            _close_quietly(conn)

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "path": str(self.path),
            "sqlite": apsw.sqlite_lib_version(),
            "pid": os.getpid(),
        }


def _close_quietly(conn: apsw.Connection) -> None:
    """Close a connection of a store that is shutting down; a failure leaves nothing to do."""
    try:
        conn.close()
    except apsw.Error:
        pass


def _note_superseded(query: SearchQuery, ranked: list[tuple[str, bool]]) -> None:
    """Fill `query.superseded_out` from the ranked `(id, omitted as superseded)` matches."""
    if query.superseded_out is None:
        return
    kept = 0
    for node_id, gone in ranked:
        if not gone:
            kept += 1
        elif len(query.superseded_out) < query.superseded_head:
            query.superseded_out.append((kept, node_id))
