"""Literal tokenising and derived tags: what the search index and queries agree a "word" is."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kaeru.domain.languages import not_topics
from kaeru.domain.stopwords import NOT_TOPICS
from kaeru.domain.surrogates import refusal_of_lone_surrogate
from kaeru.domain.text import (
    MAX_TOKEN_CHARS,
    Tokeniser,
    lang_tag,
    merge_tags,
    query_tokens,
    tokens,
    topic_tags,
)


def test_tokens_are_words_in_order_case_folded() -> None:
    """Words come out in order and lower-cased, so `Deploy` and `deploy` are one token."""
    assert tokens("Deploy the API Today") == ["deploy", "the", "api", "today"]


def test_accents_are_folded() -> None:
    """Diacritics are removed so `café`, `CAFÉ` and `cafe` match each other."""
    assert tokens("Café RÉSUMÉ naïve") == ["cafe", "resume", "naive"]
    assert tokens("Ёлка") == tokens("елка")


def test_composed_and_decomposed_accents_are_one_token() -> None:
    """NFC `é` and NFD `e` + combining accent produce the same token."""
    assert tokens("caf\u00e9") == tokens("cafe\u0301") == ["cafe"]


def test_non_latin_scripts_are_words() -> None:
    """Cyrillic and CJK letters form tokens like Latin ones (the user's language is never dropped)."""
    assert tokens("Привет мир") == ["привет", "мир"]
    assert tokens("東京 tower") == ["東", "東京", "京", "tower"], "a run's characters and its pieces"


def test_digits_are_part_of_tokens() -> None:
    """Numbers and alphanumerics stay searchable (versions, years, ids)."""
    assert tokens("v2 release 2026") == ["v2", "release", "2026"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"quoted phrase"', ["quoted", "phrase"]),
        ("prefix* match", ["prefix", "match"]),
        ("column:value", ["column", "value"]),
        ("(grouped) [bracketed] {braced}", ["grouped", "bracketed", "braced"]),
        ("cats AND dogs OR NOT birds NEAR fish", ["cats", "and", "dogs", "or", "not", "birds", "near", "fish"]),
        ("party 🎉time", ["party", "time"]),
        ("a-b+c^d~e", ["a", "b", "c", "d", "e"]),
        ("'; DROP TABLE nodes; --", ["drop", "table", "nodes"]),
    ],
)
def test_query_syntax_is_only_separators_or_plain_words(text: str, expected: list[str]) -> None:
    """Quotes, `*`, `:`, brackets, emoji and operators are separators; `AND`/`OR` are ordinary words."""
    assert tokens(text) == expected


@pytest.mark.parametrize("tail", ["", " café"])  # ASCII text and text with accents take different paths
def test_an_overlong_token_is_cut_and_its_neighbours_kept(tail: str) -> None:
    """A blob-like run of letters is cut to MAX_TOKEN_CHARS; the words around it are untouched."""
    blob = "Ab" * MAX_TOKEN_CHARS
    cut = ("ab" * MAX_TOKEN_CHARS)[:MAX_TOKEN_CHARS]
    assert tokens(f"Before {blob} after{tail}") == ["before", cut, "after", *(["cafe"] if tail else [])]


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_ascii_text_gives_exactly_the_runs_of_letters_and_digits(text: str) -> None:
    """Every ASCII character but a letter or digit separates words (`_`, control characters, DEL
    included): the fast ASCII path finds exactly what the pattern `[^\\W_]+` finds, which is what
    the index stored before it and what the non-ASCII path still uses."""
    expected = [t[:MAX_TOKEN_CHARS] for t in re.findall(r"[^\W_]+", text.lower())]
    assert tokens(text) == expected
    assert tokens(f"{text} {'Z' * (MAX_TOKEN_CHARS + 5)}") == [*expected, "z" * MAX_TOKEN_CHARS]


def test_empty_and_token_free_text_give_no_tokens() -> None:
    """Nothing searchable yields an empty list rather than an error."""
    assert tokens(None) == []
    assert tokens("") == []
    assert tokens('*** ::: "" ()') == []
    assert tokens("🎉🎉🎉") == []


def test_ten_kilobyte_text_is_tokenised_whole() -> None:
    """A 10 kB body is tokenised completely (no word lost at the end)."""
    text = " ".join(f"w{i}" for i in range(2000))
    assert len(text) > 10_000
    out = tokens(text)
    assert len(out) == 2000
    assert out[0] == "w0" and out[-1] == "w1999"


def test_ten_kilobyte_blob_without_spaces_does_not_break() -> None:
    """A single 10 kB run of letters (a pasted blob) still tokenises to something finite."""
    out = tokens("x" * 10_240)
    assert out and all(t and set(t) == {"x"} for t in out)


def test_query_tokens_are_distinct_in_first_seen_order() -> None:
    """Repeating a word in a query does not repeat the token."""
    assert query_tokens("Beta alpha BETA gamma alpha") == ["beta", "alpha", "gamma"]


def test_lang_tag_from_script() -> None:
    """English, Russian, mixed and letter-free text get their `lang:` tag."""
    assert lang_tag("The deployment moved to staging") == "lang:en"
    assert lang_tag("Развёртывание перенесено на стенд") == "lang:ru"
    assert lang_tag("Деплой на staging server сегодня") == "lang:mixed"
    assert lang_tag("12345 !!! ---") == "lang:other"
    assert lang_tag(None) == "lang:other"


def _share_rule(text: str) -> str:
    """kaeru's rule, character by character: of the letters that are Latin (lower-cased, a–z) or
    Cyrillic (U+0400–U+04FF), 80 % Cyrillic is Russian, 80 % Latin is a Latin language."""
    latin = sum(1 for ch in text if ch.isalpha() and "a" <= ch.lower() <= "z")
    cyrillic = sum(1 for ch in text if ch.isalpha() and not "a" <= ch.lower() <= "z" and "\u0400" <= ch <= "\u04ff")
    if latin + cyrillic == 0:
        return "other"
    if cyrillic / (latin + cyrillic) >= 0.8:
        return "ru"
    return "latin" if latin / (latin + cyrillic) >= 0.8 else "mixed"


@given(st.text(alphabet=st.sampled_from("abz AZ.,1 абвяЁё ҂҃ İKǅ日本ßé\u0301"), max_size=80))
def test_lang_tag_follows_the_share_of_latin_and_cyrillic_letters(text: str) -> None:
    """Counted per distinct character (decision 238), the tag is still the rule's, for any mix —
    including letters whose lower case is two characters (`İ`) or a Latin letter (the Kelvin sign)."""
    tag = lang_tag(text).removeprefix("lang:")
    expected = _share_rule(text)
    assert tag == expected or (expected == "latin" and tag not in ("ru", "mixed", "other")), (text, tag)


def test_a_long_text_is_tokenised_once_while_held_and_forgotten_after() -> None:
    """A text too big for the stream memo was tokenised again by every step of one write (topic tags,
    index, index-room check). While `holding_long_texts` is open it is tokenised once; after, it is
    not kept (the memory goes with the write), and another thread does not see it (decision 238)."""
    import threading

    tokeniser = Tokeniser(stream_entry_bytes=1024)
    text = "слово и ещё одно " * 500
    assert tokeniser.stream(text) is not tokeniser.stream(text)  # too big for the memo
    with tokeniser.holding_long_texts():
        first = tokeniser.stream(text)
        with tokeniser.holding_long_texts():
            assert tokeniser.stream(text) is first
        elsewhere: list[object] = []
        thread = threading.Thread(target=lambda: elsewhere.append(tokeniser.stream(text)))
        thread.start()
        thread.join()
        assert elsewhere[0] is not first and elsewhere[0] == first
        assert tokeniser.stream(text) is first
    again = tokeniser.stream(text)
    assert again is not first and again == first


def test_a_long_texts_stems_are_held_by_language_while_its_write_runs() -> None:
    """A write stems a long text for its index and again for its index-room check: held, once per
    language, for the write (decision 279); a short text's stems are not held, its words are memoised."""
    tokeniser = Tokeniser(stream_entry_bytes=1024)
    text = "Datenbanken werden geprüft und die Verbindungen bleiben offen " * 100
    assert tokeniser.stems_of(text, "de") is not tokeniser.stems_of(text, "de")
    with tokeniser.holding_long_texts():
        german = tokeniser.stems_of(text, "de")
        assert tokeniser.stems_of(text, "de") is german and german[:2] == ["datenbank", "werd"]
        english = tokeniser.stems_of(text, "en")
        assert english is not german and tokeniser.stems_of(text, "en") is english
        assert english[0] == "datenbanken"
        assert tokeniser.stems_of("kurz und gut", "de") is not tokeniser.stems_of("kurz und gut", "de")
    assert tokeniser.stems_of(text, "de") is not german and tokeniser.stems_of(text, "de") == german


def test_a_word_missing_from_the_memo_is_stemmed_once_per_call() -> None:
    """The pieces of an unspaced script are not memoised; a long text repeats them (decision 279)."""
    tokeniser = Tokeniser()
    calls: list[str] = []
    stem = tokeniser._stem

    def counted(token: str, key: str, lang: str) -> str:
        calls.append(token)
        return stem(token, key, lang)

    tokeniser._stem = counted  # type: ignore[method-assign]
    tokens = tokeniser.stream("東京でデプロイを行う。東京でテストを行う。" * 50)
    assert tokeniser.stem_all(tokens) == list(tokens)
    assert len(calls) == len(set(tokens)) < len(tokens) // 10


def test_topic_tags_are_at_most_five_content_words() -> None:
    """Topics are the most-mentioned content words: stop words, short words and numbers dropped."""
    body = "the database migration failed because the database lock timed out; database 2026 is ok"
    topics = topic_tags("", body)
    assert len(topics) <= 5
    assert topics[0] == "topic:database"
    assert all(t.startswith("topic:") for t in topics)
    words = {t.removeprefix("topic:") for t in topics}
    assert not words & {"the", "is", "ok", "2026"}


def test_generic_words_are_never_topics() -> None:
    """Adverbs and connectives are not what a note is about (issue 18: `topic:because` was noise)."""
    topics = topic_tags("", "We chose SQLite because it never needs a server, so we always keep it local")
    words = {t.removeprefix("topic:") for t in topics}
    assert not words & {"because", "never", "always"}
    assert {"sqlite", "server"} <= words
    assert topic_tags("", "an observation about a decision, a rule and a note") == []


def test_topic_tags_weight_the_name() -> None:
    """A word in the name outranks a body word mentioned twice (name ×3)."""
    topics = topic_tags("kubernetes", "terraform terraform plan")
    assert topics[0] == "topic:kubernetes"
    assert "topic:terraform" in topics


def test_topic_tags_tie_by_first_mention() -> None:
    """Words mentioned equally often keep the order they first appear in (name first)."""
    assert topic_tags("zebra", "apple mango zebra mango apple kiwi") == [
        "topic:zebra",
        "topic:apple",
        "topic:mango",
        "topic:kiwi",
    ]


def test_topic_tags_are_lowercase_and_folded() -> None:
    """Topics use the same folded form as search tokens."""
    assert topic_tags("", "CAFÉ Café café") == ["topic:cafe"]


def test_topic_tags_of_empty_text_are_empty() -> None:
    """No content words, no topics."""
    assert topic_tags("", None) == []
    assert topic_tags("", "the and of to") == []


def test_merge_tags_keeps_manual_first_and_drops_duplicates() -> None:
    """Manual tags keep their order; derived tags follow; nothing is listed twice."""
    assert merge_tags(["b", "a", "b"], ["a", "topic:x"]) == ("b", "a", "topic:x")


def test_a_lone_surrogate_is_refused_naming_where_it_is() -> None:
    """Half a surrogate pair (from a JSON escape or an undecodable command-line byte) cannot be
    stored as text: the refusal names the argument, however deep, and the code point."""
    refusal = refusal_of_lone_surrogate({"initiative": "p", "filters": {"tags": ["ok", "x\udcff"]}})
    assert refusal is not None
    assert (refusal.code, refusal.field) == ("invalid_argument", "filters.tags[1]")
    assert "U+DCFF" in refusal.message
    refusal = refusal_of_lone_surrogate({"text": "caf\u00e9 \ud800"})
    assert refusal is not None and refusal.field == "text"


def test_real_unicode_is_not_refused() -> None:
    """Accents, Cyrillic, CJK and emoji beyond the BMP (a proper pair once decoded) are text."""
    args = {"text": "caf\u00e9 \u041f\u0440\u0438\u0432\u0435\u0442 \u6771\u4eac \U0001f438", "tags": ["\U0001f389"]}
    assert refusal_of_lone_surrogate(args) is None
    assert refusal_of_lone_surrogate({"limit": 5, "match": None, "prefix": True}) is None


@pytest.mark.parametrize(
    ("args", "where"),
    [
        ({"\udc80key": "v"}, "\\udc80key"),  # a key, named escaped (decision 239)
        ({"a": 1, "b": [None, {"c": ["x", "\ud801"]}]}, "b[1].c[1]"),  # deep in lists and objects
        ({"a": {"b": "caf\u00e9"}, "c": "\udfff"}, "c"),  # after a clean non-ASCII one
        ({"a": {"\ud800": "x"}, "b": "\ud801"}, "a.\\ud800"),  # the first one, in order
        (["x", ["\ud800"]], "[1][0]"),
        ({3: "\ud800"}, "3"),  # a key that is not a string
    ],
)
def test_the_quick_walk_finds_every_lone_surrogate(args: Any, where: str) -> None:
    """The refusal walks the arguments once without building paths and only then finds where
    (issue 14): every place a lone surrogate can hide is still found, and named."""
    refusal = refusal_of_lone_surrogate(args)
    assert refusal is not None and refusal.field == where
    str(refusal).encode("utf-8")  # the refusal can be written: it names no raw surrogate


def test_a_notes_topics_leave_out_its_languages_function_words() -> None:
    """A German note's topics were `die`, `den`, `der`, `wurde`; a French one's `les`, `sont`,
    `nous`, `avons` (decision 281). English keeps its own list (`NOT_TOPICS`)."""
    notes = {
        "de": "Die Datenbank wurde gestern auf den neuen Server verschoben, und wir haben die Tabellen mit "
        "den Indizes neu aufgebaut. Der Import der alten Daten ist noch nicht fertig, weil die Datenbank "
        "jetzt mehr Speicher hat.",
        "fr": "Nous avons migré la base de données vers le nouveau serveur et les tests sont passés, mais la "
        "base reste lente pendant les sauvegardes de la nuit parce que les disques sont pleins.",
        "es": "Hemos migrado la base de datos al nuevo servidor y las pruebas pasaron, pero la base sigue "
        "lenta durante las copias de seguridad porque los discos están llenos.",
    }
    wanted = {"de": {"datenbank", "server", "tabellen"}, "fr": {"base", "donnees", "serveur"}, "es": {"base", "datos"}}
    for lang, body in notes.items():
        assert lang_tag(body) == f"lang:{lang}"
        words = {t.removeprefix("topic:") for t in topic_tags("", body, lang=lang)}
        assert wanted[lang] <= words, (lang, words)
        assert not words & (not_topics(lang) | NOT_TOPICS), (lang, words)
        assert words & not_topics(lang) == set()
        assert {t.removeprefix("topic:") for t in topic_tags("", body)} & not_topics(lang), lang  # as English
    english = "We moved the database to the new server; the database is fast now"
    assert (
        topic_tags("", english, lang="en")
        == topic_tags("", english)
        == ["topic:database", "topic:moved", "topic:new", "topic:server", "topic:fast"]
    )
