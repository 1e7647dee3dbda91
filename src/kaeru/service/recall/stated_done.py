"""A change said done without its new value (`updates`): "the webinar has been rescheduled", "can you
remind me what date it's been rescheduled to?". A later note saying a fact was changed makes an
earlier note's value of it stale even when it does not give the new one: asked "when is the
webinar?", the memory that it moved is the first thing to read, the old date just after it.

Read only in the perfect passive — `been` right before a word of change — the form that says the
change happened: in a statement, or in a question that takes it as given ("what date it's been
rescheduled to?"), not in one that asks whether ("has the webinar been rescheduled?", with or without
its mark: a task's title has none), nor in a supposition ("if it has been rescheduled", "it would
have been rescheduled"), a denial ("it has not been rescheduled", "nobody said it has been
rescheduled") or a request ("confirm that it has been rescheduled"): each says nothing changed, or
that no one knows. "Was it rescheduled?" and "we could reschedule it" hold no `been`.

The thing said changed is the word named just before `been` (its auxiliaries aside): the older's
value must be its value (the word the older's number is written by, `values_near`) or it must be a
query word — "the migration owner has been changed" does not make "deadline: March 3. Owner: Bob"
stale for a query about the deadline. A pronoun names nothing and passes ("it has been moved")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple, Protocol

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
SUPPOSING = frozenset(
    ["if", "whether", "unless", "once", "when", "suppose", "supposing", "assume", "assuming", "imagine"]
)
#: In a question, `been` must follow its auxiliary ("it's been", "has been"): after another word the
#: auxiliary stands first and the question asks whether ("has the webinar been rescheduled?").
AUXILIARIES = frozenset(["s", "has", "have", "had", "ve", "d"])
#: A clause opening with one of these asks, with or without a question mark ("Has the migration been
#: postponed" as a task's title).
ASKING = frozenset(
    ["has", "have", "had", "is", "are", "was", "were", "do", "does", "did", "can", "could", "will", "would", "should"]
)
#: Before `been` in its clause, one of these denies the change or reports it denied: "has not been",
#: "hasn't been" (its `t`), "has never been", "nothing has been changed", "nobody said it has been".
DENYING = frozenset(
    """not t never no nothing nobody none neither nor cannot without doubt denied denies deny rumor
    rumour rumored rumoured unconfirmed untrue false""".split()  # noqa: SIM905 — a word list reads better as text
)
#: A modal among `been`'s auxiliaries makes it a hypothesis: "would have been", "might've been".
MODALS = frozenset(["would", "could", "might", "should", "may", "must", "ought"])
#: Adverbs that may stand among `been`'s auxiliaries: "has already been", "would probably have been".
BETWEEN = frozenset(
    """already also just now finally since still yet probably apparently reportedly
    officially""".split()  # noqa: SIM905 — a word list reads better as text
)
#: A request that the change be found out, not a statement that it was made: "confirm that it has been
#: moved", opening a clause or after `REQUESTING` ("can you check", "we need to verify").
REQUESTS = frozenset(
    """confirm check verify ask ensure find make clarify doublecheck double investigate
    determine""".split()  # noqa: SIM905 — a word list reads better as text
)
REQUESTING = frozenset(["please", "pls", "to", "you"])
#: Where a clause ends within a sentence (a question or a request may open any clause: "quick
#: question, has it been moved").
CLAUSE = re.compile(r"[,:()\u2013\u2014]|\s-+\s")


class Done(NamedTuple):
    """A sentence saying a change done: its query words, and the stem of the word naming what
    changed (None: a pronoun or a word too short to name anything)."""

    asked: frozenset[str]
    head: str | None


class Sentence(NamedTuple):
    asks: bool
    words: list[str]
    stems: list[str]
    clauses: list[int]  # where each clause starts, in words


def may_state_done(text: str) -> bool:
    """A substring test (in C) before the words are read."""
    return BEEN in text.lower()


def _sentences(text: str) -> Iterator[Sentence]:
    """Each sentence of `text` outside headers (they say when or who, not what): whether it asks (its
    end, which `SENTENCE_END.split` drops, holds a question mark), its words, their stems, where its
    clauses start."""
    for piece in ASIDE.split(text)[::2]:
        start = 0
        for end in [*SENTENCE_END.finditer(piece), None]:
            words: list[str] = []
            clauses: list[int] = []
            for part in CLAUSE.split(piece[start : end.start() if end else len(piece)]):
                said = tokens(part)
                if said:
                    clauses.append(len(words))
                    words.extend(said)
            if words:
                yield Sentence(end is not None and "?" in end.group(), words, stem_words(words), clauses)
            start = end.end() if end else start


def _asked(words: list[str], stems: list[str], slots: set[str]) -> frozenset[str]:
    """A sentence's query words of three letters or more (as `updates` counts shared query words)."""
    return frozenset(s for w, s in zip(words, stems, strict=True) if len(w) > 2 and s in slots)


def _said(sentence: Sentence, at: int) -> int | None:
    """Where the words naming what changed end (the word before `been` at `at`, its auxiliaries and
    adverbs aside), or -1 when nothing precedes them; None when the sentence does not state the
    change done (see the module's docstring)."""
    words = sentence.words
    clause = max(k for k in sentence.clauses if k <= at)
    before = words[:at]
    if not SUPPOSING.isdisjoint(before) or not DENYING.isdisjoint(words[clause:at]):
        return None
    if any(words[k] in REQUESTS and (k in sentence.clauses or (k and words[k - 1] in REQUESTING)) for k in range(at)):
        return None
    asks = sentence.asks or words[0] in ASKING or words[clause] in ASKING
    if asks and (at == 0 or words[at - 1] not in AUXILIARIES):
        return None
    head = at - 1
    while head >= 0 and (words[head] in AUXILIARIES or words[head] in MODALS or words[head] in BETWEEN):
        if words[head] in MODALS:
            return None
        head -= 1
    return head


def read_done(text: str, slots: set[str]) -> list[Done]:
    """The sentences of `text` that say a change done and give no number (the new value unsaid),
    each with query words."""
    found: list[Done] = []
    if not may_state_done(text):
        return found
    for sentence in _sentences(text):
        words, stems = sentence.words, sentence.stems
        if BEEN not in words or any(w.isdigit() for w in words):
            continue
        at = next((k for k, w in enumerate(words[:-1]) if w == BEEN and stems[k + 1] in DONE), None)
        head = None if at is None else _said(sentence, at)
        asked = _asked(words, stems, slots)
        if head is None or not asked:
            continue
        named = head >= 0 and len(words[head]) > 2 and words[head] not in STOP_WORDS
        found.append(Done(asked, stems[head] if named else None))
    return found


def valued(text: str, slots: set[str]) -> list[frozenset[str]]:
    """The query words of each sentence of `text` that gives a number."""
    return [_asked(s.words, s.stems, slots) for s in _sentences(text) if any(w.isdigit() for w in s.words)]


class Reading:
    """A text as this test reads it, each part read at its first call: `updates` asks it of one text
    for every other text of the pair loop."""

    __slots__ = ("_done", "_slots", "_valued", "text")

    def __init__(self, text: str, slots: set[str]):
        self.text, self._slots = text, slots
        self._done: list[Done] | None = None
        self._valued: list[frozenset[str]] | None = None

    def done(self) -> list[Done]:
        if self._done is None:
            self._done = read_done(self.text, self._slots)
        return self._done

    def valued(self) -> list[frozenset[str]]:
        if self._valued is None:
            self._valued = valued(self.text, self._slots)
        return self._valued


class Said(Protocol):
    """A text as `updates` reads it: this test's reading, and which words its numbers are values of."""

    said: Reading

    def near(self) -> dict[str, frozenset[str]]: ...


def stated_done(old: Said, new: Said, slots: set[str], needed: int) -> bool:
    """Whether the newer text says done a change of what a sentence of the older gives a number: a
    sentence of each shares `needed` query words, and the newer names what changed by a query word
    or by a word the older's number is a value of, or not at all (the caller has checked that both
    are short statements sharing the query's words)."""
    done = new.said.done()
    if not done:
        return False
    values = old.said.valued()
    return any(
        len(d.asked & v) >= needed and (d.head is None or d.head in slots or d.head in old.near())
        for d in done
        for v in values
    )
