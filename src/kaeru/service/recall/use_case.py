"""`recall`: task-aware retrieval. Compile a plan, run its channels, fuse them (weighted reciprocal
rank fusion), apply priors and currentness, cut to the token budget."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kaeru.domain.currentness import decide
from kaeru.domain.model import Currentness, Node, NodeType
from kaeru.domain.open_work import asked_alone, decisions_phrase, open_work_phrase, phrase_words, rules_phrase
from kaeru.domain.plans import CHANNELS, Intent, Plan, Risk, Role, compile_plan, normalise_intent
from kaeru.domain.text import query_tokens
from kaeru.domain.timefmt import date_windows
from kaeru.errors import InvalidArgument, KaeruError
from kaeru.service import cursors, grants, worklist
from kaeru.service.outcomes import Continuation, Coverage, Issue, NodeView, Omission
from kaeru.service.recall import failures, raw
from kaeru.service.recall.channels import QUERY_STEMS, narrow, run_channels
from kaeru.service.recall.filters import Filters, closed_scoped_tasks, narrowed, replaced_rules
from kaeru.service.recall.fusion import Fusion, rank
from kaeru.service.recall.history import history_keys, history_revisions, key_id, revision_views
from kaeru.service.recall.open_tasks import overdue_ids
from kaeru.service.requests import RecallRequest
from kaeru.service.requests.reads import MAX_QUERY_CHARS, RECALL_MIN_TOKENS
from kaeru.service.runtime import Runtime
from kaeru.service.search import NO_WORDS, resolve_scopes
from kaeru.service.views import budgeted_views
from kaeru.storage.base import Initiative, Session

CHARS_PER_TOKEN = 4


def _cut_query(query: str) -> str:
    """`query` cut to `MAX_QUERY_CHARS`, before the last whitespace (any script's) that ends a word
    within it, or at the bound when the last word began before the bound's middle."""
    if len(query) <= MAX_QUERY_CHARS:
        return query
    for end in range(MAX_QUERY_CHARS, MAX_QUERY_CHARS // 2, -1):  # a gap just past the bound ends a word in it
        if query[end].isspace():
            return query[:end].rstrip()
    return query[:MAX_QUERY_CHARS]


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
    #: The raw fallback's matches in the stored sources (None: it did not run), or why it failed.
    raw_hits: list[raw.RawHit] | None = None
    raw_hits_error: str | None = None
    #: The page's tasks overdue today, in page order (`open_tasks.overdue_ids`).
    overdue: list[str] = field(default_factory=list)


def channel_names() -> tuple[str, ...]:
    return CHANNELS


#: How many of the stems a long question is not ranked by its coverage names.
NAMED_LEFT_OUT = 12


def _left_out(stems: list[str]) -> str:
    """The reason of the `query` omission: the rule, and the stems left out (the first few)."""
    named = ", ".join(stems[:NAMED_LEFT_OUT]) + (", …" if len(stems) > NAMED_LEFT_OUT else "")
    return f"a long question is ranked by its {QUERY_STEMS} rarest words; not by: {named}"


def _kept(
    session: Session, pool: dict[str, Node], filters: Filters, scopes: list[Initiative]
) -> tuple[dict[str, Node], dict[str, list[str]]]:
    """The candidates `filters` keeps, and the live ones left out as stale or suppressed (a rule of
    a task no longer worked on, or replaced by a newer node, is not in force)."""
    closed = set() if filters.include_suppressed else closed_scoped_tasks(session, pool, scopes)
    gone = replaced_rules(session, pool, filters)
    kept: dict[str, Node] = {}
    hidden: dict[str, list[str]] = {}
    for node_id, node in pool.items():
        why = filters.left_out(node, closed, gone)
        if why is None:
            kept[node_id] = node
        elif why != "filtered" and not node.retracted and node.node_type != NodeType.BOARD:
            hidden.setdefault(why, []).append(node_id)
    return kept, hidden


def _showable(session: Session, nodes: dict[str, Node], filters: Filters, scopes: list[Initiative]) -> set[str]:
    """Which of `nodes` the answer can show: those `_kept` keeps, live, no board (as `rank` ranks)."""
    kept, _ = _kept(session, nodes, filters, scopes)
    return {i for i, n in kept.items() if not n.retracted and n.node_type != NodeType.BOARD}


def _current(session: Session, node: Node) -> bool:
    """Whether `node` is current: an archived match superseded or refuted is no answer to ask back for."""
    verdicts = session.verdicts_against([node.id]).get(node.id, [])
    return decide(node.node_type, node.status, node.retracted, verdicts)[0] == Currentness.CURRENT


#: What a recall says when KAERU_SEMANTIC=1 is set and the extra is not installed.
NO_EXTRA = (
    "KAERU_SEMANTIC=1 is set, but the [semantic] extra is not installed; this recall used the lexical channels only"
)


def recall(rt: Runtime, request: RecallRequest, disabled: frozenset[str] = frozenset()) -> RecallOutcome:
    """Run one recall; see the `recall` tool description."""
    asked = (request.query or "").strip()
    query = _cut_query(asked)
    limit = request.limit
    try:
        intent = normalise_intent(request.task_intent)
    except ValueError as exc:
        raise InvalidArgument(f"unknown task_intent {request.task_intent!r}", field="task_intent") from exc
    role, risk = Role(request.role), Risk(request.risk)
    token_budget = request.token_budget
    if request.explain and request.multi_hop:
        raise InvalidArgument(
            "explain cannot be combined with multi_hop: true (explain scores the first pass only); "
            "send explain or multi_hop, not both",
            field="explain",
        )
    if (request.explain or request.multi_hop) and not query:
        # The schema wants a non-blank query (`\S`); str.strip() also drops the separators \x1c-\x1f.
        raise InvalidArgument("explain and multi_hop need a non-blank query", field="query")
    args = request.wire()
    if query != asked:  # the continuation repeats the query read, not the whole of what was sent
        args = {**args, "query": query}
    key = cursors.args_key(args)
    history = intent == Intent.EXPLORE_HISTORY
    filters = Filters.of(request, rt.today(), history=history)
    with rt.store.read() as session:
        scopes, issues = resolve_scopes(session, request.initiatives)
        if query != asked:
            issues.append(Issue("invalid_argument", f"query cut to its first {len(query)} characters", "query"))
        work, decided, ruled = (
            (open_work_phrase(query), decisions_phrase(query), rules_phrase(query)) if query else ("", "", "")
        )
        failed = failures.asked(query)  # a question about what went wrong (decision 471)
        when = (rt.now(), rt.settings.zone()) if query else None  # the user's today, for the days it names
        scope_ids = [s.id for s in scopes]
        plan = compile_plan(
            semantic_available=rt.embedder is not None,
            intent=intent,
            role=role,
            risk=risk,
            has_query=bool(query),
            include_superseded=request.include_superseded,
            multi_hop=request.multi_hop,
            token_budget=token_budget,
            time_windows=tuple(date_windows(query, *when)) if when else (),
            narrow_scope=bool(scopes) and narrow(session, scope_ids),
            open_work=work,
            decisions=decided,
            rules=ruled,
            about_words=not all(asked_alone(query, phrase) for phrase in (work, decided, ruled) if phrase),
            failures=failures.channel(failed, query, intent),
            disabled=disabled,
        )
        coverage = Coverage(initiatives=[s.name for s in scopes])
        searched = query  # what the raw fallback searches the stored sources for
        if query and rt.settings.semantic and rt.embedder is None:
            # KAERU_SEMANTIC=1 without the [semantic] extra: said, not silent.
            issues.append(Issue("semantic_unavailable", NO_EXTRA))
        if query and rt.embedder is None and not query_tokens(query):
            # Only symbols (emoji, punctuation): no channel can match them; said, as `search` does.
            issues.append(Issue("invalid_argument", NO_WORDS, "query"))
        if not scopes:
            return RecallOutcome([], 0, coverage, plan, issues=issues)
        secret = b""  # the vault's cursor key, read only when a cursor is decoded or made
        explain: dict[str, dict[str, float]] | None = None
        offset = 0
        list_id: str | None = None
        resumed: list[str] | None = None
        boards: worklist.Boards | None = None
        archived_best = False  # the query's best match is archived memory, left out (`include_stale`)
        if request.cursor:
            secret = session.vault_secret()
            offset, list_id, resumed = cursors.resume(session, rt.cursor_lists, secret, request.cursor, "recall", key)
            if resumed is None:  # not held here: ranked again, continued at the token's position
                issues.append(cursors.rerun_issue("recall"))
        if resumed is not None:
            ordered = resumed
        else:
            fusion = Fusion(plan, query)
            # Read before the caller's filters narrow the session: under `types: ["task"]` no board is found.
            boards = worklist.boards(session, scopes) if plan.weight("tasks") else None
            pool = run_channels(
                narrowed(session, filters),
                scope_ids,
                scopes[0],
                query,
                plan,
                fusion,
                rt.doc_stems,
                rt.doc_words,
                rt.embedder,
                rt.store,
                rt.embed_worker,
                common_stems=rt.common_stems,
                issues=issues,
                failed=failed,
                skipped=phrase_words(query, work) if work and asked_alone(query, work) else frozenset(),
                when=when,
                today=filters.today,
                boards=boards,
                shown=lambda nodes: _showable(session, nodes, filters, scopes),
            )
            if plan.time_windows:  # without the words that say when (`dated.search_words`)
                searched = " ".join(fusion.words)
            if fusion.left_out:  # said, not done silently (decision 168)
                coverage.omitted.append(Omission("query", len(fusion.left_out), _left_out(fusion.left_out)))
            # The query's best match before the filters: if they leave it out as archived, it is said.
            best = max(pool.values(), key=lambda n: (fusion.total(n.id), n.seq), default=None) if query else None
            pool, hidden = _kept(session, pool, filters, scopes)
            ordered, beyond_window = rank(session, fusion, pool, plan)
            if grants.granted_ids(session) is not None:
                # A graph or temporal neighbour may lie outside a token's grants (decision 15.K2).
                visible = grants.visible_ids(session, ordered)
                ordered = [i for i in ordered if i in visible]
            if not ordered and filters.tags:
                from kaeru.service.tag_spelling import unheld_tags  # imported when first needed (16.S1)

                issues.extend(unheld_tags(session, scope_ids, filters.tags, "tags"))
            # Left out unless asked (include_stale, include_suppressed): said, never silent.
            for why, left in sorted(hidden.items()):
                if grants.granted_ids(session) is not None:
                    seen = grants.visible_ids(session, left)
                    left = [i for i in left if i in seen]
                if left:
                    coverage.omitted.append(Omission("hits", len(left), why))
                if why == "stale" and best is not None and best.id in left and _current(session, best):
                    archived_best = True
            beyond_window += fusion.unread  # a crowded day's older memories: not read, said (decision 471)
            if beyond_window:
                coverage.omitted.append(Omission("hits", beyond_window, "window"))
                coverage.complete = False
            if history:
                ordered, beyond_history = history_keys(session, fusion, ordered, scope_ids, bool(query))
                if beyond_history:
                    coverage.omitted.append(Omission("hits", beyond_history, "window"))
                    coverage.complete = False
            if request.explain:
                explain = {
                    i: {k: round(v, 6) for k, v in fusion.scores.get(i, {}).items()}
                    for i in (key_id(k) for k in ordered[: offset + limit])
                }
        page_ids = ordered[offset : offset + limit]
        chars = max(RECALL_MIN_TOKENS, token_budget) * CHARS_PER_TOKEN
        # Fewer curated hits than asked: the raw fallback will look in the stored sources, and its
        # passages need room in the same budget (decision 17.C5).
        fallback = bool(query) and not request.cursor and not history and risk != Risk.HIGH and len(ordered) < limit
        reserve = min(chars // 4, (limit - len(ordered)) * raw.EXCERPT) if fallback else 0
        live: list[Node]
        if history:
            live = history_revisions(session, page_ids)
        else:
            nodes = session.nodes_by_ids(page_ids)
            live = [nodes[i] for i in page_ids if i in nodes and not nodes[i].retracted]
        if grants.granted_ids(session) is not None:
            # A page resumed from a cursor too (decision 15.K2), before its views are made (364).
            visible = grants.visible_ids(session, [n.id for n in live])
            live = [n for n in live if n.id in visible]
        if history:
            views, truncated = revision_views(session, live, chars, [s.id for s in scopes])
        else:
            views, truncated = budgeted_views(session, live, chars - reserve, {s.id: s.name for s in scopes})
        vanished = len(page_ids) - len(live)
        if vanished:
            # Forgotten since the first page was ranked (or moved out of a limited token's grants: said alike).
            coverage.omitted.append(Omission("hits", vanished, grants.gone_reason()))
        if len(views) < len(live):
            coverage.omitted.append(Omission("hits", len(live) - len(views), "budget"))
            coverage.complete = False
        if truncated:
            # A budget below the floor was raised to it: said, or "cut to fit token_budget=10" read as
            # if the answer had fitted in 10 tokens.
            raised = f" (the minimum; {token_budget} was raised to it)" if token_budget < RECALL_MIN_TOKENS else ""
            fitted = max(token_budget, RECALL_MIN_TOKENS)
            issues.append(Issue("budget_truncated", f"{truncated} texts cut to fit token_budget={fitted}{raised}"))
        beyond = len(ordered) - (offset + len(page_ids))
        if beyond > 0:
            # Past this page's `limit`: the continuation's next pages hold them.
            coverage.omitted.append(Omission("hits", beyond, "limit"))
        next_offset = offset + len(page_ids) - (len(live) - len(views))
        if next_offset < len(ordered) and not secret:
            secret = session.vault_secret()
        shown_chars = sum(len(v.body or "") + len(v.node.description or "") for v in views)
        # A source shown whole is not shown again; a cut one may hold its matching passage further on.
        whole = {v.node.id for v in views if v.body_range is None}
        # A past revision is not today's task: only the current page says what is overdue.
        overdue = [] if history else overdue_ids(session, [v.node for v in views], scopes, filters.today, boards)
    raw_hits: list[raw.RawHit] | None = None
    raw_error: str | None = None
    wanted = min(limit - len(ordered), (chars - shown_chars) // raw.MIN_EXCERPT)
    if fallback and wanted > 0:
        # In its own snapshot, so that a failure there never costs the curated hits already made.
        try:
            with rt.store.read() as session:
                raw_hits = raw.search_sources(session, scopes, searched, whole, wanted, chars - shown_chars)
        except KaeruError as exc:
            raw_error = f"{exc.code}: {exc.message}"
        except Exception as exc:  # a damaged source row must not fail the recall
            raw_error = f"internal: the sources could not be searched ({type(exc).__name__})"
    # After the snapshot closes (see search).
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
    elif archived_best:
        # Archived is not obsolete (a fact stated once goes cold, decision 332): "hits 3 (stale)" under
        # weaker matches did not say that the answer was among them.
        again = {k: v for k, v in args.items() if k != "cursor"}
        next_step = {
            "tool": "recall",
            "why": (
                "the best match is archived memory (cold or frozen), which recall leaves out unless "
                "include_stale: this call includes it"
            ),
            "calls": [{**again, "include_stale": True}],
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
    return RecallOutcome(
        views, len(ordered), coverage, plan, explain, continuation, issues, next_step, raw_hits, raw_error, overdue
    )
