"""A change said done without its new value (`updates`): "the webinar has been rescheduled", "can you
remind me what date it's been rescheduled to?". A later note saying a fact was changed makes an
earlier note's value of it stale even when it does not give the new one: asked "when is the
webinar?", the memory that it moved is the first thing to read, the old date just after it.

Read only in the perfect passive — `been` right before a word of change — the form that says the
change happened: in a statement, or in a question that takes it as given ("what date it's been
rescheduled to?"), not in one that asks whether ("has the webinar been rescheduled?"), nor in a
supposition ("if it has been rescheduled"); "was it rescheduled?" and "we could reschedule it" hold no
`been`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from kaeru.domain.stopwords import STOP_WORDS
from kaeru.domain.text import stem_words, tokens
from kaeru.service.recall.values_near import ASIDE, SENTENCE_END

#: Stems of the words of change read after `been`: the past participles of `updates.CHANGE_WORDS`
#: (English) and those of calling off or putting off; not "updated" nor "revised" (a document is, and
#: its numbers may stand).
DONE = frozenset(
    stem_words(
        """increased decreased raised lowered reduced adjusted changed moved rescheduled postponed extended
        delayed cancelled canceled""".split()  # noqa: SIM905 — a word list reads better as text
    )
)
BEEN = "been"
#: Words before `been` that make the change a supposition: "if it has been rescheduled".
SUPPOSING = frozenset(["if", "whether", "unless", "once", "when"])
#: In a question, `been` must follow its auxiliary ("it's been", "has been"): after another word the
#: auxiliary stands first and the question asks whether ("has the webinar been rescheduled?").
AUXILIARIES = frozenset(["s", "has", "have", "had", "ve", "d"])


def may_state_done(text: str) -> bool:
    """A substring test (in C) before the words are read."""
    return BEEN in text.lower()


def _sentences(text: str) -> Iterator[tuple[bool, list[str], list[str]]]:
    """Each sentence of `text` outside headers (they say when or who, not what): whether it asks (its
    end, which `SENTENCE_END.split` drops, holds a question mark), its words, their stems."""
    for piece in ASIDE.split(text)[::2]:
        start = 0
        for end in [*SENTENCE_END.finditer(piece), None]:
            words = tokens(piece[start : end.start() if end else len(piece)])
            if words:
                yield end is not None and "?" in end.group(), words, stem_words(words)
            start = end.end() if end else start


def _asked(words: list[str], stems: list[str], slots: set[str]) -> frozenset[str]:
    """A sentence's query words of three letters or more (as `updates` counts shared query words)."""
    return frozenset(s for w, s in zip(words, stems, strict=True) if len(w) > 2 and s in slots)


def read_done(text: str, slots: set[str], known: set[str]) -> list[frozenset[str]]:
    """The query words of each sentence of `text` that says a change done and gives no number (the
    new value unsaid), where the word just before `been` and its auxiliary names nothing outside
    `known` (the older's and the query's words; a pronoun names nothing): "the review notes have
    been moved" says where the notes went, not the review."""
    found: list[frozenset[str]] = []
    for asks, words, stems in _sentences(text):
        if BEEN not in words or any(w.isdigit() for w in words):
            continue
        at = next((k for k, w in enumerate(words[:-1]) if w == BEEN and stems[k + 1] in DONE), None)
        if at is None or not SUPPOSING.isdisjoint(words[:at]):
            continue
        if asks and (at == 0 or words[at - 1] not in AUXILIARIES):
            continue
        head = next((k for k in range(at - 1, -1, -1) if words[k] not in AUXILIARIES), None)
        if head is not None and len(words[head]) > 2 and words[head] not in STOP_WORDS and stems[head] not in known:
            continue
        asked = _asked(words, stems, slots)
        if asked:
            found.append(asked)
    return found


def valued(text: str, slots: set[str]) -> list[frozenset[str]]:
    """The query words of each sentence of `text` that gives a number."""
    return [_asked(words, stems, slots) for _, words, stems in _sentences(text) if any(w.isdigit() for w in words)]


class Said(Protocol):
    """A text as `updates` reads it: the text and its content words (stems)."""

    text: str
    content: set[str]


def stated_done(old: Said, new: Said, slots: set[str], needed: int) -> bool:
    """Whether the newer text says done a change of what a sentence of the older gives a number: a
    sentence of each shares `needed` query words (the caller has checked that both are short
    statements sharing the query's words)."""
    if not may_state_done(new.text):
        return False
    done = read_done(new.text, slots, old.content | slots)
    return bool(done) and any(len(d & v) >= needed for d in done for v in valued(old.text, slots))
