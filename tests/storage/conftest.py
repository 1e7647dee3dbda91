"""Fixtures the storage tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def url() -> Iterator[str]:
    """A fresh, migrated PostgreSQL vault database for one test, given back afterwards (only for
    tests that ask for it: the PostgreSQL modules skip themselves when no server is configured)."""
    from tests.pg import drop_database, fresh_database

    made = fresh_database()
    yield made
    drop_database(made)
