"""Updated facts first (channel `updates`, decisions 17.Q4, 17.U1 and 17.R1): when two notes give
different values for what the query asks about, the newer one ranks just above the older one,
unless the query asks for history.

Found without a model, from the texts alone:

- **values**: a *slot* is a query word (its stem), and a note's values for it are the numbers
  written within `NEAR` words of it in the same sentence ("3 interviews", "budget to $65",
  "deadline of April 25"); all of a note's numbers count as one more slot, `*`;
- **an update**: an older and a newer note that give a slot different values (each has one the
  other lacks) and are about the same thing, by one of six tests:
  - *a stated change* (17.R1): both are short statements sharing `SHARED_QUERY_WORDS` of the
    query's words, and the newer says that a query word's value changed — a change word
    (`CHANGE_WORDS`: increased, adjusted, new, now…) before the value, in the slot word's sentence
    ("increased to $550 monthly", "the new April 25 deadline") — to a value the older does not give
    it; the words just before the slot word (`MODIFIERS`) must be the older's or the query's
    ("the search budget, increased to 900" does not update "the payments budget: 400"), and then
    the rarest-word test below is not needed (an update rarely restates every qualifier);
  - *a named slot* (17.U1): both are short statements (at most `SHORT` content words: a fact
    restated, not a document that happens to hold numbers), they give the same query word
    different values, they share at least `SHARED_QUERY_WORDS` of the query's words, the newer
    holds the rarest query word the older holds (by the scope's idf: "payments budget" is not
    "search budget");
  - *the texts* (17.Q4), for two of the leading hits only: any numbers differ and their content
    words overlap (Jaccard ≥ `SAME_SUBJECT`, leaving out the words most leading hits share);
  - *a stated change of words* (decision 282), for a value that is no number ("we moved the
    payments database to server beta"): both short statements sharing the query's words, a
    sentence of the newer with two query words and a word of change (`WORD_CHANGE_FORMS`: moved,
    switched, replaced…, and their participles in the other languages `recall` stems) holding words
    neither the older nor the query has, named by the older's or the query's words, and a sentence
    of the older with those query words holding words the newer lacks ("server alpha");
  - *a marked update* (decision 300), for a value that is no number and no verb of 282 says:
    two short statements, the newer restating the older, with a marker of what holds from now
    on (`markers`: "now runs", "the new team lead", "instead of", "no longer", "took over")
    beside the query's words, and words of its own (`stated_marked`);
  - *a change said done* (`stated_done`): 17.R1's short statements, the newer saying the older's value changed;
- **newer**: the later `created_at`, then the later write. Explicit supersession needs none of
  this: a `supersedes` verdict already demotes the old memory through currentness.

Only an older hit among the first `LEADING` yields, to every newer note ranked below it that
passes (17.R1; each is set just above it, in their own order): one of the leading hits, or a
candidate ranked below them (an update often restates the value, not the question, so the query's
words found it less well; 17.U1). Not for a query that
asks for history: a history word, or a question in the simple past ("what was", "when did").
Shown in `explain` as the raised hit's `updates` entry: the score it gained.
"""

from __future__ import annotations

import re
from collections import Counter

from kaeru.domain.languages import from_tags as language_of
from kaeru.domain.languages import not_topics, without_accents
from kaeru.domain.model import Node
from kaeru.domain.stopwords import NOT_TOPICS, STOP_WORDS
from kaeru.domain.text import stem_words, tokens
from kaeru.service.recall import values_near
from kaeru.service.recall.markers import may_mark, stated, strong, weak
from kaeru.service.recall.stated_done import Reading, may_state_done, stated_done
from kaeru.service.recall.values_near import ASIDE, NEAR, SENTENCE_END, states_change

#: How many leading hits may yield (how near a number must be to a query word: `NEAR`).
LEADING = 10
#: The texts test (17.Q4): this share of two texts' distinct content words is common to both
#: (Jaccard), leaving out the words more than `COMMON_SHARE` of the leading hits use.
SAME_SUBJECT = 0.10
COMMON_SHARE = 0.25
#: The named-slot test (17.U1): a statement has at most `SHORT` distinct content words; two share
#: at least `SHARED_QUERY_WORDS` of the query's words.
SHORT = 40
SHORT_CHARS = 800
SHARED_QUERY_WORDS = 2
#: The newer hit's score is set this much above the older one's.
STEP = 1e-6

#: Words in a query that ask for what was true before, not now: the order is left alone. English,
#: then (folded) the same adverbs in the languages whose updates are read too (decision 283).
HISTORY_WORDS = frozenset(
    stem_words(
        """originally initially previously earlier formerly former original history historical evolution
        timeline ago past prior initial changed change changes evolved
        fruher ursprunglich vorher damals anfangs bisher
        auparavant initialement autrefois precedemment anciennement
        originalmente anteriormente inicialmente antiguamente
        originariamente precedentemente inizialmente
        vroeger oorspronkelijk aanvankelijk voorheen""".split()  # noqa: SIM905 — a word list reads better as text
    )
)
#: Words that state a change (17.R1): a value written after one of them, near the slot word in its
#: sentence, is the slot's new value, so the pair needs no rarest-word test.
CHANGE_WORDS = frozenset(
    stem_words(
        """increased decreased raised lowered reduced adjusted changed updated revised moved rescheduled
        postponed extended new now""".split()  # noqa: SIM905 — a word list reads better as text
    )
)
#: Words that state a change of what a thing is or where it is, not of a number ("we moved the
#: database to server beta", "we switched to PostgreSQL"): the new value is in the words of its
#: sentence (`read_words`, decision 282). Literal forms, not stems: a chat's "dance moves" and
#: "keep moving" state no change.
WORD_CHANGE_FORMS = frozenset(
    # English, then (folded, as the tokeniser folds: no accents) the participles of the same verbs in
    # the languages `recall` stems: German, French, Spanish, Italian, Portuguese, Dutch.
    """moved switched migrated replaced renamed transferred swapped changed
    umgezogen verschoben migriert ersetzt gewechselt geandert umbenannt ubertragen getauscht
    deplace deplacee migre migree remplace remplacee renomme renommee transfere transferee
    movido migrado reemplazado sustituido cambiado renombrado transferido trasladado
    spostato migrato sostituito cambiato rinominato trasferito
    substituido trocado mudado alterado renomeado
    verhuisd verplaatst gemigreerd vervangen gewijzigd veranderd hernoemd""".split()  # noqa: SIM905 — a word list reads better as text
)


def _may_state_words(text: str) -> bool:
    """Whether a text may hold a word of change: a substring test (in C), the words read later;
    a text with accents is folded first (`migré`)."""
    lowered = text.lower() if text.isascii() else without_accents(text)
    return any(form in lowered for form in WORD_CHANGE_FORMS)


def _may_change(text: str) -> bool:
    """Whether a text may state a change: a word of change, a marker (300), a change said done."""
    return _may_state_words(text) or may_mark(text) or may_state_done(text)


#: The words before a changed slot word that name it ("the payments budget"): the newer's must
#: be the older's or the query's (17.R1).
MODIFIERS = 4
#: A question in the simple past asks what was said or done then, not what holds now.
PAST_WORDS = frozenset(["did", "was", "were", "had"])

_DIGIT = re.compile(r"\d")


def asks_history(query_stems: list[str], query: str = "") -> bool:
    """Whether the query asks what was true before: a history word, or a question in the past."""
    return any(s in HISTORY_WORDS for s in query_stems) or any(w in PAST_WORDS for w in tokens(query))


class _Text:
    """One candidate's slot values, content words and stated changes, read once; a short one's
    sentences and stated changes of words (`read_words`) when a test first asks for them."""

    __slots__ = ("_lang", "_marks", "_near", "_slots", "_words", "changed", "content", "said", "text", "values")

    def __init__(self, node: Node, slots: set[str]):
        self.text, self._slots, self._lang = _text(node), slots, language_of(node.tags)
        self.values, self.content, self.changed = read_text(self.text, slots, changes=True)
        self.said = Reading(self.text, slots)  # `stated_done`'s reading, read once per text
        self._words: tuple[list[frozenset[str]], list[Worded]] | None = None
        self._marks: list[Marked] | None = None
        self._near: dict[str, frozenset[str]] | None = None

    def near(self) -> dict[str, frozenset[str]]:
        """`values_near.values_by_word` of the text, read at the first call (two leading hits' texts test)."""
        if self._near is None:
            self._near = values_near.values_by_word(self.text) if self.values else {}
        return self._near

    @property
    def short(self) -> bool:
        return len(self.content) <= SHORT

    def words(self) -> tuple[list[frozenset[str]], list[Worded]]:
        """`read_words` of a short text (nothing for a longer one), read at the first call."""
        if self._words is None:
            self._words = read_words(self.text, self._slots, self._lang) if self.short else ([], [])
        return self._words

    def marks(self) -> list[Marked]:
        """`read_marks` of a short text (nothing for a longer one), read at the first call."""
        if self._marks is None:
            self._marks = read_marks(self.text, self._slots) if self.short and _may_change(self.text) else []
        return self._marks


def _text(node: Node) -> str:
    return f"{node.description or ''}\n{node.body or ''}"


def newer_first(
    ranked: list[str],
    final: dict[str, float],
    pool: dict[str, Node],
    query_stems: list[str],
    idf: dict[str, float] | None = None,
) -> dict[str, float]:
    """Raise, in `final`, the newer note of each update pair whose older note is among the first
    `LEADING` of `ranked`, just above it; returns each raised hit's gain. `idf`: the scope's
    weight of each query word (the rarest one an older note holds must be in the newer)."""
    slots = set(query_stems)
    ranked = [i for i in ranked if i in pool]
    if len(ranked) < 2 or not slots:
        return {}
    leading = ranked[:LEADING]
    texts = {i: _Text(pool[i], slots) for i in leading}
    with_values = [i for i in leading if texts[i].values]
    shorts = {i for i in leading if texts[i].short and texts[i].content}
    if not with_values and not shorts:
        return {}
    # Below the leading hits only short statements with numbers (the named-slot test) or a word of
    # change (decision 282) can pass; the rest is not read at all (`SHORT_CHARS` only bounds the
    # cost: the tests count words).
    worded = {i for i in shorts if _may_change(texts[i].text)}
    for i in ranked[LEADING:]:
        text = _text(pool[i])
        if len(text) > SHORT_CHARS:
            continue
        if shorts and _may_change(text):
            worded.add(i)
        elif not _DIGIT.search(text):
            continue
        texts[i] = _Text(pool[i], slots)
    below = [i for i in ranked[LEADING:] if i in texts and (texts[i].values or i in worded) and texts[i].short]
    # Short statements without numbers are older notes only when some note may state a change of
    # words (the stated-words test).
    stating = [i for i in leading if texts[i].values or (worded and i in shorts)]
    if not stating:
        return {}
    # Words most of the leading hits use (the subject of the whole query, or of every answer) do
    # not tell two of them apart (the texts test).
    among = Counter(w for i in with_values for w in texts[i].content)
    common = {w for w, n in among.items() if n > max(2, COMMON_SHARE * len(with_values))}
    short = [i for i in with_values if len(texts[i].content) <= SHORT]
    among_short = Counter(w for i in short for w in texts[i].content)
    common_short = {w for w, n in among_short.items() if n > max(2, COMMON_SHARE * len(short))}
    weights = idf or {}
    # Of the query's words, those a text's content can hold (three letters or more): two must be
    # shared by a marked pair, or the one there is (decision 300).
    needed = min(SHARED_QUERY_WORDS, sum(1 for s in slots if len(s) > 2))
    gains: dict[str, float] = {}
    for older in stating:
        first, old = pool[older], texts[older]
        # Sorted: between words of equal weight the choice must not follow the set's order (the
        # process's hash seed), or one query would rank differently from one process to the next.
        held = sorted(w for w in old.content & slots if w in weights)
        rarest = max(held, key=lambda w: weights[w]) if held else None
        later = [
            i
            for i in [*stating, *below]
            if (pool[i].created_at, pool[i].seq) > (first.created_at, first.seq) and final[i] <= final[older]
        ]
        # Every newer note that passes a test is set just above the older, in its own order.
        passing = [
            i
            for i in later
            if stated_pair(old, texts[i], slots)
            or update_pair(old, texts[i], slots, rarest, common, i in leading)
            or (i in leading and stated_any(old, texts[i], common_short))
            or stated_words(old, texts[i], slots)
            or stated_marked(old, texts[i], slots, rarest, needed)
            or (statement_pair(old, texts[i], slots, None) and stated_done(old, texts[i], slots, needed))
        ]
        base = final[older]
        for k, chosen in enumerate(reversed(passing), 1):
            target = base + k * STEP
            gains[chosen] = gains.get(chosen, 0.0) + target - final[chosen]
            final[chosen] = target
    return gains


def stated_any(old: _Text, new: _Text, common: set[str]) -> bool:
    """The stated change of any number (decision 111), for two leading hits: both short
    statements, the newer writes a change word before a number, their numbers differ and their
    texts are the same thing by the texts test — the words most of the short leading hits use left
    out (`common`; long answers around them would make every shared word common)."""
    if len(old.content) > SHORT or len(new.content) > SHORT or "*" not in new.changed:
        return False
    return differ(old.values, new.values) and same_texts(old, new, common)


def stated_pair(old: _Text, new: _Text, slots: set[str]) -> bool:
    """The stated-change test (17.R1): the newer states a change of a query word the older gives
    another value, and both are short statements sharing the query's words (no rarest-word test)."""
    return stated_change(old, new, slots) and statement_pair(old, new, slots, None)


def stated_words(old: _Text, new: _Text, slots: set[str]) -> bool:
    """The stated change of words (decision 282): two short statements sharing the query's words;
    a sentence of the newer with two query words and a word of change (`WORD_CHANGE_FORMS`) holds,
    after the word of change or its first query word, words neither the older nor the query has
    (the new value: "moved … to server beta"), the words naming the thing before its first query
    word are the older's or the query's (as 17.R1's), and a sentence of the older with one of
    those query words has words the newer lacks (the old value: "server alpha")."""
    if not statement_pair(old, new, slots, None) or not _may_state_words(new.text):
        return False
    known = old.content | slots
    for asked, after, naming in new.words()[1]:
        if not after - known or not naming <= known:
            continue
        if any(sentence & asked and sentence - new.content - slots for sentence in old.words()[0]):
            return True
    return False


def stated_marked(old: _Text, new: _Text, slots: set[str], rarest: str | None, needed: int) -> bool:
    """A marked update (decision 300): two short statements sharing `needed` of the query's words,
    the newer holding the rarest query word the older holds; a sentence of the newer with a marker
    (`markers.strong`, `markers.weak`: instead, no longer, took over, now, new…) and `needed` query words; words of
    the newer that neither the older, the query nor the markers have (the new value: "pnpm", "Dana",
    "GitHub Pages", wherever they stand); and a sentence of the older with those query words and
    a word no query word is (the old value). The older may be named again ("instead of npm")."""
    if len(old.content) > SHORT or len(new.content) > SHORT or len(old.content & new.content & slots) < needed:
        return False
    shared = len(old.content & new.content)
    if 2 * shared < len(old.content):  # the newer restates most of the older …
        return False
    named = rarest is None or rarest in new.content  # "the payments budget" is not "the search budget"
    for asked, markers in new.marks():
        if len(asked) < needed or not new.content - old.content - slots - markers:
            continue
        if RESTATED * shared < len(new.content - markers):  # … and is mostly about it, not a report
            continue
        if not named and not markers & HANDOVER:  # a handover names the thing, not the old verb
            continue
        if any(sentence & asked and sentence - slots for sentence in old.words()[0]):
            return True
    return False


#: A marked update restates at least half of the older's content words, and they are at least
#: 1/`RESTATED` of the newer's (its markers aside): a long report that says "now" once is no update.
RESTATED = 4
#: Markers of a handover ("Carol took over the billing service"), which name the thing handed over
#: and its new holder but not the old verb ("owns"): the rarest-word test is not asked of them.
HANDOVER = frozenset(stem_words(["took", "taken", "takes", "taking", "ubernommen", "ubernimmt", "overgenomen"]))
#: A marked sentence: (its query words, the stems of its markers).
Marked = tuple[frozenset[str], frozenset[str]]


def read_marks(text: str, slots: set[str]) -> list[Marked]:
    """A text's marked sentences (see `stated_marked`; a word of change marks one too) that hold a
    query word; a question marks nothing (it asks, it does not state)."""
    found: list[Marked] = []
    for piece in ASIDE.split(text)[::2]:  # headers say when or who, not what
        for sentence in stated(piece):
            words = tokens(sentence)
            held = set(words)
            if WORD_CHANGE_FORMS.isdisjoint(held) and not may_mark(sentence, held):
                continue
            stems = stem_words(words)
            asked = [len(w) > 2 and s in slots for w, s in zip(words, stems, strict=True)]
            markers = [*strong(sentence), *weak(words, asked), *(w for w in words if w in WORD_CHANGE_FORMS)]
            if markers and any(asked):
                found.append(
                    (frozenset(s for s, a in zip(stems, asked, strict=True) if a), frozenset(stem_words(markers)))
                )
    return found


#: A stated change of words: (the sentence's query words, the new value's words, the words naming it).
Worded = tuple[frozenset[str], frozenset[str], frozenset[str]]


def read_words(text: str, slots: set[str], lang: str = "en") -> tuple[list[frozenset[str]], list[Worded]]:
    """A short text's sentences (each its content words: no stop words, nor the function words of
    its language `lang`) and its stated changes of words: for each sentence with two query words
    and a word of change, (its query words, the content words after the change word or the first
    query word, whichever comes first, that are no query words — the new value, before a German
    participle too —, the content words before its first query word — what names the thing that
    changed: "the search database")."""
    function_words = NOT_TOPICS | not_topics(lang)
    sentences: list[frozenset[str]] = []
    worded: list[Worded] = []
    for piece in ASIDE.split(text)[::2]:  # headers say when or who, not what
        for sentence in SENTENCE_END.split(piece):
            words = tokens(sentence)
            stems = stem_words(words)
            kept = [len(w) > 2 and w not in function_words for w in words]
            content = frozenset(s for s, k in zip(stems, kept, strict=True) if k)
            if not content:
                continue
            sentences.append(content)
            start = next((j for j, w in enumerate(words) if w in WORD_CHANGE_FORMS), None)
            first = next((j for j, s in enumerate(stems) if s in slots and kept[j]), None)
            if start is None or first is None:
                continue
            asked = frozenset(s for s, k in zip(stems, kept, strict=True) if k and s in slots)
            if len(asked) < SHARED_QUERY_WORDS:
                continue
            begin = min(start, first)
            after = frozenset(stems[j] for j in range(begin + 1, len(stems)) if kept[j] and stems[j] not in slots)
            naming = frozenset(stems[k] for k in range(first) if kept[k] and not words[k].isdigit())
            change = stems[start]
            worded.append((asked, after - {change}, naming - {change}))
    return sentences, worded


def update_pair(old: _Text, new: _Text, slots: set[str], rarest: str | None, common: set[str], leading: bool) -> bool:
    """The named-slot test, or for two leading hits the texts test (17.U1, 17.Q4)."""
    if named_slot(old.values, new.values) and statement_pair(old, new, slots, rarest):
        return True
    return leading and differ(old.values, new.values) and tied(old, new) and same_texts(old, new, common)


def statement_pair(old: _Text, new: _Text, slots: set[str], rarest: str | None) -> bool:
    """The named-slot test's "same thing" (see the module's docstring)."""
    if len(old.content) > SHORT or len(new.content) > SHORT:
        return False
    if len(old.content & new.content & slots) < SHARED_QUERY_WORDS:
        return False
    return rarest is None or rarest in new.content  # "the payments budget" is not "the search budget"


def tied(old: _Text, new: _Text) -> bool:
    """Whether the numbers that differ are of one thing both texts name (`values_near.tied`)."""
    return values_near.tied(old.near(), new.near())


def same_texts(old: _Text, new: _Text, common: set[str]) -> bool:
    """The texts test's "same thing": Jaccard of the content words the leading hits do not share."""
    a, b = old.content - common, new.content - common
    return len(a & b) >= SAME_SUBJECT * len(a | b)


def read_text(
    text: str, slots: set[str], changes: bool = False
) -> tuple[dict[str, frozenset[str]], set[str], dict[str, list[frozenset[str]]]]:
    """A text's slot values (for each slot — a query stem — the text mentions, the numbers written
    within `NEAR` words of it in the same sentence; slot `*`: every number of the text; empty without
    numbers), its content words (the distinct stems of its words, without stop words and words under
    three letters) and, with `changes`, the slots it states a change of — a change word before the
    value, from `NEAR` words before the slot word or the value on ("budget increased to 550", "the
    new April 25 deadline") — each with the content words of the `MODIFIERS` words before the slot
    word (what names it)."""
    found: dict[str, set[str]] = {}
    numbers: set[str] = set()
    content: set[str] = set()
    changed: dict[str, list[frozenset[str]]] = {}
    pieces = ASIDE.split(text)  # odd pieces: the headers
    sentences = [(sentence, k % 2 == 1) for k, piece in enumerate(pieces) for sentence in SENTENCE_END.split(piece)]
    for sentence, aside in sentences:
        words = tokens(sentence)
        if not words:
            continue
        stems = stem_words(words)
        content.update(s for w, s in zip(words, stems, strict=True) if len(w) > 2 and w not in STOP_WORDS)
        digits = [w.isdigit() for w in words]
        if aside or not any(digits):
            continue
        numbers.update(w for w, d in zip(words, digits, strict=True) if d)
        for i, word in enumerate(stems):
            if word in slots:
                lo = max(0, i - NEAR)
                near = [j for j in range(lo, min(len(words), i + NEAR + 1)) if digits[j]]
                if near:
                    found.setdefault(word, set()).update(words[j] for j in near)
                    if changes:
                        # before the value: "increased to 550", "the new April 25 deadline"
                        first, last = max(0, min(i, near[0]) - NEAR), near[-1]
                        if any(s in CHANGE_WORDS for s in stems[first:last]):
                            named = range(max(0, i - MODIFIERS), i)
                            changed.setdefault(word, []).append(
                                frozenset(
                                    stems[j]
                                    for j in named
                                    if len(words[j]) > 2 and words[j] not in STOP_WORDS and not digits[j]
                                )
                                - CHANGE_WORDS
                            )
        # any number written after a change word ("rescheduled to March 22 at 4:30"): slot `*`
        if (
            changes
            and "*" not in changed
            and any(d and states_change(words, stems, j, CHANGE_WORDS) for j, d in enumerate(digits))
        ):
            changed["*"] = [frozenset()]
    if not numbers:
        return {}, content, changed
    found["*"] = numbers
    return {slot: frozenset(values) for slot, values in found.items()}, content, changed


def differ(older: dict[str, frozenset[str]], newer: dict[str, frozenset[str]]) -> bool:
    """Whether some slot has, in each text, a value the other lacks."""
    return any(slot in newer and older[slot] - newer[slot] and newer[slot] - older[slot] for slot in older)


def stated_change(old: _Text, new: _Text, slots: set[str]) -> bool:
    """Whether the newer text states a change of a query word (see `read_text`) to a value the
    older text does not give it, where the older gives that word a value the newer lacks, and the
    words that name the slot in the newer ("payments budget", "search budget") are the older's or
    the query's."""
    known = old.content | slots
    return any(
        slot in old.values
        and old.values[slot] - new.values[slot]
        and new.values[slot] - old.values[slot]
        and any(modifiers <= known for modifiers in new.changed[slot])
        for slot in new.changed
        if slot in new.values and slot != "*"
    )


def named_slot(older: dict[str, frozenset[str]], newer: dict[str, frozenset[str]]) -> bool:
    """Whether some query word (not `*`) has, in each text, a value the other lacks."""
    return any(
        slot != "*" and slot in newer and older[slot] - newer[slot] and newer[slot] - older[slot] for slot in older
    )
