"""Recall's BM25F counts a long body's windows by blocks and reads a candidate's fields with fewer
passes (issue 16): the same rows, order and scores, to the last bit, as the plain definition it
replaced — a dictionary of counts per window, counted word by word, and every field's words read
with every pattern — for any nodes, questions, word forms and length sample."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from kaeru.domain.languages import from_tags as language_of
from kaeru.domain.model import Layer, Node, NodeType, Tier, Visibility
from kaeru.domain.past_forms import Alternatives
from kaeru.domain.text import identifier_words, indexed_name, manual_tags, stem_words, tokens
from kaeru.service.recall import bm25
from kaeru.service.recall.bm25 import (
    BM25_B,
    BM25_K1,
    BODY,
    FIELD_WEIGHTS,
    PASSAGE_WORDS,
    REST_WEIGHT,
    _bounds,
    _tf,
    _unit_lengths,
    bm25f,
)
from kaeru.service.runtime import DocStems, DocTerms, doc_stems_memo


def plain_joined_numbers(name: str) -> Counter[str]:
    out: Counter[str] = Counter()
    for chunk in name.split():
        found = tokens(chunk)
        if len(found) > 1:
            out.update(t for t in found if t.isdigit())
    return out


def plain_field_words(text: str, name: bool, lang: str) -> tuple[list[str], list[str]]:
    found = stem_words(tokens(text), lang)
    parts, wholes = identifier_words(text)
    counted = [*found, *stem_words(parts), *wholes]
    skip = plain_joined_numbers(text) if name else Counter()
    kept = []
    for word in counted:
        if skip[word] > 0:
            skip[word] -= 1
        else:
            kept.append(word)
    return found, kept


def plain_doc_terms(node: Node, memo: DocStems) -> DocTerms:
    key = (node.id, node.revision)
    found = memo.get(key)
    if found is not None:
        return found
    fields = (indexed_name(node), node.description or "", node.body or "", manual_tags(node.tags))
    lang = language_of(node.tags)
    counted: list[tuple[str, ...]] = []
    length = 0.0
    body: tuple[str, ...] = ()
    for i, (weight, text) in enumerate(zip(FIELD_WEIGHTS, fields, strict=True)):
        stems, words = plain_field_words(text, i == 0, lang)
        counted.append(tuple(words))
        length += weight * len(stems)
        if i == BODY:
            body = tuple(stems) if len(text) > PASSAGE_WORDS * 2 and len(stems) > PASSAGE_WORDS else ()
    return memo.put(key, DocTerms(tuple(counted), body, length))


def plain_score(tf: dict[str, float], length: float, average: float, wanted: list[str], idf: dict[str, float]) -> float:
    norm = BM25_K1 * (1 - BM25_B + BM25_B * length / average)
    return sum(idf[w] * tf[w] * (BM25_K1 + 1) / (tf[w] + norm) for w in wanted if w in tf)


def plain_passages(
    doc: DocTerms, wanted: list[str], whole: dict[str, float], alternatives: Alternatives | None
) -> list[tuple[dict[str, float], float]]:
    """Each window's counts in a dictionary, each counted word by word in the window's slice."""
    body = doc.body
    if not body:
        return []
    present = [w for w in wanted if w in whole]
    head_tf = _tf(doc, present, BODY, alternatives)
    weight = FIELD_WEIGHTS[BODY]
    head_length = doc.length - weight * len(body)
    out: list[tuple[dict[str, float], float]] = []
    for start, end in _bounds(len(body)):
        part = body[start:end]
        tf: dict[str, float] = {}
        for w in present:
            forms = alternatives.get(w) if alternatives else None
            n = sum(part.count(f) for f in forms) if forms else part.count(w)
            found = head_tf.get(w, 0.0) + weight * n
            if found:
                tf[w] = found
        out.append((tf, head_length + weight * (end - start)))
    return out


def plain_bm25f(
    stems: list[str],
    idf: dict[str, float],
    nodes: dict[str, Node],
    memo: DocStems,
    reference: dict[str, Node] | None,
    forms: dict[str, frozenset[str]] | None,
    alternatives: Alternatives | None,
) -> list[tuple[str, float]]:
    """`bm25f` as it was before the blocks (session 33)."""
    if not nodes:
        return []
    wanted = [w for w in stems if w in idf]
    distinct = list(dict.fromkeys(wanted))
    units: dict[str, list[tuple[dict[str, float], float]]] = {}
    whole: dict[str, tuple[dict[str, float], float]] = {}
    asked: dict[str, list[str]] = {}
    for node_id, node in nodes.items():
        doc = plain_doc_terms(node, memo)
        mine = distinct
        if forms:
            lang = language_of(node.tags)
            mine = [w for w in distinct if w not in forms or lang in forms[w]]
            asked[node_id] = [w for w in wanted if w not in forms or lang in forms[w]]
        whole[node_id] = (_tf(doc, mine, alternatives=alternatives), doc.length)
        units[node_id] = plain_passages(doc, mine, whole[node_id][0], alternatives) or [whole[node_id]]
    if reference:
        sample = [plain_doc_terms(n, memo).length for n in reference.values()]
        lengths = [unit for length in sample for unit in _unit_lengths(length)]
        whole_lengths = sample
    else:
        lengths = [length for found in units.values() for _, length in found]
        whole_lengths = [length for _, length in whole.values()]
    average = sum(lengths) / len(lengths) or 1.0
    whole_average = sum(whole_lengths) / len(whole_lengths) or 1.0
    rows = []
    for node_id, found in units.items():
        tf, length = whole[node_id]
        words = asked.get(node_id, wanted)
        score = plain_score(tf, length, whole_average, words, idf)
        if len(found) > 1:
            best = max(plain_score(tf, length, average, words, idf) for tf, length in found)
            score = best + REST_WEIGHT * score
        rows.append((node_id, score))
    rows.sort(key=lambda r: -r[1])
    return rows


#: Words whose stems the questions ask, the irregular past of one, an identifier, numbers.
_WORDS = ["deploy", "deployed", "went", "go", "gone", "build", "cache", "api", "budget", "2024", "7", "x"]
_PIECES = st.sampled_from(
    [*_WORDS, "the", "and", "getUserName", "os.path.join", "user_name", "D1:3", "v2.4", "Über", "HTTPServer", "."]
)


def _text(max_size: int) -> st.SearchStrategy[str]:
    return st.lists(_PIECES, max_size=max_size).map(" ".join)


@st.composite
def _nodes(draw: st.DrawFn) -> dict[str, Node]:
    out: dict[str, Node] = {}
    for i in range(draw(st.integers(1, 6))):
        node_id = f"0190a0a0-0000-7000-8000-{i:012d}"
        lang = draw(st.sampled_from(["lang:en", "lang:de"]))
        out[node_id] = _node(
            node_id,
            f"1-{i}",
            name=draw(_text(5)),
            body=draw(st.one_of(st.none(), _text(40), st.lists(_PIECES, min_size=60, max_size=240).map(" ".join))),
            description=draw(st.one_of(st.none(), _text(6))),
            tags=(*draw(st.lists(st.sampled_from(["topic:cache", "topic:deploy", "team:api", "kind:x"]))), lang),
        )
    return out


def _node(
    node_id: str, revision: str, name: str, body: str | None, description: str | None, tags: tuple[str, ...]
) -> Node:
    """A node whose scored fields are these; the rest as any live node of initiative 1 has them."""
    return Node(
        id=node_id,
        rev_no=1,
        revision=revision,
        node_type=NodeType.HYPOTHESIS,
        tier=Tier.ARCHIVAL,
        name=name,
        body=body,
        description=description,
        tags=tags,
        layer=Layer.HOT,
        visibility=Visibility.SHARED,
        status=None,
        properties={},
        initiatives=(1,),
        created_at="2026-01-02T03:04:05.000006Z",
        recorded_at="2026-01-02T03:04:05.000007Z",
    )


#: The stems a question asks (and an identifier whole), some of them in no text.
_ASKED = ["deploy", "go", "build", "cach", "api", "budget", "2024", "7", "3", "4", "user", "user_name", "os.path.join"]
_STEMS = st.lists(st.sampled_from([*_ASKED, "absent"]))


@settings(max_examples=300, deadline=None)
@given(
    nodes=_nodes(),
    stems=_STEMS,
    idf=st.dictionaries(st.sampled_from(_ASKED), st.floats(0.001, 9.0)),
    with_reference=st.booleans(),
    forms=st.one_of(st.none(), st.just({"build": frozenset({"de"})})),
    alternatives=st.one_of(st.none(), st.just({"go": ("go", "went", "gone")})),
)
def test_bm25f_equals_its_plain_definition(
    nodes: dict[str, Node],
    stems: list[str],
    idf: dict[str, float],
    with_reference: bool,
    forms: dict[str, frozenset[str]] | None,
    alternatives: Alternatives | None,
) -> None:
    reference = dict(list(nodes.items())[::2]) if with_reference else None
    memo = doc_stems_memo()
    got = bm25f(stems, idf, nodes, memo, reference, forms, alternatives)
    # Again from the memo: what the first call kept counts the same.
    assert bm25f(stems, idf, nodes, memo, reference, forms, alternatives) == got
    want = plain_bm25f(stems, idf, nodes, doc_stems_memo(), reference, forms, alternatives)
    assert [r[0] for r in got] == [r[0] for r in want]
    assert [repr(r[1]) for r in got] == [repr(r[1]) for r in want]  # to the last bit, and int or float


def test_a_long_body_is_scored_by_its_windows() -> None:
    """The property test's texts reach bodies of several windows (not only short ones)."""
    body = " ".join(["deploy"] + ["the"] * (3 * PASSAGE_WORDS) + ["deploy", "deploy"])
    node = _node("0190a0a0-0000-7000-8000-000000000001", "1", name="n", body=body, description=None, tags=("lang:en",))
    memo = doc_stems_memo()
    assert len(bm25._doc_terms(node, memo).body) > PASSAGE_WORDS
    nodes = {node.id: node}
    got = bm25f(["deploy"], {"deploy": 1.0}, nodes, memo)
    assert got == plain_bm25f(["deploy"], {"deploy": 1.0}, nodes, doc_stems_memo(), None, None, None)
