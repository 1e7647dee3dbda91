"""`recall` matches a word in any of its forms (issue 17, decision 17.A1): no channel ranks the
query's exact spelling above what a note says, so a long note that scatters the query's own word forms
does not outrank a short one that says the same in other forms."""

from __future__ import annotations

from kaeru.service import Service
from tests.recall.helpers import FILLER, note, recall


def test_a_note_in_other_word_forms_is_not_outranked_for_the_query_s_spelling(service: Service) -> None:
    """The query's words, in other forms, in a note of moderate length (`short`), and twice each, spelt as
    the query spells them, in one passage of a long note (`spelt`): recall's BM25F counts a word's
    forms as one and scores the long note by its passage, and the short note scores higher. A channel
    that added the query's exact spelling on top (the `literal` channel before decision 17.A1, scored
    by the full-text index over whole bodies) put the long note first; beam-dev's long answers won
    that way over the short message a question asked about."""
    note(service, "an unrelated initiative keeps the searched scope narrow", initiative="elsewhere")
    for i in range(4):
        note(service, f"long note {i} " + FILLER * 6)
    short = note(service, "keep the will as one document, so an update or a change later is quick. " + FILLER)
    for i in range(6):
        note(service, f"short note {i} about lunch plans")
    spelt = note(
        service,
        FILLER * 3
        + "when updating the plan we filed the documents and noted the changes; after updating the budget the "
        + "documents listed more changes "
        + FILLER * 3,
    )
    answer = recall(service, "updating documents changes")
    hits = [h.node.id for h in answer.hits]
    assert hits[:2] == [short, spelt]
    assert answer.explain[short]["lexical"] > answer.explain[spelt]["lexical"]
    assert "literal" not in {c.name for c in answer.plan.channels}
