"""Recall's memoised passages (issue 16, decision 16.V1): a long body's window counts come from its
word positions, identifier words are asked only of text that could hold an identifier, and the word
sequences are memoised by revision in the runtime's bounded `doc_words` — none of which may change
an answer."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kaeru.domain.text import identifier_words
from kaeru.service import Service
from kaeru.service.recall.bm25 import (
    _CAMEL_LOWER_UPPER,
    _CAMEL_UPPER_LOWER,
    _JOINED,
    PASSAGE_WORDS,
    _blocks,
    _bounds,
    _identifier_words,
    _may_hold_identifier,
    window_counts,
)
from kaeru.service.runtime import DOC_WORDS_BYTES, doc_stems_memo, doc_words_memo
from tests.recall.helpers import note, recall


def naive_counts(body: list[str], word: str) -> list[int]:
    """Each window's count of `word`, counted word by word (as recall did before 16.V1; by its
    positions until session 33, by blocks since)."""
    return [body[start:end].count(word) for start, end in _bounds(len(body))]


@settings(max_examples=300, deadline=None)
@given(body=st.lists(st.sampled_from("abcd"), min_size=PASSAGE_WORDS - 4, max_size=400), word=st.sampled_from("abcde"))
def test_window_counts_equal_counting_each_window(body: list[str], word: str) -> None:
    windows = len(_bounds(len(body)))
    assert window_counts(_blocks(tuple(body)), (word,), windows) == naive_counts(body, word)
    # A word and its other forms (`domain.past_forms`) count as one.
    other = [w if w != "a" else "e" for w in body]
    assert window_counts(_blocks(tuple(other)), ("a", "e"), windows) == naive_counts(body, "a")


def test_window_counts_at_the_edges() -> None:
    for length in (
        0,
        1,
        32,
        33,
        PASSAGE_WORDS,
        PASSAGE_WORDS + 1,
        2 * PASSAGE_WORDS,
        2 * PASSAGE_WORDS + 1,
        97,
        129,
        300,
    ):
        body = ["x"] * length
        blocks = _blocks(tuple(body))
        assert window_counts(blocks, ("x",), len(_bounds(length))) == naive_counts(body, "x")
        assert window_counts(blocks, ("y",), len(_bounds(length))) == [0] * len(_bounds(length))


_TEXT = st.text(alphabet="aAbBzZ09_. -é\u0416\u0436(", max_size=60)


@settings(max_examples=500, deadline=None)
@given(text=_TEXT)
def test_identifier_words_are_only_skipped_where_there_are_none(text: str) -> None:
    assert _identifier_words(text) == identifier_words(text)


@settings(max_examples=1000, deadline=None)
@given(
    text=st.text(alphabet=st.characters(max_codepoint=127), max_size=40)
    | st.text(alphabet="aZ9_.- ", max_size=30)
    | _TEXT
)
def test_the_shapes_of_an_ascii_text_find_what_the_patterns_find(text: str) -> None:
    """An ASCII text is judged by its shapes (`_CASES`, `_JOINS`), not by the three patterns
    (decision 244): the same answer for every text, any byte next to any other."""
    patterns = bool(_CAMEL_LOWER_UPPER.search(text) or _CAMEL_UPPER_LOWER.search(text) or _JOINED.search(text))
    assert _may_hold_identifier(text) == patterns


def test_identifier_words_of_identifiers_and_prose() -> None:
    for text in (
        "call getUserName, then os.path.join on user_name and HTTPServer",
        "parseJSON and XMLHttpRequest",
        "_private __dunder__ a_b a.b 4.500 v2.1 x.",
        "It cost 4.500 dollars. Then v2 shipped. Plain prose, Capitalised Words.",
        "ALLCAPS words and CamelCase names",
        "",
    ):
        assert _identifier_words(text) == identifier_words(text)


def test_recall_answers_the_same_from_a_cold_and_a_warm_memo(service: Service) -> None:
    note(service, "an unrelated initiative keeps the searched scope narrow", initiative="elsewhere")
    filler = "the weekly review went through the usual items of the roadmap and nobody raised anything "
    for i in range(6):
        note(service, filler * (3 + i) + f"the deployment of service{i} failed twice " + filler * 2)
    note(service, "a short note on the failed deployment")
    cold = recall(service, "deployment failed")
    assert len(service.rt.doc_words) > 0
    warm = recall(service, "deployment failed")
    assert [h.node.id for h in warm.hits] == [h.node.id for h in cold.hits]
    assert warm.explain == cold.explain
    # Both memos emptied: the words are read again, and the answer is still the same.
    service.rt.doc_words.clear()
    service.rt.doc_stems.clear()
    again = recall(service, "deployment failed")
    assert [h.node.id for h in again.hits] == [h.node.id for h in cold.hits]
    assert again.explain == cold.explain
    assert "proximity" in "".join(k for parts in cold.explain.values() for k in parts)


def test_the_words_memo_is_bounded() -> None:
    memo = doc_words_memo()
    assert memo.max_bytes == DOC_WORDS_BYTES
    for i in range(20_000):
        memo.put((f"node-{i}", "1\x1fbody"), tuple(f"w{j}" for j in range(200)))
    assert 0 < memo.bytes <= DOC_WORDS_BYTES
    assert doc_stems_memo() is not doc_stems_memo()  # each runtime owns its own memos


def test_a_revisions_terms_are_counted_by_their_references_and_bounded(service: Service) -> None:
    """The BM25F memo keeps each candidate's words as tuples of the tokeniser's shared strings, not a
    dictionary of every word's frequency (decision 128): a 150-word note's entry stays ~2 KB, so the
    memo holds thousands more candidates in the same bytes; and the memo never passes its bound."""
    body = " ".join(f"word{i % 97} and{i % 13}" for i in range(75))
    node_id = note(service, body)
    recall(service, "word5 and3")
    memo = service.rt.doc_stems
    with service.store.read() as session:
        node = session.nodes_by_ids([node_id])[node_id]
    doc = memo.get((node_id, node.revision))
    assert doc is not None and len(memo) == 1
    assert memo.bytes < 2500, memo.bytes
    bounded = doc_stems_memo()
    for i in range(40_000):
        bounded.put((f"node-{i}", "1"), doc)
    assert 0 < bounded.bytes <= bounded.max_bytes
    assert len(bounded) > 8_000  # ~1,600 fitted when an entry was a dictionary of frequencies
