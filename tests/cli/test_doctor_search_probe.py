"""The doctor's `search` check searches for the words of a live node and must find it. It probed
only the vault's first node: when that one held no word (a name and text of emoji or symbols) the
check said "answered (no node with words to look for)" and searched nothing, however many nodes of
words followed — a broken full-text index passed. Now it probes the first node that holds words,
says so when none does, and a search the damaged index cannot answer fails the check with its fix
(the storage's own error ended the doctor in a traceback)."""

from __future__ import annotations

import pytest

from tests.backends import VaultSpec
from tests.cli.support import kaeru, write_notes
from tests.cli.test_doctor import _doctor, _sql

WORDLESS = {"text": "✨ ✨ 🎉", "name": "🎉"}


def test_the_search_check_probes_the_first_node_that_holds_words(vault: VaultSpec) -> None:
    ids = write_notes(vault, "sym", WORDLESS, WORDLESS | {"name": "🎈"}, "the heron waits by the weir")
    code, checks, _ = _doctor(vault)
    assert code == 0, checks
    search = checks["search"]
    assert search["status"] == "ok" and f"found {ids[2]}" in search["summary"], search


def test_a_vault_of_wordless_nodes_says_it_searched_nothing(vault: VaultSpec) -> None:
    write_notes(vault, "sym", WORDLESS)
    code, checks, _ = _doctor(vault)
    assert code == 0, checks
    assert checks["search"]["status"] == "ok"
    assert "no live node holds a word to look for" in checks["search"]["summary"], checks["search"]


def test_a_search_the_index_cannot_answer_fails_the_check(vault: VaultSpec) -> None:
    if vault.backend != "sqlite":
        pytest.skip("SQLite's full-text index is tables of its own (PostgreSQL's is a column)")
    write_notes(vault, "sym", "the heron waits by the weir")
    _sql(vault, "DROP TABLE nodes_fts_idx")  # what a damaged file can leave: the doctor ended in a traceback
    code, checks, _ = _doctor(vault)
    assert code == 1
    search = checks["search"]
    assert search["status"] == "fail" and search["summary"].startswith("a read-only search failed: "), search
    assert "kaeru reindex --text" in search["fix"]
    assert kaeru(vault, "search", "heron", "-i", "sym").code == 1, "the search a person runs fails too"
