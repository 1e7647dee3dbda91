"""`SqlSession`: every statement written once, over one `Db`; each engine's session adds what
genuinely differs (the replay claim, full-text search, where node revisions live)."""

from __future__ import annotations

from typing import Any

from kaeru.domain.model import Node
from kaeru.errors import RevisionConflict
from kaeru.storage.sql.audit import AuditQueries
from kaeru.storage.sql.db import Db
from kaeru.storage.sql.edges import EdgeQueries
from kaeru.storage.sql.graph import GraphQueries
from kaeru.storage.sql.initiatives import InitiativeQueries
from kaeru.storage.sql.nodes import NodeQueries
from kaeru.storage.sql.rows import sorted_json


class SqlSession(InitiativeQueries, NodeQueries, EdgeQueries, GraphQueries, AuditQueries):
    """One transaction or snapshot over `db`."""

    def __init__(self, db: Db, *, read_only: bool, secret: bytes | None = None):
        self._db = db
        self._d = db.dialect
        self._read_only = read_only
        #: The vault's cursor key when the store already knows it (it never changes once written).
        self._secret = secret
        self._stored: dict[int, tuple[Any, ...]] = {}
        self._stored_seqs: dict[str, int] = {}

    def _node_values(self, node: Node) -> tuple[Any, ...]:
        """A node's `NODE_COLS` as the engine stores them."""
        d = self._d
        return (
            node.rev_no, node.revision, node.node_type.value, node.tier.value, node.name, node.body,
            node.description, d.items(node.tags), node.layer.value, node.visibility.value, node.status,
            sorted_json(node.properties), d.items(node.initiatives), node.created_at, node.recorded_at,
            d.flag(node.retracted), d.flag(node.pinned),
        )  # fmt: skip

    @staticmethod
    def _check_newer(node: Node, stored_rev_no: int) -> None:
        """The revision guard of `put_node`, on both engines: never lose an update (reachable only
        when a caller skipped `get_node(for_update=True)`)."""
        if stored_rev_no >= node.rev_no:
            raise RevisionConflict(
                f"node {node.id} changed concurrently (now at revision number {stored_rev_no}); re-read it and retry"
            )
