"""Telling a Latin-script text's language by its common words (decision 191)."""

from __future__ import annotations

from kaeru.domain.languages import MAX_PROSE_WORDS, detect, from_tags
from kaeru.domain.text import lang_tag, stem_words


def test_sentences_are_told_apart_by_their_common_words() -> None:
    said = {
        "de": "Wir haben die API gestern auf die neue Version umgestellt",
        "fr": "Nous avons migré la base de données et les tests sont passés",
        "es": "Hemos migrado la base de datos y las pruebas pasaron sin errores",
        "it": "Abbiamo migrato il database e le prove sono andate bene",
        "pt": "Nós migramos o banco de dados e os testes passaram sem erros",
        "nl": "We hebben de database gemigreerd en de tests zijn geslaagd",
        "en": "We migrated the database and the tests passed without errors",
    }
    assert {lang: detect(text) for lang, text in said.items()} == {lang: lang for lang in said}
    assert lang_tag(said["de"]) == "lang:de" and lang_tag(said["en"]) == "lang:en"


def test_what_has_too_few_common_words_stays_english() -> None:
    for text in ("Datenbank Verbindung", "Montag", "hmm, so how do I find a reliable attorney?", "a lot's happened"):
        assert detect(text) == "en", text


def test_code_and_names_count_for_nothing() -> None:
    """Short words of code and capitalised names flipped English notes to Portuguese, Spanish or
    Italian in review (os.path, el.classList, `-e`, Le Bernardin)."""
    for text in (
        "deploy script: os.environ['HOME']; os.path.join(root, name); os.chmod(p, 0o755)",
        "ls -la /var/log; tail -f syslog | grep -e error -e warn",
        "el = document.querySelector('#app'); el.classList.add('ready');",
        "const de = require('date-fns/locale/de'); const es = require('date-fns/locale/es')",
        "numpy se = np.std(a) / np.sqrt(n); print(se)",
        "CSS: .a { margin: 0 auto } .o { display: none } .e { color: red }",
        "Restaurant list: Le Bernardin, La Grenouille, Del Posto, Il Buco, Da Umberto",
    ):
        assert detect(text) == "en", text
    # Longer common words count too (`wurden`, `werden`), and a sentence may begin with one.
    assert detect("Alle Datenbanken wurden gestern gesichert und werden morgen geprüft") == "de"
    assert lang_tag("Развёртывание перенесено на стенд") == "lang:ru"


def test_a_node_is_stemmed_by_its_tags_language() -> None:
    assert from_tags(["kind:observation", "lang:de"]) == "de"
    assert from_tags(["lang:ru"]) == from_tags(["lang:mixed"]) == from_tags([]) == "en"
    assert stem_words(["datenbanken", "verbindungen"], "de") == ["datenbank", "verbind"]
    assert stem_words(["datenbanken", "running"]) == ["datenbanken", "run"]  # English, remembered apart
    assert stem_words(["running"], "de") == ["running"]


def test_a_long_text_is_told_by_how_often_its_common_words_occur() -> None:
    """Decision 279: ~45 common words, each counted once, cannot make 15 % of a long text."""
    german = (
        "Die Datenbank wurde gestern auf den neuen Server verschoben, und wir haben die Tabellen neu "
        "aufgebaut. Der Import der alten Daten ist noch nicht fertig, aber die meisten Abfragen laufen. "
    )
    french = "Nous avons migré la base de données et les tests sont passés sans erreur pour le client. "
    for text, lang in ((german, "de"), (french, "fr")):
        for times in (1, 10, 200):
            assert detect(text * times) == lang, (lang, times)
    # Names and code stay out of the share however long the text.
    assert detect("Restaurant list: Le Bernardin, La Grenouille, Del Posto. " * 50) == "en"
    english = "We moved the database to the new server and rebuilt the tables with their indexes. "
    assert detect(english * 300) == "en"


def test_only_the_first_words_of_prose_are_read() -> None:
    german = "Wir haben die Tabellen mit den Indizes auf den neuen Server verschoben. "
    english = "We moved the tables with their indexes to the new server and it was fine. "
    head = MAX_PROSE_WORDS // len(german.split()) + 1
    assert detect(german * head + english * head * 3) == "de"
    assert detect(english * head + german * head * 3) == "en"
