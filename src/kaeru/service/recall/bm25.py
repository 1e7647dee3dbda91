"""BM25F over recall's candidates, with the word statistics of the searched scope.

Lengths are normalised against a sample of the scope that does not depend on the query (decision
17.Q2). A long body is scored by its passages: overlapping windows of `PASSAGE_WORDS` words, each
with the node's short fields (name, description, tags), against the sample's average *window*
length, while a short node is scored whole against its average *node* length — a short note that
matches is as focused as a passage, and a long note that answers the question in one paragraph is
not drowned by its own length. The node scores its best passage plus `REST_WEIGHT` of its
whole-body score (measured: any share of the rest cost both R@10 and MRR on beam-dev, so 0).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise

from kaeru.domain.languages import from_tags as language_of
from kaeru.domain.model import Node
from kaeru.domain.past_forms import Alternatives
from kaeru.domain.text import identifier_words, indexed_name, manual_tags, stem_words, tokens
from kaeru.service.runtime import DocStems, DocTerms

#: BM25F over the candidates with the statistics of the searched scope (`scope_idf`): the usual
#: saturation and length normalisation, and the field weights the full-text index ranks with
#: (name, description, body, tags).
BM25_K1 = 1.2
BM25_B = 0.9
FIELD_WEIGHTS = (4.0, 2.0, 1.0, 2.0)
BODY = 2  # the body's position in FIELD_WEIGHTS
#: Passages: window length and step, in body words; a body no longer than a window is one unit.
PASSAGE_WORDS = 64
PASSAGE_STEP = 32
REST_WEIGHT = 0.0


def bm25f(
    stems: list[str],
    idf: dict[str, float],
    nodes: dict[str, Node],
    memo: DocStems,
    reference: dict[str, Node] | None = None,
    forms: dict[str, frozenset[str]] | None = None,
    alternatives: Alternatives | None = None,
) -> list[tuple[str, float]]:
    """BM25F of `nodes` (in their given order for ties) for the query words, with weights `idf`;
    long bodies by their best passage (see the module's docstring). A word of `forms` (a query
    word's stem in other languages, decision 191) counts only in a memory of one of its languages,
    so an English memory is scored as it was when another language's stem meets a word of its.
    A word of `alternatives` (a verb of a question in the past, with its irregular past forms:
    `domain.past_forms`) counts any of those forms as itself.

    Lengths are normalised by the average of `reference` (a sample of the scope that does not
    depend on the query) when given: the candidates themselves are the memories that match the
    query, and long ones match more often, so their average overstates the scope's and lets long
    memories off their length (decision 17.Q2).
    """
    if not nodes:
        return []
    wanted = [w for w in stems if w in idf]
    distinct = list(dict.fromkeys(wanted))
    # Each node's words, its whole counts, its terms, and its windows when long (`_windows`).
    found: list[
        tuple[str, list[str], dict[str, float], DocTerms, tuple[list[str], list[tuple[Sequence[float], float]]]]
    ] = []
    for node_id, node in nodes.items():
        doc = _doc_terms(node, memo)
        mine, words = distinct, wanted
        if forms:
            lang = language_of(node.tags)
            mine = [w for w in distinct if w not in forms or lang in forms[w]]
            words = [w for w in wanted if w not in forms or lang in forms[w]]
        tf = _tf(doc, mine, alternatives=alternatives)
        found.append((node_id, words, tf, doc, _windows(doc, mine, words, tf, alternatives)))
    if reference:
        sample = [_doc_terms(n, memo).length for n in reference.values()]
        lengths = [unit for length in sample for unit in _unit_lengths(length)]
        whole_lengths = sample
    else:
        lengths = [unit for _, _, _, doc, _ in found for unit in _window_lengths(doc) or [doc.length]]
        whole_lengths = [doc.length for _, _, _, doc, _ in found]
    average = sum(lengths) / len(lengths) or 1.0
    whole_average = sum(whole_lengths) / len(whole_lengths) or 1.0
    rows = []
    for node_id, words, tf, doc, (scored, windows) in found:
        score = _score(tf, doc.length, whole_average, words, idf) if REST_WEIGHT or not windows else 0.0
        if windows:
            weights = [idf[w] for w in scored]
            best = max(_window_score(counts, length, average, weights) for counts, length in windows)
            score = best + REST_WEIGHT * score
        rows.append((node_id, score))
    rows.sort(key=lambda r: -r[1])
    return rows


def _joined_numbers(name: str) -> Counter[str]:
    """The numbers of a name that are parts of a joined token — an id, a version, a time (`D1:3`,
    `v2.4`, `4:30`) — each with its count: pieces of one identifier, not values the name states, so
    they do not count as its words (decision 110). A number standing alone (`Budget 2024`) counts."""
    out: Counter[str] = Counter()
    for chunk in name.split():
        if chunk.isascii() and chunk.isalnum():  # one token: part of no joined one
            continue
        found = tokens(chunk)
        if len(found) > 1:
            out.update(t for t in found if t.isdigit())
    return out


def _unit_lengths(length: float) -> list[float]:
    """The lengths of the units a node of weighted `length` is scored by (its windows when long)."""
    window = FIELD_WEIGHTS[BODY] * PASSAGE_WORDS
    if length <= window:
        return [length]
    step = FIELD_WEIGHTS[BODY] * PASSAGE_STEP
    return [window] * (1 + math.ceil((length - window) / step))


def _score(tf: dict[str, float], length: float, average: float, wanted: list[str], idf: dict[str, float]) -> float:
    norm = BM25_K1 * (1 - BM25_B + BM25_B * length / average)
    return sum(idf[w] * tf[w] * (BM25_K1 + 1) / (tf[w] + norm) for w in wanted if w in tf)


def _window_score(counts: Sequence[float], length: float, average: float, weights: list[float]) -> float:
    """`_score` of one window: `counts` are its weighted counts of the node's words, `weights` their
    idf, in the same order (a word it lacks has 0 and adds nothing, as a word absent from `tf`)."""
    norm = BM25_K1 * (1 - BM25_B + BM25_B * length / average)
    return sum(idf * tf * (BM25_K1 + 1) / (tf + norm) for idf, tf in zip(weights, counts, strict=True) if tf)


def _windows(
    doc: DocTerms, wanted: list[str], words: list[str], whole: dict[str, float], alternatives: Alternatives | None
) -> tuple[list[str], list[tuple[Sequence[float], float]]]:
    """The windows of a long body (`_bounds`, with the short fields in every window): the node's
    words of `words` (in their order, repeats too; a word it lacks adds nothing to any window) and
    for each window their weighted counts and the window's length; no windows when the body fits
    one. `wanted`: the distinct query words, `whole`: the node's counts of them.

    Each word is counted by blocks (`window_counts`), and the windows' counts are the words'
    columns read across (`zip`), not one window and one word at a time."""
    body = doc.body
    if not body:
        return [], []
    present = [w for w in wanted if w in whole]
    head_tf = _tf(doc, present, BODY, alternatives)
    weight = FIELD_WEIGHTS[BODY]
    head_length = doc.length - weight * len(body)  # the short fields' (whole multiples: exact)
    bounds = _bounds(len(body))
    blocks = _blocks(body)
    per_word: dict[str, list[float]] = {}
    for w in present:
        head = head_tf.get(w, 0.0)
        forms = (alternatives.get(w) if alternatives else None) or (w,)
        per_word[w] = [head + weight * n for n in window_counts(blocks, forms, len(bounds))]
    scored = [w for w in words if w in per_word]
    counts: list[Sequence[float]] = list(zip(*(per_word[w] for w in scored), strict=True)) if scored else []
    lengths = [head_length + weight * (end - start) for start, end in bounds]
    return scored, list(zip(counts or [()] * len(bounds), lengths, strict=True))


def _window_lengths(doc: DocTerms) -> list[float]:
    """The length of each window of a long body (the short fields' with the window's words); empty
    when the body fits one window."""
    weight = FIELD_WEIGHTS[BODY]
    head_length = doc.length - weight * len(doc.body)
    return [head_length + weight * (end - start) for start, end in _bounds(len(doc.body))] if doc.body else []


#: A window is this many consecutive blocks of `PASSAGE_STEP` words (the last one ends with the body).
BLOCKS = PASSAGE_WORDS // PASSAGE_STEP
if BLOCKS * PASSAGE_STEP != PASSAGE_WORDS:
    raise ValueError("a passage must be a whole number of steps (`window_counts` counts by blocks)")


def _blocks(body: tuple[str, ...]) -> list[tuple[str, ...]]:
    """`body` in blocks of `PASSAGE_STEP` words (the last one shorter when the body ends there)."""
    return [body[start : start + PASSAGE_STEP] for start in range(0, len(body), PASSAGE_STEP)]


def window_counts(blocks: list[tuple[str, ...]], forms: Sequence[str], windows: int) -> list[int]:
    """How often any of `forms` occurs in each of the `windows` windows of a body (`_bounds`) cut in
    `blocks` (`_blocks`): each block counted once, in C (`tuple.count`), and a window adds its
    `BLOCKS` blocks — not each window's words counted again, nor each occurrence looked for in turn."""
    if len(forms) == 1:
        counted = [block.count(forms[0]) for block in blocks]
    else:
        counted = [sum(block.count(f) for f in forms) for block in blocks]
    if BLOCKS == 2 and len(counted) == windows + 1:  # a body longer than one window
        return [a + b for a, b in pairwise(counted)]
    return [sum(counted[i : i + BLOCKS]) for i in range(windows)]


def _bounds(words: int) -> list[tuple[int, int]]:
    """The windows of a body of `words` words: every `PASSAGE_STEP` words, the last one ending
    with the body."""
    out = []
    for start in range(0, max(words - PASSAGE_WORDS, 0) + PASSAGE_STEP, PASSAGE_STEP):
        out.append((start, min(start + PASSAGE_WORDS, words)))
        if start + PASSAGE_WORDS >= words:
            break
    return out


def passage_bounds(words: int) -> list[tuple[int, int]]:
    """The passages of a text of `words` words: the whole text when it fits one window."""
    return _bounds(words) if words > PASSAGE_WORDS else [(0, words)]


def _doc_terms(node: Node, memo: DocStems) -> DocTerms:
    """One node revision's `DocTerms`, memoised in the runtime's `doc_stems` (bounded by bytes):
    each field tokenised and stemmed once (decision 126)."""
    key = (node.id, node.revision)
    found = memo.get(key)
    if found is not None:
        return found
    fields = (indexed_name(node), node.description or "", node.body or "", manual_tags(node.tags))
    lang = language_of(node.tags)  # stemmed as the index stems it (decision 191)
    counted: list[tuple[str, ...]] = []
    length = 0.0
    body: tuple[str, ...] = ()
    for i, (weight, text) in enumerate(zip(FIELD_WEIGHTS, fields, strict=True)):
        stems, words = _field_words(text, i == 0, lang)
        kept = tuple(stems)
        counted.append(kept if words is stems else tuple(words))
        length += weight * len(stems)
        if i == BODY:
            # Scored by its windows: a body longer than one (a word takes at least two characters).
            body = kept if len(text) > PASSAGE_WORDS * 2 and len(stems) > PASSAGE_WORDS else ()
    return memo.put(key, DocTerms(tuple(counted), body, length))


def _tf(
    doc: DocTerms, wanted: list[str], skip: int | None = None, alternatives: Alternatives | None = None
) -> dict[str, float]:
    """The weighted frequency of each of `wanted` (distinct) in `doc`, the words it lacks left out,
    field `skip` aside: a field's count times its weight (whole multiples of these weights, so the
    sums are exact whatever their order); a word's `alternatives` (its other forms) counted as it."""
    tf: dict[str, float] = {}
    for i, words in enumerate(doc.counted):
        if i == skip or not words:
            continue
        weight = FIELD_WEIGHTS[i]
        for w in wanted:
            n = sum(words.count(f) for f in alternatives[w]) if alternatives and w in alternatives else words.count(w)
            if n:
                tf[w] = tf.get(w, 0.0) + weight * n
    return tf


def _field_words(text: str, name: bool = False, lang: str = "en") -> tuple[list[str], list[str]]:
    """A field's stems in order (what its length counts), and the words it counts: those stems, its
    identifiers' pieces (stemmed) and whole identifiers — in a name, less the numbers that are
    pieces of a joined token (`_joined_numbers`, decision 110). The text's tokens are not
    remembered by the tokeniser (`once`): its words are, by revision, in `doc_stems`, and a
    candidate's text is tokenised here only when that memo lacks it — in a large scope, texts the
    tokeniser's small memo would only evict the next one for."""
    if not text:
        return [], []
    found = stem_words(tokens(text, once=True), lang)
    parts, wholes = _identifier_words(text)
    if not parts and not wholes and not name:  # prose: its words are its stems
        return found, found
    counted = [*found, *stem_words(parts), *wholes] if parts or wholes else found
    skip = _joined_numbers(text) if name else Counter()
    if skip:
        kept = []
        for word in counted:
            if skip[word] > 0:
                skip[word] -= 1
            else:
                kept.append(word)
        counted = kept
    return found, counted


#: What any code identifier needs somewhere in a text (`identifier_words`' own patterns need more):
#: a lower-case letter before a capital or two capitals before a lower-case letter (camelCase,
#: HTTPServer), or a word character right after `.` or `_` (snake_case, dotted paths).
_CAMEL_LOWER_UPPER = re.compile(r"[a-z][A-Z]")
_CAMEL_UPPER_LOWER = re.compile(r"[A-Z][A-Z][a-z]")
_JOINED = re.compile(r"[._]\w")
#: An ASCII text's bytes by case (lower-case `a`, capital `A`, any other byte a space), so that the
#: two camel-case patterns are plain substrings of the result (a pattern that begins with a class
#: is tried at every position of the text).
_CASES = bytes(97 if c < 128 and chr(c).islower() else 65 if c < 128 and chr(c).isupper() else 32 for c in range(256))
#: `_JOINED` in an ASCII text, one pattern a joining character: a pattern that begins with a
#: literal is searched for that character first, in C (an ASCII `\w` is a letter, a digit or `_`).
_DOT_JOINED = re.compile(r"\.[A-Za-z0-9_]")
_UNDERSCORE_JOINED = re.compile(r"_[A-Za-z0-9_]")


def _identifier_words(text: str) -> tuple[list[str], list[str]]:
    """`identifier_words(text)`, asked only of a text that could hold an identifier: prose holds
    none, and these plain searches cost a tenth of its patterns."""
    return identifier_words(text) if _may_hold_identifier(text) else ([], [])


def _may_hold_identifier(text: str) -> bool:
    """Whether one of the three patterns above is found in `text`: an ASCII text's camel case by its
    shape (`_CASES`) and its joins by the patterns that begin with `.` and `_`, another's by the
    patterns themselves."""
    if not text.isascii():
        return bool(_CAMEL_LOWER_UPPER.search(text) or _CAMEL_UPPER_LOWER.search(text) or _JOINED.search(text))
    cases = text.encode("ascii").translate(_CASES)
    if b"aA" in cases or b"AAa" in cases:
        return True
    return bool(("." in text and _DOT_JOINED.search(text)) or ("_" in text and _UNDERSCORE_JOINED.search(text)))
