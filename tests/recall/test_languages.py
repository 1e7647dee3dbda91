"""`recall` stems German, French, Spanish, Italian, Portuguese and Dutch memories by their own
language's rules (decision 191), on both backends. Every Latin-script word used to be stemmed as
English, so a question's `Datenbank` never met a note's `Datenbanken`, nor `prueba` `pruebas`: the
note was not found at all. A memory's language is told by its common words and kept as its `lang:`
tag; a question's words are asked by every language's stems."""

from __future__ import annotations

import pytest

from kaeru.domain.languages import not_topics
from kaeru.service import Service
from tests.recall.helpers import note, recall

#: (language, a memory, a question in other forms of its words, which English stems do not join).
MEMORIES = [
    ("de", "Die Datenbanken wurden gestern migriert und die Verbindungen mit dem Server getestet", "Datenbank Verbindung"),
    ("fr", "Le serveur répond lentement depuis la mise à jour des paquets", "lente"),
    ("es", "Las pruebas de integración fallaron por los certificados caducados del servidor", "fallo"),
    ("it", "Le connessioni al database sono state chiuse e le tabelle sono state ricostruite", "connessione ricostruire"),
    ("pt", "Os testes de integração falharam por causa dos certificados vencidos do servidor", "falha"),
    ("nl", "De verbindingen met de databases zijn gisteren hersteld en de back-ups zijn getest", "verbinding"),
]  # fmt: skip

DISTRACTORS = [
    "The staging cluster was rebuilt after the storage outage on Monday",
    "Lunch plans for the offsite: pizza or sushi, vote by Friday",
    "The release notes mention the new login page and two bug fixes",
]


@pytest.mark.parametrize(("lang", "text", "question"), MEMORIES, ids=[m[0] for m in MEMORIES])
def test_a_memory_is_found_by_other_forms_of_its_words(service: Service, lang: str, text: str, question: str) -> None:
    wanted = note(service, text)  # the oldest: recency does not lift it
    for other in DISTRACTORS:
        note(service, other)
    answer = recall(service, question)
    assert [h.node.id for h in answer.hits][:1] == [wanted]
    assert f"lang:{lang}" in answer.hits[0].node.tags
    assert answer.explain[wanted].get("lexical", 0) > 0


def test_english_memories_keep_their_english_stems(service: Service) -> None:
    deployed = note(service, "We deployed the payments service and the deployments were monitored")
    for other in DISTRACTORS:
        note(service, other)
    answer = recall(service, "deploying payment")
    assert answer.hits[0].node.id == deployed and "lang:en" in answer.hits[0].node.tags
    short = note(service, "Datenbank Verbindung")  # a list of terms has no common words: English, as before
    assert "lang:en" in recall(service, "Datenbank").hits[0].node.tags
    assert recall(service, "Datenbank").hits[0].node.id == short


#: A German report of ~400 words: its ~45 common words recur, so they are a fifth of its words but
#: only ~25 distinct ones.
LONG_GERMAN = " ".join(
    [
        "Die Datenbanken wurden gestern auf den neuen Server verschoben, und wir haben die Tabellen neu aufgebaut.",
        "Der Import der alten Daten ist noch nicht fertig, aber die meisten Abfragen laufen schon wieder schnell.",
        "Morgen prüfen wir die Sicherungen und schreiben einen Bericht für das Team.",
        "Die Verbindungen zum Cluster sind stabil, nur ein Dienst meldet noch Zeitüberschreitungen.",
    ]
    * 8
)


def test_a_long_memory_is_stemmed_by_its_language(service: Service) -> None:
    """A language's common words were counted once each against all of a text's words, so past
    ~300 words no note could be German: decision 279."""
    assert len(LONG_GERMAN.split()) > 400
    report = note(service, LONG_GERMAN)
    for other in DISTRACTORS:
        note(service, other)
    answer = recall(service, "Datenbank Verbindung")
    assert [h.node.id for h in answer.hits][:1] == [report]
    assert "lang:de" in answer.hits[0].node.tags
    # Its topics are its subject, not its function words (`die`, `der`, `und`, `wir`: decision 281).
    topics = [t for t in answer.hits[0].node.tags if t.startswith("topic:")]
    assert topics and not {t.removeprefix("topic:") for t in topics} & not_topics("de"), topics
