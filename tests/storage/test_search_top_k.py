"""The top-k plan of a common-word search (SQLite, decision 16.B1) and its ranking in memory
(decision 16.B4) answer exactly what the exhaustive plan answers: the same hits in the same order,
with the same bm25 scores to the bit, the same `total` and the same superseded count (and the
superseded matches noted for their successors agree), also after writes between searches.

On random small vaults every word is rare, so the store is told to treat every word as common
(`rare_rows = 0`); a small `top_k_slack` makes the first candidate set smaller than the matches, so
the count, the edge-side superseded count and the growing rounds all run; a large one lets the
candidate cap cover every match.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import random
import tracemalloc
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.service import Service
from kaeru.storage.base import SearchQuery, SearchRow
from kaeru.storage.sql.copies import SPARSE_SHARE
from kaeru.storage.sql.sections import SectionQueries
from kaeru.storage.sqlite import impacts
from kaeru.storage.sqlite.impacts import BY_ID_COST, CACHE_BYTES, IDLE_RANKINGS, REFRESH_ROWS
from kaeru.storage.sqlite.search import SCOPE_THRESHOLD, FtsSearch
from kaeru.storage.sqlite.session import SqliteSession
from kaeru.storage.sqlite.store import SqliteStore

WORDS = ["alpha", "beta", "gamma", "delta", "alphabet", "omega"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
step = st.one_of(
    st.tuples(st.just("note"), st.sampled_from(["a", "b"]), text, st.sampled_from(["observation", "decision"])),
    st.tuples(st.just("note"), st.sampled_from(["a", "b"]), text, st.sampled_from(["idea", "reference"])),
    st.tuples(st.just("supersede"), st.integers(0, 40), text),
    st.tuples(st.just("forget"), st.integers(0, 40)),
)
query = st.fixed_dictionaries(
    {
        "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=2, unique=True),
        "scope": st.sampled_from([("a",), ("b",), ("a", "b")]),
        "match_all": st.booleans(),
        "prefix": st.booleans(),
        "omit_superseded": st.booleans(),
        "window": st.sampled_from([1, 3, 10, 5000]),
        "stemmed": st.booleans(),
    }
)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SqliteStore, Settings]]:
    path: Path = tmp_path_factory.mktemp("top-k")
    store = SqliteStore(path / "vault.sqlite3")
    try:
        yield store, Settings(vault_dir=path, secret_policy="allow")
    finally:
        store.close()


_examples = itertools.count()


def _apply(service: Service, scope: str, ids: list[str], op: tuple[Any, ...]) -> None:
    if op[0] == "note":
        args = {"initiative": f"{scope}-{op[1]}", "text": op[2], "kind": op[3]}
        outcome, _ = service.note(parse("note", args))
        assert outcome.primary is not None
        ids.append(outcome.primary.id)
    elif ids and op[0] == "supersede":
        source = ids[op[1] % len(ids)]
        args = {"initiative": f"{scope}-b", "mode": "supersede", "source": source, "new_body": op[2]}
        try:
            outcome, _ = service.evolve(parse("evolve", args))
        except Exception:  # a forgotten source: nothing to supersede
            return
        if outcome.primary is not None:
            ids.append(outcome.primary.id)
    elif ids and op[0] == "forget":
        try:
            service.forget(parse("forget", {"initiative": f"{scope}-a", "node": ids[op[1] % len(ids)], "reason": "t"}))
        except Exception:  # already forgotten
            pass


def _search(
    store: SqliteStore, q: SearchQuery, top_k: bool, slack: int, ids: int = 4096, cache: bool = True, rare: int = 0
) -> tuple[Any, ...]:
    out: list[tuple[int, str]] = []
    asked = dataclasses.replace(q, superseded_out=out)
    with store.read() as session:
        assert isinstance(session, FtsSearch)
        session.top_k, session.rare_rows, session.top_k_slack, session.superseded_ids = top_k, rare, slack, ids
        session.text_cache, session.few_rows = cache, 0  # the copies whenever they can, whatever the scope
        rows, total, omitted = session.search(asked)
    return [(r.id, r.seq, r.score, r.refuted) for r in rows], total, omitted, out


#: The store's `TextCache` as an example sets it (memory, revised rows read back, sizes not read
#: yet past which all are read, the share under which a copy is kept sparse, what a row read back
#: by id costs): defaults (an example's small copies are read again whole after a revision, 274);
#: revised rows read back by id, however small the copy, dense and sparse; every revised row read
#: back whole (a copy read again after any revision); no memory (every search falls back to SQL);
#: every row's size read at the first ranking; only the sizes a ranking needs, always; every copy
#: sparse (its rows' ids beside their values); every copy dense (decision 198).
CACHES = [
    (None, None, None, None, None),
    (None, None, None, None, 0),
    (None, None, None, 0, 0),
    (None, 0, None, None, None),
    (0, None, None, None, None),
    (None, None, 0, None, None),
    (None, None, 10**9, None, None),
    (None, None, None, 0, None),
    (None, 0, None, 0, None),
    (None, None, None, 10**9, None),
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(step, min_size=4, max_size=40),
    queries=st.lists(st.tuples(query, st.lists(step, max_size=3)), min_size=1, max_size=6),
    cache=st.sampled_from(CACHES),
)
def test_top_k_plan_equals_exhaustive_ranking(
    vault: tuple[SqliteStore, Settings],
    steps: list[tuple[Any, ...]],
    queries: list[tuple[dict[str, Any], list[tuple[Any, ...]]]],
    cache: tuple[int | None, int | None, int | None, int | None, int | None],
) -> None:
    store, config = vault
    n = next(_examples)
    ticks = itertools.count()
    rng = random.Random(n)
    start = datetime(2031, 1, 1, tzinfo=UTC) + timedelta(hours=n)
    service = Service(
        store, config, clock=lambda: start + timedelta(milliseconds=next(ticks)), entropy=lambda k: rng.randbytes(k)
    )
    text = store._common.text
    text.max_bytes, text.refresh_rows = (
        (CACHE_BYTES if cache[0] is None else cache[0]),
        (REFRESH_ROWS if cache[1] is None else cache[1]),
    )
    text.bulk_rows = cache[2]
    text.sparse_share = SPARSE_SHARE if cache[3] is None else cache[3]
    text.by_id_cost = BY_ID_COST if cache[4] is None else cache[4]
    ids: list[str] = []
    try:
        for op in steps:
            _apply(service, f"ex{n}", ids, op)
        for raw, between in queries:
            _check(store, n, raw)
            for op in between:  # an agent writes between searches: the copies are brought up to date
                _apply(service, f"ex{n}", ids, op)
    finally:
        text.max_bytes, text.refresh_rows, text.bulk_rows = CACHE_BYTES, REFRESH_ROWS, None
        text.sparse_share, text.by_id_cost = SPARSE_SHARE, BY_ID_COST


def _check(store: SqliteStore, n: int, raw: dict[str, Any]) -> None:
    with store.read() as session:
        scopes = {name: session.initiative_by_name(f"ex{n}-{name}") for name in ("a", "b")}
    found = [scopes[s] for s in raw["scope"] if scopes[s] is not None]
    if not found:
        return
    q = SearchQuery(
        initiative_ids=[s.id for s in found if s is not None],
        tokens=raw["words"],
        match_all=raw["match_all"],
        prefix=raw["prefix"],
        omit_superseded=raw["omit_superseded"],
        window=raw["window"],
        stemmed=raw["stemmed"],
        superseded_head=3,
    )
    # The reference: the exhaustive plan with a window larger than these vaults, cut to the window.
    rows, total, omitted, noted = _search(store, dataclasses.replace(q, window=5000), top_k=False, slack=0)
    variants = (
        (0, None, 4096, True, 0),
        (1, None, 0, True, 0),
        (10_000, None, 1, True, 0),
        (0, False, 4096, True, 0),
        (0, None, 4096, False, 0),
        (1, None, 4096, False, 0),
        (10_000, None, 1, False, 0),
        (1, None, 4096, True, 3),
        (10_000, None, 4096, False, 3),
    )
    for slack, exact, flagged, cache, rare in variants:
        # 10,000: the first candidate set covers every match. `audit_free` False: the store does
        # not trust the index to hold exactly the scope's live members, and filters and counts
        # through `nodes_head` (decision 16.K1); None: it reads that the index does. `flagged`: how
        # many superseded nodes are flagged from a set (past it, by a look-up per candidate).
        # `cache`: ranked in memory (decision 16.B4) where it can, or by SQL's top-k plan. `rare`:
        # words matching at most that many rows in the vault take the rare plan — several words
        # are probed unranked first (decision 126) — and the rest go on as common.
        store._common.audit_free = exact
        try:
            top_rows, top_total, top_omitted, top_noted = _search(
                store, q, top_k=True, slack=slack, ids=flagged, cache=cache, rare=rare
            )
        finally:
            store._common.audit_free = None
        assert (top_rows, top_total, top_omitted) == (rows[: q.window], total, omitted), (
            raw,
            slack,
            exact,
            cache,
            rare,
        )
        # The superseded matches among the ranked candidates are noted: the reference's first ones.
        assert top_noted == noted[: len(top_noted)], (raw, slack)
        if slack == 10_000:
            assert top_noted == noted, (raw, slack)
    # `count_matches` (recall's per-word counts): every match, superseded ones included.
    every = _search(store, dataclasses.replace(q, window=5000, omit_superseded=False), top_k=False, slack=0)
    # Words in at most `rare` rows of the vault (all of these small vaults' words at 2,000) are
    # counted in the index alone when it holds exactly the scope's live members (decision 246).
    for cache, rare in ((True, 0), (False, 0), (True, SCOPE_THRESHOLD)):
        with store.read() as session:
            assert isinstance(session, FtsSearch)
            session.rare_rows, session.few_rows, session.text_cache = rare, 0, cache
            assert session.count_matches(q) == every[1], raw


def test_cache_follows_writes(vault: tuple[SqliteStore, Settings]) -> None:
    """The in-memory ranking (decision 16.B4) serves from its copies, reads back only what a write
    changed (a new note by range, a forgotten or superseded one by id), and answers an older
    snapshot than its copies through SQL: each time exactly what the exhaustive plan answers. (These
    copies hold a few rows: each is read back by id only because `by_id_cost` is 0 here; by default
    such a copy is read again whole, `test_a_small_copy_is_read_again_whole`.)"""
    store, config = vault
    service = Service(store, config)
    text = store._common.text
    text.by_id_cost = 0
    notes = [
        service.note(parse("note", {"initiative": "follow-a", "text": t, "kind": "observation"}))[0].primary
        for t in ("omega omega beta", "omega", "beta gamma omega", "gamma", "omega beta beta beta")
    ]
    with store.read() as session:
        scope = session.initiative_by_name("follow-a")
    assert scope is not None
    q = SearchQuery(initiative_ids=[scope.id], tokens=["omega", "beta"], window=3)

    def both() -> tuple[Any, Any]:
        return _search(store, q, top_k=True, slack=0), _search(store, q, top_k=False, slack=0)

    cached, exhaustive = both()
    assert cached == exhaustive and cached[1] == 4
    loads, read = text.loads, text.rows_read
    assert both()[0] == cached and (text.loads, text.rows_read) == (loads, read)  # served from memory
    service.note(parse("note", {"initiative": "follow-a", "text": "beta omega omega omega", "kind": "observation"}))
    cached, exhaustive = both()
    assert cached == exhaustive and cached[1] == 5
    assert text.loads == loads and text.rows_read > read  # the new row, read by range
    first = notes[0]
    assert first is not None
    with store.read() as old:  # a snapshot taken before the next write
        assert isinstance(old, FtsSearch)
        old.rare_rows, old.few_rows, old.top_k_slack = 0, 0, 0
        before = old.search(q)
        service.forget(parse("forget", {"initiative": "follow-a", "node": first.id, "reason": "t"}))
        cached, exhaustive = both()
        assert cached == exhaustive and cached[1] == 4
        assert text.loads == loads  # the forgotten row, read back by id
        assert old.search(q) == before  # older than the copies: ranked by SQL in its own snapshot
    # Revised in place (same row, more tokens: its `D` changes too): read back by id, copies and sizes.
    third = notes[2]
    assert third is not None
    sizes = text.size_loads
    longer = "beta gamma omega " + " ".join(["gamma"] * 40)
    service.revise(parse("revise", {"initiative": "follow-a", "node": third.id, "patch": {"body": longer}}))
    cached, exhaustive = both()
    assert cached == exhaustive and (text.loads, text.size_loads) == (loads, sizes)
    text.refresh_rows = 0
    try:
        service.note(parse("note", {"initiative": "follow-a", "text": "omega", "kind": "observation"}))
        service.forget(parse("forget", {"initiative": "follow-a", "node": notes[1].id, "reason": "t"}))  # type: ignore[union-attr]
        cached, exhaustive = both()
        assert cached == exhaustive and text.loads > loads  # a revision past the limit: read again whole
    finally:
        text.refresh_rows, text.by_id_cost = REFRESH_ROWS, BY_ID_COST


def test_a_small_copy_is_read_again_whole(vault: tuple[SqliteStore, Settings]) -> None:
    """A revised row is read back by id only while that costs less than reading the copy again
    whole (decision 274): a look-up by id costs about `BY_ID_COST` rows of a whole read, so a copy of
    fewer rows than that is read whole after a revision, and one of many rows by id."""
    store, config = vault
    service = Service(store, config)
    text = store._common.text
    many = BY_ID_COST * 2
    for i in range(many):
        service.note(parse("note", {"initiative": "small-a", "text": f"zeta common {i}", "kind": "observation"}))
    rare = [
        service.note(parse("note", {"initiative": "small-a", "text": f"rhoword common {i}", "kind": "observation"}))[
            0
        ].primary
        for i in range(2)
    ]
    with store.read() as session:
        scope = session.initiative_by_name("small-a")
    assert scope is not None and rare[0] is not None
    small = SearchQuery(initiative_ids=[scope.id], tokens=["rhoword"], window=5)
    large = SearchQuery(initiative_ids=[scope.id], tokens=["common"], window=5)
    for q in (small, large):
        assert _search(store, q, top_k=True, slack=0) == _search(store, q, top_k=False, slack=0)
    loads, read = text.loads, text.rows_read
    service.revise(
        parse("revise", {"initiative": "small-a", "node": rare[0].id, "patch": {"body": "rhoword common again"}})
    )
    assert _search(store, large, top_k=True, slack=0) == _search(store, large, top_k=False, slack=0)
    assert text.loads == loads and text.rows_read > read  # the revised row, read back by id
    assert _search(store, small, top_k=True, slack=0) == _search(store, small, top_k=False, slack=0)
    assert text.loads == loads + 1  # two rows: read again whole


def test_copies_in_use_are_not_given_up_for_another(vault: tuple[SqliteStore, Settings]) -> None:
    """More common words than fit the memory bound: a new word is ranked by SQL (the same answer)
    rather than evicting a copy a search still uses — reading copies that evict each other in turn
    would cost more than SQL every time — and takes the room of one left idle for `IDLE_RANKINGS`."""
    store, config = vault
    service = Service(store, config)
    text = store._common.text
    for body in ("kappa lambda", "kappa", "lambda mu", "mu kappa", "lambda"):
        service.note(parse("note", {"initiative": "room-a", "text": body, "kind": "observation"}))
    with store.read() as session:
        scope = session.initiative_by_name("room-a")
    assert scope is not None

    def query(word: str) -> SearchQuery:
        return SearchQuery(initiative_ids=[scope.id], tokens=[word], window=3)

    text.clear()
    try:
        before = text.loads
        kappa = query("kappa")
        assert _search(store, kappa, top_k=True, slack=0) == _search(store, kappa, top_k=False, slack=0)
        loads = text.loads
        assert loads == before + 2  # the word and the scope
        text.max_bytes = text.nbytes  # the row sizes, one word and the scope
        lam = query("lambda")
        for _ in range(IDLE_RANKINGS - 1):  # "kappa" was used within the last IDLE_RANKINGS rankings
            assert _search(store, lam, top_k=True, slack=0) == _search(store, lam, top_k=False, slack=0)
            assert text.loads == loads
        for _ in range(2):  # now idle: given up for "lambda", read once
            assert _search(store, lam, top_k=True, slack=0) == _search(store, lam, top_k=False, slack=0)
        assert text.loads == loads + 1
    finally:
        text.max_bytes = CACHE_BYTES


@pytest.mark.parametrize("share", [0, 10**9], ids=["sparse", "dense"])
def test_the_bound_counts_what_the_copies_keep_alive(vault: tuple[SqliteStore, Settings], share: int) -> None:
    """`max_bytes` bounds the memory the copies keep alive, not only their arrays' data: each copy's
    own objects (the arrays' headers, the copy, its watermark, the cache's entry) are counted with it.
    Measured with tracemalloc over what the cache's code allocates and keeps (the MATCH text of the
    key is built elsewhere and left out): a long session ranking many common words in turn, as
    `bench.soak`'s does, keeps no more than it counts — with every copy sparse (its rows' ids beside
    their values) and with every copy dense."""
    store, config = vault
    service = Service(store, config)
    words = [f"held{i}word" for i in range(120)]
    for n in range(8):
        service.note(parse("note", {"initiative": "held-a", "text": " ".join(words[n::8]), "kind": "observation"}))
    with store.read() as session:
        scope = session.initiative_by_name("held-a")
    assert scope is not None
    text = store._common.text

    def rank(word: str) -> None:
        with store.read() as session:
            assert isinstance(session, FtsSearch)
            session.rare_rows = session.few_rows = 0
            session.search(SearchQuery(initiative_ids=[scope.id], tokens=[word], window=3))

    text.clear()
    text.sparse_share = share
    try:
        rank(words[0])  # the row sizes, the scope's copy and one word's
        gc.collect()
        tracemalloc.start(40)
        try:
            before, counted = tracemalloc.take_snapshot(), text.nbytes
            for word in words[1:]:
                rank(word)
            gc.collect()
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        assert {held.rows is not None for held in text._held.values()} == {share == 0}
    finally:
        text.sparse_share = SPARSE_SHARE
    mine = [tracemalloc.Filter(True, impacts.__file__, all_frames=True)]
    kept = sum(s.size_diff for s in after.filter_traces(mine).compare_to(before.filter_traces(mine), "filename"))
    assert len(text._held) == len(words) + 1  # every copy kept: the bound is far
    assert 0 < kept <= text.nbytes - counted


def test_rows_are_search_rows(vault: tuple[SqliteStore, Settings]) -> None:
    """The plan's rows are the store's `SearchRow`s (a cheap guard for the tuple built by hand)."""
    store, config = vault
    service = Service(store, config)
    service.note(parse("note", {"initiative": "rows-a", "text": "alpha beta", "kind": "observation"}))
    with store.read() as session:
        scope = session.initiative_by_name("rows-a")
        assert scope is not None and isinstance(session, FtsSearch)
        session.rare_rows = session.few_rows = 0
        rows, total, _ = session.search(SearchQuery(initiative_ids=[scope.id], tokens=["alpha"], window=1))
    assert total == 1 and isinstance(rows[0], SearchRow)


def test_long_rows_rank_as_fts5_does(vault: tuple[SqliteStore, Settings]) -> None:
    """Rows of hundreds and thousands of tokens (their `D` a 2- or 3-byte varint in
    `nodes_fts_docsize`, decision 16.E1) and a word repeated hundreds of times (an `aFreq` past one
    byte) score to the bit as `bm25()` scores them; the random vaults above hold short rows only."""
    store, config = vault
    service = Service(store, config)
    text = store._common.text
    rng = random.Random(7)
    filler = ["sigma", "tau", "upsilon", "phi", "chi"]
    for words in (3, 150, 700, 3_000, 20_000):
        body = " ".join(rng.choice(filler) for _ in range(words))
        service.note(parse("note", {"initiative": "long-a", "text": f"psi {body} psi", "kind": "observation"}))
    service.note(parse("note", {"initiative": "long-a", "text": " ".join(["psi"] * 400), "kind": "observation"}))
    with store.read() as session:
        scope = session.initiative_by_name("long-a")
    assert scope is not None
    for tokens in (["psi"], ["sigma"], ["psi", "tau"]):
        for stemmed in (False, True):
            q = SearchQuery(initiative_ids=[scope.id], tokens=tokens, window=10, stemmed=stemmed)
            with store.read() as session:
                assert isinstance(session, FtsSearch)
                session.few_rows = 0  # a small scope among the module's vaults: copies all the same
                assert session._ranking(q) is not None  # ranked in memory, not by SQL
            cached = _search(store, q, top_k=True, slack=0)
            assert cached == _search(store, q, top_k=False, slack=0), (tokens, stemmed)
            assert len(cached[0]) >= 4
    assert text.size_loads + text.size_fills >= 1  # the rows' sizes were read, all or those ranked


def test_scope_size_is_remembered_at_the_watermark(
    vault: tuple[SqliteStore, Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`scope_size` in a read snapshot is remembered by watermark (decision 16.E4): after each write
    (a note, a forget) it is what the membership count answers, and unchanged it is not counted again."""
    store, config = vault
    service = Service(store, config)
    made = [
        service.note(parse("note", {"initiative": "sizes-a", "text": t, "kind": "observation"}))[0].primary
        for t in ("one", "two", "three")
    ]
    with store.read() as session:
        scope = session.initiative_by_name("sizes-a")
    assert scope is not None

    def sizes() -> tuple[int, int]:
        with store.read() as session:
            assert isinstance(session, SqliteSession)
            return session.scope_size([scope.id]), SectionQueries.scope_size(session, [scope.id])

    assert sizes() == (3, 3)
    assert [n for (ids, _), n in store._common.scope_sizes.items() if ids == (scope.id,)] == [3]  # remembered
    counted: list[Sequence[int]] = []
    count = SectionQueries.scope_size
    monkeypatch.setattr(SectionQueries, "scope_size", lambda self, ids: counted.append(ids) or count(self, ids))
    with store.read() as session:
        assert session.scope_size([scope.id]) == 3
    assert counted == []  # unchanged: not counted again
    monkeypatch.undo()
    service.note(parse("note", {"initiative": "sizes-a", "text": "four", "kind": "observation"}))
    assert sizes() == (4, 4)
    first = made[0]
    assert first is not None
    service.forget(parse("forget", {"initiative": "sizes-a", "node": first.id, "reason": "t"}))
    assert sizes() == (3, 3)
