"""Automatic names: first five words of the text plus a six-character unique suffix."""

from __future__ import annotations

from kaeru.domain.naming import auto_name

NODE_ID = "01a22ac1-6ebb-7f3f-84d0-ee3708481fa2"


def split(name: str) -> tuple[str, str]:
    stem, suffix = name.rsplit("-", 1)
    return stem, suffix


def test_first_five_words_and_a_six_character_suffix() -> None:
    """The name is the first five words, lower-cased and dashed, plus a 6-character suffix from the id."""
    stem, suffix = split(auto_name("Deploy the API to staging today please", NODE_ID, "note"))
    assert stem == "deploy-the-api-to-staging"
    assert len(suffix) == 6 and suffix.isalnum()
    assert suffix in NODE_ID.replace("-", "")


def test_short_text_uses_all_its_words() -> None:
    """Fewer than five words: all of them are used."""
    assert split(auto_name("Cache hit", NODE_ID, "note"))[0] == "cache-hit"


def test_punctuation_is_dropped_from_words() -> None:
    """Quotes, commas and other punctuation never end up in a name."""
    assert split(auto_name('"Hello," she said: (really!)', NODE_ID, "note"))[0] == "hello-she-said-really"


def test_fallback_when_no_word_survives() -> None:
    """Text with no words falls back to the given stem plus the suffix."""
    suffix = split(auto_name("some words", NODE_ID, "note"))[1]
    assert auto_name("!!! ??? ...", NODE_ID, "claim") == f"claim-{suffix}"
    assert auto_name("", NODE_ID, "note") == f"note-{suffix}"
    assert auto_name(None, NODE_ID, "evidence") == f"evidence-{suffix}"


def test_suffix_distinguishes_equal_texts() -> None:
    """Two nodes with the same text get different names (the suffix comes from the id)."""
    other = "01a22ac1-6ebb-7f3f-84d0-ee3708999999"
    assert auto_name("same text", NODE_ID, "note") != auto_name("same text", other, "note")


def test_non_latin_words_are_kept() -> None:
    """Names keep the user's language."""
    assert auto_name("Развёртывание на стенде", NODE_ID, "note").startswith("развёртывание-на-стенде-")


def test_very_long_words_keep_names_bounded() -> None:
    """A pasted blob does not produce an unbounded name."""
    name = auto_name("x" * 10_000 + " y", NODE_ID, "note")
    assert name.startswith("xxx")
    assert len(name) <= 200
