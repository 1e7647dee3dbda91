"""Close names: did-you-mean (`suggest`) and the stricter same-project test `reflect` merges by."""

from __future__ import annotations

import re
import unicodedata
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


#: Which way a name holds the wanted one: it contains it (given in part), or is contained in it.
_LONGER, _SHORTER = 1, 2


def suggest(wanted: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """Candidates close to `wanted`, best first: another case of it; then the closest name that
    contains it; then by the edits between the two. A name that contains `wanted` or is contained in
    it (`kaeru` for `kaeru-memory`, a name given in part) is as many edits away as the letters it adds
    or lacks, whatever its length; any other name is a typo within `_tolerance` edits, a swap of two
    adjacent letters one edit. At one distance a containing name comes before a typo, then names in
    order. When no name contains `wanted`, the closest name it contains keeps the last place.

    Distance, not containment first: a mistyped long name contains its own shorter words, and
    `camera-audit-quaasr` was offered `camera-audit`, `camera` and `audit` but not
    `camera-audit-quasar`, one swap away. But distance alone lost the name a part was given of: a
    short name has many one-edit neighbours and a long one several within three edits, so `kaeru`
    was offered `kaera`, `kaeri`, `karu` and not `kaeru-memory`, and `quasar-robot` offered
    `quasar-route` (three letters changed) but not `quasar-robot-ios`.

    Why the containing name comes first rather than the closest typo (`kaeru` beside `kaeru-memory`
    and `kaera`): every letter of `kaeru` is right and in its place in `kaeru-memory`, so it needs
    no mistake to explain it, only a name given in part, which is how people and agents shorten
    names (and node names); `kaera` needs a wrong letter. The first offer is the one read alone (a
    slot's did-you-mean, an import's merge hint). Only the closest containing name is moved up, so
    typos keep the other places. The other direction does not come first: a name that a typo
    contains is most often that typo's own first words (`camera-audit`), so it only keeps a place."""
    target = _folded(wanted.strip())
    scored: list[tuple[int, int, str, int]] = []  # (edits, 0 containment / 1 typo, name, _LONGER/_SHORTER/0)
    others: list[str] = []
    folded_others: list[str] = []
    for candidate in candidates:
        folded = _folded(candidate)
        if candidate == wanted:
            continue
        if folded == target:
            scored.append((0, 0, candidate, 0))
        elif target and target in folded:
            scored.append((len(folded) - len(target), 0, candidate, _LONGER))
        elif target and folded in target:
            scored.append((len(target) - len(folded), 0, candidate, _SHORTER))
        else:
            others.append(candidate)
            folded_others.append(folded)
    if others:
        scored.extend((int(d), 1, others[i], 0) for _, d, i in _typos(target, folded_others, _tolerance(target)))
    scored.sort()
    return [name for _, _, name, _ in _placed(scored, limit)]


def _folded(name: str) -> str:
    """`name` as `suggest` compares it: NFKC and case-folded, as `_name_parts` folds a word, so that
    half-width `ﾌﾟﾛｼﾞｪｸﾄ` or full-width `ｗｅｂ` is another case of `プロジェクト` or `web`, not a
    second name that `same_project` would then call the same project."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def _placed(scored: list[tuple[int, int, str, int]], limit: int) -> list[tuple[int, int, str, int]]:
    """The first `limit` of the sorted `scored`, the closest containing name moved up to follow the
    other cases, or else the closest contained name given the last place (never the first)."""
    cases = [s for s in scored if s[0] == 0]
    rest = scored[len(cases) :]
    longer = next((s for s in rest if s[3] == _LONGER), None)
    if longer is not None:
        rest.remove(longer)
        return [*cases, longer, *rest][:limit]
    top = scored[:limit]
    shorter = next((s for s in rest if s[3] == _SHORTER), None)
    if shorter is not None and shorter not in top and limit > 1 and top[-1][0]:
        top[-1] = shorter
    return top


def _tolerance(target: str) -> int:
    """The edits a typo of `target` may be: one up to seven letters, then one per four, at most three."""
    return max(1, min(3, len(target) // 4))


def _typos(target: str, folded: list[str], tolerance: int) -> list[tuple[str, int, int]]:
    """(name, distance, index) of the `folded` names at most `tolerance` edits from `target`, compared
    in rapidfuzz's own loop (imported here, decision 96), not one Python call a name: every
    did-you-mean compares every initiative's name."""
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    return process.extract(target, folded, scorer=OSA.distance, score_cutoff=tolerance, limit=None)


#: Punctuation read as part of a name, not as a separator: `C#` is not `C`, `R&D` not `RD`.
_SIGNS = frozenset("#%&@*")

#: Length from which a word may hold a typo at all (one insertion, deletion or swap of two letters).
_TYPO_FROM = 7
#: Length from which a substituted letter also counts as a typo: below it, one letter changed too
#: often spells another word of its own (`planning`/`planting`, `shipping`/`shopping`).
_SUBSTITUTION_FROM = 9


def _is_word_char(c: str) -> bool:
    return c in _SIGNS or unicodedata.category(c)[0] not in "PZC"


def _name_parts(name: str) -> list[str]:
    """`name` split into its words, each folded: NFKC (full-width `ｗｅｂ` is `web`), case-folded.
    Words end at spaces, dashes, underscores, dots, slashes, quotes and brackets and where case
    turns (`WebShop`, `APIGateway`); symbols (`+`) and the punctuation in `_SIGNS` belong to a word."""
    text = unicodedata.normalize("NFKC", name)
    parts: list[str] = []
    word = ""
    for i, c in enumerate(text):
        if not _is_word_char(c):
            parts.append(word)
            word = ""
            continue
        before, after = text[i - 1] if i else "", text[i + 1] if i + 1 < len(text) else ""
        if word and c.isupper() and (before.islower() or (before.isupper() and after.islower())):
            parts.append(word)
            word = ""
        word += c
    parts.append(word)
    return [f for f in (unicodedata.normalize("NFKC", w.casefold()) for w in parts) if f]


def _typo_tolerance(a: str, b: str) -> int:
    """Edits two different spellings of one word may be apart and still be one word mistyped: one
    per seven characters of the longer, at most three; none for a word in an East Asian script,
    where one character is a word (`大阪支店` and `大阪本店` are two branches, not a typo)."""
    if any(unicodedata.east_asian_width(c) in "WF" for c in a + b):
        return 0
    return min(3, max(len(a), len(b)) // _TYPO_FROM)


def _swapped(a: str, b: str) -> bool:
    """Whether `a` and `b`, of one length, differ only by two adjacent letters swapped."""
    at = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return len(at) == 2 and at[1] == at[0] + 1 and a[at[0]] == b[at[1]] and a[at[1]] == b[at[0]]


def _word_typo(a: str, b: str, osa: Callable[..., Any]) -> int | None:
    """The edits between two different spellings `a` and `b` of one word, or None when they are two
    words: beyond `_typo_tolerance`, or one letter substituted in a word shorter than
    `_SUBSTITUTION_FROM`."""
    tolerance = _typo_tolerance(a, b)
    if not tolerance:
        return None
    distance = _capped(osa, a, b, tolerance)
    if distance > tolerance:
        return None
    if max(len(a), len(b)) < _SUBSTITUTION_FROM and len(a) == len(b) and not _swapped(a, b):
        return None
    return distance


def _touched(parts: list[str], start: int, end: int) -> list[str]:
    """The parts of the joined `parts` that the characters `start`..`end` touch (for an empty span,
    the parts on either side of the gap)."""
    touched, offset = [], 0
    for part in parts:
        low, high = offset, offset + len(part)
        if (low < end and start < high) if start < end else (low <= start <= high):
            touched.append(part)
        offset = high
    return touched


def _regrouped_typo(a: list[str], b: list[str], osa: Callable[..., Any]) -> int | None:
    """One edit between two names whose words do not correspond one to one (`web-shop`, `webshp`):
    each word the edit falls in, on either side, must be long enough for that edit as in
    `_word_typo`."""
    key_a, key_b = "".join(a), "".join(b)
    if _capped(osa, key_a, key_b, 1) != 1 or not _typo_tolerance(key_a, key_b):
        return None
    prefix = 0
    while prefix < min(len(key_a), len(key_b)) and key_a[prefix] == key_b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(key_a), len(key_b)) - prefix and key_a[-1 - suffix] == key_b[-1 - suffix]:
        suffix += 1
    substituted = len(key_a) == len(key_b) and not _swapped(key_a, key_b)
    least = _SUBSTITUTION_FROM if substituted else _TYPO_FROM
    for parts, key, other in ((a, key_a, key_b), (b, key_b, key_a)):
        longer = max(0, len(other) - len(key))  # a word counts as long as its longer spelling
        if any(len(part) + longer < least for part in _touched(parts, prefix, len(key) - suffix)):
            return None
    return 1


def same_project(name: str, candidates: Iterable[str]) -> list[str]:
    """The candidates that plausibly name the same thing as `name`, closest first: the same words
    once case, width and separators are folded (`Web Shop`, `web_shop` and `webshop` are one name),
    or a typo of it whose numbers are the same (`release-1` and `release-2` differ on purpose).

    A typo is counted word by word (`_name_parts`): every word that differs must be long
    (`_TYPO_FROM`) and within its own `_typo_tolerance`, and a substituted letter counts only in a
    word of `_SUBSTITUTION_FROM` letters or more. So `project-a` and `project-b`, `mobile-app` and
    `mobile-api`, `phase-ii` and `phase-iii` are different projects although their whole names are
    long, and `planning` is not `planting`; `custmer-onbaording` is `customer-onboarding`. Names
    whose words do not pair up (`web-shop`, `webshp`) are allowed one edit, in words long enough
    for it on both sides.

    Stricter than `suggest`, on purpose: `suggest` answers "did you mean", where offering `shop`
    for `shopping-list` or `app` for `api` costs a reader a glance. This one decides what `reflect`
    tells an agent to merge, and a merge moves the other initiative's nodes into this one and ends
    it, and no single call undoes it. So containment is no evidence (`api` and `api-gateway`, `東京` and
    `東京都庁の移転計画` are different projects), and a short word gets no typo tolerance (`api`,
    `app`)."""
    parts = _name_parts(name)
    key = "".join(parts)
    scored: list[tuple[int, str]] = []
    osa: Callable[..., Any] | None = None
    for candidate in candidates:
        other_parts = _name_parts(candidate)
        other = "".join(other_parts)
        if candidate == name or not key or not other:
            continue
        if other == key:
            scored.append((0, candidate))
            continue
        if re.findall(r"\d+", key) != re.findall(r"\d+", other):
            continue
        osa = osa or _osa()
        distance = _typo(parts, other_parts, osa)
        if distance is not None:
            scored.append((distance, candidate))
    scored.sort()
    return [candidate for _, candidate in scored]


def _typo(a: list[str], b: list[str], osa: Callable[..., Any]) -> int | None:
    """The edits by which the words `a` are a typo of the words `b`, or None when they name two things."""
    if len(a) != len(b):
        return _regrouped_typo(a, b, osa)
    total = 0
    for x, y in zip(a, b, strict=True):
        if x != y:
            distance = _word_typo(x, y, osa)
            if distance is None:
                return None
            total += distance
    return total
