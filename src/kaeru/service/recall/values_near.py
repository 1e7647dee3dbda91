"""Which numbers of a text are the values of which of its words: those written within `NEAR` words
of it in its sentence (`updates`, decisions 17.Q4, 17.U1).

The texts test of `updates` took two leading hits for an update when any of their numbers differed
and their words overlapped: "The API now listens on port 9443." and a later "Discussed the API port
with ops in chat; no change for now (thread 263)." were one fact changed, 263 against 9443, and the
chatter ranked above the port. Now the numbers that differ must be the values of a word both texts
hold (`tied`)."""

from __future__ import annotations

import re

from kaeru.domain.stopwords import STOP_WORDS
from kaeru.domain.text import stem_words, tokens

#: How near a number must be to a word to be its value.
NEAR = 3
#: Where a sentence ends: a number is a slot's value only in the slot word's own sentence.
_SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)|\n")
#: A bracketed span opening a line, such as the header of "[1:56 pm on 8 May, 2023] Caroline: …":
#: it says when or where, and its numbers are no values at all — of the words after it or of the
#: text (`*`) — so two turns of one speaker on two days are not two values of anything (decision L3,
#: session 12). Its words still count as the text's content, and it ends the sentence it opens.
#: A bracket inside a sentence ("the budget [approved] is 550") is left to the sentence.
_ASIDE = re.compile(r"(^[ \t]*\[[^\[\]\n]*\])", re.MULTILINE)


def values_by_word(text: str) -> dict[str, frozenset[str]]:
    """For each content word of a text (a stem, as `read_text`'s), the numbers written within `NEAR`
    words of it in the same sentence (a header's numbers are no values, as there). A number near no
    content word is the value of nothing named, and of no update: a trailing reference or line
    number, not a changed fact."""
    found: dict[str, set[str]] = {}
    for piece in _ASIDE.split(text)[::2]:
        for sentence in _SENTENCE_END.split(piece):
            words = tokens(sentence)
            digits = [j for j, w in enumerate(words) if w.isdigit()]
            if not digits:
                continue
            stems = stem_words(words)
            for i, (word, stemmed) in enumerate(zip(words, stems, strict=True)):
                if len(word) > 2 and word not in STOP_WORDS and not word.isdigit():
                    near = [j for j in digits if abs(j - i) <= NEAR]
                    if near:
                        found.setdefault(stemmed, set()).update(words[j] for j in near)
    return {w: frozenset(v) for w, v in found.items()}


def tied(mine: dict[str, frozenset[str]], theirs: dict[str, frozenset[str]]) -> bool:
    """Whether two texts' numbers (each `values_by_word`) differ as values of one thing: a content
    word of both has, near it, in each text a number the other's lacks there. "now listens on port
    9443" and "no change for now (thread 263)" share "port" and "now", but 9443 is the port's and
    263 the thread's."""
    return any(mine[w] - theirs[w] and theirs[w] - mine[w] for w in mine.keys() & theirs.keys())


#: A change word after one of these states none: "no change", "not increased", "without moving"; nor
#: does "now" after one of `FOR_NOW` ("no change for now (thread 263)": for the time being).
NEGATIONS = frozenset(["no", "not", "never", "without", "nothing"])
FOR_NOW = frozenset(["for", "until", "till"])


def states_change(words: list[str], stems: list[str], at: int, changes: frozenset[str]) -> bool:
    """Whether a change word (of `changes`) stands within `NEAR` words before `words[at]` (a number), not denied
    by the word before it (`NEGATIONS`, `FOR_NOW`)."""
    for k in range(max(0, at - NEAR), at):
        if stems[k] in changes:
            before = words[k - 1] if k else ""
            if before not in NEGATIONS and not (stems[k] == "now" and before in FOR_NOW):
                return True
    return False
