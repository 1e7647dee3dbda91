"""The state of PostgreSQL's search copies (`textcache.TextCopies`, decision 16.C1): every copy at
one snapshot, replaced whole, and what makes a new one from an old — the nodes a change log names read
again (`refreshed`), copies read meanwhile added (`added`, `merged`), the least recently used given up
(`evict`)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import HypothesisStatus, NodeType
from kaeru.storage.postgres import bm25
from kaeru.storage.postgres.db import PgDb
from kaeru.storage.postgres.snapshot import Snapshot
from kaeru.storage.sql.copies import put_rows

if TYPE_CHECKING:
    import numpy as np

#: A phrase: the term-count column (`ltf`/`stf`), the term, the searched fields (in `bm25.FIELDS` order).
Phrase = tuple[str, str, tuple[str, ...]]
#: The value copy of the rows' lengths (`dl`), kept beside the phrases'.
SIZES: Phrase = ("dl", "", ())
#: …and the one of whether a row is a refuted hypothesis (search's currentness tie-break).
REFUTED: Phrase = ("refuted", "", ())
IS_REFUTED = f"(n.node_type = '{NodeType.HYPOTHESIS}' AND n.status = '{HypothesisStatus.REFUTED}')"


class CopyState:
    """Every copy of one store at one snapshot: replaced as a whole, never changed in place (a
    ranking in another thread may hold it). A value copy (a phrase's frequencies, or `SIZES`) holds
    the rows of the initiatives in `covered`, and any other row changed since it was read."""

    __slots__ = ("covered", "scopes", "snapshot", "values")

    def __init__(self, snapshot: Snapshot, old: CopyState | None = None):
        self.snapshot = snapshot
        self.values: OrderedDict[Phrase, np.ndarray] = old.values.copy() if old else OrderedDict()
        self.covered: dict[Phrase, frozenset[int]] = old.covered.copy() if old else {}
        self.scopes: OrderedDict[int, np.ndarray] = old.scopes.copy() if old else OrderedDict()

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (*self.values.values(), *self.scopes.values()))


def value_sql(key: Phrase, param: str) -> str:
    """A value copy's value of node `n`: a phrase's weighted frequency, or the node's length."""
    if key == SIZES:
        return "coalesce(n.dl, 0)::float8"
    if key == REFUTED:
        return f"CASE WHEN {IS_REFUTED} THEN 1.0::float8 ELSE 0.0::float8 END"
    return bm25.frequency_sql(f"(n.{key[0]} -> {param})", key[2])


def lacks(state: CopyState, keys: Sequence[Phrase], scope: Sequence[int]) -> bool:
    """Whether `state` lacks a member list of `scope` or a copy of `keys` over all of it."""
    wanted = frozenset(scope)
    return any(i not in state.scopes for i in scope) or any(wanted - state.covered.get(k, frozenset()) for k in keys)


def added(base: CopyState, new: CopyState) -> CopyState:
    """The copies `new` read beyond `base` (at `new`'s snapshot): what `merged` adds."""
    extra = CopyState(new.snapshot)
    for key, array in new.values.items():
        if new.covered[key] != base.covered.get(key):
            extra.values[key], extra.covered[key] = array, new.covered[key]
    extra.scopes.update((i, a) for i, a in new.scopes.items() if i not in base.scopes)
    return extra


def merged(
    state: CopyState, extra: CopyState, keys: Sequence[Phrase], scope: Sequence[int], max_bytes: int
) -> CopyState:
    """`state` with the copies of `extra` (both at one snapshot) that cover at least as much."""
    new = CopyState(state.snapshot, state)
    for key, array in extra.values.items():
        if extra.covered[key] >= new.covered.get(key, frozenset()):
            new.values[key], new.covered[key] = array, extra.covered[key]
    new.scopes.update((i, a) for i, a in extra.scopes.items() if i not in new.scopes)
    for key in keys:
        if key in new.values:
            new.values.move_to_end(key)
    evict(new, set(keys), frozenset(scope), max_bytes)
    return new


def evict(state: CopyState, keys: set[Phrase], scope: frozenset[int], max_bytes: int) -> None:
    """Give up the least recently used copies this ranking does not use while over the bound."""
    for key in [k for k in state.values if k not in keys]:
        if state.nbytes <= max_bytes:
            return
        del state.values[key]
        del state.covered[key]
    for initiative in [i for i in state.scopes if i not in scope]:
        if state.nbytes <= max_bytes:
            return
        del state.scopes[initiative]


def refreshed(np: Any, db: PgDb, state: CopyState, seqs: list[int], now: Snapshot, keep: int) -> tuple[CopyState, int]:
    """`state` with the nodes `seqs` read again in this snapshot, at `now`, but for the least
    recently used value copies past `keep` (given up); and the rows read."""
    new = CopyState(now, state)
    if not seqs:
        return new, 0
    for key in list(new.values)[:-keep]:  # least recently used first (`_with`)
        del new.values[key], new.covered[key]
    keys = list(new.values)
    params: dict[str, Any] = {"seqs": seqs}
    for i, key in enumerate(keys):
        params[f"t{i}"] = key[1]
    rows = db.raw_rows(
        "SELECT n.seq, NOT n.retracted AND n.node_type <> 'audit_event', "
        "ARRAY(SELECT m.initiative_id FROM memberships m WHERE m.node_seq = n.seq)"
        + "".join(f", {value_sql(key, f'%(t{i})s')}" for i, key in enumerate(keys))
        + " FROM nodes n WHERE n.seq = ANY(%(seqs)s::bigint[])",
        params,
    )
    at = np.array([int(r[0]) for r in rows], dtype=np.int64)
    for i, key in enumerate(keys):
        new.values[key] = put_rows(np, state.values[key], at, np.array([float(r[3 + i]) for r in rows]))
    for initiative, held in state.scopes.items():
        member = np.array([bool(r[1]) and initiative in r[2] for r in rows], dtype=bool)
        new.scopes[initiative] = put_rows(np, held, at, member)
    return new, len(rows)
