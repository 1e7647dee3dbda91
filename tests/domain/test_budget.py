"""Budgets: excerpts never exceed their allowance and prefer word boundaries; shares never exceed the total."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kaeru.domain.budget import allocate, cut

TEXT = "alpha beta gamma delta epsilon zeta eta theta iota kappa"


def test_cut_within_limit_returns_whole_text_untruncated() -> None:
    """Text that fits is returned whole and not marked as cut."""
    piece = cut(TEXT, 0, 1000)
    assert piece.text == TEXT
    assert (piece.start, piece.end, piece.total) == (0, len(TEXT), len(TEXT))
    assert not piece.truncated


def test_cut_ends_on_a_word_boundary() -> None:
    """A cut text ends before a space, not inside a word."""
    piece = cut(TEXT, 0, 20)
    assert len(piece.text) <= 20
    assert piece.text == "alpha beta gamma"
    assert TEXT[piece.end] == " "
    assert piece.truncated


def test_cut_a_single_long_word_at_the_limit() -> None:
    """A word longer than the allowance is cut hard rather than dropped."""
    piece = cut("x" * 100, 0, 30)
    assert piece.text == "x" * 30
    assert piece.truncated


def test_cut_from_an_offset_continues_where_the_last_page_ended() -> None:
    """Successive cuts from the previous end rebuild the text exactly."""
    pieces = []
    start = 0
    while start < len(TEXT):
        piece = cut(TEXT, start, 12)
        assert piece.end > start
        pieces.append(piece.text)
        start = piece.end
    assert "".join(pieces) == TEXT


def test_cut_offset_past_the_end_is_empty() -> None:
    """Starting at the end yields nothing, still reporting the total."""
    piece = cut(TEXT, len(TEXT), 50)
    assert piece.text == ""
    assert piece.total == len(TEXT)


@given(st.text(alphabet="ab cd\n", max_size=400), st.integers(0, 450), st.integers(1, 500))
def test_cut_is_a_slice_never_longer_than_the_limit(text: str, start: int, limit: int) -> None:
    """Every cut is exactly `text[start:end]`, at most `limit` long, with a correct range."""
    piece = cut(text, start, limit)
    assert len(piece.text) <= limit
    assert piece.text == text[piece.start : piece.end]
    assert piece.total == len(text)
    assert piece.truncated == (piece.start > 0 or piece.end < len(text))


@given(st.text(alphabet="abc ", min_size=1, max_size=400), st.integers(1, 400))
def test_paging_with_cut_makes_progress_and_rebuilds_text(text: str, limit: int) -> None:
    """Paging by cut always advances and the pages concatenate to the original."""
    pieces = []
    start = 0
    while start < len(text):
        piece = cut(text, start, limit)
        assert piece.end > start
        pieces.append(piece.text)
        start = piece.end
    assert "".join(pieces) == text


def test_allocate_gives_everything_when_it_fits() -> None:
    """When all texts fit, each gets its full length."""
    assert allocate([100, 200, 50], 1000) == [100, 200, 50]


def test_allocate_never_exceeds_the_budget() -> None:
    """Long texts share the budget and the total stays within it."""
    granted = allocate([5000, 5000, 5000], 1200)
    assert granted is not None
    assert sum(granted) <= 1200
    assert len(granted) == 3
    assert all(g > 0 for g in granted)


def test_allocate_defers_what_does_not_fit() -> None:
    """With a tiny budget the later entries are deferred (returned list is shorter), not starved to zero."""
    granted = allocate([1000] * 50, 512)
    assert granted is not None
    assert 0 < len(granted) < 50
    assert sum(granted) <= 512
    assert all(g > 0 for g in granted)


def test_allocate_of_nothing_is_empty() -> None:
    """No texts, no allocation."""
    assert allocate([], 1000) == []


@given(st.lists(st.integers(0, 20_000), max_size=60), st.integers(0, 64_000))
def test_allocate_respects_budget_and_lengths(lengths: list[int], budget: int) -> None:
    """For any lengths and budget: the sum is within budget and nobody gets more than its length."""
    granted = allocate(lengths, budget)
    assert granted is not None
    assert len(granted) <= len(lengths)
    assert sum(granted) <= budget
    for have, length in zip(granted, lengths, strict=False):
        assert 0 <= have <= length
