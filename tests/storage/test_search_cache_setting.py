"""`KAERU_SEARCH_CACHE_MB` bounds the in-memory copies broad searches rank from (decision 129): the
store a server opens takes it from the settings, on both engines, and 0 leaves every ranking to SQL."""

from __future__ import annotations

from dataclasses import replace

from kaeru.config import Settings
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec


def _bound(store: object) -> int:
    copies = getattr(store, "copies", None)  # PostgreSQL's; SQLite's hang off its common-word memo
    if copies is None:
        copies = store._common.text  # type: ignore[attr-defined]
    return int(copies.max_bytes)


def test_the_copies_bound_is_the_setting(vault: VaultSpec) -> None:
    for megabytes in (0, 3, 64):
        store = open_store(replace(vault.settings(), search_cache_mb=megabytes))
        try:
            assert _bound(store) == megabytes << 20
        finally:
            store.close()


def test_the_setting_is_read_from_the_environment() -> None:
    assert Settings.from_env({"KAERU_VAULT": "/tmp/x"}).search_cache_mb == 64
    assert Settings.from_env({"KAERU_VAULT": "/tmp/x", "KAERU_SEARCH_CACHE_MB": "512"}).search_cache_mb == 512
