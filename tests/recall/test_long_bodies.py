"""A very long body is re-scored from an excerpt — its head and the windows around the query's words
— so a `recall` whose candidates hold a pasted document costs what a normal one does, and still finds
what is deep inside it (decision 226)."""

from __future__ import annotations

import itertools

from kaeru.service import Service
from kaeru.service.recall.long_bodies import EXCERPT_CHARS, HEAD_CHARS, LONG_BODY_CHARS, excerpt_spans
from tests.recall.helpers import FILLER, note, recall


def _document(deep: str, at: int) -> str:
    """A body of filler prose over `LONG_BODY_CHARS`, with `deep` written after character `at`."""
    filler = FILLER * (4 * LONG_BODY_CHARS // len(FILLER) + 1)
    return filler[:at] + " " + deep + " " + filler[at:]


def test_an_excerpt_keeps_the_head_and_whole_words_around_each_query_word_and_is_bounded() -> None:
    body = _document("the quarterly zephyrine audit found a gap", 90_000)
    spans = excerpt_spans(body, ["zephyrine", "audit"])
    kept = "\n".join(body[a:b] for a, b in spans)
    assert spans[0][0] == 0 and spans[0][1] >= HEAD_CHARS - 20  # the head, to a word's end
    assert "the quarterly zephyrine audit found a gap" in kept
    assert sum(b - a for a, b in spans) <= EXCERPT_CHARS
    assert all(a < b for a, b in spans) and all(b1 < a2 for (_, b1), (a2, _) in itertools.pairwise(spans))
    for a, b in spans:  # no word cut in two
        assert a == 0 or body[a - 1].isspace()
        assert b == len(body) or body[b].isspace()
    # A word found everywhere fills the excerpt up to its bound, never past it.
    assert sum(b - a for a, b in excerpt_spans(body, ["the"])) <= EXCERPT_CHARS


def test_recall_finds_the_words_deep_in_a_long_document_and_reads_only_its_excerpt(service: Service) -> None:
    body = _document("the zephyrine audit found a gap in the ledger", 150_000)
    document = note(service, body)
    note(service, "the ledger was closed on friday")
    note(service, "lunch is at noon")
    answer = recall(service, "zephyrine audit gap")
    assert [h.node.id for h in answer.hits][:1] == [document]
    # The hit shown is the stored node, whole: its own revision and body, not the excerpt's.
    with service.rt.store.read() as session:
        stored = session.get_node(document)
    assert stored is not None and answer.hits[0].node.revision == stored.revision
    # What the channels kept of it: the excerpt's words, not the whole body's.
    held = [terms for (node_id, _), terms in service.rt.doc_stems.items() if node_id == document]
    assert held and all(len(t.counted[2]) < len(body.split()) // 3 for t in held)
