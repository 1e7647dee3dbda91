"""Words that mark a statement as what holds from now on (decision 300): "staging **now** runs on
Fly.io", "Dana is the **new** team lead", "from now on we use pnpm **instead** of npm", "the docs
site is **no longer** on Netlify", "Carol **took over** the billing service".

The `updates` channel (`updates.stated_marked`) reads them beside its words of change
(`updates.WORD_CHANGE_FORMS`) to find an update whose new value is a word, in the shapes agents write
decisions and handovers in, which the verbs alone missed: the new value before the verb ("Carol took
over …"), the old value named again ("replaced black with ruff"), the new value in another sentence
("no longer on Netlify; it is hosted on GitHub Pages").

Two kinds. A *strong* marker says a change wherever it stands (`instead`, `no longer`, `from now
on`, `took over`). A *weak* one — `now`, `new` — is in every other line of a chat ("I got a new
puppy", "for now"), so it marks a sentence only beside a word of the query (at most `NEAR` words
away, "staging **now** runs", "the **new** team lead"), never after `for`/`until`/`right`/`just`,
and never when the query asks with it. English, then the same words, folded, in the six other
languages `recall` stems."""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from kaeru.domain.languages import without_accents
from kaeru.service.recall.values_near import SENTENCE_END

_STRONG = (
    # English
    r"instead|anymore|no longer|from now on|going forward|took over|taken over|takes over|taking over",
    # German
    r"stattdessen|nicht mehr|ab sofort|ab jetzt|ubernommen|ubernimmt",
    # French
    r"desormais|dorenavant|au lieu|ne \w+ plus|n'\w+ plus",
    # Spanish
    r"en lugar|en vez|ya no|a partir de ahora",
    # Italian
    r"invece|non \w+ piu|d'ora in poi|da ora in poi",
    # Portuguese
    r"em vez|em lugar|ja nao|nao \w+ mais|a partir de agora",
    # Dutch
    r"in plaats|niet meer|overgenomen|neemt over|vanaf nu",
)
_STRONG_MARKER = re.compile(r"(?<!\w)(?:" + "|".join(_STRONG) + r")(?!\w)")
#: A word every strong marker holds, one a marker (its rarest word: `longer`, `lieu`, `plus`): a text
#: with none of them holds no strong marker, and its regex — slow, an alternation tried at every
#: character — is not run over it (`tests/recall/test_markers.py` checks each marker holds one).
STRONG_WORDS = frozenset(
    """instead anymore longer now forward over
    stattdessen mehr sofort jetzt ubernommen ubernimmt
    desormais dorenavant lieu plus
    lugar vez ya ahora
    invece piu poi
    nao mais agora
    plaats meer overgenomen nu""".split()  # noqa: SIM905 — a word list reads better as text
)
#: Weak markers, folded: English, German, French, Spanish, Italian, Portuguese, Dutch.
WEAK = frozenset(
    """now new
    jetzt nun neu neue neuen neuer neues
    maintenant nouveau nouvel nouvelle nouveaux nouvelles
    ahora nuevo nueva nuevos nuevas
    adesso ora nuovo nuova nuovi nuove
    agora novo nova novos novas
    nu nieuw nieuwe""".split()  # noqa: SIM905 — a word list reads better as text
)
#: A weak marker counts at most this many words from a query word.
NEAR = 2
#: `SENTENCE_END`, its ends kept: whether a sentence asks is read from its end, which a split drops.
_ENDS = re.compile(f"({SENTENCE_END.pattern})")
#: Words after which `now` means "for the moment", not "from now on".
_NOT_AFTER = frozenset(["for", "until", "till", "right", "just", "by", "bis", "pour", "por", "per", "voor"])


def _folded(text: str) -> str:
    return text.lower() if text.isascii() else without_accents(text)


def strong(sentence: str) -> list[str]:
    """The words of a sentence's strong markers (each word of a phrase: `no`, `longer`), folded."""
    return [w for found in _STRONG_MARKER.finditer(_folded(sentence)) for w in re.split(r"\W+", found[0]) if w]


def weak(words: Sequence[str], asked: Sequence[bool]) -> list[str]:
    """The weak markers among a sentence's `words` (the tokeniser's, folded) that stand within `NEAR`
    words of a query word (`asked[j]`: word j is one), are no query word themselves, and follow no
    `for` ("for now")."""
    return [
        w
        for j, w in enumerate(words)
        if w in WEAK
        and not asked[j]
        and (j == 0 or words[j - 1] not in _NOT_AFTER)
        and any(asked[k] for k in range(max(0, j - NEAR), min(len(words), j + NEAR + 1)))
    ]


def may_mark(text: str, words: AbstractSet[str] | None = None) -> bool:
    """Whether a text may hold a marker at all (before its sentences are read). With `words` (the
    tokeniser's, which a sentence's reader has already): one is a weak marker, or a strong marker's
    word and the strong markers' regex finds one. Without: a whole text, not tokenised for this —
    tokenising it costs more than the regex."""
    if words is None:
        folded = _folded(text)
        return _STRONG_MARKER.search(folded) is not None or not WEAK.isdisjoint(re.findall(r"\w+", folded))
    if not WEAK.isdisjoint(words):
        return True
    return not STRONG_WORDS.isdisjoint(words) and _STRONG_MARKER.search(_folded(text)) is not None


def stated(text: str) -> list[str]:
    """A text's sentences (`values_near.SENTENCE_END`) but its questions: "Does staging now run on
    Fly.io?" asks whether a change was made, it does not say one was, so it marks nothing."""
    parts = _ENDS.split(text)
    return [sentence for sentence, end in zip(parts[::2], [*parts[1::2], ""], strict=True) if "?" not in end]
