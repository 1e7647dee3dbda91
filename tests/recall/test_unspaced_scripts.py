"""Memory in any script can be found by its words (decisions 85, 86): runs of scripts written without
spaces (Japanese, Chinese, Korean, Thai, Khmer) are indexed and asked as overlapping two-character
pieces, a word whose vowels or points are combining marks (Hindi, Thai, pointed Hebrew, vocalised
Arabic) is one word, on both backends; a vault indexed before is re-indexed once when opened."""

from __future__ import annotations

from typing import Any

import apsw
import psycopg
import pytest

from kaeru.domain.text import query_tokens, tokens
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.working.conftest import make_call

NOTES = {
    "deploy": "明日は東京でデプロイを行う予定です",  # Japanese: kanji, hiragana, katakana
    "cache": "缓存失效导致数据库负载升高",  # Chinese
    "migrate": "데이터베이스를 PostgreSQL로 옮겼다",  # Korean, with a Latin word inside
    "halfwidth": "ﾛｸﾞｲﾝ画面のﾃｽﾄが失敗した",  # half-width katakana
    "english": "The login screen test failed in staging",
    "hindi": "मुझे चावल खाना पसंद है",  # Hindi: vowel signs are combining marks
    "thai": "ผมชอบกินข้าวมาก",  # Thai: no spaces, vowels and tones as marks
    "khmer": "ខ្ញុំចូលចិត្តញ៉ាំបាយ",  # Khmer
    "hebrew": "הַכִּתָּה נִפְגְּשָׁה בַּבֹּקֶר",  # pointed Hebrew
    "arabic": "قَرَأْتُ الكِتَابَ أَمْسِ",  # vocalised Arabic
    "accented": "Привет, café naïve — Ελληνικά",  # Cyrillic, composed Latin, Greek: tokens unchanged
}


def test_runs_of_unspaced_scripts_become_overlapping_pairs_and_other_text_is_unchanged() -> None:
    assert query_tokens("東京でデプロイ") == ["東京", "京で", "でデ", "デプ", "プロ", "ロイ"]
    assert tokens("東京で") == ["東", "東京", "京", "京で", "で"], "indexed with each character too"
    assert query_tokens("ﾃﾞﾌﾟﾛｲ") == query_tokens("デプロイ") == ["デプ", "プロ", "ロイ"], (
        "half-width kana are full-width"
    )
    assert tokens("テスト") != tokens("デスト"), "a voiced kana is another sound, not a diacritic"
    assert query_tokens("AI処理") == ["ai", "処理"] and tokens("東") == ["東"]
    assert query_tokens("데이터베이스를") == ["데이", "이터", "터베", "베이", "이스", "스를"]
    assert tokens("Café naïve Ёлка 2026") == ["cafe", "naive", "елка", "2026"]


def test_a_word_whose_vowels_are_marks_stays_one_word() -> None:
    assert tokens("मुझे चावल खाना पसंद है") == ["मुझे", "चावल", "खाना", "पसंद", "है"]
    assert tokens("\u0958\u0932\u092e") == ["\u0915\u093c\u0932\u092e"], "क़ composes to क + nukta: one word"
    assert tokens("க்யா தமிழ்") == ["க்யா", "தமிழ்"], "a virama is spelling, not a diacritic"
    assert query_tokens("ข้าว") == ["ข้า", "าว"] and query_tokens("กิน") == ["กิน"], "a Thai character keeps its marks"
    assert tokens("כִּתָּה") == tokens("כתה") == ["כתה"], "Hebrew points fold away like accents"
    assert tokens("الكِتَابَ") == tokens("الكتاب") == ["الكتاب"], "so do Arabic vowel signs"
    assert tokens("cafe\u0301 nai\u0308ve") == ["cafe", "naive"], "decomposed Latin is one word"


def _hits(call: Any, tool: str, **args: Any) -> list[str]:
    answer = call(tool, **args)
    assert answer["state"] == "ok", answer["issues"]
    return [h["name"] for h in answer["data"]["hits"]]


@pytest.fixture
def noted(vault: VaultSpec) -> Any:
    store = open_store(vault.settings())
    call = make_call(Service(store, vault.settings()))
    for name, text in NOTES.items():
        assert call("note", initiative="cjk", text=text, name=name)["state"] == "applied"
    yield call
    store.close()


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("東京", "deploy"),
        ("デプロイ", "deploy"),
        ("ﾃﾞﾌﾟﾛｲ", "deploy"),
        ("数据库", "cache"),
        ("缓存", "cache"),
        ("데이터베이스", "migrate"),
        ("ログイン", "halfwidth"),
        ("失敗", "halfwidth"),
        ("चावल", "hindi"),
        ("กิน", "thai"),
        ("ข้าว", "thai"),
        ("បាយ", "khmer"),
        ("נפגשה", "hebrew"),
        ("הַכִּתָּה", "hebrew"),
        ("الكتاب", "arabic"),
    ],
)
def test_a_word_inside_a_sentence_is_found_by_search_and_recall(noted: Any, query: str, found: str) -> None:
    searched = _hits(noted, "search", initiatives=["cjk"], text=query, match="all")
    assert searched == [found]
    assert _hits(noted, "recall", initiatives=["cjk"], query=query)[0] == found


def test_every_piece_is_required_with_match_all(noted: Any) -> None:
    """`プロジェクト` shares `プロ` with `デプロイ` but is not in any note: with match=all nothing is
    found; with the default (any word) the note sharing a piece ranks, as a shared word would."""
    assert _hits(noted, "search", initiatives=["cjk"], text="プロジェクト", match="all") == []
    assert _hits(noted, "search", initiatives=["cjk"], text="プロジェクト") == ["deploy"]


def _unindex(vault: VaultSpec, name: str, migration: dict[str, int]) -> None:
    """Take one node out of the text index and forget `migration`: the state of a vault whose index
    was built before it (what the old tokeniser stored can no longer be found either)."""
    if vault.database_url:
        with psycopg.connect(vault.database_url, autocommit=True) as conn:
            conn.execute("UPDATE nodes SET tsv = NULL, stv = NULL, ltf = NULL, stf = NULL WHERE name = %s", (name,))
            conn.execute(
                "DELETE FROM schema_migrations WHERE version BETWEEN %s AND %s",
                (migration["postgres"], LAST_REINDEX["postgres"]),
            )
        return
    conn = apsw.Connection(str(vault.settings().sqlite_path))
    try:
        ((seq,),) = conn.execute("SELECT seq FROM nodes WHERE name = ?", (name,))
        conn.execute("DELETE FROM nodes_fts WHERE rowid = ?", (seq,))
        conn.execute(
            "DELETE FROM schema_migrations WHERE version BETWEEN ? AND ?", (migration["sqlite"], LAST_REINDEX["sqlite"])
        )
    finally:
        conn.close()


#: The newest of those migrations: the later ones (which reshape other tables and cannot run twice)
#: stay recorded, and the store applies the forgotten ones it finds missing.
LAST_REINDEX = {"sqlite": 21, "postgres": 16}
#: The migrations that re-index a vault holding text of the scripts whose tokens changed, the text,
#: and a word of it to find afterwards.
REINDEXED = {
    "cjk": ({"sqlite": 20, "postgres": 15}, "deploy", "東京"),
    "marked": ({"sqlite": 21, "postgres": 16}, "thai", "กิน"),
    "none": ({"sqlite": 20, "postgres": 15}, None, None),
    # Not ASCII, so past the migrations' cheap ASCII test, but none of the scripts that changed.
    "accented": ({"sqlite": 20, "postgres": 15}, "accented", None),
}


@pytest.mark.parametrize("case", list(REINDEXED))
def test_a_vault_indexed_before_is_reindexed_once_only_if_it_holds_such_text(vault: VaultSpec, case: str) -> None:
    migration, held, word = REINDEXED[case]
    texts = {"english": NOTES["english"], **({held: NOTES[held]} if held else {})}
    store = open_store(vault.settings())
    call = make_call(Service(store, vault.settings()))
    for name, text in texts.items():
        call("note", initiative="cjk", text=text, name=name)
    store.close()
    _unindex(vault, "english", migration)
    reopened = open_store(vault.settings())  # runs the migrations again, and whatever they ask for
    try:
        call = make_call(Service(reopened, vault.settings()))
        found = _hits(call, "search", initiatives=["cjk"], text="staging")
        # Re-indexed when the vault holds such text; otherwise nothing was rebuilt (the node taken
        # out stays out), so a vault without such text does not pay for a rebuild.
        assert found == (["english"] if word else [])
        if word:
            assert _hits(call, "search", initiatives=["cjk"], text=word) == [held]
    finally:
        reopened.close()
