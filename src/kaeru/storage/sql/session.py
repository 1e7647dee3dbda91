"""`SqlSession`: every statement written once, over one `Db`; each engine's session adds what
genuinely differs (the replay claim, full-text search and the index columns a node write sets:
`put_node`'s two hooks)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from kaeru.domain.languages import from_tags as language_of
from kaeru.domain.model import Node
from kaeru.domain.timefmt import fmt
from kaeru.errors import RevisionConflict
from kaeru.storage.records import RequestKey, SearchQuery, SearchRow, StoredRequest
from kaeru.storage.sql.audit import AuditQueries
from kaeru.storage.sql.changes import ChangeQueries
from kaeru.storage.sql.db import Db
from kaeru.storage.sql.edges import EdgeQueries
from kaeru.storage.sql.graph import GraphQueries
from kaeru.storage.sql.initiatives import InitiativeQueries
from kaeru.storage.sql.nodes import NodeQueries
from kaeru.storage.sql.rows import NODE_COLS, marks, sorted_json
from kaeru.storage.sql.sections import SectionQueries, facet
from kaeru.storage.sql.taskfacts import TaskFactQueries
from kaeru.storage.sql.tokens import TokenQueries
from kaeru.storage.sql.trails import TrailQueries

_ASSIGN = ", ".join(f"{c.strip()} = ?" for c in NODE_COLS.split(","))
_WHO = (("request_id", "?"), ("actor", "?"))
#: `meta` keys naming the languages memories are stemmed in: `language:de`, … (`;` follows `:`).
_LANG, _LANG_END = "language:", "language;"
#: The tables each kind of archive record fills (`gather_statistics`).
FILLED_BY = {
    "node": ("nodes", "past_revisions", "memberships"),
    "edge": ("edges", "edge_revisions"),
    "slot": ("slots", "slot_revisions"),
    "audit": ("audit",),
}


class SqlSession(
    InitiativeQueries,
    NodeQueries,
    EdgeQueries,
    GraphQueries,
    AuditQueries,
    TokenQueries,
    SectionQueries,
    TrailQueries,
    ChangeQueries,
    TaskFactQueries,
):
    """One transaction or snapshot over `db`: what the service is written against (`base.Session`).
    The methods below the constructor are each engine's own."""

    def __init__(self, db: Db, *, read_only: bool, secret: bytes | None = None):
        self._db = db
        self._d = db.dialect
        self._read_only = read_only
        #: The vault's cursor key when the store already knows it (it never changes once written).
        self._secret = secret
        self._stored: dict[int, tuple[Any, ...]] = {}
        self._stored_seqs: dict[str, int] = {}
        #: `Part._few` answers of this transaction, by (initiatives, limit).
        self._few_known: dict[tuple[tuple[int, ...], int, tuple[str, ...]], bool] = {}

    def _node_values(self, node: Node) -> tuple[Any, ...]:
        """A node's `NODE_COLS` as the engine stores them."""
        d = self._d
        properties = sorted_json(node.properties) if node.properties else "{}"  # most nodes have none
        return (
            node.rev_no, node.revision, node.node_type.value, node.tier.value, node.name, node.body,
            node.description, d.items(node.tags), node.layer.value, node.visibility.value, node.status,
            properties, d.items(node.initiatives), node.created_at, node.recorded_at,
            d.flag(node.retracted), d.flag(node.pinned),
        )  # fmt: skip

    def put_node(self, node: Node, *, request_id: str | None, actor: str, new: bool = False) -> None:
        """Append `node` as a new revision and make it the current state (index, memberships).
        `new`: its id was just made, so there is no current revision to look up (a node already
        stored under that id is then refused, never overwritten)."""
        values = self._node_values(node)
        columns, extra = self._node_extra(node, request_id, actor)
        existing = (
            None
            if new  # a fresh id (`create_node`): the insert's unique key refuses a stored one
            else self._db.one(
                f"SELECT seq, initiatives, retracted, rev_no, node_type, tier, layer{self._replaced_cols} FROM nodes "
                f"WHERE id = ?{self._d.lock(True, self._read_only)}",
                (node.id,),
            )
        )
        if existing is None:
            row = self._db.one(
                f"INSERT INTO nodes (id, {NODE_COLS}, {', '.join(c for c, _ in columns)}) "
                f"VALUES (?, {marks(len(values))}, {', '.join(m for _, m in columns)}) RETURNING seq",
                (node.id, *values, *extra),
            )
            assert row is not None
            seq, old_members, old_facet = int(row[0]), set(), None
        else:
            if existing[3] >= node.rev_no:
                # Only reachable when the caller skipped `get_node(for_update=True)`: never lose an update.
                raise RevisionConflict(
                    f"node {node.id} changed concurrently (now at revision number {existing[3]}); re-read it and retry"
                )
            seq = int(existing[0])
            old_members = set() if existing[2] else set(self._d.items_of(existing[1]))
            old_facet = None if existing[4] == "audit_event" else f"{existing[5]}:{existing[6]}"
            # The revision the node moves past joins its history; the new one lives in `nodes` only.
            self._db.run(
                f"INSERT INTO past_revisions (node_seq, {NODE_COLS}, request_id, actor) "
                f"SELECT seq, {NODE_COLS}, request_id, actor FROM nodes WHERE seq = ?",
                (seq,),
            )
            assign = ", ".join(f"{c} = {m}" for c, m in columns)
            self._db.run(f"UPDATE nodes SET {_ASSIGN}, {assign} WHERE seq = ?", (*values, *extra, seq))
        self._move_memberships(
            seq, old_members, set() if node.retracted else set(node.initiatives), facet(node), old_facet
        )
        self._node_written(
            seq,
            node,
            values,
            request_id,
            actor,
            indexed=existing is not None and not existing[2],
            replaced=None if existing is None else tuple(existing[7:]),
        )
        lang = language_of(node.tags)
        if lang != "en" and not node.retracted:  # recall then asks by its stems too (decision 191)
            self._db.send("INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key) DO NOTHING", (_LANG + lang,))

    def stemmed_languages(self) -> list[str]:
        """The languages other than English the vault's memories are stemmed in (decision 191), in order."""
        rows = self._db.rows("SELECT key FROM meta WHERE key >= ? AND key < ? ORDER BY key", (_LANG, _LANG_END))
        return [str(r[0])[len(_LANG) :] for r in rows]

    def _node_extra(
        self, node: Node, request_id: str | None, actor: str
    ) -> tuple[tuple[tuple[str, str], ...], tuple[Any, ...]]:
        """The columns of `nodes` a write sets besides `NODE_COLS`: `(column, mark)` pairs and their
        values — the revision's request id and actor, and an engine's own index columns."""
        return _WHO, (request_id, actor)

    #: Columns of the row a write replaces that the engine needs after it (`_node_written`'s
    #: `replaced`), read by the same locked look-up: `", col, …"` or nothing.
    _replaced_cols = ""

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
        """After `node` became the current revision (`indexed`: its previous one was live;
        `replaced`: the `_replaced_cols` of the row it replaced, None for a new node)."""

    # --- each engine's own -----------------------------------------------------------------------
    def begin_request(self, key: RequestKey, args_hash: str, now: str) -> StoredRequest | None:
        """Claim `key` for this transaction, or return the stored request that already holds it.

        Concurrent claimers of one key are serialised: the loser sees the winner's committed row.
        """
        raise NotImplementedError

    def finish_request(self, key: RequestKey, response: dict[str, Any]) -> None:
        raise NotImplementedError

    def purge_requests(self, before: str, window: timedelta) -> int:
        """Drop the replay keys recorded before `before` — the purging writer's own clock less the
        replay window — but never one within the window of the newest key in the vault: each writer
        stamps its keys with its clock, and a server days ahead (or a laptop days behind) purged
        every other writer's keys, so a retry wrote its note twice (decision 404). The table holds
        only the window's writes and has no index on its stamps (migration 018, decision 16.W1):
        both statements read it, at most once an hour per process."""
        newest = self._db.one("SELECT max(created_at) FROM requests")
        if newest is not None and newest[0] is not None:
            # `fromisoformat`: rows written before stamps were fixed to `…Z` end in `+00:00`.
            before = min(before, fmt(datetime.fromisoformat(str(newest[0])) - window))
        return self._db.run("DELETE FROM requests WHERE created_at < ?", (before,))

    def gather_statistics(self, kinds: Sequence[str]) -> None:
        """Bring the planner's statistics of the tables that records of `kinds` (node, edge, slot,
        audit: `FILLED_BY`) fill up to date, in this transaction: what a bulk writer (an import, a
        copy) asks for as those tables grow, before the engine's own upkeep would. SQLite's planner
        finds these tables' keys without statistics: nothing to do (PostgreSQL's session does it)."""

    def nodes_with_property(self, initiative_ids: Sequence[int], key: str) -> list[str]:
        """Live member nodes whose `properties` has `key`."""
        raise NotImplementedError

    def search(self, query: SearchQuery) -> tuple[list[SearchRow], int, int]:
        """Ordered hits (best first, at most `query.window`), the exact number of hits, and how many
        matches were omitted as superseded in scope."""
        raise NotImplementedError

    def put_vector(self, node_id: str, model: str, text_sha: str, vector: bytes) -> None:
        """Store `node_id`'s vector of `model` (float32 bytes, unit length) and the digest of its text."""
        raise NotImplementedError

    def vector_digests_of(self, model: str, node_ids: Sequence[str]) -> dict[str, str]:
        """node id → the digest of the text its vector of `model` was computed from, for `node_ids`
        (those without one are left out): in one statement, for recall's candidates."""
        raise NotImplementedError

    def stored_vectors(self, after: tuple[str, str] | None, limit: int) -> list[tuple[str, str, str, bytes]]:
        """The next `limit` stored vectors of every model after (node id, model) `after` (from the
        first when None), in (node id, model) order: (node id, model, text digest, vector as
        `service.embedding.pack` makes it, whatever the engine keeps). A page at a time, so a copy
        of them never holds them all (`export.vectors_copy`)."""
        raise NotImplementedError

    def vector_candidates(self, model: str, vector: bytes, limit: int) -> list[tuple[str, float]] | None:
        """The first round of candidates `nearest_vectors` would rank for `limit` (scope not yet
        applied), or None where it scans exactly: so another thread can compute them (17.X2)."""
        raise NotImplementedError

    def nearest_vectors(
        self,
        initiative_ids: Sequence[int],
        model: str,
        vector: bytes,
        limit: int,
        first_round: list[tuple[str, float]] | None = None,
    ) -> list[tuple[str, float]]:
        """The `limit` live member nodes whose stored vectors (of `model`) are most similar to `vector`
        (float32 bytes, unit length), best first, ties by node id, with their cosine similarity.

        Computed in the database, never by loading the vectors into the process: PostgreSQL scans
        the scope's rows exactly (decision 17.V1); SQLite ranks candidates found by their codes
        exactly (17.X1). `first_round` is what `vector_candidates` returned for the same arguments
        (possibly from another snapshot: only live members of the scope in this one are kept)."""
        raise NotImplementedError

    def count_matches(self, query: SearchQuery) -> int:
        """How many live nodes match `query`'s tokens and filters (superseded ones included; `window`
        and `count_total` ignored), without ranking them — recall's document frequencies."""
        raise NotImplementedError

    def vault_counts_at_most(self, stems: Sequence[str], cap: int) -> list[int | None]:
        """How many live nodes of the whole vault hold each stem in a text field, or None where more
        than `cap` do: a word's rarity for at most `cap` rows read, whatever the word (recall ranks a
        long question by its rarest words, decision 168)."""
        raise NotImplementedError
