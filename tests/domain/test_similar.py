"""Did-you-mean suggestions: case-insensitive equality, containment, edit distance."""

from __future__ import annotations

from kaeru.domain.similar import edit_distance, suggest


def test_case_insensitive_match_is_suggested() -> None:
    """A different spelling of case finds the existing name."""
    assert suggest("Kaeru-Memory", ["kaeru-memory", "website"]) == ["kaeru-memory"]


def test_containment_is_suggested() -> None:
    """A shorter or longer form of a name finds it."""
    assert "kaeru-memory" in suggest("kaeru", ["kaeru-memory", "website"])
    assert "kaeru" in suggest("kaeru-memory-v2", ["kaeru", "website"])


def test_small_typos_are_suggested() -> None:
    """A transposition in a long name and a single-letter typo find the name."""
    assert suggest("kaeru-memroy", ["kaeru-memory", "website"]) == ["kaeru-memory"]
    assert suggest("webste", ["kaeru-memory", "website"]) == ["website"]


def test_unrelated_names_are_not_suggested() -> None:
    """Names that are not close are not offered."""
    assert suggest("zebra", ["kaeru-memory", "website"]) == []


def test_the_name_itself_is_not_suggested() -> None:
    """The exact same name is not a suggestion for itself."""
    assert suggest("website", ["website"]) == []


def test_best_suggestion_first_and_limit() -> None:
    """Case match ranks before containment, containment before typos; at most `limit` come back."""
    names = ["kaeru-memroy", "kaeru-memory-old", "KAERU-MEMORY", "other"]
    out = suggest("kaeru-memory", names)
    assert out[0] == "KAERU-MEMORY"
    assert set(out) == {"KAERU-MEMORY", "kaeru-memory-old", "kaeru-memroy"}
    assert len(suggest("kaeru-memory", names, limit=1)) == 1


def test_edit_distance_basics() -> None:
    """Levenshtein distance on simple pairs."""
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3
    assert edit_distance("same", "same") == 0
