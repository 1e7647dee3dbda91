"""Literal tokenising shared by indexing and querying, and the derived tag families.

The same function produces the tokens stored in the full-text index and the tokens of a query, on
every backend, so "what matches" is defined once, here: runs of Unicode letters and digits,
case-folded, diacritics removed. Everything else (quotes, `*`, `:`, parentheses, emoji, `AND`) is
just a separator or an ordinary word — user text is never query syntax.
"""

from __future__ import annotations

import re
import sys
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import cast

import Stemmer

from kaeru.domain.caches import ENTRY_OVERHEAD, BoundedCache
from kaeru.domain.languages import STEMMERS, detect, not_topics
from kaeru.domain.stopwords import NOT_TOPICS, STOP_WORDS

#: A word of text without combining marks (ASCII, composed Latin, Cyrillic, …): letters and digits.
_WORD = re.compile(r"[^\W_]+")

#: Blocks whose combining marks are part of the word they sit in: the general diacritics (text in
#: decomposed form), Cyrillic's, Hebrew points, Arabic vowel signs, the Indic scripts, Thai, Lao,
#: Tibetan, Myanmar, Khmer. A vowel sign or a tone mark is no letter to the plain pattern, which
#: split `चावल` into `च`, `वल` and `ข้าว` into `ข`, `าว` (decision 86).
_MARK_BLOCKS = (
    (0x0300, 0x036F), (0x0483, 0x0489), (0x0591, 0x05C7), (0x0610, 0x061A), (0x064B, 0x065F),
    (0x0670, 0x0670), (0x06D6, 0x06ED), (0x0900, 0x0DFF), (0x0E00, 0x0FFF), (0x1000, 0x109F),
    (0x1780, 0x17FF), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF), (0x3099, 0x309A),
    (0xFE20, 0xFE2F),
)  # fmt: skip


def _mark_class() -> str:
    """The combining marks of `_MARK_BLOCKS`, as a regular-expression class body (~700 code points,
    read from the Unicode database at import: a few milliseconds)."""
    marks = [
        chr(c) for low, high in _MARK_BLOCKS for c in range(low, high + 1) if unicodedata.category(chr(c))[0] == "M"
    ]
    return "".join(re.escape(m) for m in marks)


_MARKS = _mark_class()
_ANY_MARK = re.compile(f"[{_MARKS}]")
#: A word of text with such marks: a letter or digit, then letters, digits and the marks that
#: belong to them (slower than `_WORD`, so used only where a mark is present).
_TOKEN = re.compile(f"[^\\W_](?:[^\\W_]|[{_MARKS}])*")
#: Scripts whose marks are letters (vowels, tones), not optional diacritics: folding keeps them.
_MARKED_LETTERS = re.compile("[\u0900-\u0dff\u0e00-\u0fff\u1000-\u109f\u1780-\u17ff]")

#: Scripts written without spaces between words — Han, hiragana, katakana (half-width too), Thai,
#: Lao, Myanmar, Khmer — and Hangul, whose particles attach to the word before them: a run of them
#: is no word, so it is asked as overlapping two-character pieces (`東京で` → `東京`, `京で`) and
#: indexed as those pieces and each character alone, the usual way to search such text without a
#: dictionary (decisions 85, 86): a one-character word (`猫`) is found too. A character is a letter
#: with the marks after it. With them: the Japanese iteration marks (`々` of `佐々木`, `〆`, `〇`,
#: `〻`) and the Hangul jamo, conjoining and compatibility (old Hangul, `ㅋㅋ`).
UNSPACED = (
    "\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3005-\u3007\u303b\u3130-\u318f\ua960-\ua97f\ud7b0-\ud7ff"
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_UNSPACED = re.compile(f"[{UNSPACED}]+")
#: One character of an unspaced run: a letter and the marks that follow it.
_CLUSTER = re.compile(f"[^{_MARKS}][{_MARKS}]*|[{_MARKS}]+")

#: A token longer than this is cut: it is almost certainly a blob, and FTS engines cap terms anyway.
MAX_TOKEN_CHARS = 64

#: ASCII text's bytes lower-cased, and every byte that is not a letter or digit a space, so that
#: `split` gives exactly the runs `_WORD` finds (for ASCII, `[^\W_]` is `[a-z0-9]` once lowered),
#: about four times faster than the pattern (decision 14.C2); one byte table does both in one C
#: pass, where `str.lower` and `str.translate` with a mapping took two (the mapping is looked up
#: character by character).
_ASCII_FOLD = bytes((c | 32 if chr(c).isalpha() else c) if chr(c).isalnum() else 32 for c in range(128)) + bytes(128)


def _fold(token: str) -> str:
    if _MARKED_LETTERS.search(token):
        # Vowel signs, viramas and tone marks are spelling there: composed, never stripped.
        return unicodedata.normalize("NFKC", token.casefold())
    decomposed = unicodedata.normalize("NFKD", token.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _tokenise(text: str, fold: Callable[[str], str], singles: bool = True) -> tuple[str, ...]:
    """`text`'s tokens; `singles`: an unspaced run's characters too, beside its pieces (a text
    indexed), or its pieces only (a query: `query_tokens`)."""
    out: list[str] = []
    if text.isascii():
        # The common case: ASCII letters and digits only need lower-casing and the separators turned
        # into spaces, each one C call over the whole text; a token is cut only in the rare text that
        # has one too long.
        found = text.encode("ascii").translate(_ASCII_FOLD).decode("ascii").split()
        if len(text) > MAX_TOKEN_CHARS and found and max(map(len, found)) > MAX_TOKEN_CHARS:
            return tuple(t[:MAX_TOKEN_CHARS] for t in found)
        return tuple(found)
    # Composed first (NFC): text from macOS file names and clipboards comes decomposed, where a voiced
    # kana is its letter and a mark (`ハ` + `゙`) and a Hangul syllable its jamo, and a query typed
    # composed would find none of it. Already composed text is only checked (quickly).
    text = unicodedata.normalize("NFC", text)
    # Checked once a text: most non-ASCII text (accents, Cyrillic) has neither, and takes the
    # plain pattern and no per-word test.
    # (A letter of a script whose marks are spelling counts too: folding composes it with NFKC,
    # which can give back a mark — `क़` is `क` and a nukta.)
    words = _TOKEN if _ANY_MARK.search(text) or _MARKED_LETTERS.search(text) else _WORD
    unspaced = _UNSPACED.search(text) is not None
    # A word's tokens, for the words this text repeats: folding and splitting each occurrence again
    # was most of a long non-ASCII text's cost.
    done: dict[str, list[str]] = {}
    for match in words.finditer(text):
        word = match.group()
        if not unspaced or _UNSPACED.search(word) is None:
            pieces = done.get(word)
            if pieces is None:
                pieces = done[word] = []
                _fold_into(pieces, word, fold, words)
            out.extend(pieces)
            continue
        start = 0
        for run in _UNSPACED.finditer(word):
            if run.start() > start:
                _fold_into(out, word[start : run.start()], fold, words)
            out.extend(_pieces(run.group(), singles))
            start = run.end()
        if start < len(word):
            _fold_into(out, word[start:], fold, words)
    return tuple(out)


def _fold_into(out: list[str], word: str, fold: Callable[[str], str], words: re.Pattern[str]) -> None:
    # Folding can itself produce separators (e.g. ligatures); split again to stay consistent.
    for piece in words.findall(fold(word)):
        out.append(piece[:MAX_TOKEN_CHARS])


def _pieces(run: str, singles: bool) -> list[str]:
    """A run of an unspaced script as overlapping two-character pieces (one character alone stays
    whole), each character before the pieces it begins if `singles` (`我的猫` → `我`, `我的`, `的`,
    `的猫`, `猫`: the one-character word `猫` is a token of the text, while a query of two or more
    characters still asks only its pieces, decision 85), after NFKC (half-width kana become
    full-width; marks like ゛ stay: デ is not テ); a character is a letter with its marks (`ข้า`,
    `าว` of `ข้าว`)."""
    text = unicodedata.normalize("NFKC", run)
    chars = _CLUSTER.findall(text) if _MARKED_LETTERS.search(text) else text
    if len(chars) < 2:
        return [text]
    if not singles:
        return [chars[i] + chars[i + 1] for i in range(len(chars) - 1)]
    out = [chars[-1]] * (2 * len(chars) - 1)
    out[0:-1:2] = chars[:-1]
    out[1::2] = [chars[i] + chars[i + 1] for i in range(len(chars) - 1)]
    return out


def _stream_size(text: str, found: tuple[str, ...]) -> int:
    """What a memoised token stream keeps alive: its text, the tuple, and each token (a string's
    header, and one byte a character for ASCII text, at most four otherwise)."""
    strings = 49 * len(found) + len(text) if text.isascii() else 80 * len(found) + 4 * len(text)
    return sys.getsizeof(text) + sys.getsizeof(found) + strings + ENTRY_OVERHEAD


class _Stemmers(threading.local):
    """PyStemmer's C Snowball stemmers (far faster than the pure-Python ones); a stemmer is not
    thread-safe, so each thread gets its own — English and Russian at once, the others of
    `languages.STEMMERS` when a text in them is first stemmed."""

    def __init__(self) -> None:
        self.english = Stemmer.Stemmer("english", 0)
        self.russian = Stemmer.Stemmer("russian", 0)
        self.others: dict[str, Stemmer.Stemmer] = {}

    def of(self, lang: str) -> Stemmer.Stemmer:
        found = self.others.get(lang)
        if found is None:
            found = self.others[lang] = Stemmer.Stemmer(STEMMERS[lang], 0)
        return found


#: Memo budgets. Token streams: one write tokenises the same text for the index, the stems and the
#: topic tags, so a few recent texts are enough; a text whose tokens alone would take more than
#: `STREAM_ENTRY_BYTES` is tokenised again instead of kept. Stems and folds: one entry per
#: distinct word, so the budget holds a vault's working vocabulary.
STREAM_CACHE_BYTES = 8 << 20
STREAM_ENTRY_BYTES = 1 << 20
STEM_CACHE_BYTES = 4 << 20
FOLD_CACHE_BYTES = 1 << 20
WORD_ENTRY_BYTES = 2048


class Tokeniser:
    """Tokenising, folding and stemming, with memos bounded by the bytes they keep alive."""

    def __init__(
        self,
        stream_bytes: int = STREAM_CACHE_BYTES,
        stem_bytes: int = STEM_CACHE_BYTES,
        fold_bytes: int = FOLD_CACHE_BYTES,
        stream_entry_bytes: int = STREAM_ENTRY_BYTES,
    ) -> None:
        self.streams: BoundedCache[str, tuple[str, ...]] = BoundedCache(stream_bytes, _stream_size, stream_entry_bytes)
        self.stems: BoundedCache[str, str] = BoundedCache(stem_bytes, max_entry_bytes=WORD_ENTRY_BYTES)
        self.folds: BoundedCache[str, str] = BoundedCache(fold_bytes, max_entry_bytes=WORD_ENTRY_BYTES)
        self._stemmers = _Stemmers()
        #: Per thread, while `holding_long_texts` is open: the streams too big for `streams`, and
        #: their stems by language.
        self._held = threading.local()

    @contextmanager
    def holding_long_texts(self) -> Iterator[None]:
        """While open, this thread's streams too big for the memo are kept until it closes. One
        write tokenises its text for the topic tags, the index and the index-room check: a long
        document was tokenised each time, and then forgotten with the write, not kept in memory
        after it (decision 238). Nested scopes share the outer one."""
        if getattr(self._held, "streams", None) is not None:
            yield
            return
        self._held.streams = {}
        self._held.stems = {}
        try:
            yield
        finally:
            self._held.streams = self._held.stems = None

    def fold(self, token: str) -> str:
        """Case-fold and strip combining marks (é → e, Ё → е), like FTS5 `remove_diacritics 2`."""
        found = self.folds.get(token)
        return found if found is not None else self.folds.put(token, _fold(token))

    def stream(self, text: str, once: bool = False) -> tuple[str, ...]:
        """Every literal token of `text`, in order, folded. `once`: a text tokenised once (a write's
        joined tags), not remembered — remembering costs more than it would save (decision 14.C5)."""
        found = self.streams.get(text)
        if found is not None:
            return found
        held: dict[str, tuple[str, ...]] | None = getattr(self._held, "streams", None)
        if held and (found := held.get(text)) is not None:
            return found
        found = _tokenise(text, self.fold)
        if once:
            return found
        self.streams.put(text, found)
        if held is not None and self.streams.get(text) is None:
            held[text] = found
        return found

    def stems_of(self, text: str, lang: str = "en") -> list[str]:
        """`stem_all` of `stream(text)`; a long text's, held while `holding_long_texts` is open: a
        write's index and its index-room check both stem its fields (decision 279)."""
        tokens = self.stream(text)
        held: dict[tuple[str, str], list[str]] | None = getattr(self._held, "stems", None)
        if held is None or text not in self._held.streams:
            return self.stem_all(tokens, lang)
        found = held.get((text, lang))
        if found is None:
            found = held[text, lang] = self.stem_all(tokens, lang)
        return found

    def stem(self, token: str, lang: str = "en") -> str:
        """The Snowball stem of one folded token: Russian for Cyrillic words, else by the rules of
        `lang` (a code of `languages.STEMMERS`, or `en`)."""
        if lang != "en":
            return self.stem_all((token,), lang)[0]
        found = self.stems.get(token)
        return found if found is not None else self._stem(token, token, "en")

    def stem_all(self, tokens: Sequence[str], lang: str = "en") -> list[str]:
        """`stem` of each token: the memo is asked in one pass, only the words it lacks are stemmed.
        An English stem is remembered under its word, another language's under `lang:word` (no
        folded word holds a colon)."""
        get = self.stems.get
        keys = tokens if lang == "en" else [f"{lang}:{t}" for t in tokens]
        found = list(map(get, keys))
        if not all(found):  # a word the memo lacks (a stem is never empty): one C pass over them
            # Each missing word stemmed once: the pieces of an unspaced script are not remembered
            # (`_stem`), and a long Japanese text repeats most of them.
            stemmed: dict[str, str] = {}
            for i, known in enumerate(found):
                if known is None:
                    key = keys[i]
                    done = stemmed.get(key)
                    if done is None:
                        done = stemmed[key] = self._stem(tokens[i], key, lang)
                    found[i] = done
        return cast(list[str], found)

    def _stem(self, token: str, key: str, lang: str) -> str:
        if token.isdigit() or len(token) < 3:
            # Its own stem. A piece of an unspaced script is not remembered: a long Japanese or
            # Chinese text has as many distinct pieces as characters, which would push a vault's
            # working vocabulary out of the memo (and cost more to remember than to return).
            return token if _UNSPACED.match(token) else self.stems.put(key, token)
        if not token.isascii() and any("\u0400" <= ch <= "\u04ff" for ch in token):
            return self.stems.put(key, str(self._stemmers.russian.stemWord(token)))
        stemmer = self._stemmers.english if lang == "en" else self._stemmers.of(lang)
        return self.stems.put(key, str(stemmer.stemWord(token)))


#: The process's one tokeniser. The storage backends and the services tokenise through the
#: functions below (so what matches is defined once); its memos are bounded (decision 14.Y1).
TOKENISER = Tokeniser()


def fold(token: str) -> str:
    """Case-fold and strip combining marks (é → e, Ё → е), like FTS5 `remove_diacritics 2`."""
    return TOKENISER.fold(token)


def tokens(text: str | None, once: bool = False) -> list[str]:
    """Every literal token of `text`, in order, folded; empty for empty or token-free text (`once`:
    see `Tokeniser.stream`)."""
    if not text:
        return []
    return list(TOKENISER.stream(text, once))


def index_text(text: str | None, once: bool = False) -> str:
    """The space-joined token stream stored in the full-text index for one field (`once`: see
    `Tokeniser.stream`)."""
    return " ".join(TOKENISER.stream(text, once)) if text else ""


def query_tokens(text: str) -> list[str]:
    """Distinct query tokens in first-seen order. A run of an unspaced script is asked by its pieces
    only, not by its characters too as a text is indexed: `東京` asks `東京`, and finds no note that
    only holds `東` (a one-character run is asked as that character, and finds every run holding it)."""
    if not text:
        return []
    if text.isascii() or _UNSPACED.search(text) is None:
        return list(dict.fromkeys(TOKENISER.stream(text)))
    return list(dict.fromkeys(_tokenise(text, TOKENISER.fold, singles=False)))


def topic_tags(name: str, body: str | None, limit: int = 5, lang: str = "en") -> list[str]:
    """`topic:` tags: the most-mentioned distinctive words (name weighted ×3), ties by first mention;
    stop words, generic words (`NOT_TOPICS`), the function words of the text's language `lang` (a
    German note's `die`, `der`, `und`: `languages.not_topics`, decision 281), numbers and words of
    under three letters never count."""
    # Counted in C, name first (three times: its weight), so the keys' order is first mention; then
    # only the distinct words are judged as topics (a body repeats many of its words).
    stream = TOKENISER.stream
    counts = Counter(stream(name) * 3 + stream(body) if body else stream(name) * 3)
    # The words by count, as `most_common` orders them (a stable sort in C: ties keep first
    # mention), without its (word, count) pairs; only the words up to the `limit`-th topic are
    # judged, not every distinct word.
    topics: list[str] = []
    common = not_topics(lang)
    for word in sorted(counts, key=counts.__getitem__, reverse=True):
        if len(topics) >= limit:
            break
        if len(word) >= 3 and word not in NOT_TOPICS and word not in common and not word.isdigit():
            topics.append(f"topic:{word}")
    return topics


def lang_tag(text: str | None) -> str:
    """`lang:` tag from the share of Cyrillic vs Latin letters (kaeru's rule); a Latin text is English
    unless its common words say it is one of `languages.STEMMERS` (decision 191)."""
    if not text:
        return "lang:other"
    if text.isascii():
        return f"lang:{detect(text)}" if any(ch.isalpha() for ch in text) else "lang:other"
    latin = cyrillic = 0
    # Each distinct character judged once, weighted by its count (counted in C): a long text has
    # far fewer distinct characters than characters.
    for ch, count in Counter(text).items():
        if not ch.isalpha():
            continue
        if "a" <= ch.lower() <= "z":
            latin += count
        elif "\u0400" <= ch <= "\u04ff":
            cyrillic += count
    letters = latin + cyrillic
    if letters == 0:
        return "lang:other"
    if cyrillic / letters >= 0.8:
        return "lang:ru"
    if latin / letters >= 0.8:
        return f"lang:{detect(text)}"
    return "lang:mixed"


DERIVED_FAMILIES = ("topic:", "lang:")


def merge_tags(manual: Iterable[str], derived: Iterable[str]) -> tuple[str, ...]:
    """Manual tags first (stable order), then derived ones; exact duplicates dropped."""
    return tuple(dict.fromkeys([*manual, *derived]))


def stem(token: str, lang: str = "en") -> str:
    """The Snowball stem of one folded token: Russian for Cyrillic words, else by `lang`'s rules
    (English unless a node's `lang:` tag names another of `languages.STEMMERS`, decision 191).

    Used only by `recall` (language-aware matching); `search` stays literal.
    """
    return TOKENISER.stem(token, lang)


def stem_words(words: Sequence[str], lang: str = "en") -> list[str]:
    """`stem` of each word, asking the memo in one pass (for a text's many tokens)."""
    return TOKENISER.stem_all(words, lang)


def stem_text(text: str | None, once: bool = False, lang: str = "en") -> str:
    """The space-joined stems of `text`, for the stemmed index (`once`: see `Tokeniser.stream`)."""
    return " ".join(TOKENISER.stem_all(TOKENISER.stream(text, once), lang)) if text else ""


#: A code identifier joined by `_` or `.` (`snake_case`, `os.path.join`): letters first, so numbers
#: such as `4.500` or `1.2` are not identifiers.
_JOINED = re.compile(r"(?<![\w.])[^\W\d_][^\W_]*(?:[._][^\W_]+)+")
#: The words of a camelCase or PascalCase token: an acronym before a capitalised word (`HTTPServer`
#: → `HTTP`, `Server`), capitalised or lower-case runs, other capitals, digits.
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
#: A token with a case change inside it (`getUserName`, `HTTPServer`, `parseJSON`), tried only where
#: a word begins: unanchored, a word without one was searched again from each of its letters — time
#: quadratic in its length, and one long word in a note stalled every recall that scored it (decision
#: 414). A match always began at its word's start anyway (a part of a word has a case change only if
#: the word has), so what it finds is the same.
_CAMEL_TOKEN = re.compile(r"(?<![^\W_])[^\W_]*(?:[a-z][A-Z]|[A-Z]{2}[a-z])[^\W_]*")


def identifier_words(text: str | None) -> tuple[list[str], list[str]]:
    """The extra words of the code identifiers in `text`, beside its ordinary tokens (which already
    split `snake_case` and dotted paths at `_` and `.`, and keep `camelCase` whole):

    - `parts`: the words of each camelCase/PascalCase token (`getUserName` → `get`, `user`, `name`);
    - `wholes`: each `snake_case` or dotted identifier kept whole (`os.path.join`), folded.

    Recall's own BM25 counts both (a query naming the identifier whole matches it whole, one naming
    its words matches them); the full-text index is unchanged (decision 17.Q3).
    """
    if not text:
        return [], []
    parts: list[str] = []
    for raw in _CAMEL_TOKEN.findall(text):
        found = _CAMEL_PART.findall(raw)
        if len(found) > 1:
            parts.extend(fold(p) for p in found)
    wholes = [fold(m)[: MAX_TOKEN_CHARS * 2] for m in _JOINED.findall(text)] if "_" in text or "." in text else []
    return parts, wholes


def content_tokens(text: str) -> list[str]:
    """Distinct query tokens without stop words (all of them if only stop words remain)."""
    distinct = query_tokens(text)
    kept = [t for t in distinct if t not in STOP_WORDS]
    return kept or distinct


def indexed_name(node: object) -> str:
    """The name as the full-text index sees it: empty for an auto-generated name.

    An auto-name is the first body's first words plus the id's last six characters; indexing it
    would count those words twice (with the name's extra weight) and make the random suffix
    searchable. It is known by its suffix alone, as `topic_name` and the renderer know it: once the
    body was revised, its words were no longer the body's first, the name was indexed as one a
    person gave, and the memory was still found — by words and by its vector — by what it used to
    say (decision 451).
    """
    name: str = getattr(node, "name", "")
    node_id: str = getattr(node, "id", "")
    if node_id and name.endswith("-" + node_id.replace("-", "")[-6:]):
        return ""
    return name


def manual_tags(tags: Iterable[str]) -> str:
    """Tags as the stemmed index sees them: `kind:`/`status:`/`lang:` families are matched by intent
    priors and filters instead, so they would only add noise to word matching. `topic:` tags stay:
    they name a node's most prominent words, which is what a question usually asks about."""
    return " ".join([t for t in tags if not t.startswith(("lang:", "kind:", "status:"))])
