"""Did-you-mean: close names by case-insensitive equality, containment and edit distance."""

from __future__ import annotations

from collections.abc import Iterable


def edit_distance(a: str, b: str, cap: int = 8) -> int:
    """Levenshtein distance, stopping early once it exceeds `cap`."""
    if abs(len(a) - len(b)) > cap:
        return cap + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > cap:
            return cap + 1
        previous = current
    return previous[-1]


def suggest(wanted: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """Candidates close to `wanted`, best first (exact-but-case, then containment, then distance)."""
    target = wanted.strip().casefold()
    scored: list[tuple[int, int, str]] = []
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
            distance = edit_distance(target, folded, cap=tolerance)
            if distance <= tolerance:
                scored.append((2, distance, candidate))
    scored.sort()
    return [name for _, _, name in scored[:limit]]
