"""`kaeru reindex` with semantic recall on, with the packaged model (the `[semantic]` extra): the
memories written without vectors get theirs, the person is told how many (`--json`: the count in
its documented object), and a second run finds none left to write. SQLite only, and one model load:
the vectors' storage on both backends is tests/recall/test_semantic.py's, with a stand-in model."""

from __future__ import annotations

import pytest

from kaeru import semantic
from tests.backends import VaultSpec
from tests.cli.support import kaeru, write_notes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def test_reindex_writes_the_missing_vectors_and_says_how_many(sqlite_vault: VaultSpec) -> None:
    if not semantic.available():
        pytest.skip("the [semantic] extra is not installed")
    # Written without the semantic channel: no vectors yet.
    write_notes(sqlite_vault, "pets", "We adopted a puppy from the shelter last spring", "The build uses ruff and mypy")
    done = kaeru(sqlite_vault, "reindex", KAERU_SEMANTIC="1")
    assert done.code == 0, done.stderr
    assert done.stdout == "2 vector(s) written\n", done.stdout
    again = kaeru(sqlite_vault, "reindex", as_json=True, KAERU_SEMANTIC="1")
    assert again.code == 0, again.stderr
    assert again.json() == {"ok": True, "vectors_written": 0}, "the vectors written are kept"
