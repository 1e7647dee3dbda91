"""PostgreSQL's broad search ranked from in-memory copies of its bm25 inputs (decision 16.C1).

A ranked search of a common word reads one term-count value (`ltf`/`stf`, detoasted) per member of
the scope: seconds of server CPU at 1M nodes (16.Q3). A `TextCopies`, owned by the
store and shared by its sessions and threads, keeps instead, dense by `seq` and in the narrowest
exact type (`storage/sql/copies.py`): per phrase a search asked for — a term of `ltf` or `stf` in a
set of fields — its weighted frequency as `bm25.score_sql` computes it (the same SQL expression
computes each value, so the doubles are the same); the rows' `dl` and refuted flags; per initiative,
whether the row is a live, non-audit member. A value copy is read only over the initiatives a
search asked for (their members: ~40 % of a 1M-node benchmark vault), and extended when another
asks for more; the ids of the rows a page showed are kept too (they never change). A ranking is a few
vector operations and `bm25_scores` (`score_sql`'s order of operations, `N`, `avgdl` and document
frequencies read in the search's snapshot): rows, order and scores are the SQL's to the bit.

**Current for the search's snapshot, or not used.** Writers commit concurrently, so a row with a
lower `seq` can become visible after one with a higher: no watermark can name what changed. Every
write of a node row adds a row to `text_changes` in the writer's transaction (migration 013: the
node's `seq` and the writer's `xid8`, of kind 'node' — the vectors' rows, migration 024, are not read
here), and all the copies are kept at one snapshot `S` (`xmin`, `xmax`, the transactions in flight). A search in snapshot `T` uses them only when `T` sees every
transaction `S` saw (`snapshot.sees_all_of`; an older snapshot ranks in SQL), and first reads, in `T`, the
log rows of the transactions `S` did not see — `xid >= xmax(S)` or in flight at `S` — and reads
those nodes again (the outbox rule: a transaction in flight at `S` that commits later is read then,
whatever its `seq`) — for the `REFRESH_PHRASES` most recently used copies. Past `REFRESH_ROWS`
nodes, or a log pruned past `xmin(S)`, the copies are dropped and read again in `T`. Only a read
snapshot uses or refreshes them; a write ranks in SQL. **Cold copies are read in the background**
(16.Z1): with `warm` set, another thread reads them, in a snapshot of its own and without the lock,
while SQL ranks (16.N1). **A phrase no copy holds is read for its ranking alone** through the GIN
index when few rows hold it (`SPARSE_ROWS`), and, from the scope's members, while it is copied when
that costs less than SQL's ranking (decisions 140, 16.N2).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kaeru.storage.postgres import bm25
from kaeru.storage.postgres.copystate import (
    REFUTED,
    SIZES,
    CopyState,
    Phrase,
    added,
    evict,
    lacks,
    merged,
    refreshed,
    value_sql,
)
from kaeru.storage.postgres.db import PgDb
from kaeru.storage.postgres.nodeids import NodeIds
from kaeru.storage.postgres.search import COMMON_DIVISOR, tsquery_literal
from kaeru.storage.postgres.snapshot import Snapshot, changed_since, current, sees_all_of
from kaeru.storage.sql.copies import Ranking, bm25_scores, fit, numpy_module, put_rows

if TYPE_CHECKING:
    import numpy as np

#: The most memory a store's copies take (as SQLite's `impacts.CACHE_BYTES`): at 1M nodes a phrase
#: of the benchmark corpus takes ~1 MB (one byte a row), the lengths 2 MB, an initiative 1 MB.
CACHE_BYTES = 64 * 2**20
#: At most this many nodes changed since the copies' snapshot are read back (past it: read whole)…
REFRESH_ROWS = 4096
#: …for the most recently used this many value copies (a column each); the others are dropped: with
#: every copy refreshed, a search after a write grew slower as a server ran (decision 118).
REFRESH_PHRASES = 128
#: A writer prunes the change log once every this many node writes of its process…
PRUNE_EVERY = 1024
#: …down to about this many rows (the newest); a copy older than what is left is read again whole.
KEEP_CHANGES = 16_384
PRUNE_SQL = f"SELECT kaeru_prune_text_changes({KEEP_CHANGES})"
#: How long a search waits for the copies' lock (held through a read in the background) before SQL ranks.
LOCK_WAIT = 0.05
#: The first read of a phrase reads as well the copies of up to this many of the vault's most common
#: terms in the same column (`TextCopies._hinted`).
PREFETCH = 16
#: A phrase no copy holds is read for its ranking alone when at most this many nodes hold it (reading
#: them costs less than a copy); a commoner one is copied, on another thread while SQL ranks
#: (decision 140).
SPARSE_ROWS = 1024
#: What a row the GIN index finds costs beside one whose term counts are read too (about half, as
#: measured for decision 16.N2): `TextCopies._cheaper`.
VISITED = 0.5
#: Words more than one node in this many hold are ranked from the copies (`CopiedSearch._copied`).
COPIES_DIVISOR = 64

#: The node ids of ranked rows are kept (16 bytes a row of the vault, filled as pages show them)
#: while they take at most this share of `max_bytes` (as SQLite's `impacts.FACTS_SHARE`).
IDS_SHARE = 3


class CopiedRanking(Ranking):
    """A ranking from the copies, with each row's refuted flag (dense by seq) beside it."""

    def __init__(self, np: Any, rows: np.ndarray, scores: np.ndarray, refuted: np.ndarray):
        super().__init__(np, rows, scores)
        self.refuted = refuted


class TextCopies:
    """The copies of one store (see the module's docstring); a lock guards the state, which is
    replaced, never changed: a ranking works on arrays no other thread writes. The lock is held
    while copies are read from the database (seconds for a word at 1M nodes)."""

    def __init__(self, max_bytes: int | None = None, refresh_rows: int | None = None):
        self.max_bytes = CACHE_BYTES if max_bytes is None else max_bytes
        self.refresh_rows = REFRESH_ROWS if refresh_rows is None else refresh_rows
        self._state: CopyState | None = None
        self._lock = threading.Lock()
        #: Node writes of this process since the change log was last pruned by one of them.
        self.writes = 0
        #: Copies read (whole, or an initiative's rows of one), nodes read back, rankings answered:
        #: what the tests check.
        self.loads = 0
        self.rows_read = 0
        self.ranked = 0
        #: Rare phrases read for one ranking (`_sparse`), their rows, and the document frequency up to
        #: which a phrase is read so (tests set it both ways).
        self.sparse_reads = 0
        self.sparse_rows_read = 0
        self.sparse_rows = SPARSE_ROWS
        #: …and a commoner one no copy holds yet too (while it is copied) when the phrases read so hold
        #: at most this many rows together; None: when that costs less than SQL's ranking (`_cheaper`).
        self.sparse_budget: int | None = None
        #: The phrases read so at the latest snapshot a ranking saw (a few: `PREFETCH`), by scope.
        self._sparse_memo: tuple[Snapshot | None, dict[tuple[Phrase, tuple[int, ...]], list[np.ndarray]]] = (None, {})
        self._ids = NodeIds()
        #: The vault's most common terms by column (`_hinted`), read once.
        self._common: dict[str, list[str]] | None = None
        #: Runs a function with a database in a new read snapshot on another thread (the store's);
        #: None: missing copies are read in place.
        self.warm: Callable[[Callable[[PgDb], None]], None] | None = None
        self._warming = False
        #: Copies a read in the background brought after the copies had moved on, for the next ranking to add.
        self._brought: CopyState | None = None
        self._cleared = 0
        #: The vault's tables the copies were read from (`snapshot.current`); None: not known yet.
        self._origin: str | None = None

    def clear(self, origin: str | None = None, wait: float = -1) -> bool:
        """Forget every copy and id: every node changed (a re-index), or the tables are others
        (`origin`: a restore made them anew, its `seq` counter set back, so even the ids by seq are
        wrong; the common terms only hint what to read). False when a read held the lock past `wait`."""
        if not self._lock.acquire(timeout=wait):
            return False
        try:
            self._state = self._brought = None
            self._ids, self._sparse_memo = NodeIds(), (None, {})
            self._cleared += 1  # a read in the background started before is not kept
            self._origin = origin or self._origin
        finally:
            self._lock.release()
        return True

    def ids(self, np: Any, db: PgDb, seqs: Sequence[int]) -> list[str]:
        """The node id of each row of `seqs` (`NodeIds`, kept within `max_bytes // IDS_SHARE`)."""
        return self._ids.ids(np, db, seqs, self.max_bytes // IDS_SHARE)

    def wrote(self) -> bool:
        """Count one node write; True when this one should prune the change log (`PRUNE_SQL`)."""
        self.writes += 1
        return self.writes % PRUNE_EVERY == 0

    def rank(
        self,
        db: PgDb,
        phrases: Sequence[Phrase],
        scope: Sequence[int],
        match_all: bool,
        idfs: Sequence[float] | None,
        avgdl: float,
        in_place: bool = False,
        docs: Sequence[int] = (),
        vault: int = 0,
    ) -> Ranking | None:
        """The live, non-audit members of `scope` holding the phrases (all or any), with their scores
        (`idfs` given) or only their count, as this read snapshot sees them; None when the copies
        cannot say (no numpy, too big, an older snapshot, being read: `warm`; `in_place` reads here).
        A phrase no copy holds whose vault-wide document frequency (`docs`, in order) is at most
        `sparse_rows` is read for this ranking alone, through the GIN index (`_sparse`)."""
        # No copies (a one-shot command, decision 268): numpy is not even imported.
        if self.max_bytes <= 0 or not phrases or not scope or (np := numpy_module()) is None:
            return None
        cold = self.warm is not None and not in_place
        at = current(db)
        moved = at is not None and at.origin != self._origin  # other tables (a restore): forgotten first
        if at is None or (moved and not self.clear(at.origin, LOCK_WAIT if cold else -1)) or not at.logged:
            return None  # not `logged`: a restore under way, whose rows no change log would bring up
        keys = [*phrases, SIZES, REFUTED] if idfs is not None else list(phrases)
        # Copies held at this very snapshot need no lock to be ranked from (a ranking never changes
        # them, decision 140); the lock is held only to bring them up or add a read's (16.N1).
        state = self._state
        locked = not (cold and state is not None and state.snapshot == at.snapshot and self._brought is None)
        if locked and not self._lock.acquire(timeout=LOCK_WAIT if cold else -1):
            return None  # a read holds the copies, which are not at this snapshot: SQL ranks meanwhile
        try:
            if locked:
                # Another ranking may have read other tables' origin since (a restore): not ours to keep.
                state = None if self._origin != at.origin else self._current(np, db, at.snapshot, at.horizon)
            if state is None:
                return None
            wanted = frozenset(scope)
            uncopied = {p: d for p, d in zip(phrases, docs, strict=False) if wanted - state.covered.get(p, frozenset())}
            later = [p for p, d in uncopied.items() if d > self.sparse_rows]
            # Rare phrases are read for this ranking alone; commoner ones are copied on another
            # thread, and meanwhile read so too while that costs less than SQL's ranking.
            sparse = (
                set(uncopied)
                if cold and self._cheaper(np, state, scope, [uncopied[p] for p in later], vault)
                else set()
            )
            sparse |= {p for p, d in uncopied.items() if d <= self.sparse_rows}
            held = [k for k in keys if k not in sparse]
            if cold and (later or lacks(state, held, scope)):
                self._read_later([*held, *later], [*scope])
                if lacks(state, held, scope):
                    return None
            if not locked:
                state = self._touched(state, held)
            elif (state := self._with(np, db, state, held, scope)) is None:
                return None
            else:
                self._state = state
        finally:
            if locked:
                self._lock.release()
        values = {k: state.values[k] for k in held}
        values.update(
            (p, self._sparse(np, db, p, at.snapshot, () if uncopied[p] <= self.sparse_rows else scope)) for p in sparse
        )
        length = max([len(values[k]) for k in keys] + [len(state.scopes[i]) for i in scope])
        in_scope = fit(np, state.scopes[scope[0]], length).copy()
        for other in scope[1:]:
            in_scope |= fit(np, state.scopes[other], length)
        present = fit(np, values[phrases[0]], length) > 0
        for p in phrases[1:]:
            found = fit(np, values[p], length) > 0
            present = (present & found) if match_all else (present | found)
        present &= in_scope
        self.ranked += 1
        if idfs is None:
            return Ranking(np, None, None, int(np.count_nonzero(present)))
        rows = np.flatnonzero(present)
        freqs = [fit(np, values[p], length)[rows].astype(np.float64) for p in phrases]
        scores = bm25_scores(np, freqs, idfs, fit(np, values[SIZES], length)[rows], avgdl)
        return CopiedRanking(np, rows.astype(np.int64, copy=False), scores, fit(np, values[REFUTED], length))

    def _cheaper(self, np: Any, state: CopyState, scope: Sequence[int], docs: list[int], vault: int) -> bool:
        """Whether reading the rows of phrases that `docs` nodes hold (each, of `vault`) through the
        GIN index, the term counts of the scope's members among them, costs less than SQL's ranking,
        which reads every member's (`sparse_budget`, when set: the rows read so at most). A row the
        index finds costs `VISITED` of one whose counts are read (decision 16.N2)."""
        if self.sparse_budget is not None:
            return sum(docs) <= self.sparse_budget
        members = sum(int(np.count_nonzero(state.scopes[i])) for i in scope if i in state.scopes)
        share = min(1.0, members / vault) if vault > 0 else 1.0
        return sum(docs) * (VISITED + share) <= members * (1.0 + VISITED)

    def _touched(self, state: CopyState, keys: Sequence[Phrase]) -> CopyState:
        """`state`, its copies `keys` marked most recently used if the lock is free this instant."""
        if self._lock.acquire(blocking=False):
            try:
                for k in keys:
                    if k in state.values:
                        state.values.move_to_end(k)
            finally:
                self._lock.release()
        return state

    def _sparse(self, np: Any, db: PgDb, phrase: Phrase, now: Snapshot, scope: Sequence[int]) -> np.ndarray:
        """A phrase's values from the rows the GIN index finds holding it, in this snapshot, for one
        ranking (never kept): its copy would read every member's term counts, and
        agents' questions are full of words no earlier one asked (decision 140). With a `scope`
        (a commoner phrase), only its members' term counts are read, and always through the index:
        the planner's sequential scan for a word a third of the vault holds tested every row's
        tsvector, ~2× the time (decision 16.N2)."""
        memo = self._sparse_memo if self._sparse_memo[0] == now else (now, {})
        self._sparse_memo = memo  # the same snapshot sees the same rows: a count, then its ranking
        if (kept := memo[1].get((phrase, tuple(scope)))) is None:
            column, word, fields = phrase
            vector = "stv" if column == "stf" else "tsv"
            members = (
                " AND n.seq IN (SELECT m.node_seq FROM memberships m WHERE m.initiative_id = ANY(%(s)s::bigint[]))"
            )
            if scope:
                db.send("SET LOCAL enable_seqscan = off")
            kept = memo[1][phrase, tuple(scope)] = db.copy_columns(
                np,
                f"SELECT x.seq, {bm25.frequency_sql('x.e', fields)} FROM (SELECT n.seq, n.{column} -> %(t)s AS e "
                f"FROM nodes n WHERE n.{vector} @@ %(q)s::tsquery{members if scope else ''} OFFSET 0) x",
                {"t": word, "q": tsquery_literal([word], False, False, fields), "s": list(scope)},
            )
            if scope:
                db.send("SET LOCAL enable_seqscan TO DEFAULT")
            self.sparse_reads += 1
            self.sparse_rows_read += len(kept[0])
            if len(memo[1]) > PREFETCH:
                del memo[1][next(iter(memo[1]))]
        return put_rows(np, None, kept[0], kept[1])  # dense for this ranking only

    def _read_later(self, keys: list[Phrase], scope: list[int]) -> None:
        """Read the copies `keys` over `scope` (and the scope's members) on another thread, one
        such read at a time, in a snapshot of its own. The lock is not held while it reads (a pass
        reads every member's term counts): a ranking at a newer snapshot meanwhile brings the copies to it. What was read
        is kept if the copies are still the ones it started from; else the next ranking that sees
        its snapshot brings it to its own by the change log and adds it (decision 16.N1). The
        caller's snapshot is not imported (`SET TRANSACTION SNAPSHOT`): its transaction often ends
        first (a terminal's call), and the failed import aborted the connection's pipeline, leaving
        it with prepared statements the server no longer had (decision 141)."""
        if self._warming or self.warm is None:
            return
        self._warming = True
        warm = self.warm

        def load(db: PgDb) -> None:
            np, at = numpy_module(), current(db)
            if np is None or at is None or not at.logged:
                return
            with self._lock:
                if at.origin != self._origin:
                    return  # other tables than the copies': the next ranking forgets them first
                held, cleared = self._state, self._cleared
                mine = None if held is None else CopyState(held.snapshot, held)  # a ranking may reorder `held`
            base = self._advanced(np, db, mine, at.snapshot, at.horizon)
            if base is None or not lacks(base, keys, scope):
                return
            new = self._with(np, db, base, keys, scope)  # unlocked: a ranking meanwhile is never kept waiting
            if new is not None:
                with self._lock:
                    if self._cleared != cleared:
                        return
                    if self._state is held and (held is None or held.snapshot == new.snapshot):
                        self._state = new
                    else:  # the copies moved on (or this read's snapshot is not theirs): the next ranking adds it
                        self._brought = added(base, new)

        def run() -> None:
            try:
                warm(load)
            except Exception:  # the copies stay cold: SQL keeps ranking, as it always can
                logging.getLogger(__name__).warning("reading the search copies in the background failed", exc_info=True)
            finally:
                self._warming = False

        threading.Thread(target=run, name="kaeru-copies", daemon=True).start()

    def _current(self, np: Any, db: PgDb, now: Snapshot, horizon: int) -> CopyState | None:
        """The copies brought to snapshot `now` and kept (`_advanced`), with what a read in the
        background brought at an older one (`_brought`) brought up and added; None when `now` is older
        than them (SQL ranks)."""
        state = self._advanced(np, db, self._state, now, horizon)
        if state is not None and self._brought is not None:
            extra = self._advanced(np, db, self._brought, now, horizon)
            if extra is not None:  # (a read at a newer snapshot than this one waits for a later ranking)
                self._brought = None
                state = merged(state, extra, list(extra.values), list(extra.scopes), self.max_bytes)
        if state is not None:
            self._state = state
        return state

    def _advanced(self, np: Any, db: PgDb, state: CopyState | None, now: Snapshot, horizon: int) -> CopyState | None:
        """`state` brought to snapshot `now` (an empty state when there is none, or when it cannot
        be brought up: too many changes, or the log pruned past it); None when `now` is older."""
        if state is None or state.snapshot == now:
            return state or CopyState(now)
        if not sees_all_of(now, state.snapshot):
            return None
        changed = changed_since(db, state.snapshot, horizon, self.refresh_rows, nodes_only=True)
        if changed is None:
            return CopyState(now)
        new, read = refreshed(np, db, state, changed, now, REFRESH_PHRASES)
        self.rows_read += read
        return new

    def _with(
        self, np: Any, db: PgDb, state: CopyState, keys: Sequence[Phrase], scope: Sequence[int]
    ) -> CopyState | None:
        """`state` (at this snapshot) holding the copies a ranking needs over `scope`, read now where
        missing and the bound allows — a value copy only over the initiatives it lacks; least
        recently used copies are given up for them. A new state, which the caller keeps."""
        wanted = frozenset(scope)
        missing = {k: wanted - state.covered.get(k, frozenset()) for k in dict.fromkeys(keys)}
        missing = {k: m for k, m in missing.items() if m}
        scopes = [i for i in dict.fromkeys(scope) if i not in state.scopes]
        if not missing and not scopes:
            for k in keys:
                state.values.move_to_end(k)
            return state
        found = db.raw_one("SELECT coalesce(max(seq), 0) + 1 FROM nodes")
        length = int(found[0]) if found else 1
        # At least a byte a row for each copy to read (two for the lengths): copies that could not
        # fit beside the ones this ranking uses are not read in vain.
        used = sum(int(a.nbytes) for k, a in state.values.items() if k in missing or k in keys)
        used += sum(int(a.nbytes) for i, a in state.scopes.items() if i in wanted)
        fresh = [k for k in missing if k not in state.values]
        if used + length * (len(fresh) + (SIZES in fresh) + len(scopes)) > self.max_bytes:
            return None
        new = CopyState(state.snapshot, state)
        for initiative in scopes:
            seqs = self._read(
                np,
                db,
                "SELECT m.node_seq, 1.0::float8 FROM memberships m JOIN nodes n ON n.seq = m.node_seq "
                "WHERE m.initiative_id = %(i)s AND NOT n.retracted AND n.node_type <> 'audit_event'",
                {"i": initiative},
            )[0]
            new.scopes[initiative] = put_rows(np, None, seqs, np.ones(len(seqs), dtype=bool))
        room = (self.max_bytes - used) // length - len(fresh) - (SIZES in fresh) - len(scopes)
        groups: dict[frozenset[int], list[Phrase]] = {}
        for key, initiatives in missing.items():
            groups.setdefault(initiatives, []).append(key)
        for initiatives, group in groups.items():
            hinted = self._hinted(db, state, group, initiatives, max(0, room))
            room -= len(hinted)
            group += hinted
            # One pass over the initiatives' members reads every value copy they lack: the row (and
            # its term counts) is fetched once, whatever the number of terms read from it.
            params: dict[str, Any] = {"scope": sorted(initiatives)}
            inner, outer = [], []
            for i, key in enumerate(group):
                params[f"t{i}"] = key[1]
                if key in (SIZES, REFUTED):
                    inner.append(f"{value_sql(key, '')} AS e{i}")
                    outer.append(f"x.e{i}")
                else:  # the term's counts looked up once (the frequency reads them field by field)
                    inner.append(f"n.{key[0]} -> %(t{i})s AS e{i}")
                    outer.append(bm25.frequency_sql(f"x.e{i}", key[2]))
            # Each term-count column decompressed once a row, whatever the number of terms (`bm25.detoasted`).
            counts = "".join(
                f", {bm25.detoasted(f'n.{c}')} AS {c}" for c in sorted({k[0] for k in group} - {SIZES[0], REFUTED[0]})
            )
            members = (
                f"(SELECT n.seq, n.dl, n.node_type, n.status{counts} FROM nodes n WHERE n.seq IN (SELECT m.node_seq "
                "FROM memberships m WHERE m.initiative_id = ANY(%(scope)s::bigint[])) OFFSET 0) n"
            )
            read = self._read(
                np,
                db,
                f"SELECT x.seq, {', '.join(outer)} FROM (SELECT n.seq, {', '.join(inner)} FROM {members} OFFSET 0) x",
                params,
                len(group),
            )
            for key, column in zip(group, read[1:], strict=True):
                new.values[key] = put_rows(np, state.values.get(key), read[0], column)
                new.covered[key] = state.covered.get(key, frozenset()) | initiatives
        for k in keys:
            new.values.move_to_end(k)
        evict(new, set(keys), wanted, self.max_bytes)
        return new

    def _hinted(
        self, db: PgDb, state: CopyState, group: list[Phrase], initiatives: frozenset[int], room: int
    ) -> list[Phrase]:
        """Up to `room` (and `PREFETCH`) more phrases to read in the same pass as `group`'s: the
        vault's most common terms in the same column and fields (`term_docs`, read once a
        process), which broad searches are made of — so the first broad search of a process reads
        the copies of the next ones too (a pass costs about the same for one term or eight)."""
        if self._common is None:
            # The common terms first (HAVING), then ranked: the same rows as ranking every term and
            # keeping the common ones among the first (being common follows the rank), without
            # sorting the whole vocabulary (decision 275).
            found = db.raw_rows(
                "SELECT stemmed, term FROM (SELECT stemmed, term, row_number() OVER (PARTITION BY stemmed "
                "ORDER BY d DESC, term) AS k FROM (SELECT stemmed, term, sum(docs) AS d FROM term_docs "
                f"GROUP BY stemmed, term HAVING sum(docs) * {COMMON_DIVISOR} > "
                f"(SELECT coalesce(sum(docs), 0) FROM text_totals)) g) t WHERE k <= {PREFETCH} ORDER BY stemmed, k"
            )
            self._common = {"stf" if r[0] else "ltf": [] for r in found}
            for stemmed, word in found:
                self._common["stf" if stemmed else "ltf"].append(str(word))
        more: list[Phrase] = []
        for column, fields in dict.fromkeys((k[0], k[2]) for k in group if k not in (SIZES, REFUTED)):
            for word in self._common.get(column, []):
                key = (column, word, fields)
                if len(more) >= min(room, PREFETCH):
                    return more
                if key not in group and key not in more and not initiatives <= state.covered.get(key, frozenset()):
                    more.append(key)
        return more

    def _read(self, np: Any, db: PgDb, select: str, params: dict[str, Any], width: int = 1) -> list[np.ndarray]:
        """`PgDb.copy_columns`, counted."""
        self.loads += 1
        return db.copy_columns(np, select, params, width)
