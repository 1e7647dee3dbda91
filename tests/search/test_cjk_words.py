"""Japanese, Chinese and Korean memory is found by any word of it, on both backends, with the same
hits on both (decision 85, as revised): a one-character word (`猫`), a word written with `々`, text
that arrived decomposed (NFD: macOS file names, clipboards) by the word typed composed; a write into
a half-width spelling of an initiative is offered the initiative it spells; and a vault indexed by
the tokeniser before is re-indexed once when it holds such text."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import apsw
import psycopg
import pytest

from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import BACKENDS, VaultSpec, drop_vault, new_vault, postgres_admin_url
from tests.working.conftest import make_call


def _nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


NOTES = {
    "cat": "我的猫生病了",  # Chinese: the one-character word inside the run
    "cat-ja": "うちの猫",  # Japanese: at the run's end
    "tokyo": "東京で会議をした",
    "east": "東の窓から京都が見える",  # `東` and `京`, but not `東京`
    "sasaki": "明日は佐々木さんがデプロイする",
    "ja-nfd": _nfd("ログインのバグを修正した"),
    "ko-nfd": _nfd("로그인 버그를 고쳤습니다"),
    "english": "The login screen test failed in staging",
}
#: Searches (text, match) and the notes each finds.
SEARCHES = [
    ("猫", "any", {"cat", "cat-ja"}),
    ("東京", "any", {"tokyo"}),
    ("佐々木", "all", {"sasaki"}),
    ("バグ", "all", {"ja-nfd"}),
    (_nfd("バグ"), "all", {"ja-nfd"}),
    ("로그인", "all", {"ko-nfd"}),
    ("버그", "any", {"ko-nfd"}),
]
RECALLS = [("猫", {"cat", "cat-ja"}), ("로그인 버그", {"ko-nfd"}), ("バグを修正", {"ja-nfd"})]


def _answer(call: Any, tool: str, **args: Any) -> tuple[list[str], int]:
    answer = call(tool, **args)
    assert answer["state"] == "ok", answer["issues"]
    return [h["name"] for h in answer["data"]["hits"]], answer["data"].get("total", -1)


def _noted(vault: VaultSpec) -> tuple[Any, Any]:
    store = open_store(vault.settings())
    call = make_call(Service(store, vault.settings()))
    for name, text in NOTES.items():
        assert call("note", initiative="cjk", text=text, name=name)["state"] == "applied"
    return store, call


@pytest.fixture
def noted(vault: VaultSpec) -> Any:
    store, call = _noted(vault)
    yield call
    store.close()


@pytest.mark.parametrize(("text", "match", "found"), SEARCHES)
def test_a_word_is_found_whatever_its_length_or_form(noted: Any, text: str, match: str, found: set[str]) -> None:
    hits, _ = _answer(noted, "search", initiatives=["cjk"], text=text, match=match)
    assert set(hits) == found


@pytest.mark.parametrize(("query", "found"), RECALLS)
def test_recall_ranks_the_notes_holding_the_word_first(noted: Any, query: str, found: set[str]) -> None:
    hits, _ = _answer(noted, "recall", initiatives=["cjk"], query=query)
    assert set(hits[: len(found)]) == found


def test_a_decomposed_text_is_named_by_its_composed_words(noted: Any) -> None:
    answer = noted("note", initiative="cjk", text=_nfd("バグを直した"))
    hits, _ = _answer(noted, "search", initiatives=["cjk"], text="直し")
    assert len(hits) == 1 and hits[0].startswith("バグを直した-"), (hits, answer["issues"])


def test_a_half_width_spelling_of_an_initiative_is_offered_the_initiative(noted: Any) -> None:
    noted("note", initiative="プロジェクト東京", text="x")
    answer = noted("note", initiative="ﾌﾟﾛｼﾞｪｸﾄ東京", text="y")
    assert any("プロジェクト東京" in issue["message"] for issue in answer["issues"]), answer["issues"]


@pytest.mark.skipif(not postgres_admin_url(), reason="parity needs PostgreSQL (KAERU_TEST_DATABASE_URL)")
def test_both_backends_find_the_same_notes_in_the_same_order(tmp_path: Path) -> None:
    answers: dict[str, list[tuple[list[str], int]]] = {}
    for backend in BACKENDS:
        vault = new_vault(backend, tmp_path / backend)
        store, call = _noted(vault)
        try:
            answers[backend] = [
                *(_answer(call, "search", initiatives=["cjk"], text=t, match=m) for t, m, _ in SEARCHES),
                *(_answer(call, "search", initiatives=["cjk"], text=t) for t in ("猫 東京", "京", "佐々木さん")),
                *(_answer(call, "recall", initiatives=["cjk"], query=q) for q, _ in RECALLS),
            ]
        finally:
            store.close()
            drop_vault(vault)
    assert answers["sqlite"] == answers["postgres"]


#: The migration that re-indexes a vault for this tokeniser.
REINDEX = {"sqlite": 25, "postgres": 23}


def _unindex_all(vault: VaultSpec) -> None:
    """Take every node out of the text index and forget the migration: the state of a vault whose
    index was built before it (its CJK notes held no single characters, its NFD ones no pieces)."""
    if vault.database_url:
        with psycopg.connect(vault.database_url, autocommit=True) as conn:
            conn.execute("UPDATE nodes SET tsv = NULL, stv = NULL, ltf = NULL, stf = NULL")
            conn.execute("DELETE FROM schema_migrations WHERE version = %s", (REINDEX["postgres"],))
        return
    conn = apsw.Connection(str(vault.settings().sqlite_path))
    try:
        conn.execute("DELETE FROM nodes_fts")
        conn.execute("DELETE FROM schema_migrations WHERE version = ?", (REINDEX["sqlite"],))
    finally:
        conn.close()


@pytest.mark.parametrize(("held", "word"), [("cat", "猫"), ("ko-nfd", "로그인"), (None, None)])
def test_a_vault_indexed_before_is_reindexed_once_only_if_it_holds_such_text(
    vault: VaultSpec, held: str | None, word: str | None
) -> None:
    store = open_store(vault.settings())
    call = make_call(Service(store, vault.settings()))
    for name in ("english", *([held] if held else [])):
        call("note", initiative="cjk", text=NOTES[name], name=name)
    store.close()
    _unindex_all(vault)
    reopened = open_store(vault.settings())  # runs the forgotten migration, and the rebuild it asks for
    try:
        call = make_call(Service(reopened, vault.settings()))
        # Re-indexed when the vault holds such text; otherwise nothing was rebuilt (the index stays
        # empty), so a vault without it does not pay for a rebuild.
        assert _answer(call, "search", initiatives=["cjk"], text="staging")[0] == (["english"] if held else [])
        if word:
            assert _answer(call, "search", initiatives=["cjk"], text=word, match="all")[0] == [held]
    finally:
        reopened.close()
