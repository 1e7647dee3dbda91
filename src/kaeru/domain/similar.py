"""Did-you-mean: close names by case-insensitive equality, containment and edit distance."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def edit_distance(a: str, b: str, cap: int = 8) -> int:
    """Optimal-string-alignment distance (Damerau–Levenshtein where a transposition of two adjacent
    letters is one edit, not two), `cap + 1` once it exceeds `cap`.

    `alpah` is one edit from `alpha`: with plain Levenshtein it was two, beyond the tolerance of a
    five-letter name, so the did-you-mean stayed silent and a typo opened a new scope.
    """
    return _capped(_osa(), a, b, cap)


def _osa() -> Callable[..., Any]:
    """rapidfuzz's OSA distance, imported when a first distance is wanted, not with this module: a
    name with nothing to be compared with (a new vault) never loads rapidfuzz (~2.6 MB, decision 96)."""
    from rapidfuzz.distance import OSA

    return OSA.distance


def _capped(osa: Callable[..., Any], a: str, b: str, cap: int) -> int:
    return min(int(osa(a, b, score_cutoff=cap)), cap + 1)


def suggest(wanted: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """Candidates close to `wanted`, best first (exact-but-case, then containment, then distance)."""
    target = wanted.strip().casefold()
    scored: list[tuple[int, int, str]] = []
    osa: Callable[..., Any] | None = None
    for candidate in candidates:
        folded = candidate.casefold()
        if candidate == wanted:
            continue
        if folded == target:
            scored.append((0, 0, candidate))
        elif target and (target in folded or folded in target):
            scored.append((1, abs(len(folded) - len(target)), candidate))
        else:
            tolerance = max(1, min(3, len(target) // 4))
            osa = osa or _osa()
            distance = _capped(osa, target, folded, tolerance)
            if distance <= tolerance:
                scored.append((2, distance, candidate))
    scored.sort()
    return [name for _, _, name in scored[:limit]]
