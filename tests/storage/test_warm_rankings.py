"""The next server on a vault replays the latest rankings the last one's copies served (decision 270):
kept in the vault when a store closes, read back by the warm-up, so an agent's next session finds
its project's common words copied before its first recalls ask for them — with the same answers."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.service import Service
from kaeru.storage.base import SearchQuery
from kaeru.storage.sqlite.search import FtsSearch
from kaeru.storage.sqlite.store import SqliteStore
from kaeru.storage.sqlite.warmlist import KEPT, WARM_KEY, RecentRankings, loads


def _ranked(store: SqliteStore, q: SearchQuery, cache: bool = True) -> tuple[Any, ...]:
    with store.read() as session:
        assert isinstance(session, FtsSearch)
        session.top_k, session.rare_rows, session.top_k_slack = True, 0, 0
        session.text_cache, session.few_rows = cache, 0  # the copies whenever they can
        rows, total, _ = session.search(q)
    return [(r.id, r.score) for r in rows], total


def _kept(path: Path) -> str | None:
    store = SqliteStore(path)
    try:
        with store.read() as session:
            row = session._db.one("SELECT value FROM meta WHERE key = ?", (WARM_KEY,))
        return None if row is None else str(row[0])
    finally:
        store.close()


def test_a_new_store_warms_the_copies_the_last_one_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FtsSearch, "rare_rows", 0)  # every word common, as in a large vault
    path = tmp_path / "vault.sqlite3"
    store = SqliteStore(path)
    service = Service(store, Settings(vault_dir=tmp_path, secret_policy="allow"))
    for text in ("harbour ledger", "harbour", "ledger review harbour", "review", "harbour ledger ledger"):
        service.note(parse("note", {"initiative": "warm-a", "text": text, "kind": "observation"}))
    with store.read() as session:
        scope = session.initiative_by_name("warm-a")
    assert scope is not None
    q = SearchQuery(initiative_ids=[scope.id], tokens=["harbour", "ledger"], window=3)
    first = _ranked(store, q)
    assert first[1] == 4 and store._common.text.loads > 0  # ranked from copies
    store.close()
    kept = _kept(path)
    assert kept is not None and loads(kept)

    unhurried = SqliteStore(path)
    try:
        unhurried.warm(lambda: False)  # the row sizes only: no time left for the rankings
        assert (unhurried._common.text.size_loads, unhurried._common.text.loads) == (1, 0)
    finally:
        unhurried.close()

    again = SqliteStore(path)
    try:
        again.warm(lambda: True)
        text = again._common.text
        loads_after_warm = text.loads
        assert loads_after_warm > 0  # the copies were read by the warm-up
        assert _ranked(again, q) == first == _ranked(again, q, cache=False)  # the same answer as SQL's
        assert text.loads == loads_after_warm  # and served from them, none read again
    finally:
        again.close()
    assert _kept(path) == kept  # nothing new ranked: nothing written again


def test_a_store_that_ranked_nothing_from_copies_keeps_nothing(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite3"
    store = SqliteStore(path)
    service = Service(store, Settings(vault_dir=tmp_path, secret_policy="allow"))
    service.note(parse("note", {"initiative": "warm-b", "text": "a quiet note", "kind": "observation"}))
    store.close()
    assert _kept(path) is None


def test_the_latest_rankings_are_bounded_and_a_damaged_value_is_ignored() -> None:
    recent = RecentRankings()
    for i in range(KEPT + 5):
        recent.note([(f'"w{i}"', (1.0, 0.5))], [('"s1"', ())], False, True)
    recent.note([('"w6"', (1.0, 0.5))], [('"s1"', ())], False, True)  # asked again: the latest
    kept = loads(recent.dumps())
    assert len(kept) == KEPT and kept[-1][0] == (('"w6"', (1.0, 0.5)),)
    assert kept[0][0] == (('"w5"', (1.0, 0.5)),)
    assert recent.changed
    recent.kept(recent.dumps())
    assert not recent.changed
    assert loads("not json") == [] and loads('{"a": 1}') == [] and loads("[[1]]") == []


def test_a_search_with_the_copies_off_notes_nothing(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "vault.sqlite3", search_cache_bytes=0)
    try:
        service = Service(store, Settings(vault_dir=tmp_path, secret_policy="allow"))
        service.note(parse("note", {"initiative": "warm-c", "text": "harbour ledger", "kind": "observation"}))
        with store.read() as session:
            scope = session.initiative_by_name("warm-c")
        assert scope is not None
        _ranked(store, dataclasses.replace(SearchQuery(initiative_ids=[scope.id], tokens=["harbour"], window=3)))
        assert not store._common.text.recent.changed
    finally:
        store.close()
