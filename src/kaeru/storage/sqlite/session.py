"""SQLite's session: the shared statements (`storage/sql/`) over an apsw connection, plus what is
SQLite's own — the replay claim deferred to the commit (writers are serialised by `BEGIN
IMMEDIATE`) and full-text search (`search.py`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import apsw

from kaeru.domain.model import Node
from kaeru.storage.records import RequestKey, SearchQuery, StoredRequest
from kaeru.storage.sql.db import Db, DuplicateKey, Params
from kaeru.storage.sql.dialect import SQLITE
from kaeru.storage.sql.replay import pack_hash, pack_response, unpack_hash, unpack_response
from kaeru.storage.sql.session import SqlSession
from kaeru.storage.sqlite.copies import watermark
from kaeru.storage.sqlite.matching import CommonWords
from kaeru.storage.sqlite.search import FtsSearch
from kaeru.storage.sqlite.vectors import SqliteVectors
from kaeru.storage.sqlite.warmlist import WARM_KEY, Ranked, loads


class SqliteDb(Db):
    """Statements on one apsw connection; driver errors are translated where the store's transaction
    ends (`store._Transaction`), not per call."""

    dialect = SQLITE

    def __init__(self, conn: apsw.Connection):
        self._c = conn

    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        for row in self._c.execute(sql, params):
            return row  # type: ignore[no-any-return]
        return None

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return list(self._c.execute(sql, params))

    def run(self, sql: str, params: Params = ()) -> int:
        try:
            self._c.execute(sql, params)
        except apsw.ConstraintError as exc:
            if "UNIQUE" in str(exc):
                raise DuplicateKey(f"storage error: {exc}") from exc
            raise
        return int(self._c.changes())

    def stream(self, sql: str, params: Params = ()) -> Iterator[tuple[Any, ...]]:
        yield from self._c.execute(sql, params)


class SqliteSession(SqliteVectors, FtsSearch, SqlSession):
    """One transaction on one connection."""

    def __init__(
        self,
        conn: apsw.Connection,
        common: CommonWords | None = None,
        *,
        snapshot: bool = False,
        secret: bytes | None = None,
    ):
        super().__init__(SqliteDb(conn), read_only=snapshot, secret=secret)
        self._c = conn
        self._common = common if common is not None else CommonWords()
        # Replay keys claimed by this transaction: (args_hash, claimed at), written with the response.
        self._claims: dict[RequestKey, tuple[str, str]] = {}
        #: A read snapshot keeps the stored rows its search read (`_stored`); a write never does,
        #: since it could change a row after reading it.
        self._snapshot = snapshot

    def warm_text(self) -> list[Ranked]:
        """`TextCache.warm` in this snapshot, and the rankings the last process on the vault kept
        (`SqliteStore.warm`, decision 270); nothing for a vault of at most `rare_rows` rows, where
        every word takes the rare plan and no copy is ever read (nor numpy imported)."""
        text, mark = self._common.text, watermark(self._db)
        if mark[0] <= self.rare_rows:
            return []
        text.warm(self._db, mark)
        row = self._db.one("SELECT value FROM meta WHERE key = ?", (WARM_KEY,))
        text.recent.kept(str(row[0]) if row is not None else "")
        return loads(str(row[0])) if row is not None else []

    def replay(self, ranked: Ranked) -> None:
        """Rank `ranked` again through the copies, which reads them (`SqliteStore.warm`)."""
        self._common.text.rank(self._db, self._c, *ranked)

    # --- replay -----------------------------------------------------------------------------
    def begin_request(self, key: RequestKey, args_hash: str, now: str) -> StoredRequest | None:
        row = self._db.one(
            "SELECT args_hash, response FROM requests WHERE request_id = ? AND operation = ? AND initiative = ?",
            (key.request_id, key.operation, key.initiative),
        )
        if row is not None and row[1] is not None:
            return StoredRequest(unpack_hash(row[0]), unpack_response(row[1]))
        # Writers are serialised by BEGIN IMMEDIATE: nobody else can claim the key before this transaction
        # ends, so the row is written once, with its response (a claim row then an update cost two writes
        # into the b-tree of replay rows, keyed by random ids).
        self._claims[key] = (args_hash, now)
        return None

    def finish_request(self, key: RequestKey, response: dict[str, Any]) -> None:
        args_hash, now = self._claims.pop(key)
        self._db.run(
            "INSERT OR REPLACE INTO requests (initiative, operation, request_id, args_hash, response, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (key.initiative, key.operation, key.request_id, pack_hash(args_hash), pack_response(response), now),
        )

    def vault_counts_at_most(self, stems: Sequence[str], cap: int) -> list[int | None]:
        # The doclists walked without ranking, stopped after `cap + 1` rows.
        counts = [self._count_at_most(self._match(SearchQuery([], [s], stemmed=True), False), cap + 1) for s in stems]
        return [n if n <= cap else None for n in counts]

    # --- the full-text index a node write keeps ---------------------------------------------
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
        if indexed:
            self._db.run("DELETE FROM nodes_fts WHERE rowid = ?", (seq,))
        if not node.retracted:
            self._index(seq, node)

    def nodes_with_property(self, initiative_ids: Sequence[int], key: str) -> list[str]:
        scope, params = self._member_of(initiative_ids)
        found = self._db.rows(
            f"SELECT n.id FROM nodes n WHERE n.retracted = 0 AND json_type(n.properties, ?) IS NOT NULL AND {scope} "
            "ORDER BY n.seq",
            ["$." + key, *params],
        )
        return [r[0] for r in found]
