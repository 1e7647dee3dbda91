"""Did-you-mean for a name given in part, among many names: the name it is part of is offered first.

Ranked by edits alone, a name that contains the wanted one counts every letter it adds, and a short
or common name has many typos within tolerance: `quasar-robot` was offered `quasar-comet`,
`quasar-orion` and `quasar-route` but not `quasar-robot-ios`, and `kaeru` was offered `kaera`,
`kaeri` and `karu` but not `kaeru-memory` (decision 13.A1: a partial name finds the longer one).
"""

from __future__ import annotations

from kaeru.domain.similar import edit_distance, suggest
from tests.domain.test_similar_transpositions import vault_names


def added(typed: str, name: str) -> int | None:
    """The letters `name` adds to `typed` when it contains it (case aside), else None."""
    typed, name = typed.casefold(), name.casefold()
    return len(name) - len(typed) if typed in name else None


def edits(a: str, b: str) -> int:
    """The distance `suggest` ranks by: letters added or lacking for a name inside the other."""
    a, b = a.casefold(), b.casefold()
    return abs(len(a) - len(b)) if a in b or b in a else edit_distance(a, b)


def test_the_reviewed_partial_name_offers_the_name_it_was_part_of() -> None:
    """`quasar-robot` offers `quasar-robot-ios` first, before typos three letters off."""
    names = ["quasar-comet", "quasar-orion", "quasar-route", "quasar-robot-ios", "quasar"]
    assert suggest("quasar-robot", names) == ["quasar-robot-ios", "quasar-comet", "quasar-orion"]


def test_a_name_without_its_last_word_offers_a_name_containing_it_first_among_ten_thousand() -> None:
    """For 2,000 names of a 10,000-name vault, the name without its last word (when that is no name):
    the first offer contains what was typed and no name containing it adds fewer letters; the places
    after it follow the edits, closest first."""
    names = vault_names(10_000)
    taken = {name.casefold() for name in names}
    tried = 0
    for name in names[::5]:
        typed = name.rpartition("-")[0]
        if not typed or typed in taken:
            continue
        tried += 1
        offered = suggest(typed, names)
        closest = min(len(other) - len(typed) for other in names if typed in other)
        assert offered and added(typed, offered[0]) == closest, (typed, offered)
        after = [edits(typed, other) for other in offered[1:]]
        assert after == sorted(after), (typed, offered)
    assert tried > 350
