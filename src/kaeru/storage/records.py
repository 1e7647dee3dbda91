"""The records the storage hands the service and takes from it (rows as values, no behaviour)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kaeru.domain.model import Edge, Node


@dataclass(frozen=True, slots=True)
class Initiative:
    id: int
    name: str
    created_at: str
    last_activity: str
    properties: dict[str, Any] = field(default_factory=dict)


class ListedInitiative(NamedTuple):
    """An initiative as `initiatives` lists it: its row without the bookkeeping properties (a page
    reads thousands of these when a prefix filters them; decision 101)."""

    id: int
    name: str
    created_at: str
    last_activity: str


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
    """An HTTP bearer token as stored: its name, the sha256 of the token, its grants, and when it
    stops being accepted."""

    name: str
    digest: str
    #: The initiative names the token may see and write; None: every initiative.
    initiatives: tuple[str, ...] | None
    read_only: bool
    created_at: str
    last_used: str | None = None
    #: When the token stops being accepted (a canonical UTC timestamp); None: never.
    expires_at: str | None = None


@dataclass(frozen=True, slots=True)
class RevisionEntry:
    """One stored revision of a node with who wrote it (for `trail history`)."""

    node: Node
    request_id: str | None
    actor: str


@dataclass(frozen=True, slots=True)
class EdgeEntry:
    """One stored revision of an edge with who wrote it (for an archive's edge record): None for
    a revision written before edge revisions kept them, or imported from an archive without them."""

    edge: Edge
    request_id: str | None = None
    actor: str | None = None


class EdgeMark(NamedTuple):
    """One revision of an edge as a history page's link events need it: when it was recorded, its
    number, whether it retracted the edge, and who made it (None: the revision does not say)."""

    at: str
    rev_no: int
    retracted: bool
    actor: str | None
    request_id: str | None


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
    #: Without it the superseded matches a search without words hid are counted only among the rows
    #: it read (SQLite) or not at all (PostgreSQL): no caller reads them then (decision 276).
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

    A named tuple: a broad search makes thousands, and a frozen dataclass costs several times more
    to build."""

    id: str
    seq: int
    score: float
    #: A hypothesis whose status is `refuted` (ranks after its equals, like a node with a verdict).
    refuted: bool = False
    #: Whether a live verdict edge (`supersedes`, `falsifies`) points at the hit; None when the
    #: backend did not look. False spares the caller asking for the hit's verdicts.
    contested: bool | None = None


#: A history entry's place in that order: (recorded_at, 0 for a revision or 1 for an edge event,
#: source, target, type — '' for a revision —, rev_no). A page after a place starts strictly past it.
HistoryPlace = tuple[str, int, str, str, str, int]


@dataclass(frozen=True, slots=True)
class HistoryItem:
    """One entry of a history page: a revision of the node (`rev_no`, and the number of the one
    before it, None for the first) or an edge event (`edge`, and whether the edge's revision before
    it was retracted: None when there was none); `place` is where it lies in the history."""

    place: HistoryPlace
    rev_no: int | None = None
    previous_rev: int | None = None
    edge: Edge | None = None
    previous_retracted: bool | None = None
