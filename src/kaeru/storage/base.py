"""The narrow storage protocol the service is written against.

A `Store` hands out sessions: `write()` is one serialisable transaction (SQLite `BEGIN IMMEDIATE`,
PostgreSQL row locks), `read()` a consistent snapshot. Everything the service needs from a
database goes through `Session`; SQL lives only in the implementations.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeVar

from kaeru.domain.model import Edge, EdgeType, NameSpan, Node


@dataclass(frozen=True, slots=True)
class Initiative:
    id: int
    name: str
    created_at: str
    last_activity: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EndedInitiative:
    """An initiative merged away or deleted: its last name, when it was created and when it ended."""

    id: int
    name: str
    created_at: str | None
    ended_at: str


@dataclass(frozen=True, slots=True)
class RequestKey:
    initiative: str
    operation: str
    request_id: str


@dataclass(frozen=True, slots=True)
class StoredRequest:
    args_hash: str
    response: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SlotState:
    initiative_id: int
    slot: str
    node_id: str | None
    rev_no: int
    revision: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class AuditRecord:
    at: str
    operation: str
    actor: str
    request_id: str | None
    initiative_id: int | None
    affected: list[str]
    changes: list[dict[str, Any]]


# issue 15: tokens (helper K)
@dataclass(frozen=True, slots=True)
class TokenRecord:
    """An HTTP bearer token as stored: its name, the sha256 of the token, and its grants."""

    name: str
    digest: str
    #: The initiative names the token may see and write; None: every initiative.
    initiatives: tuple[str, ...] | None
    read_only: bool
    created_at: str
    last_used: str | None = None


@dataclass(frozen=True, slots=True)
class RevisionEntry:
    """One stored revision of a node with who wrote it (for `trail history`)."""

    node: Node
    request_id: str | None
    actor: str


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A literal search: tokens already normalised by `domain.text`, filters already validated."""

    initiative_ids: Sequence[int]
    tokens: Sequence[str] = ()
    match_all: bool = False
    prefix: bool = False
    types: Sequence[str] = ()
    tiers: Sequence[str] = ()
    layers: Sequence[str] = ()
    statuses: Sequence[str] = ()
    tags: Sequence[str] = ()
    #: Omit a hit that a live, in-scope node supersedes (`filters.current = preferred`), counting it.
    omit_superseded: bool = True
    #: How many ordered hits to return at most (the total is still counted exactly).
    window: int = 5000
    #: Match `tokens` as Snowball stems against the stemmed index (recall), not literally (search).
    stemmed: bool = False
    #: Count every match when the window is full (search's `total`); recall only needs the window.
    count_total: bool = True
    #: Which text fields the tokens must match in (recall's tag channel looks at tags only).
    fields: tuple[str, ...] = ("name", "description", "body", "tags")
    #: With `omit_superseded`, a list the store fills with the best `superseded_head` matches it
    #: omitted as superseded: `(kept_before, id)`, best first — `kept_before` is how many of the
    #: returned rows rank before it. Left untouched when nothing was omitted (search's successors).
    superseded_out: list[tuple[int, str]] | None = field(default=None, compare=False)
    superseded_head: int = 200

    @property
    def columns(self) -> list[tuple[str, Sequence[str]]]:
        """The column filters that are set: `(column of nodes, allowed values)`."""
        wanted = (("node_type", self.types), ("tier", self.tiers), ("layer", self.layers), ("status", self.statuses))
        return [(column, values) for column, values in wanted if values]


class SearchRow(NamedTuple):
    """One hit. `score` orders hits within one query only: FTS5's bm25 on both backends (negative,
    best first; PostgreSQL computes it from its own statistics, decision 17.G1); its ratio to the
    best row's is what recall fuses, and that ratio lies in (0, 1].

    A named tuple: a broad search makes thousands (~0.3 µs each, a frozen dataclass ~1 µs)."""

    id: str
    seq: int
    score: float
    #: A hypothesis whose status is `refuted` (ranks after its equals, like a node with a verdict).
    refuted: bool = False
    #: Whether a live verdict edge (`supersedes`, `falsifies`) points at the hit; None when the
    #: backend did not look. False spares the caller asking for the hit's verdicts.
    contested: bool | None = None


class Session(Protocol):
    """One transaction or snapshot. Methods raise `kaeru.errors.KaeruError` subclasses only."""

    # --- vault metadata -------------------------------------------------------------------
    def vault_secret(self) -> bytes: ...

    # --- initiatives ------------------------------------------------------------------------
    def initiative_by_name(self, name: str) -> Initiative | None: ...
    def initiative_names(self, ids: Sequence[int]) -> dict[int, str]: ...
    def all_initiatives(self) -> list[Initiative]: ...
    def create_initiative(self, name: str, now: str) -> Initiative: ...
    def touch_initiative(self, initiative_id: int, now: str) -> None: ...
    def rename_initiative(self, initiative_id: int, name: str, at: str) -> None:
        """Rename, closing the old name's span and opening the new one's at `at` (after the current
        name's start: the caller stamps it so)."""
        ...

    def delete_initiative(self, initiative_id: int, at: str) -> None:
        """Drop the initiative row and its slots (nodes must already have left it); its name history
        ends at `at` and it is remembered among the ended initiatives."""
        ...

    def name_history(self, initiative_ids: Sequence[int] | None) -> dict[int, list[NameSpan]]:
        """The names each initiative (live or ended; all when None) held, in time order."""
        ...

    def ended_initiatives(self) -> list[EndedInitiative]:
        """Initiatives merged away or deleted, oldest end first."""
        ...

    def tier_counts(self, initiative_ids: Sequence[int]) -> dict[int, dict[str, int]]:
        """Live, non-audit node counts per initiative and tier."""
        ...

    def member_ids(self, initiative_id: int) -> list[str]:
        """Ids of every live node in the initiative, oldest first."""
        ...

    # --- replay -----------------------------------------------------------------------------
    def begin_request(self, key: RequestKey, args_hash: str, now: str) -> StoredRequest | None:
        """Claim `key` for this transaction, or return the stored request that already holds it.

        Concurrent claimers of one key are serialised: the loser sees the winner's committed row.
        """
        ...

    def finish_request(self, key: RequestKey, response: dict[str, Any]) -> None: ...
    def purge_requests(self, before: str) -> int: ...

    # --- nodes ------------------------------------------------------------------------------
    def get_node(self, node_id: str, *, for_update: bool = False) -> Node | None: ...
    def nodes_by_ids(self, ids: Sequence[str]) -> dict[str, Node]: ...
    def nodes_by_seqs(self, seqs: Sequence[int]) -> dict[str, Node]:
        """`nodes_by_ids` for nodes whose storage sequence numbers are known (`SearchRow.seq`): the
        primary key, so one lookup per node instead of two. Keyed by id."""
        ...

    def live_nodes_named(self, name: str, initiative_ids: Sequence[int] | None) -> list[Node]: ...
    def name_candidates(self, wanted: str, initiative_ids: Sequence[int] | None, limit: int) -> list[str]: ...
    def initiatives_holding_name(self, name: str) -> list[int]: ...
    def put_node(self, node: Node, *, request_id: str | None, actor: str) -> None:
        """Append `node` as a new revision and make it the current state (index, memberships)."""
        ...

    def node_at(self, node_id: str, moment: str) -> Node | None: ...
    def revision_log(self, node_id: str) -> list[RevisionEntry]:
        """Every revision of a node, oldest first, with its request_id and actor."""
        ...

    # --- edges ------------------------------------------------------------------------------
    def get_edge(self, src: str, dst: str, edge_type: EdgeType) -> Edge | None: ...
    def put_edge(self, edge: Edge) -> None: ...
    def live_edges(self, node_ids: Sequence[str]) -> list[Edge]:
        """Live edges touching any of `node_ids` (either direction)."""
        ...

    def verdicts_against(self, node_ids: Sequence[str]) -> dict[str, list[tuple[str, EdgeType]]]:
        """Live verdict edges with a live source, by target id (all initiatives)."""
        ...

    def verdicts_against_at(self, node_ids: Sequence[str], moment: str) -> dict[str, list[tuple[str, EdgeType]]]: ...

    def edges_at(self, node_ids: Sequence[str], moment: str) -> list[Edge]: ...
    def edge_log(self, node_ids: Sequence[str]) -> list[Edge]:
        """Every revision of every edge touching `node_ids` (retractions included), oldest first."""
        ...

    def nodes_with_property(self, initiative_ids: Sequence[int], key: str) -> list[str]:
        """Live member nodes whose `properties` has `key`."""
        ...

    def newest_members(self, initiative_id: int, facets: Sequence[str] | None, limit: int) -> tuple[list[str], int]:
        """Ids of the initiative's live members (audit events aside) whose `<tier>:<layer>` is one of
        `facets` (any: None), newest first, at most `limit`; and how many there are (decision 16.R1)."""
        ...

    def member_heads(
        self, initiative_id: int, tier: str, limit: int
    ) -> list[tuple[str, str, str, str, bool, str, list[str]]]:
        """The newest `limit` live members of `tier` as `(id, name, node_type, layer, pinned,
        recorded_at, tags)`, newest first (audit events and superseded ones aside); `tags` is empty
        unless they may hold `kind:hygiene`."""
        ...

    def scope_size(self, initiative_ids: Sequence[int]) -> int:
        """The sum of `tier_counts` over the initiatives and tiers, read from the membership index."""
        ...

    def rule_ids(self, initiative_id: int, limit: int) -> list[str]:
        """Newest live member concepts that may carry `kind:rule` (a superset), newest first."""
        ...

    def attention_ids(self, initiative_ids: Sequence[int]) -> list[str]:
        """Live members that may hold a `reminder` or `hygiene` property (a superset), oldest first."""
        ...

    def inbound(self, initiative_ids: Sequence[int], edge_types: Sequence[str]) -> dict[str, list[Edge]]:
        """Live edges of `edge_types` from live sources into live members, by target id."""
        ...

    def orphans(self, initiative_ids: Sequence[int], limit: int) -> list[str]:
        """Live member nodes (not audit, not board) with no live edge at all, oldest first."""
        ...

    def dangling_edges(self, initiative_ids: Sequence[int], limit: int) -> list[Edge]:
        """Live edges touching a live member whose other endpoint is retracted."""
        ...

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
        """Live member ids ordered by (created_at, seq): `before` items preceding and `after` items from
        `pivot` (a (created_at, seq) position), or everything in [since, until] up to `after` items."""
        ...

    # --- slots ------------------------------------------------------------------------------
    def get_slot(self, initiative_id: int, slot: str, *, for_update: bool = False) -> SlotState | None: ...
    def put_slot(self, state: SlotState) -> None: ...
    def slots_held_by(self, node_id: str) -> list[SlotState]: ...
    def slot_history(self, initiative_id: int, slot: str) -> list[SlotState]:
        """Every revision of one slot, oldest first."""
        ...

    def slots_of(self, initiative_id: int) -> list[SlotState]: ...

    # --- audit ------------------------------------------------------------------------------
    def append_audit(self, record: AuditRecord) -> None: ...
    def audit_records(self, initiative_ids: Sequence[int], limit: int) -> list[tuple[int, AuditRecord]]:
        """The newest audit records of these initiatives, with their sequence numbers, newest first."""
        ...

    def audit_by_seq(self, seqs: Sequence[int]) -> dict[int, AuditRecord]: ...

    # --- search -----------------------------------------------------------------------------
    def search(self, query: SearchQuery) -> tuple[list[SearchRow], int, int]:
        """Ordered hits (best first, at most `query.window`), the exact number of hits, and how many
        matches were omitted as superseded in scope."""
        ...

    def count_matches(self, query: SearchQuery) -> int:
        """How many live nodes match `query`'s tokens and filters (superseded ones included; `window`
        and `count_total` ignored), without ranking them — recall's document frequencies."""
        ...

    # --- export / import (the `amg` archive, `kaeru copy`) ---------------------------------------
    def export_revisions(self, initiative_ids: Sequence[int] | None) -> Iterator[RevisionEntry]:
        """Every node revision (of nodes in these initiatives, or all), by (node's first record, rev_no)."""
        ...

    def export_edges(self, node_ids: set[str] | None) -> Iterator[Edge]:
        """Every edge revision (between exported nodes, or all), by (src, dst, type, rev_no)."""
        ...

    def export_slots(self, initiative_ids: Sequence[int] | None) -> Iterator[SlotState]: ...
    def export_audit(self, initiative_ids: Sequence[int] | None) -> Iterator[AuditRecord]: ...
    def restore_initiative(
        self, name: str, created_at: str, last_activity: str, properties: dict[str, Any]
    ) -> Initiative:
        """Create an initiative with its original timestamps (import), or return the existing one."""
        ...

    def clear_slots(self, initiative_id: int) -> None:
        """Drop the current slots of an initiative (their revisions stay): an ended one imported."""
        ...

    def restore_name_history(self, initiative_id: int, spans: Sequence[NameSpan]) -> None:
        """Replace an initiative's name history with `spans` (import into a vault that had none of it)."""
        ...

    def restore_ended_initiative(self, ended: EndedInitiative, spans: Sequence[NameSpan]) -> tuple[int, bool]:
        """The id of the ended initiative with this name and end (import), created with `spans` when
        missing; True when it was created."""
        ...

    def has_revision(self, node_id: str, rev_no: int) -> bool: ...
    def has_edge_revision(self, src: str, dst: str, edge_type: str, rev_no: int) -> bool: ...

    # --- vectors (optional semantic channel) ---------------------------------------------------
    def put_vector(self, node_id: str, model: str, text_sha: str, vector: bytes) -> None: ...
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
        ...

    def vector_candidates(self, model: str, vector: bytes, limit: int) -> list[tuple[str, float]] | None:
        """The first round of candidates `nearest_vectors` would rank for `limit` (scope not yet
        applied), or None where it scans exactly: so another thread can compute them (17.X2)."""
        ...

    def vector_digests(self, model: str) -> dict[str, str]:
        """node id → digest of the text its stored vector was computed from."""
        ...

    def live_node_batch(self, after_seq: int, limit: int) -> list[Node]:
        """Live nodes (not audit) with seq > after_seq, in seq order: for reindexing."""
        ...

    # --- cursors ----------------------------------------------------------------------------
    def load_cursor(self, cursor_id: str) -> list[str] | None: ...
    def purge_cursors(self, before: str) -> int: ...

    # --- tokens (decision 15.K1) -----------------------------------------------------------
    def add_token(self, token: TokenRecord) -> bool:
        """Store a new token; False (nothing written) when its name is taken."""
        ...

    def token_by_digest(self, digest: str) -> TokenRecord | None: ...
    def list_tokens(self) -> list[TokenRecord]:
        """Every token, by name."""
        ...

    def delete_token(self, name: str) -> TokenRecord | None:
        """Remove the token `name`; the row removed, or None when there was none."""
        ...

    def touch_token(self, name: str, at: str) -> None:
        """Record that the token `name` was used at `at`."""
        ...

    def has_tokens(self) -> bool: ...


class Store(Protocol):
    """A vault backend: hands out sessions and reports what it is."""

    backend: str

    def write(self) -> AbstractContextManager[Session]: ...
    def read(self) -> AbstractContextManager[Session]: ...
    def close(self) -> None: ...
    def describe(self) -> dict[str, Any]: ...


T = TypeVar("T")


def chunks(items: Sequence[T], size: int = 500) -> Iterator[Sequence[T]]:
    """Split long id lists so `IN (…)` stays under parameter limits on every backend."""
    for i in range(0, len(items), size):
        yield items[i : i + size]
