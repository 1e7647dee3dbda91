"""`Db`: the four ways a shared statement runs on one connection; each engine implements them (and
translates its driver's errors) in its own `store.py`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from kaeru.domain.model import Tier
from kaeru.errors import Internal
from kaeru.storage.sql.dialect import Dialect

Params = Sequence[Any]
#: A scope of at most this many live members is listed for a plan to start from (`_members_listed`).
FEW_MEMBERS = 4000
#: A scope of more initiatives than this is tested against a node's own memberships, not looked up
#: one initiative at a time (`_member_of`, decision 152).
PROBED_SCOPES = 8


def layer_facets(layers: Sequence[str], tiers: Sequence[str] = ()) -> tuple[str, ...]:
    """The membership facets (`tier:layer`, the memberships key's second column) of `layers` in
    `tiers` (every tier when none is named)."""
    return tuple(f"{t}:{layer}" for t in (tiers or [t.value for t in Tier]) for layer in layers)


class DuplicateKey(Internal):
    """A unique key was already taken: `internal` unless the statement's caller knows why (a name
    taken concurrently is `unavailable`, retryable, on both engines)."""


class Db:
    dialect: Dialect

    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row, or None."""
        raise NotImplementedError

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def run(self, sql: str, params: Params = ()) -> int:
        """Run a statement that returns no rows; how many rows it changed. A unique key already
        taken raises `DuplicateKey`."""
        raise NotImplementedError

    def stream(self, sql: str, params: Params = ()) -> Iterator[tuple[Any, ...]]:
        """Rows one batch at a time (an export never holds a vault in memory)."""
        raise NotImplementedError

    def send(self, sql: str, params: Params = ()) -> None:
        """Run a statement whose outcome nobody reads (an insert no other writer can collide with).
        An engine may hold it back and send it with the next statement (PostgreSQL's pipeline: one
        round trip for both); its error is then raised by that statement, or by `flush`."""
        self.run(sql, params)

    def flush(self) -> None:
        """Run what `send` held back (before the transaction commits)."""


class Part:
    """What each family of shared statements (`SqlSession`'s mixins) works with."""

    _db: Db
    _d: Dialect
    #: A read snapshot: nothing changes under it, so no row locks (and rows read may be kept).
    _read_only: bool

    def _member_of(self, initiative_ids: Sequence[int], alias: str = "n") -> tuple[str, list[Any]]:
        """`alias` is a member of one of the initiatives.

        A node has one or a few memberships. For a few initiatives the index is probed once per
        initiative (node, initiative); past `PROBED_SCOPES`, on SQLite, the node's own memberships
        are read once and each tested against the list (`Dialect.long_member_list`) — probed per
        initiative, a search across 1,000 projects made 1,000 probes for every match (decision
        152)."""
        column = "m.initiative_id" if len(initiative_ids) <= PROBED_SCOPES else self._d.long_member_list
        where, params = self._d.in_(column, initiative_ids)
        return f"EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = {alias}.seq AND {where})", params

    def _members_listed(
        self, initiative_ids: Sequence[int], alias: str = "n", layers: Sequence[str] = (), tiers: Sequence[str] = ()
    ) -> tuple[str, list[Any]]:
        """`_member_of` (`alias`, a live node that is no audit event, is a member of one of the
        initiatives), written for a scope of at most `FEW_MEMBERS` live members as the list of its
        members the plan starts from (decision 147). A statement that walks the vault's nodes in seq
        order and tests each for membership passes every node between the scope's members: for a
        project that others were written past, every node written since — all of them when it asks
        for more rows than the project has (`reflect`'s orphans). A
        larger scope keeps the walk, which is short where its members are dense, and so does a write
        transaction, where the scope's size would be counted again at every call. With `layers`
        (and `tiers`, all by default), the members of those only, by their facets (`tier:layer`, the
        key's second column): a core or hot layer of a large scope is a short list (decision 277)."""
        facets = layer_facets(layers, tiers)
        if not self._read_only or not self._few(initiative_ids, FEW_MEMBERS, facets):
            return self._member_of(initiative_ids, alias)
        where, params = self._d.in_("m.initiative_id", initiative_ids)
        kept, more = self._facets_in(facets)
        return f"{alias}.seq IN (SELECT m.node_seq FROM memberships m WHERE {where} AND {kept})", [*params, *more]

    def _facets_in(self, facets: Sequence[str]) -> tuple[str, list[Any]]:
        """A membership row `m` of one of `facets`; of any live node's when none is named."""
        if not facets:
            return self._d.any_facet, []
        return self._d.in_("m.facet", [self._d.facet_key(f) for f in facets], "text")

    #: `_few` answers of this transaction (`SqlSession` makes it).
    _few_known: dict[tuple[tuple[int, ...], int, tuple[str, ...]], bool]

    def _few(self, initiative_ids: Sequence[int], limit: int, facets: Sequence[str] = ()) -> bool:
        """Whether the initiatives hold at most `limit` memberships (audit events' aside; of
        `facets` only, when named): a count that stops at `limit + 1` (the full count of a large
        initiative, `scope_size`, grows with it, and a write moves the watermark it is remembered
        at), once a transaction."""
        key = (tuple(initiative_ids), int(limit), tuple(facets))
        known = self._few_known.get(key)
        if known is None:
            where, params = self._d.in_("m.initiative_id", initiative_ids)
            kept, more = self._facets_in(facets)
            row = self._db.one(
                f"SELECT count(*) FROM (SELECT 1 FROM memberships m WHERE {where} AND {kept} "
                f"LIMIT {int(limit) + 1}) few",
                [*params, *more],
            )
            known = self._few_known[key] = row is not None and int(row[0]) <= limit
        return known
