"""Which language a Latin-script text is in, so that `recall` stems its words by that language's rules.

`recall` matches words by their Snowball stems. Every Latin-script word used to be stemmed as
English, so `Datenbank` never met `Datenbanken`, nor `prueba` `pruebas` (decision 191). A text is
now told apart by its common words — the short function words every sentence of a language is
full of — among the languages below; a text with too few of them (a title, a list of terms) stays
English, as before. Cyrillic words are Russian whatever the text (`text.Tokeniser`).

No model and no dictionary: a text is scored by how many distinct words of its prose are in each
language's list, and a language other than English is chosen only with at least `MIN_DISTINCT` of
them, more than twice English's and more than every other language has, whose occurrences make
`MIN_SHARE` of its prose words. The share counts occurrences, not distinct words: a list of ~45
words cannot make 15 % of a text of more than ~300 words, so every longer German or French note
was stemmed as English (decision 279). Only the first `MAX_PROSE_WORDS` words of prose are read.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence

from kaeru.domain.stopwords import NOT_TOPICS_BY_LANGUAGE

#: Language code → PyStemmer's algorithm, for the Latin-script languages told apart here.
STEMMERS = {
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "nl": "dutch",
}

#: Each language's most frequent function words, folded as the tokeniser folds them (lower case, no
#: accents). A word shared by several languages counts for each of them.
_COMMON: dict[str, frozenset[str]] = {
    code: frozenset(words.split())
    for code, words in {
        "en": "the and of to was were are that it for on with as this be have has had not but they we you he "
        "she from at by or an will would there what which who been their our my your do did does a i in is so "
        "how me just got about can if all no its im dont thats really get them re am",
        "de": "der die das und ist nicht ein eine einen einem dem den des mit auf fur sich auch zu wir ich sie "
        "wurde wurden werden sind war nach bei aus oder aber noch wie vom zum zur uber dass haben hat",
        "fr": "le la les des du et est une un dans pour pas que qui sur avec ce cette sont nous vous il elle au "
        "aux par ont ete mais ou plus leur de en",
        "es": "el la los las y es una un en que por para con del se no lo al como mas pero sus esta este fue "
        "son han ha muy tambien de",
        "it": "il lo la gli le di e che una un per con non sono del della dei delle nel nella al alla si ha "
        "questo questa ma anche come piu",
        "pt": "o a os as de e que um uma para com nao do da dos das em no na por se mais foi sao como mas ao "
        "ele ela esta isso",
        "nl": "de het een en van dat op te niet met zijn voor er ook aan bij naar maar dan wordt worden werd "
        "hij zij wij ik deze dit om uit",
    }.items()
}

#: Each common word → the languages it is common in.
_LANGUAGES_OF: dict[str, tuple[str, ...]] = {
    word: tuple(code for code, common in _COMMON.items() if word in common)
    for word in frozenset().union(*_COMMON.values())
}

#: A text needs this many distinct common words of a language, making at least `MIN_SHARE` of its
#: prose words, for it to be that language.
MIN_DISTINCT = 3
MIN_SHARE = 0.15
#: A text's language is told from its first this many words of prose: far more than a language's
#: common words need to show, and a pasted document of a million characters is not read whole.
MAX_PROSE_WORDS = 10_000
#: The longest common word: longer words need no look-up.
_LONGEST = max(len(word) for words in _COMMON.values() for word in words)
#: What may stand around a word of prose (quotes, brackets, sentence punctuation).
_OPENING = "\"'([{«¿¡“‘"
_CLOSING = ".,;:!?\"')]}»”’"


def without_accents(word: str) -> str:
    """Lower case without accents, as the tokeniser folds (`text.fold`, which imports this module)."""
    return "".join(c for c in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(c))


def detect(text: str) -> str:
    """The language code of a text: one of `STEMMERS`, else `en`.

    Only its words of prose are read — whitespace-separated runs of letters, with a sentence's
    punctuation around them — so code and paths (`os.path`, `-e`, `el.classList`) count for
    nothing; and a capitalised common word counts only where a sentence begins, so names
    (`Le Bernardin, La Grenouille`) do not either. Review found both flipping English notes."""
    occurrences: dict[str, int] = {}
    words = 0
    starts = True
    for raw in text.split():
        word = raw.lstrip(_OPENING)
        bare = word.rstrip(_CLOSING)
        prose = bare.isalpha()
        # What follows a sentence's end, or something that is no prose (a name's slug, code), may
        # begin with a capital.
        sentence_start, starts = starts, not prose or word[len(bare) :][:1] in (".", "!", "?")
        if not prose:
            continue
        words += 1
        if len(bare) <= _LONGEST and (bare.islower() or sentence_start):
            occurrences[bare] = occurrences.get(bare, 0) + 1
        if words == MAX_PROSE_WORDS:
            break
    hits: dict[str, set[str]] = {code: set() for code in _COMMON}
    said: Counter[str] = Counter()
    # Each distinct spelling folded once (an ASCII one by lower case alone): a long text repeats
    # its common words, and most of its words are no common word of any language.
    for bare, count in occurrences.items():
        folded = bare.lower() if bare.isascii() else without_accents(bare)
        for code in _LANGUAGES_OF.get(folded, ()):
            hits[code].add(folded)
            said[code] += count
    best = max(STEMMERS, key=lambda code: len(hits[code]))
    top = len(hits[best])
    if (
        top < MIN_DISTINCT
        or said[best] < MIN_SHARE * words
        or top <= 2 * len(hits["en"])
        or sum(1 for code in STEMMERS if len(hits[code]) == top) > 1
    ):
        return "en"
    return best


def not_topics(code: str) -> frozenset[str]:
    """The words that are never a topic of a text in one of `STEMMERS`' languages: its common words
    and its other function words (`stopwords.NOT_TOPICS_BY_LANGUAGE`), folded; none for any other
    code — English's and Russian's are `stopwords.NOT_TOPICS` already."""
    return _COMMON[code] | NOT_TOPICS_BY_LANGUAGE[code] if code in STEMMERS else frozenset()


def from_tags(tags: Sequence[str]) -> str:
    """The language a node's words are stemmed in: its derived `lang:` tag's (the last: derived tags
    follow the manual ones, `text.merge_tags`), when that is one of `STEMMERS`, else `en` (Cyrillic
    words are Russian regardless)."""
    for tag in reversed(tags):
        if tag.startswith("lang:"):
            code = tag[5:]
            return code if code in STEMMERS else "en"
    return "en"
