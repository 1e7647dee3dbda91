"""Recall's channels: each finds candidates its own way (words, stems, meaning, dates, names, time and
graph neighbours, rules, slots, tasks) and adds them to the fusion."""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Callable
from datetime import date, datetime, tzinfo
from itertools import pairwise
from typing import Any

from kaeru.domain.languages import from_tags as language_of
from kaeru.domain.model import DECISION_TAG, Node, NodeType
from kaeru.domain.past_forms import Alternatives, expand, past_forms
from kaeru.domain.plans import Plan
from kaeru.domain.stopwords import STOP_WORDS
from kaeru.domain.text import identifier_words, stem, stem_words, tokens
from kaeru.domain.timefmt import without_dates
from kaeru.service import worklist
from kaeru.service.embedding import Embedder, EmbedWorker
from kaeru.service.outcomes import Issue
from kaeru.service.recall.bm25 import bm25f, passage_bounds
from kaeru.service.recall.dated import DATE_CANDIDATES, Windows, lift, newest_dated, search_words, window_memories
from kaeru.service.recall.failures import Asked, failures
from kaeru.service.recall.fusion import Fusion, share
from kaeru.service.recall.long_bodies import readable
from kaeru.service.recall.open_tasks import open_tasks
from kaeru.service.recall.rules_asked import scope_rules
from kaeru.service.recall.semantic import semantic_channel
from kaeru.service.runtime import DocStems, DocWords
from kaeru.storage.base import SearchQuery, Session, Store

log = logging.getLogger(__name__)
SEEDS = 12
#: Temporal neighbours: how many strong hits to look around, how far (four memories on since
#: decision 90), and how fast the share decays.
TEMPORAL_SEEDS = 8
RERANK = 60
TEMPORAL_BEFORE = 2
TEMPORAL_AFTER = 4
TEMPORAL_DECAY = 1.0
#: A neighbour of more words than this gets `TEMPORAL_WORDS` / its words of what the temporal
#: channel passes it (decision 90): a short memory (a reply, a line of a dialogue) needs the
#: memories around it to say what it is about; a long one says it in its own words, which the
#: lexical channel has already scored.
TEMPORAL_WORDS = 64
CANDIDATES = 100
#: The links of one seed the graph channel follows, strongest first.
GRAPH_FANOUT = 20
#: The memory written right after one that asks what the query asks is most likely its answer: it is
#: taken as this much closer to the question than an ordinary neighbour (1.0: the question's whole
#: share, where the next memory otherwise gets half; decision 17.P2).
REPLY_GAP = 1.0
#: How far down the first ranking a memory that asks what the query asks passes a share to its reply.
REPLY_SEEDS = 40
#: The reply is lent this much of its question's own fused score when that is more than the
#: question's share of the best hit (decision 17.M1): a short question that asks what the query
#: asks is as good a hit as its score says, wherever the best hit stands. A long memory that ends
#: with a question is mostly something else, so it lends `_brevity` of that (0: the share only).
REPLY_SCORE = 1.0
#: The latest memories of the scope whose average length normalises BM25F's (a sample that does
#: not depend on the query; decision 17.Q2).
LENGTH_SAMPLE = 64
#: A question of more distinct stems than this ranks by its rarest ones (`_rarest`): their rarity is
#: read for at most `RARE_ROWS` nodes a stem, and at most `COMMON_STEMS` commoner ones are kept.
QUERY_STEMS = 24
RARE_ROWS = 20_000
COMMON_STEMS = 2
#: How many common stems the runtime remembers (`_rarest`) before it forgets them all at once.
KNOWN_COMMON = 4096
__all__ = ["DATE_CANDIDATES", "QUERY_STEMS", "narrow", "run_channels"]


def _lexical(
    session: Session, scope_ids: list[int], words: list[str], stemmed: bool, window: int
) -> list[tuple[str, float]]:
    if not words:
        return []
    rows, _, _ = session.search(
        SearchQuery(
            initiative_ids=scope_ids,
            tokens=words,
            stemmed=stemmed,
            omit_superseded=False,
            window=window,
            count_total=False,
        )
    )
    return [(r.id, r.score) for r in rows]


def _rarest(session: Session, stems: list[str], known_common: set[str]) -> list[str]:
    """A long question's stems to rank by, in the question's order: its rarest in the vault, at
    most `QUERY_STEMS`, of which at most `COMMON_STEMS` more than `RARE_ROWS` memories hold; a
    shorter question whole. Every word a question ranks by is read in full the first time it is
    asked (its copy, or SQL's ranking): a pasted paragraph of fifty words took seconds at 100k
    nodes, its common words costing the most and weighing the least (decision 168). Rarity is read
    for at most `RARE_ROWS` rows a word, once for a common one (`known_common`, the runtime's); words
    no memory holds are left out (they find nothing)."""
    if len(stems) <= QUERY_STEMS:
        return stems
    unknown = [s for s in stems if s not in known_common]
    counted = dict(zip(unknown, session.vault_counts_at_most(unknown, RARE_ROWS), strict=True))
    if len(known_common) > KNOWN_COMMON:
        known_common.clear()
    known_common.update(s for s, n in counted.items() if n is None)
    counts = [counted.get(s) for s in stems]
    rare = sorted((n, i) for i, n in enumerate(counts) if n)
    common = [i for i, n in enumerate(counts) if n is None]
    kept = [i for _, i in rare[:QUERY_STEMS]]
    kept += common[: min(COMMON_STEMS, QUERY_STEMS - len(kept))]
    return [stems[i] for i in sorted(kept)]


def _other_forms(session: Session, words: list[str], stems: list[str]) -> dict[str, frozenset[str]]:
    """A question's words stemmed by each other language the vault holds memories in (decision
    191), those some memory holds, each with its languages: asked by the lexical channel beside the
    English `stems` and counted by BM25F in memories of those languages only. Proximity and a hit
    that asks compare the English `stems` with a memory's words stemmed as English, as before; the
    feedback channel's terms, asked of the index, are a memory's own stems. So a vault's English
    memories rank as they did."""
    languages = session.stemmed_languages() if words else []
    found: dict[str, set[str]] = {}
    for lang in languages:
        for word in words:
            form = stem(word, lang)
            if form not in stems:
                found.setdefault(form, set()).add(lang)
    if not found:
        return {}
    held = session.vault_counts_at_most(list(found), 0)
    return {f: frozenset(langs) for (f, langs), n in zip(found.items(), held, strict=True) if n != 0}


def _feedback_terms(nodes: list[Node], query_stems: set[str], limit: int = 8) -> list[str]:
    """Stems that characterise the first hits (pseudo-relevance feedback), not already in the query."""
    counts: Counter[str] = Counter()
    for node in nodes:
        words = [t for t in tokens(f"{node.name} {node.body or ''}") if t not in STOP_WORDS and len(t) > 2]
        seen = set(stem_words(words, language_of(node.tags)))
        counts.update(s for s in seen if s not in query_stems and not s.isdigit())
    return [term for term, n in counts.most_common(limit) if n >= 2]


class _Nodes:
    """The nodes one recall has loaded, so each is read (and decoded) once; a very long body as the
    channels read it (`long_bodies.readable`: its head and the windows around `needles`)."""

    def __init__(self, session: Session, needles: list[str]):
        self.session = session
        self.needles = needles
        self.known: dict[str, Node] = {}
        self.whole: dict[str, Node] = {}  # as stored, not cut by `readable` (what vectors are of)

    def get(self, ids: list[str]) -> dict[str, Node]:
        missing = [i for i in ids if i not in self.known]
        if missing:
            for i, node in self.session.nodes_by_ids(missing).items():
                self.known[i], self.whole[i] = readable(node, self.needles), node
        return {i: self.known[i] for i in ids if i in self.known}

    def put(self, nodes: list[Node]) -> None:
        """Nodes a channel has already read, kept so they are not read again."""
        for node in nodes:
            if node.id not in self.known:
                self.known[node.id], self.whole[node.id] = readable(node, self.needles), node


def run_channels(
    session: Session,
    scope_ids: list[int],
    first_scope: Any,
    query: str,
    plan: Plan,
    fusion: Fusion,
    memo: DocStems,
    words_memo: DocWords,
    embedder: Embedder | None = None,
    store: Store | None = None,
    worker: EmbedWorker | None = None,
    *,
    common_stems: set[str] | None = None,
    issues: list[Issue] | None = None,
    failed: Asked | None = None,
    skipped: frozenset[str] = frozenset(),
    when: tuple[datetime, tzinfo | None] | None = None,
    today: date | None = None,
    boards: worklist.Boards | None = None,
    shown: Callable[[dict[str, Node]], set[str]] | None = None,
) -> dict[str, Node]:
    """Run the plan's channels into `fusion`; the candidates they found, loaded. `when`: the user's
    now and time zone, which `plan.time_windows` were read against; `today`: the user's today, by
    which a task is overdue; `skipped`: the words of a question's open-work phrase asked alone
    (`open_work.phrase_words`), not searched for; `boards`: the searched initiatives' boards (`worklist.boards`), whose
    open tasks the tasks channel offers; `shown`: which of some candidates the answer can show (not
    left out by the caller's filters, as stale or suppressed), the only ones whose neighbours and
    links are lifted."""
    semantic = None
    if plan.weight("semantic") and embedder is not None and worker is not None and query:
        # SQLite's first candidates are computed beside the lexical channels, on a connection of their
        # own (its pool opens one when none is idle). PostgreSQL ranks in one exact scan: its worker
        # only embeds, and takes no second connection from a pool that concurrent recalls could
        # have emptied (the worker would wait on them while they wait on it).
        semantic = worker.submit(
            embedder, query, store if store is not None and store.backend == "sqlite" else None, CANDIDATES
        )
    # The words of a failure phrase (`failures.Asked`) or of an open-work one (`skipped`) asked alone.
    form = (failed.form if failed else frozenset()) | skipped
    windowed = window_memories(session, scope_ids, plan.time_windows) if plan.weight("date") else Windows()
    # The words that say when are no words to search for, a date's only when its days hold memories.
    undated = without_dates(query, *when, held=windowed.held) if when and plan.time_windows else None
    words = fusion.words = search_words(query, undated, form)
    worded = query if undated is None else undated
    parts, wholes = identifier_words(worded)
    asked = list(dict.fromkeys([*(stem(w) for w in words), *stem_words(parts)]))
    stems = _rarest(session, asked, common_stems or set())
    forms = _other_forms(session, words, stems)
    lexical_stems = stems + list(forms)
    # A verb of a question in the past, with its irregular past forms counted as it (`domain.past_forms`).
    alternatives = past_forms(stems, tokens(worded) if worded else ())
    ranked_by = set(stems)
    fusion.left_out = [s for s in asked if s not in ranked_by]
    loaded = _Nodes(session, [*(w.lower() for w in words), *asked])
    fusion.query_stems = stems
    dated = [*windowed.made, *windowed.changed]
    idf: dict[str, float] = {}
    if plan.weight("lexical"):
        hits = _lexical(session, scope_ids, expand(lexical_stems, alternatives), True, CANDIDATES)
        if plan.weight("scope_idf") and stems:
            known = {i for i, _ in hits}
            extra = [i for i in dict.fromkeys(dated) if i not in known]
            idf = _scope_idf(session, scope_ids, lexical_stems, alternatives)
            for whole in wholes:  # as rare as its rarest word: the index does not hold it whole
                idf[whole] = max((idf.get(stem(p), 0.0) for p in tokens(whole)), default=0.0)
            reference = loaded.get(session.newest_in_scope(scope_ids, LENGTH_SAMPLE))
            pool = loaded.get([i for i, _ in hits] + extra)
            hits = bm25f([*lexical_stems, *wholes], idf, pool, memo, reference, forms, alternatives)
            fusion.idf = idf
        fusion.add_scored("lexical", hits)
    older: list[str] = []  # a crowded day's memories older than those read (`newest_dated`)
    passed: list[str] = []  # the open tasks the tasks channel read and did not offer
    by_date = False  # the days the query names are the whole answer
    if plan.weight("date"):
        if not fusion.scores:
            # No word of the query was found ("what happened yesterday"): the memories of the days
            # it names are the answer (decision 288) — made or changed in them; of a crowded day,
            # its newest (decision 471).
            newest, older = newest_dated(session, scope_ids, windowed.crowded)
            for node_id in dict.fromkeys([*windowed.made, *newest, *windowed.changed]):
                fusion.put("date", node_id, 1.0)
            by_date = bool(fusion.scores)
            if by_date and not windowed.complete:
                fusion.unread += 1  # a change older than the log read may be missing: at least one
        lift(fusion, loaded.get(list(fusion.scores)), plan.time_windows, set(windowed.changed))
    if semantic is not None and embedder is not None:
        semantic_channel(session, scope_ids, semantic, fusion, embedder.model_id, loaded, issues, CANDIDATES)
    if plan.weight("name") and query:
        for node in session.live_nodes_named(query, scope_ids):
            fusion.put("name", node.id, 1.0)
    if plan.weight("proximity") and len(stems) > 1:
        _proximity(fusion, loaded.get(fusion.ranked()[:RERANK]), stems, idf, words_memo, alternatives)
    # A hit the answer will not show (archived, held back, filtered out) lends nothing: its
    # neighbours in time and links would stand in for it, unrelated to the question but for it.
    ranked_before = _showable(fusion.ranked(), loaded, shown, max(SEEDS, REPLY_SEEDS))
    # No hit is stronger than another among a day's memories found by its date alone: none is a seed
    # whose neighbours and links would be ranked among them out of time order (decision 471).
    seeds = [] if by_date else ranked_before[:SEEDS]
    before_score = {i: fusion.total(i) for i in ranked_before[: max(SEEDS, REPLY_SEEDS)]}
    seed_nodes = loaded.get(seeds)
    seed_score = {i: fusion.total(i) for i in seeds}
    top = max(seed_score.values(), default=1.0) or 1.0
    if plan.weight("feedback") and seeds:
        extra = _feedback_terms([seed_nodes[i] for i in seeds[:6] if i in seed_nodes], set(stems))
        if extra:
            fusion.add_scored(
                "feedback", _lexical(session, scope_ids, list(dict.fromkeys(stems + extra)), True, CANDIDATES // 2)
            )
    if plan.weight("temporal") and seeds:
        # The strong hits pass a share to the memories written around them; a hit further down that
        # asks what the query asks passes it to its reply alone (the memory written next), and any
        # such hit lends its reply its own score when that is more (`REPLY_SCORE`).
        candidates = ranked_before[: max(TEMPORAL_SEEDS, REPLY_SEEDS)]
        candidate_nodes = loaded.get(candidates)
        lenders: list[tuple[str, Node, bool]] = []  # (seed, its node, whether it asks)
        pivots: list[tuple[tuple[str, int], int, int]] = []
        for k, seed in enumerate(candidates):
            found = candidate_nodes.get(seed)
            if found is None:
                continue
            asks = _asks(found, stems, alternatives)
            near = k < TEMPORAL_SEEDS
            if near or asks:
                lenders.append((seed, found, asks))
                pivots.append(
                    ((found.created_at, found.seq), TEMPORAL_BEFORE if near else 0, TEMPORAL_AFTER if near else 1)
                )
        arounds = session.timelines(scope_ids, pivots)  # every seed's neighbours in one statement
        neighbours = loaded.get(list(dict.fromkeys(i for around in arounds for i in around)))
        for (seed, node, asks), around in zip(lenders, arounds, strict=True):
            if seed not in around:
                continue
            pos = around.index(seed)
            strength = share(before_score[seed], top)
            lent = max(strength, REPLY_SCORE * before_score[seed] * _brevity(node)) if asks else strength
            for j, other in enumerate(around):
                if other != seed:
                    reply = asks and j == pos + 1
                    gap = abs(j - pos) - (REPLY_GAP if reply else 0.0)
                    due = (lent if reply else strength) / (1 + gap) ** TEMPORAL_DECAY
                    fusion.put("temporal", other, due * _brevity(neighbours.get(other)))
    if plan.weight("graph") and seeds:
        # Each seed lends its score to its GRAPH_FANOUT strongest links (newest first among equals):
        # a hub that thousands of notes link to would otherwise make every one of them a candidate
        # for the later channels to read (decision 88).
        links: dict[str, list[tuple[float, str, Any, str]]] = {}
        for edge in session.live_edges(seeds[:8]):
            origin, other = (edge.src, edge.dst) if edge.src in seed_score else (edge.dst, edge.src)
            if other not in seed_score:
                links.setdefault(origin, []).append((edge.weight, edge.recorded_at, edge.key, other))
        for origin, linked in links.items():
            linked.sort(key=lambda link: link[2])  # among equals, the same order on every engine
            linked.sort(key=lambda link: link[:2], reverse=True)  # strongest, then newest (stable)
            for weight, _, _, other in linked[:GRAPH_FANOUT]:
                fusion.put("graph", other, share(seed_score[origin], top) * weight)
    if plan.weight("rules"):
        # Every rule of the scope: those not in force are the filters' to hold back and count
        # (`rules_in_force`, the test `context` applies), not this channel's to drop unsaid.
        rules, unread = scope_rules(session, scope_ids)
        fusion.add_ranked("rules", rules)
        fusion.unread += unread
    if plan.weight("slots"):
        fusion.add_ranked("slots", [s.node_id for s in session.slots_of(first_scope.id) if s.node_id])
    if plan.weight("tasks") and boards is not None:
        # Every searched board's open tasks, the overdue first (`open_tasks`); those not offered are
        # counted below unless another channel found them.
        offered = open_tasks(session, scope_ids, boards, today)
        loaded.put(offered.nodes)
        fusion.add_ranked("tasks", [n.id for n in offered.nodes])
        passed = offered.left
        fusion.unread += offered.unread
    if plan.weight("claims"):
        rows, _, _ = session.search(
            SearchQuery(
                initiative_ids=scope_ids,
                types=[NodeType.HYPOTHESIS.value],
                statuses=["open"],
                window=50,
                count_total=False,
            )
        )
        fusion.add_ranked("claims", [r.id for r in rows])
    if plan.weight("decisions"):
        rows, _, _ = session.search(
            SearchQuery(initiative_ids=scope_ids, tags=[DECISION_TAG], window=50, count_total=False)
        )
        fusion.add_ranked("decisions", [r.id for r in rows])
    if plan.weight("failures"):
        fusion.add_ranked("failures", failures(session, scope_ids, loaded.get, bool(failed and failed.claims)))
    if not query:
        # A channel ranks the rows it is given: how many more the scope holds is never counted (at
        # 100k nodes, counting them was most of a recall without a query).
        rows, _, _ = session.search(
            SearchQuery(initiative_ids=scope_ids, layers=["core", "hot"], window=50, count_total=False)
        )
        fusion.add_ranked("layer", [r.id for r in rows])
        rows, _, _ = session.search(SearchQuery(initiative_ids=scope_ids, window=30, count_total=False))
        fusion.add_ranked("recency", [r.id for r in rows])
    fusion.unread += sum(1 for i in dict.fromkeys([*older, *passed]) if i not in fusion.scores)
    return loaded.get(list(fusion.scores))


def _showable(
    ranked: list[str], loaded: _Nodes, shown: Callable[[dict[str, Node]], set[str]] | None, wanted: int
) -> list[str]:
    """The first `wanted` of `ranked` that `shown` keeps, in order (all of `ranked` without `shown`),
    read a `wanted` at a time: the seeds of the expansion channels."""
    if shown is None:
        return ranked
    kept: list[str] = []
    for start in range(0, len(ranked), wanted):
        chunk = ranked[start : start + wanted]
        showable = shown(loaded.get(chunk))
        kept += [i for i in chunk if i in showable]
        if len(kept) >= wanted:
            break
    return kept[:wanted]


def narrow(session: Session, scope_ids: list[int]) -> bool:
    """Whether `scope_idf` is planned: the scope is at most half of the vault's initiatives, or it is
    the whole vault (a vault with one project, the usual case, gets the same ranking as a project
    among many). A scope between the two is left to the full-text index's scores: its word
    statistics are close to the vault's, and counting them costs time in proportion to the scope
    with an initiative filter per match (decision 17.Q6). The initiatives are counted, not read: a
    vault of many projects paid for reading every one at every recall."""
    vault = session.count_initiatives()
    return len(scope_ids) * 2 <= vault or len(set(scope_ids)) >= vault


def _scope_idf(
    session: Session, scope_ids: list[int], stems: list[str], alternatives: Alternatives | None = None
) -> dict[str, float]:
    """Each query word's inverse document frequency in the searched scope (`scope_idf`).

    The full-text index weighs a word by its rarity in the whole vault; inside one initiative a word
    that is everywhere there (the project's own name, a speaker, a module every note touches) says
    little, while a word rare there but common elsewhere says much. One `count_matches` per query
    word (so it works on every backend); the text candidates are then rescored by BM25F over their
    own (memoised) stems, and the proximity channel weighs query-word coverage by the same numbers.
    A word with `alternatives` (a verb and its past forms) is as rare as the memories holding any.
    """
    size = session.scope_size(scope_ids)
    idf: dict[str, float] = {}
    for word in stems:
        asked = (alternatives or {}).get(word, (word,))  # a memory holding any of its forms
        df = session.count_matches(SearchQuery(initiative_ids=scope_ids, tokens=list(asked), stemmed=True))
        idf[word] = math.log(1 + (max(size, df) - df + 0.5) / (df + 0.5))
    return idf


def _brevity(node: Node | None) -> float:
    """The share of a temporal neighbour's due it gets by its length (`TEMPORAL_WORDS`)."""
    if node is None or not TEMPORAL_WORDS:
        return 1.0
    words = len(tokens(node.description)) + len(tokens(node.body))
    return min(1.0, TEMPORAL_WORDS / words) if words else 1.0


def _asks(node: Node, stems: list[str], alternatives: Alternatives | None = None) -> bool:
    """Whether a memory asks what the query asks: its text ends with a question (its last sentence
    ends with a question mark) that holds one of the query's words (or of their `alternatives`,
    `domain.past_forms`). Only the text's own words and punctuation are read."""
    text = (node.body or "").rstrip().rstrip(")]\"'")
    if not text.endswith("?"):
        return False
    question = _SENTENCE_END.split(text[:-1])[-1]
    asked = set(expand(stems, alternatives or {}))
    return not asked.isdisjoint(stem_words(tokens(question)))


_SENTENCE_END = re.compile(r"[.!?\n]+\s")


def _proximity(
    fusion: Fusion,
    pool: dict[str, Node],
    stems: list[str],
    idf: dict[str, float],
    words_memo: DocWords,
    alternatives: Alternatives | None = None,
) -> None:
    """Reward candidates that contain several query words (their share of the query's `idf` weight
    when it is known, else of its words), and query words next to each other — in a long body,
    within its best passage (the windows BM25F scores), so length alone does not gather the words
    (decision 17.Q2). A past form of a verb the question asks in the past (`alternatives`) is read as
    the verb."""
    wanted = set(stems)
    # `fsum`: a set's order follows the process's hash seed, and a plain sum's last bit its order —
    # so the same query scored 0.3 in one process and 0.3000000000000001 in another.
    total = math.fsum(idf.get(w, 0.0) for w in wanted)
    pairs = {(a, b) for a, b in pairwise(stems)}
    repeated = any(a == b for a, b in pairs)  # a word twice in a row (the stems are distinct: never)
    as_asked = {form: word for word, found in (alternatives or {}).items() for form in found}
    for node_id in fusion.ranked()[:RERANK]:
        node = pool.get(node_id)
        if node is None:
            continue
        doc = _near_words(node, words_memo)
        if as_asked:
            doc = tuple(as_asked.get(w, w) for w in doc)
        best = 0.0
        for start, end in passage_bounds(len(doc)):
            part = doc[start:end]
            present = wanted.intersection(part)
            coverage = math.fsum(idf.get(w, 0.0) for w in present) / total if total else len(present) / len(wanted)
            # A pair of two different query words is in no passage holding fewer than two of them:
            # such a passage is not walked word by word.
            walk = len(present) > 1 or (repeated and bool(present))
            adjacent = sum(map(pairs.__contains__, pairwise(part))) if walk else 0
            best = max(best, coverage**2 + min(adjacent, 3) * 0.25)
        fusion.put("proximity", node_id, best)


def _near_words(node: Node, words_memo: DocWords) -> tuple[str, ...]:
    """The stems of a node's description and body without stop words, in order (what `_proximity`
    reads), memoised by revision in `words_memo`."""
    key = (node.id, f"{node.revision}\x1fnear")
    found = words_memo.get(key)
    if found is None:
        text = f"{node.description or ''} {node.body or ''}"
        # Tokenised once, not remembered by the tokeniser: this memo keeps the result (`bm25._field_words`).
        found = words_memo.put(key, tuple(stem_words([t for t in tokens(text, once=True) if t not in STOP_WORDS])))
    return found
