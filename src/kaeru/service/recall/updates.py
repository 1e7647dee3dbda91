"""Updated facts first (channel `updates`, decision 17.Q4): when two of the leading hits give
different values for what the query asks about, the newer one ranks just above the older one,
unless the query asks for history.

Found without a model, from the texts alone:

- **different values**: a *slot* is a query word (its stem), and a hit's values for it are the
  numbers written within `NEAR` words of it ("3 interviews", "budget to $65", "deadline of April
  25"); all of a hit's numbers count as one more slot. Two hits differ when, for some slot both
  fill, each has a value the other lacks;
- **same subject**: their content words overlap (Jaccard ≥ `SAME_SUBJECT`), leaving out the words
  most leading hits share (the query's own subject says nothing about which two belong together);
- **newer**: the later `created_at`, then the later write. Explicit supersession needs none of
  this: a `supersedes` verdict already demotes the old memory through currentness.

Only the first `LEADING` hits are reordered, so what the first page holds does not change, only
its order. Shown in `explain` as the raised hit's `updates` entry: the score it gained.
"""

from __future__ import annotations

from collections import Counter

from kaeru.domain.model import Node
from kaeru.domain.stopwords import STOP_WORDS
from kaeru.domain.text import stem_words, tokens

#: How many leading hits are compared (pairwise), and how near a number must be to a query word.
LEADING = 10
NEAR = 3
#: Two texts are about the same thing when this share of their distinct content words is common
#: to both (Jaccard).
SAME_SUBJECT = 0.10
#: A word in more than this share of the leading hits is common to them all (tells none apart).
COMMON_SHARE = 0.25
#: The newer hit's score is set this much above the older one's.
STEP = 1e-6

#: Words in a query that ask for what was true before, not now: the order is left alone.
HISTORY_WORDS = frozenset(
    stem_words(
        """originally initially previously earlier formerly former original history historical evolution
        timeline ago past prior initial""".split()  # noqa: SIM905 — a word list reads better as text
    )
)


def asks_history(query_stems: list[str]) -> bool:
    return any(s in HISTORY_WORDS for s in query_stems)


def newer_first(
    ranked: list[str], final: dict[str, float], pool: dict[str, Node], query_stems: list[str]
) -> dict[str, float]:
    """Raise, in `final`, the newer of each pair of the first `LEADING` of `ranked` that give
    different values for a slot and are about the same thing, just above the older one (each
    older hit yields to its best-ranked newer one); returns each raised hit's gain."""
    leading = [i for i in ranked[:LEADING] if i in pool]
    slots = set(query_stems)
    if len(leading) < 2 or not slots:
        return {}
    values = {i: slot_values(pool[i], slots) for i in leading}
    with_values = [i for i in leading if values[i]]
    if len(with_values) < 2:
        return {}
    words = {i: content_words(pool[i]) for i in with_values}
    # Words most of the leading hits use (the subject of the whole query, or of every answer) do
    # not tell two of them apart.
    among = Counter(w for i in with_values for w in words[i])
    common = {w for w, n in among.items() if n > max(2, COMMON_SHARE * len(with_values))}
    gains: dict[str, float] = {}
    for a_pos, older in enumerate(with_values):
        for newer in with_values[a_pos + 1 :]:
            first, second = pool[older], pool[newer]
            if (second.created_at, second.seq) <= (first.created_at, first.seq) or final[newer] > final[older]:
                continue
            if not differ(values[older], values[newer]):
                continue
            a, b = words[older] - common, words[newer] - common
            if len(a & b) < SAME_SUBJECT * len(a | b):
                continue
            target = final[older] + STEP
            gains[newer] = gains.get(newer, 0.0) + target - final[newer]
            final[newer] = target
            break
    return gains


def slot_values(node: Node, slots: set[str]) -> dict[str, frozenset[str]]:
    """For each slot (query stem) the text mentions, the numbers written within `NEAR` words of it;
    slot `*`: every number of the text."""
    words = tokens(f"{node.description or ''} {node.body or ''}")
    if not any(w.isdigit() for w in words):
        return {}
    stems = stem_words(words)
    found: dict[str, set[str]] = {}
    for i, word in enumerate(stems):
        if word not in slots:
            continue
        near = [w for w in words[max(0, i - NEAR) : i + NEAR + 1] if w.isdigit()]
        if near:
            found.setdefault(word, set()).update(near)
    found["*"] = {w for w in words if w.isdigit()}
    return {slot: frozenset(numbers) for slot, numbers in found.items()}


def content_words(node: Node) -> set[str]:
    """The distinct stems of a text's words, without stop words and words under three letters."""
    text = f"{node.description or ''} {node.body or ''}"
    return set(stem_words([t for t in tokens(text) if len(t) > 2 and t not in STOP_WORDS]))


def differ(older: dict[str, frozenset[str]], newer: dict[str, frozenset[str]]) -> bool:
    """Whether some slot has, in each text, a value the other lacks."""
    return any(slot in newer and older[slot] - newer[slot] and newer[slot] - older[slot] for slot in older)
