"""Japanese, Chinese and Korean text is tokenised the same whatever form it arrives in (decision 85,
as revised): decomposed (NFD, from macOS file names and clipboards) as composed, a one-character
word as a token of the text, `々` and the Hangul jamo as letters of their runs; and a name in
half-width or full-width forms is offered the name it spells (`similar.suggest`)."""

from __future__ import annotations

import unicodedata

from kaeru.domain.naming import auto_name
from kaeru.domain.similar import suggest
from kaeru.domain.text import query_tokens, tokens


def _nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def test_decomposed_kana_and_hangul_tokenise_as_composed() -> None:
    assert _nfd("バグを修正した") != "バグを修正した"
    assert tokens(_nfd("バグを修正した")) == tokens("バグを修正した")
    assert "バグ" in tokens(_nfd("バグを修正した")), "the voiced mark stays on its kana"
    assert tokens(_nfd("로그인 버그")) == tokens("로그인 버그")
    assert query_tokens(_nfd("로그인")) == query_tokens("로그인") == ["로그", "그인"]


def test_old_hangul_and_compatibility_jamo_are_runs_of_letters() -> None:
    assert query_tokens("ᄀᆞᆯ") == ["ᄀᆞ", "ᆞᆯ"], "old Hangul (no composed syllable) is asked by its pieces"
    assert query_tokens("ㅋㅋㅋ") == query_tokens("ᄏᄏᄏ"), "compatibility jamo are the conjoining ones"


def test_iteration_marks_stay_inside_their_word() -> None:
    assert query_tokens("佐々木") == ["佐々", "々木"]
    assert set(query_tokens("佐々木")) <= set(tokens("明日は佐々木さんがデプロイする"))


def test_a_one_character_word_is_a_token_of_every_run_holding_it() -> None:
    assert query_tokens("猫") == ["猫"]
    assert "猫" in tokens("我的猫生病了") and "猫" in tokens("うちの猫"), "inside a run and at its end"
    assert query_tokens("東京") == ["東京"], "a longer word is asked by its pieces only"
    assert "東京" not in tokens("東の窓から京都")


def test_other_scripts_tokenise_as_before() -> None:
    assert tokens("The login failed, naïve café") == ["the", "login", "failed", "naive", "cafe"]
    assert tokens("Привет мир ქართული") == ["привет", "мир", "ქართული"]


def test_an_automatic_name_of_decomposed_text_is_composed() -> None:
    assert auto_name(_nfd("バグを修正した"), "0000-00abcdef", "note") == "バグを修正した-abcdef"


def test_a_half_width_or_full_width_name_is_offered_the_name_it_spells() -> None:
    assert suggest("ﾌﾟﾛｼﾞｪｸﾄ東京", ["プロジェクト東京", "other"]) == ["プロジェクト東京"]
    assert suggest("ｋａｅｒｕ", ["kaeru", "kaera"])[0] == "kaeru"
