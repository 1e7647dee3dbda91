"""The top-k plan of a common-word search (SQLite, decision 16.B1) answers exactly what the
exhaustive plan answers: the same hits in the same order, the same `total` and the same superseded
count (and the superseded matches noted for their successors agree).

On random small vaults every word is rare, so the store is told to treat every word as common
(`rare_rows = 0`); a small `top_k_slack` makes the first candidate set smaller than the matches, so
the count, the edge-side superseded count and the growing rounds all run; a large one lets the
candidate cap cover every match.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Iterator
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
from kaeru.storage.sqlite.search import FtsSearch
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


def _search(store: SqliteStore, q: SearchQuery, top_k: bool, slack: int, ids: int = 4096) -> tuple[Any, ...]:
    out: list[tuple[int, str]] = []
    asked = dataclasses.replace(q, superseded_out=out)
    with store.read() as session:
        assert isinstance(session, FtsSearch)
        session.top_k, session.rare_rows, session.top_k_slack, session.superseded_ids = top_k, 0, slack, ids
        rows, total, omitted = session.search(asked)
    return [(r.id, r.seq, r.score, r.refuted) for r in rows], total, omitted, out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, min_size=4, max_size=40), queries=st.lists(query, min_size=1, max_size=6))
def test_top_k_plan_equals_exhaustive_ranking(
    vault: tuple[SqliteStore, Settings], steps: list[tuple[Any, ...]], queries: list[dict[str, Any]]
) -> None:
    store, config = vault
    n = next(_examples)
    ticks = itertools.count()
    rng = random.Random(n)
    start = datetime(2031, 1, 1, tzinfo=UTC) + timedelta(hours=n)
    service = Service(
        store, config, clock=lambda: start + timedelta(milliseconds=next(ticks)), entropy=lambda k: rng.randbytes(k)
    )
    ids: list[str] = []
    for op in steps:
        _apply(service, f"ex{n}", ids, op)
    with store.read() as session:
        scopes = {name: session.initiative_by_name(f"ex{n}-{name}") for name in ("a", "b")}
    for raw in queries:
        found = [scopes[s] for s in raw["scope"] if scopes[s] is not None]
        if not found:
            continue
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
        for slack, exact, flagged in ((0, None, 4096), (1, None, 0), (10_000, None, 1), (0, False, 4096)):
            # 10,000: the first candidate set covers every match. `audit_free` False: the store does
            # not trust the index to hold exactly the scope's live members, and filters and counts
            # through `nodes_head` (decision 16.K1); None: it reads that the index does. `flagged`: how
            # many superseded nodes are flagged from a set (past it, by a look-up per candidate).
            store._common.audit_free = exact
            try:
                top_rows, top_total, top_omitted, top_noted = _search(store, q, top_k=True, slack=slack, ids=flagged)
            finally:
                store._common.audit_free = None
            assert (top_rows, top_total, top_omitted) == (rows[: q.window], total, omitted), (raw, slack, exact)
            # The superseded matches among the ranked candidates are noted: the reference's first ones.
            assert top_noted == noted[: len(top_noted)], (raw, slack)
            if slack == 10_000:
                assert top_noted == noted, (raw, slack)
        # `count_matches` (recall's per-word counts): every match, superseded ones included.
        every = _search(store, dataclasses.replace(q, window=5000, omit_superseded=False), top_k=False, slack=0)
        with store.read() as session:
            assert isinstance(session, FtsSearch)
            session.rare_rows = 0
            assert session.count_matches(q) == every[1], raw


def test_rows_are_search_rows(vault: tuple[SqliteStore, Settings]) -> None:
    """The plan's rows are the store's `SearchRow`s (a cheap guard for the tuple built by hand)."""
    store, config = vault
    service = Service(store, config)
    service.note(parse("note", {"initiative": "rows-a", "text": "alpha beta", "kind": "observation"}))
    with store.read() as session:
        scope = session.initiative_by_name("rows-a")
        assert scope is not None and isinstance(session, FtsSearch)
        session.rare_rows = 0
        rows, total, _ = session.search(SearchQuery(initiative_ids=[scope.id], tokens=["alpha"], window=1))
    assert total == 1 and isinstance(rows[0], SearchRow)
