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


def test_edit_distance_counts_a_transposition_as_one_edit() -> None:
    """Two adjacent letters swapped are one edit (optimal string alignment), not two."""
    assert edit_distance("alpah", "alpha") == 1
    assert edit_distance("ab", "ba") == 1
    assert edit_distance("abcdef", "badcfe") == 3
    assert edit_distance("abcdefghijkl", "z", cap=3) == 4


def test_transposed_letters_in_a_short_name_are_suggested() -> None:
    """`alpah` finds `alpha`: with Levenshtein it was two edits, beyond a five-letter name's tolerance."""
    assert suggest("alpah", ["alpha", "beta", "gamma"]) == ["alpha"]
    assert suggest("lapha", ["alpha", "beta"]) == ["alpha"]
    assert suggest("btez", ["beta"]) == []  # a transposition and a substitution: too far for four letters
    assert suggest("btea", ["beta", "alpha"]) == ["beta"]


def test_transposition_ignores_case() -> None:
    """Case differences cost nothing on top of the transposition."""
    assert suggest("ALPAH", ["alpha"]) == ["alpha"]
    assert suggest("alpah", ["Alpha"]) == ["Alpha"]


def test_containment_still_ranks_before_a_transposition() -> None:
    """A name containing the wanted one ranks before one a transposition away."""
    assert suggest("alpha", ["alpha-two", "lapha"]) == ["alpha-two", "lapha"]


def test_unrelated_short_names_are_not_suggested_for_a_transposition() -> None:
    """A transposition plus another change is too far for a short name; unrelated names stay out."""
    assert suggest("alpah", ["delta", "omega", "alps-ski"]) == []
    assert suggest("xlpah", ["alpha"]) == []
