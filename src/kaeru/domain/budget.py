"""Budgets: cutting text on word boundaries and sharing a character budget between hits."""

from __future__ import annotations

from dataclasses import dataclass

from kaeru.domain.graphemes import cluster_end

#: The smallest useful excerpt; below this a hit is deferred to the next page instead.
MIN_EXCERPT = 48


@dataclass(frozen=True, slots=True)
class Cut:
    text: str
    start: int
    end: int
    total: int

    @property
    def truncated(self) -> bool:
        return self.start > 0 or self.end < self.total


def cut(text: str, start: int, limit: int) -> Cut:
    """`text[start:]` cut to at most `limit` chars, preferring to end at a word boundary."""
    total = len(text)
    start = max(0, min(start, total))
    end = min(total, start + max(0, limit))
    if end < total and end > start:
        boundary = text.rfind(" ", start, end + 1)
        # Only back off to a boundary when it keeps most of the allowance: a long word is cut, though
        # not inside a character (an emoji sequence, a letter and its accents).
        end = boundary if boundary > start + (end - start) // 2 else cluster_end(text, end, floor=start)
    return Cut(text[start:end], start, end, total)


def allocate(lengths: list[int], budget: int) -> list[int] | None:
    """Characters granted to each of `lengths` in order, the sum never above `budget`.

    Every entry gets at least min(length, MIN_EXCERPT) or the allocation stops: the returned list is
    shorter than `lengths` when later entries did not fit (they are deferred). Left-over budget is
    then handed out in rank order so the best hits are cut least.
    """
    if not lengths:
        return []
    share = max(MIN_EXCERPT, budget // len(lengths))
    granted: list[int] = []
    remaining = budget
    for length in lengths:
        floor = min(length, MIN_EXCERPT)
        if floor > remaining:
            break
        give = min(length, share, remaining)
        give = max(give, floor)
        granted.append(give)
        remaining -= give
    for i, length in enumerate(lengths[: len(granted)]):
        if remaining <= 0:
            break
        extra = min(length - granted[i], remaining)
        granted[i] += extra
        remaining -= extra
    return granted
