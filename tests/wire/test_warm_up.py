"""A server's first answer starts the read path's warm-up (decision 269): the modules a first
`recall` imports and, on SQLite, every row's size for the in-memory copies, read on a thread of its
own while the agent reads that answer — so the first `recall` of a session does not pay for them."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from kaeru.storage.sqlite.search import FtsSearch
from kaeru.storage.sqlite.store import SqliteStore
from tests.backends import new_vault


def _note(registry: ToolRegistry, i: int) -> None:
    answer = asyncio.run(registry.envelope("note", {"initiative": "warm", "text": f"note {i} about the warm harbour"}))
    assert answer["state"] == "applied", answer


@pytest.mark.parametrize(("warms", "common", "read"), [(True, True, 1), (False, True, 0), (True, False, 0)])
def test_the_first_answer_warms_the_read_path_only_in_a_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warms: bool, common: bool, read: int
) -> None:
    """`common`: every word counts as common, as in a large vault (here a small one, where every word
    takes the rare plan and no copy is ever read: nothing to read ahead, not even numpy)."""
    if common:
        monkeypatch.setattr(FtsSearch, "rare_rows", 0)
    vault = new_vault("sqlite", tmp_path)
    store = open_store(vault.settings())
    assert isinstance(store, SqliteStore)
    try:
        registry = build_server(Service(store, vault.settings())).registry
        registry.warms = warms
        _note(registry, 0)
        _note(registry, 1)
        registry.wait_loaded(5)

        assert not registry.warming
        assert store._common.text.size_loads == read  # every row's size, read once
    finally:
        store.close()


def test_a_store_that_keeps_no_copies_reads_nothing_ahead(tmp_path: Path) -> None:
    vault = new_vault("sqlite", tmp_path)
    store = open_store(replace(vault.settings(), search_cache_mb=0))
    assert isinstance(store, SqliteStore)
    try:
        registry = build_server(Service(store, vault.settings())).registry
        registry.warms = True
        _note(registry, 0)
        registry.wait_loaded(5)
        assert store._common.text.size_loads == 0
    finally:
        store.close()
