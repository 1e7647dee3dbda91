"""Which numbers of a text are the values of which of its words: those written within `NEAR` words
of it in its sentence (`updates`, decisions 17.Q4, 17.U1).

The texts test of `updates` took two leading hits for an update when any of their numbers differed
and their words overlapped: "The API now listens on port 9443." and a later "Discussed the API port
with ops in chat; no change for now (thread 263)." were one fact changed, 263 against 9443, and the
chatter ranked above the port. Now the numbers that differ must be the values of a word both texts
hold (`tied`).

Written without spaces (Japanese, Chinese, Korean), a text is tokenised as characters and their
two-character pieces (`text.tokens`): every such token is a content word whatever its length (but
those of hiragana alone: particles and endings, `の`, `は`, `です`), and nearness is counted in characters,
`CHARS_PER_WORD` to a word — "API端口是8080" ties 8080 to "api" and "端口". A value alone on the
line after its label ("Budget\n550") is the label's, as if written after it on its line."""

from __future__ import annotations

import re

from kaeru.domain.stopwords import STOP_WORDS
from kaeru.domain.text import UNSPACED, stem_words, tokens

#: How near a number must be to a word to be its value.
NEAR = 3
#: Where a sentence ends: a number is a slot's value only in the slot word's own sentence.
SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)|\n")
#: Where a sentence ends by its marks, not by a line's end (`values_by_word` joins a line of
#: values alone to the line before it).
_STOPPED = re.compile(r"[.!?;]+(?=\s|$)")
#: How many characters of a text written without spaces count as one word of `NEAR`.
CHARS_PER_WORD = 2
_UNSPACED = re.compile(f"[{UNSPACED}]+")
#: Hiragana alone: particles and endings (`の`, `は`, `です`), no content of their own.
_HIRAGANA = re.compile("[\u3040-\u309f]+")
#: A bracketed span opening a line, such as the header of "[1:56 pm on 8 May, 2023] Caroline: …":
#: it says when or where, and its numbers are no values at all — of the words after it or of the
#: text (`*`) — so two turns of one speaker on two days are not two values of anything (decision L3,
#: session 12). Its words still count as the text's content, and it ends the sentence it opens.
#: A bracket inside a sentence ("the budget [approved] is 550") is left to the sentence.
ASIDE = re.compile(r"(^[ \t]*\[[^\[\]\n]*\])", re.MULTILINE)


def values_by_word(text: str) -> dict[str, frozenset[str]]:
    """For each content word of a text (a stem, as `read_text`'s), the numbers written within `NEAR`
    words of it in the same sentence (a header's numbers are no values, as there). A number near no
    content word is the value of nothing named, and of no update: a trailing reference or line
    number, not a changed fact."""
    found: dict[str, set[str]] = {}
    for piece in ASIDE.split(text)[::2]:
        for sentence in _sentences(piece):
            words = tokens(sentence)
            digits = [j for j, w in enumerate(words) if w.isdigit()]
            if not digits:
                continue
            at = _positions(words) if _UNSPACED.search(sentence) else range(len(words))
            stems = stem_words(words)
            for i, (word, stemmed) in enumerate(zip(words, stems, strict=True)):
                if _content(word):
                    near = [j for j in digits if abs(at[j] - at[i]) <= NEAR]
                    if near:
                        found.setdefault(stemmed, set()).update(words[j] for j in near)
    return {w: frozenset(v) for w, v in found.items()}


def _sentences(piece: str) -> list[str]:
    """The sentences of `piece` (`SENTENCE_END`), a line of numbers alone ("550", "$600") joined to
    the line before it when that line is a label (at most `NEAR` words, no number: "Budget"): a
    form's or a list's value under its label. Under a line of prose, such a line is a reference or a
    count pasted after a message, no value of its words."""
    out: list[str] = []
    for stopped in _STOPPED.split(piece):
        label = False
        for k, line in enumerate(stopped.split("\n")):
            words = tokens(line)
            if k and label and words and all(w.isdigit() for w in words):
                out[-1] += " " + line
                label = False
                continue
            out.append(line)
            label = 0 < len(words) <= NEAR and not any(w.isdigit() for w in words)
    return out


def _content(word: str) -> bool:
    """Whether a token names something: a word of three letters or more and no stop word, or any
    token of a text written without spaces but one of hiragana alone."""
    if _UNSPACED.match(word):
        return _HIRAGANA.fullmatch(word) is None
    return len(word) > 2 and word not in STOP_WORDS and not word.isdigit()


def _positions(words: list[str]) -> list[float]:
    """Where each token stands, in words: a character of a text written without spaces counts
    1/`CHARS_PER_WORD`, and its two-character piece (after the first character's token) stands where
    that character does."""
    at: list[float] = []
    cursor, last = 0.0, 0.0
    for word in words:
        if _UNSPACED.fullmatch(word):
            if len(word) > 1 and at:  # a piece: where its first character stands
                at.append(last)
                continue
            last = cursor
            at.append(cursor)
            cursor += 1 / CHARS_PER_WORD
        else:
            at.append(cursor)
            cursor += 1
    return at


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
