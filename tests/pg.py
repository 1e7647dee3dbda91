"""PostgreSQL test databases: created fresh per test on the server of `KAERU_TEST_DATABASE_URL`."""

from __future__ import annotations


def fresh_database() -> str:
    """Create an empty database and return its URL."""
    raise RuntimeError("the PostgreSQL backend is not implemented yet")


def drop_database(url: str) -> None:
    """Drop a database made by `fresh_database`."""
