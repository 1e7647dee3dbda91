"""`recall`: task-aware retrieval. Compile a plan, run its channels, fuse them (weighted reciprocal
rank fusion), apply priors and currentness, cut to the token budget."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from kaeru.domain.budget import allocate, cut
from kaeru.domain.currentness import decide
from kaeru.domain.model import RULE_TAG, Currentness, EdgeType, Layer, Node, NodeType, name_at
from kaeru.domain.plans import CHANNELS, Intent, Plan, Risk, Role, compile_plan, normalise_intent
from kaeru.domain.text import STOP_WORDS, content_tokens, indexed_name, manual_tags, stem, tokens
from kaeru.domain.timefmt import date_windows
from kaeru.errors import InvalidArgument
from kaeru.service import cursors, grants, tasks
from kaeru.service.embedding import Embedder, pack, text_digest, text_of
from kaeru.service.outcomes import Continuation, Coverage, Issue, NodeView, Omission
from kaeru.service.runtime import Runtime
from kaeru.service.search import resolve_scopes
from kaeru.service.views import budgeted_views
from kaeru.storage.base import SearchQuery, Session

SEEDS = 12
#: Temporal neighbours: how many strong hits to look around, how far, and how fast the share decays.
TEMPORAL_SEEDS = 8
RERANK = 60
TEMPORAL_BEFORE = 2
TEMPORAL_AFTER = 3
TEMPORAL_DECAY = 1.0
CANDIDATES = 100
#: BM25F over the candidates with the statistics of the searched scope (`scope_idf`): the usual
#: saturation and length normalisation, and the field weights the full-text index ranks with
#: (name, description, body, tags).
BM25_K1 = 1.2
BM25_B = 0.75
FIELD_WEIGHTS = (4.0, 2.0, 1.0, 2.0)
#: A date window holding at most this many memories has all of them scored (`date`); a larger one
#: only lifts the text candidates that fall inside it.
DATE_CANDIDATES = 200
CHARS_PER_TOKEN = 4
WINDOW = 100
LAYER_BONUS = {Layer.CORE: 1.0, Layer.HOT: 0.7, Layer.WARM: 0.3, Layer.COLD: 0.0, Layer.FROZEN: 0.0}


@dataclass
class RecallOutcome:
    hits: list[NodeView]
    total: int
    coverage: Coverage
    plan: Plan
    explain: dict[str, dict[str, float]] | None = None
    continuation: Continuation | None = None
    issues: list[Issue] = field(default_factory=list)
    next_step: dict[str, Any] | None = None


def channel_names() -> tuple[str, ...]:
    return CHANNELS


class _Fusion:
    """Score fusion: each channel adds a weighted, normalised contribution per node.

    Lexical channels contribute their BM25 score divided by the best score of that query (so the
    best hit of a channel counts its full weight); expansion channels (temporal, graph) propagate a
    share of their seed's score, so a neighbour never outranks the hit that found it by much.
    """

    def __init__(self, plan: Plan):
        self.plan = plan
        self.scores: dict[str, dict[str, float]] = {}

    def put(self, channel: str, node_id: str, value: float) -> None:
        weight = self.plan.weight(channel)
        if weight <= 0 or value <= 0:
            return
        parts = self.scores.setdefault(node_id, {})
        parts[channel] = max(parts.get(channel, 0.0), weight * value)

    def add_scored(self, channel: str, rows: list[tuple[str, float]]) -> None:
        if not rows:
            return
        best = rows[0][1] or -1.0
        for node_id, score in rows:
            self.put(channel, node_id, score / best if best else 0.0)

    def add_ranked(self, channel: str, ranked: list[str]) -> None:
        for rank, node_id in enumerate(ranked):
            self.put(channel, node_id, 1.0 / (1.0 + 0.1 * rank))

    def total(self, node_id: str) -> float:
        return sum(self.scores.get(node_id, {}).values())

    def ranked(self) -> list[str]:
        return sorted(self.scores, key=lambda i: -self.total(i))


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


def _feedback_terms(nodes: list[Node], query_stems: set[str], limit: int = 8) -> list[str]:
    """Stems that characterise the first hits (pseudo-relevance feedback), not already in the query."""
    counts: Counter[str] = Counter()
    for node in nodes:
        seen = {stem(t) for t in tokens(f"{node.name} {node.body or ''}") if t not in STOP_WORDS and len(t) > 2}
        counts.update(s for s in seen if s not in query_stems and not s.isdigit())
    return [term for term, n in counts.most_common(limit) if n >= 2]


def recall(rt: Runtime, args: dict[str, Any], disabled: frozenset[str] = frozenset()) -> RecallOutcome:
    """Run one recall; see the `recall` tool description."""
    query = (args.get("query") or "").strip()
    limit = int(args.get("limit", 10))
    if not 1 <= limit <= 50:
        raise InvalidArgument("limit must be between 1 and 50", field="limit")
    try:
        intent = normalise_intent(args.get("task_intent"))
    except ValueError as exc:
        raise InvalidArgument(f"unknown task_intent {args.get('task_intent')!r}", field="task_intent") from exc
    try:
        role = Role(args.get("role", "coder"))
        risk = Risk(args.get("risk", "medium"))
    except ValueError as exc:
        raise InvalidArgument(str(exc), field="role" if "role" in str(exc) else "risk") from exc
    token_budget = int(args.get("token_budget", 4000))
    if token_budget <= 0:
        raise InvalidArgument("token_budget must be greater than zero", field="token_budget")
    if (args.get("explain") or args.get("multi_hop")) and not query:
        raise InvalidArgument("explain and multi_hop need a non-blank query", field="query")
    key = cursors.args_key(args)
    history = intent == Intent.EXPLORE_HISTORY
    with rt.store.read() as session:
        scopes, issues = resolve_scopes(session, args.get("initiatives"))
        scope_ids = [s.id for s in scopes]
        plan = compile_plan(
            semantic_available=rt.embedder is not None,
            intent=intent,
            role=role,
            risk=risk,
            has_query=bool(query),
            include_superseded=bool(args.get("include_superseded", False)),
            multi_hop=bool(args.get("multi_hop", False)),
            token_budget=token_budget,
            time_windows=tuple(date_windows(query)) if query else (),
            narrow_scope=bool(scopes) and _narrow(session, scope_ids),
            disabled=disabled,
        )
        coverage = Coverage(initiatives=[s.name for s in scopes])
        if not scopes:
            return RecallOutcome([], 0, coverage, plan, issues=issues)
        secret = b""  # the vault's cursor key, read only when a cursor is decoded or made
        explain: dict[str, dict[str, float]] | None = None
        offset = 0
        list_id: str | None = None
        if args.get("cursor"):
            secret = session.vault_secret()
            offset, list_id, ordered = cursors.resume(session, secret, str(args["cursor"]), "recall", key)
        else:
            fusion = _Fusion(plan)
            pool = _run_channels(session, scope_ids, scopes[0], query, plan, fusion, rt.embedder)
            ordered, beyond_window = _rank(session, fusion, pool, plan)
            if grants.granted_ids(session) is not None:
                # A graph or temporal neighbour may lie outside a token's grants (decision 15.K2).
                visible = grants.visible_ids(session, ordered)
                ordered = [i for i in ordered if i in visible]
            if beyond_window:
                coverage.omitted.append(Omission("hits", beyond_window, "window"))
                coverage.complete = False
            if history:
                ordered, beyond_history = _history_keys(session, fusion, ordered, scope_ids, bool(query))
                if beyond_history:
                    coverage.omitted.append(Omission("hits", beyond_history, "window"))
                    coverage.complete = False
            if args.get("explain"):
                explain = {
                    i: {k: round(v, 6) for k, v in fusion.scores.get(i, {}).items()}
                    for i in (_key_id(k) for k in ordered[: offset + limit])
                }
        page_ids = ordered[offset : offset + limit]
        chars = max(512, token_budget * CHARS_PER_TOKEN)
        live: list[Node]
        if history:
            live = _history_revisions(session, page_ids)
            views, truncated = _revision_views(session, live, chars, [s.id for s in scopes])
        else:
            nodes = session.nodes_by_ids(page_ids)
            live = [nodes[i] for i in page_ids if i in nodes and not nodes[i].retracted]
            views, truncated = budgeted_views(session, live, chars, {s.id: s.name for s in scopes})
        if grants.granted_ids(session) is not None:  # a page resumed from a cursor, too (decision 15.K2)
            visible = grants.visible_ids(session, [n.id for n in live])
            live = [n for n in live if n.id in visible]
        vanished = len(page_ids) - len(live)
        if vanished:
            # Forgotten since the first page was ranked.
            coverage.omitted.append(Omission("hits", vanished, "retracted"))
        if len(views) < len(live):
            coverage.omitted.append(Omission("hits", len(live) - len(views), "budget"))
            coverage.complete = False
        if truncated:
            issues.append(Issue("budget_truncated", f"{truncated} texts cut to fit token_budget={token_budget}"))
        beyond = len(ordered) - (offset + len(page_ids))
        if beyond > 0:
            # Past this page's `limit`: the continuation's next pages hold them.
            coverage.omitted.append(Omission("hits", beyond, "limit"))
        next_offset = offset + len(page_ids) - (len(live) - len(views))
        if next_offset < len(ordered) and not secret:
            secret = session.vault_secret()
    # After the snapshot closes: storing a long list is a write (see search).
    continuation = None
    if next_offset < len(ordered):
        coverage.complete = False
        continuation = cursors.continuation(rt, secret, "recall", key, ordered, next_offset, list_id, args)
    coverage.rules_complete = coverage.complete
    if explain is not None:
        explain = {v.node.id: explain.get(v.node.id, {}) for v in views}
    next_step = None
    if history:
        # The revision as it was recorded, read through a searched initiative by its name today (the
        # view names it as it was then). A revision that records a forget has no call: a read as of
        # it finds nothing (`trail kind=history` on its node lists it).
        today = {s.id: s.name for s in scopes}
        calls = [
            {
                "initiative": next((today[i] for i in v.node.initiatives if i in today), scopes[0].name),
                "node": {"id": v.node.id},
                "at": v.node.recorded_at,
            }
            for v in views
            if not v.node.retracted
        ]
        if calls:
            next_step = {
                "tool": "read",
                "why": "recall shows excerpts; read at a revision's recorded_at returns it in full",
                "calls": calls,
            }
    elif views:
        next_step = {
            "tool": "read",
            "why": "recall shows excerpts; read returns a node in full",
            "calls": [
                {"initiative": v.initiatives[0] if v.initiatives else scopes[0].name, "node": {"id": v.node.id}}
                for v in views
            ],
        }
    return RecallOutcome(views, len(ordered), coverage, plan, explain, continuation, issues, next_step)


def _semantic(session: Session, scope_ids: list[int], query: str, fusion: _Fusion, embedder: Embedder) -> None:
    """Cosine similarity between the query and every stored vector in scope (brute force: vaults are small)."""
    import numpy as np

    stored = session.vectors(scope_ids, embedder.model_id)
    if not stored:
        return
    matrix = np.frombuffer(b"".join(blob for _, blob in stored), dtype="<f4").reshape(len(stored), -1)
    query_vector = np.asarray(embedder.embed([query])[0], dtype="<f4")
    sims = matrix @ query_vector
    top = np.argsort(-sims, kind="stable")[:CANDIDATES]
    rows = [(stored[i][0], float(sims[i])) for i in top if sims[i] > 0]
    if not rows:
        return
    # Rescaled between the last and the best candidate: cosine similarities of a small sentence model
    # crowd into a narrow band (the 100th match is often 0.6× the best), so dividing by the best
    # alone gave a hundred loosely related memories most of the channel's weight.
    best, floor = rows[0][1], rows[-1][1]
    for node_id, sim in rows:
        fusion.put("semantic", node_id, (sim - floor) / (best - floor) if best > floor else 1.0)


def embed_nodes(rt: Runtime, node_ids: list[str]) -> None:
    """Embed freshly written nodes (write-time indexing when the semantic channel is on)."""
    embedder = rt.embedder
    if embedder is None or not node_ids:
        return
    with rt.store.read() as session:
        nodes = [n for n in session.nodes_by_ids(node_ids).values() if not n.retracted]
    todo = [(n.id, text_of(n.name if indexed_name(n) else "", n.description, n.body)) for n in nodes]
    todo = [(i, t) for i, t in todo if t.strip()]
    if not todo:
        return
    vectors = embedder.embed([t for _, t in todo])
    with rt.store.write() as session:
        for (node_id, text), vector in zip(todo, vectors, strict=True):
            session.put_vector(node_id, embedder.model_id, text_digest(text), pack(vector))


def reindex(rt: Runtime, progress: Any = None, batch: int = 256) -> int:
    """Embed every live node whose vector is missing or computed from older text."""
    embedder = rt.embedder
    if embedder is None:
        raise InvalidArgument("semantic recall is off: install kaeru-memory[semantic] and set KAERU_SEMANTIC=1")
    with rt.store.read() as session:
        known = session.vector_digests(embedder.model_id)
    written = 0
    after = 0
    while True:
        with rt.store.read() as session:
            nodes = session.live_node_batch(after, batch)
        if not nodes:
            return written
        after = nodes[-1].seq
        todo = []
        for node in nodes:
            text = text_of(node.name if indexed_name(node) else "", node.description, node.body)
            digest = text_digest(text)
            if text.strip() and known.get(node.id) != digest:
                todo.append((node.id, digest, text))
        if todo:
            vectors = embedder.embed([t for _, _, t in todo])
            with rt.store.write() as session:
                for (node_id, digest, _), vector in zip(todo, vectors, strict=True):
                    session.put_vector(node_id, embedder.model_id, digest, pack(vector))
            written += len(todo)
        if progress is not None:
            progress(written, after)


def _share(seed: float, top: float) -> float:
    """What a seed passes on to its neighbours: its score relative to the best seed, but never more
    than its own score, so a neighbour of a weak hit cannot outrank that hit."""
    return min(seed / top, seed)


class _Nodes:
    """The nodes one recall has loaded, so each is read (and decoded) once."""

    def __init__(self, session: Session):
        self.session = session
        self.known: dict[str, Node] = {}

    def get(self, ids: list[str]) -> dict[str, Node]:
        missing = [i for i in ids if i not in self.known]
        if missing:
            self.known.update(self.session.nodes_by_ids(missing))
        return {i: self.known[i] for i in ids if i in self.known}


def _run_channels(
    session: Session,
    scope_ids: list[int],
    first_scope: Any,
    query: str,
    plan: Plan,
    fusion: _Fusion,
    embedder: Embedder | None = None,
) -> dict[str, Node]:
    words = content_tokens(query)[:64] if query else []
    stems = list(dict.fromkeys(stem(w) for w in words))
    loaded = _Nodes(session)
    dated: list[str] = []
    idf: dict[str, float] = {}
    if plan.weight("date"):
        for since, until in plan.time_windows:
            ids = session.timeline(scope_ids, since=since, until=until, pivot=None, before=0, after=DATE_CANDIDATES + 1)
            if len(ids) <= DATE_CANDIDATES:
                dated.extend(ids)
    if plan.weight("lexical"):
        hits = _lexical(session, scope_ids, stems, True, CANDIDATES)
        if plan.weight("scope_idf") and stems:
            known = {i for i, _ in hits}
            extra = [i for i in dict.fromkeys(dated) if i not in known]
            idf = _scope_idf(session, scope_ids, stems)
            hits = _bm25f(stems, idf, loaded.get([i for i, _ in hits] + extra))
        fusion.add_scored("lexical", hits)
    if plan.weight("date"):
        _date(fusion, loaded.get(list(fusion.scores)), plan.time_windows)
    if plan.weight("semantic") and embedder is not None and query:
        _semantic(session, scope_ids, query, fusion, embedder)
    if plan.weight("literal"):
        fusion.add_scored("literal", _lexical(session, scope_ids, words, False, CANDIDATES // 2))
    if plan.weight("name") and query:
        for node in session.live_nodes_named(query, scope_ids):
            fusion.put("name", node.id, 1.0)
    if plan.weight("proximity") and len(stems) > 1:
        _proximity(fusion, loaded.get(fusion.ranked()[:RERANK]), stems, idf)
    seeds = fusion.ranked()[:SEEDS]
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
        for seed in seeds[:TEMPORAL_SEEDS]:
            found = seed_nodes.get(seed)
            if found is None:
                continue
            node = found
            around = session.timeline(
                scope_ids,
                since=None,
                until=None,
                pivot=(node.created_at, node.seq),
                before=TEMPORAL_BEFORE,
                after=TEMPORAL_AFTER,
            )
            if seed not in around:
                continue
            pos = around.index(seed)
            for j, other in enumerate(around):
                if other != seed:
                    fusion.put("temporal", other, _share(seed_score[seed], top) / (1 + abs(j - pos)) ** TEMPORAL_DECAY)
    if plan.weight("graph") and seeds:
        for edge in session.live_edges(seeds[:8]):
            origin, other = (edge.src, edge.dst) if edge.src in seed_score else (edge.dst, edge.src)
            if other not in seed_score:
                fusion.put("graph", other, _share(seed_score[origin], top) * edge.weight)
    if plan.weight("rules"):
        rows, _, _ = session.search(
            SearchQuery(initiative_ids=scope_ids, tags=[RULE_TAG], types=[NodeType.CONCEPT.value], window=50)
        )
        rules = session.nodes_by_ids([r.id for r in rows])
        active = [
            r.id for r in rows if r.id in rules and rules[r.id].properties.get("constraint_state", "active") == "active"
        ]
        fusion.add_ranked("rules", active)
    if plan.weight("slots"):
        fusion.add_ranked("slots", [s.node_id for s in session.slots_of(first_scope.id) if s.node_id])
    if plan.weight("tasks"):
        cols = tasks.columns(session, first_scope)
        open_keys = [c["key"] for c in cols if c["key"] != tasks.terminal_key(cols)]
        rows, _, _ = session.search(
            SearchQuery(initiative_ids=scope_ids, types=[NodeType.TASK.value], statuses=open_keys, window=50)
        )
        fusion.add_ranked("tasks", [r.id for r in rows])
    if not query:
        rows, _, _ = session.search(SearchQuery(initiative_ids=scope_ids, layers=["core", "hot"], window=50))
        fusion.add_ranked("layer", [r.id for r in rows])
        rows, _, _ = session.search(SearchQuery(initiative_ids=scope_ids, window=30))
        fusion.add_ranked("recency", [r.id for r in rows])
    return loaded.get(list(fusion.scores))


def _narrow(session: Session, scope_ids: list[int]) -> bool:
    """Whether the scope is at most half of the vault's initiatives (then `scope_idf` is planned). A
    wider scope's word statistics are close to the vault's, which the full-text index already ranks
    with, and counting them would cost time in proportion to the scope (~20 ms at 12k nodes), so its
    text candidates keep the index's scores."""
    return len(scope_ids) * 2 <= len(session.all_initiatives())


def _scope_idf(session: Session, scope_ids: list[int], stems: list[str]) -> dict[str, float]:
    """Each query word's inverse document frequency in the searched scope (`scope_idf`).

    The full-text index weighs a word by its rarity in the whole vault; inside one initiative a word
    that is everywhere there (the project's own name, a speaker, a module every note touches) says
    little, while a word rare there but common elsewhere says much. One `count_matches` per query
    word (so it works on every backend); the text candidates are then rescored by BM25F over their
    own (memoised) stems, and the proximity channel weighs query-word coverage by the same numbers.
    """
    size = sum(sum(tiers.values()) for tiers in session.tier_counts(scope_ids).values())
    idf: dict[str, float] = {}
    for word in stems:
        df = session.count_matches(SearchQuery(initiative_ids=scope_ids, tokens=[word], stemmed=True))
        idf[word] = math.log(1 + (max(size, df) - df + 0.5) / (df + 0.5))
    return idf


def _bm25f(stems: list[str], idf: dict[str, float], nodes: dict[str, Node]) -> list[tuple[str, float]]:
    """BM25F of `nodes` (in their given order for ties) for the query words, with weights `idf`."""
    docs = [(i, *_doc_stems(n)) for i, n in nodes.items()]
    if not docs:
        return []
    average = sum(length for _, _, length in docs) / len(docs) or 1.0
    rows = []
    for node_id, tf, length in docs:
        norm = BM25_K1 * (1 - BM25_B + BM25_B * length / average)
        score = sum(idf[w] * tf[w] * (BM25_K1 + 1) / (tf[w] + norm) for w in stems if w in tf)
        rows.append((node_id, score))
    rows.sort(key=lambda r: -r[1])
    return rows


_STEMS: dict[tuple[str, str], tuple[dict[str, float], float]] = {}
_STEMS_MAX = 50_000


def _doc_stems(node: Node) -> tuple[dict[str, float], float]:
    """Field-weighted stem frequencies of one node revision, and its weighted length (memoised)."""
    key = (node.id, node.revision)
    found = _STEMS.get(key)
    if found is None:
        if len(_STEMS) >= _STEMS_MAX:
            _STEMS.clear()
        fields = (indexed_name(node), node.description or "", node.body or "", manual_tags(node.tags))
        found = _STEMS[key] = _field_stems(fields)
    return found


def _field_stems(fields: tuple[str, str, str, str]) -> tuple[dict[str, float], float]:
    tf: dict[str, float] = {}
    length = 0.0
    for weight, text in zip(FIELD_WEIGHTS, fields, strict=True):
        found = [stem(t) for t in tokens(text)]
        length += weight * len(found)
        for word in found:
            tf[word] = tf.get(word, 0.0) + weight
    return tf, length


def _date(fusion: _Fusion, pool: dict[str, Node], windows: tuple[tuple[str, str], ...]) -> None:
    """Lift candidates recorded inside a window the query names ("on 2024-03-05", "in March 2024")."""
    for node_id, node in pool.items():
        if any(since <= node.created_at <= until for since, until in windows):
            fusion.put("date", node_id, 1.0)


def _proximity(fusion: _Fusion, pool: dict[str, Node], stems: list[str], idf: dict[str, float]) -> None:
    """Reward candidates that contain several query words (their share of the query's `idf` weight
    when it is known, else of its words), and query words next to each other."""
    wanted = set(stems)
    total = sum(idf.get(w, 0.0) for w in wanted)
    pairs = {(a, b) for a, b in pairwise(stems)}
    for node_id in fusion.ranked()[:RERANK]:
        node = pool.get(node_id)
        if node is None:
            continue
        doc = [stem(t) for t in tokens(f"{node.description or ''} {node.body or ''}") if t not in STOP_WORDS]
        present = wanted & set(doc)
        coverage = sum(idf.get(w, 0.0) for w in present) / total if total else len(present) / len(wanted)
        adjacent = sum(1 for pair in pairwise(doc) if pair in pairs)
        fusion.put("proximity", node_id, coverage**2 + min(adjacent, 3) * 0.25)


def _rank(session: Session, fusion: _Fusion, pool: dict[str, Node], plan: Plan) -> tuple[list[str], int]:
    """Final order: fused score × priors, with recency/layer nudges and currentness applied; the
    first `WINDOW` ids, and how many ranked candidates fell beyond them."""
    ids = [i for i in fusion.scores if i in pool and not pool[i].retracted and pool[i].node_type != NodeType.BOARD]
    verdicts = session.verdicts_against(ids)
    by_age = sorted(ids, key=lambda i: -pool[i].seq)
    recency_rank = {node_id: r for r, node_id in enumerate(by_age)}
    final: dict[str, float] = {}
    for node_id in ids:
        node = pool[node_id]
        score = fusion.total(node_id)
        if plan.has_query:
            recency = plan.weight("recency") * 0.1 / (1 + 0.05 * recency_rank[node_id])
            layer = plan.weight("layer") * 0.1 * LAYER_BONUS.get(node.layer, 0.0)
            if recency:
                fusion.scores[node_id]["recency"] = recency
            if layer:
                fusion.scores[node_id]["layer"] = layer
            score += recency + layer
        prior = plan.type_priors.get(node.node_type.value, 1.0)
        for tag in node.tags:
            prior *= plan.tag_priors.get(tag, 1.0)
        if prior != 1.0:
            fusion.scores[node_id]["priors"] = round(math.log(prior), 6)
        score *= prior
        currentness, _ = decide(node.node_type, node.status, node.retracted, verdicts.get(node_id, []))
        if currentness.value != "current":
            if plan.noncurrent_factor == 0.0:
                continue
            score *= plan.noncurrent_factor
            fusion.scores[node_id]["currentness"] = (
                round(math.log(plan.noncurrent_factor), 6) if plan.noncurrent_factor != 1.0 else 0.0
            )
        final[node_id] = score
    ranked = sorted(final, key=lambda i: (-final[i], -pool[i].seq))
    return ranked[:WINDOW], len(ranked) - len(ranked[:WINDOW])


#: explore_history: how many matched nodes have their history listed, how many nodes at most once
#: their supersession chains are added, and how many revisions the listing holds at most.
HISTORY_NODES = 20
HISTORY_CHAIN = 64
HISTORY_REVISIONS = 1000
#: The channels that match the query itself (not neighbours of a match, not priors).
DIRECT_CHANNELS = frozenset({"lexical", "literal", "name", "semantic", "proximity", "feedback", "date"})


def _key_id(key: str) -> str:
    """The node id of a listing key (`id` or, for explore_history, `id/rev_no`)."""
    return key.split("/", 1)[0]


def _history_keys(
    session: Session, fusion: _Fusion, ranked: list[str], scope_ids: list[int], has_query: bool
) -> tuple[list[str], int]:
    """explore_history's listing: every revision (`id/rev_no`) of the matched nodes and of their
    supersession chains, oldest first; and how many revisions fell beyond `HISTORY_REVISIONS`.

    Matched: with a query, the best `HISTORY_NODES` ranked nodes that a direct channel found (the
    query's words, name or meaning — not a temporal or graph neighbour); without one, the plan's
    best. Then, breadth first, every node a `supersedes` edge (live or since removed) links to them,
    in either direction, while it belongs to a searched initiative — forgotten predecessors included.
    """
    if has_query:
        ranked = [i for i in ranked if DIRECT_CHANNELS & set(fusion.scores.get(i, {}))]
    members = list(ranked[:HISTORY_NODES])
    known = set(members)
    frontier = list(members)
    scope = set(scope_ids)
    while frontier and len(members) < HISTORY_CHAIN:
        linked = [
            other
            for edge in session.edge_log(frontier)
            if edge.edge_type == EdgeType.SUPERSEDES
            for other in (edge.src, edge.dst)
            if other not in known
        ]
        found = session.nodes_by_ids(list(dict.fromkeys(linked)))
        frontier = []
        for node_id in dict.fromkeys(linked):
            node = found.get(node_id)
            known.add(node_id)
            if node is not None and scope & set(node.initiatives) and len(members) < HISTORY_CHAIN:
                members.append(node_id)
                frontier.append(node_id)
    revisions = [entry.node for node_id in members for entry in session.revision_log(node_id)]
    revisions.sort(key=lambda n: (n.recorded_at, n.id, n.rev_no))
    keys = [f"{n.id}/{n.rev_no}" for n in revisions]
    return keys[:HISTORY_REVISIONS], max(0, len(keys) - HISTORY_REVISIONS)


def _history_revisions(session: Session, keys: list[str]) -> list[Node]:
    """The stored revisions a page of explore_history keys names, in the page's order."""
    wanted = [(k.split("/", 1)[0], int(k.split("/", 1)[1])) for k in keys]
    logs = {
        node_id: {e.node.rev_no: e.node for e in session.revision_log(node_id)}
        for node_id in dict.fromkeys(i for i, _ in wanted)
    }
    return [logs[i][r] for i, r in wanted if r in logs[i]]


def _revision_views(
    session: Session, revisions: list[Node], budget: int, scope_ids: list[int]
) -> tuple[list[NodeView], int]:
    """Views of the leading `revisions` that fit `budget` characters, each marked: its own revision
    and recorded_at, and its currentness — that of its node for the node's latest revision, and
    `superseded` (by its node's next revision) for an earlier one that would otherwise read current.

    Each revision names its initiatives (the searched ones only) as they were named at its own
    `recorded_at`, as `read at=<recorded_at>` does; `metadata_is_current` says whether those names
    are known exactly (decision 13.B2).
    """
    granted = allocate([len(n.description or "") + len(n.body or "") for n in revisions], budget) or []
    shown = revisions[: len(granted)]
    ids = list(dict.fromkeys(n.id for n in shown))
    latest = session.nodes_by_ids(ids)
    verdicts = session.verdicts_against(ids)
    history = session.name_history(scope_ids) if shown else {}
    current_names = session.initiative_names(scope_ids) if shown else {}
    hidden: set[str] = set()
    if grants.granted_ids(session) is not None:  # successors outside a token's grants (decision 15.K2)
        named = {src for found in verdicts.values() for src, _ in found}
        hidden = named - grants.visible_ids(session, named)
    views: list[NodeView] = []
    truncated = 0
    for revision, grant in zip(shown, granted, strict=True):
        description, body = revision.description or "", revision.body or ""
        room = grant if not body else max(grant // 2, grant - len(body))
        described = cut(description, 0, min(len(description), room))
        cut_body = cut(body, 0, max(grant - len(described.text), 0))
        truncated += described.truncated or cut_body.truncated
        currentness, successors = decide(
            revision.node_type, revision.status, revision.retracted, verdicts.get(revision.id, [])
        )
        successors = [i for i in successors if i not in hidden]
        newest = latest.get(revision.id)
        if newest is not None and revision.rev_no < newest.rev_no and currentness == Currentness.CURRENT:
            currentness = Currentness.SUPERSEDED
        names: list[str] = []
        exact = True
        for initiative_id in revision.initiatives:
            if initiative_id not in history and initiative_id not in current_names:
                continue  # not a searched initiative
            found = name_at(history.get(initiative_id, []), revision.recorded_at)
            if found is None:
                # No recorded name at all: the nearest known one is today's (decision 13.B2).
                exact = False
                if initiative_id in current_names:
                    names.append(current_names[initiative_id])
                continue
            names.append(found[0])
            exact = exact and found[1]
        views.append(
            NodeView(
                node=revision.evolve(description=described.text) if described.truncated else revision,
                initiatives=sorted(names),
                currentness=currentness,
                successors=successors,
                body=cut_body.text if revision.body is not None else None,
                body_range=cut_body if cut_body.truncated else None,
                description_range=described if described.truncated else None,
                metadata_is_current=exact,
            )
        )
    return views, truncated


__all__ = ["Intent", "RecallOutcome", "channel_names", "recall"]
