"""Literal search over name, description, body and tags, with currentness, budgets and cursors."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import Currentness, EdgeType, Node, NodeType
from kaeru.domain.naming import canonical, forms
from kaeru.domain.stopwords import STOP_WORDS
from kaeru.domain.text import query_tokens
from kaeru.errors import InvalidArgument
from kaeru.service import audit, cursors, grants
from kaeru.service.checks import normalise_initiative
from kaeru.service.former_names import FormerNames
from kaeru.service.outcomes import Coverage, Issue, NodeView, Omission, ReadOutcome
from kaeru.service.runtime import Runtime
from kaeru.service.views import Verdicts, budgeted_views
from kaeru.storage.base import Initiative, SearchQuery, SearchRow, Session

if TYPE_CHECKING:
    from kaeru.service.requests import SearchRequest

MAX_QUERY_TOKENS = 256
#: The issue for a query of only symbols: words and numbers are what the index holds (emoji and
#: punctuation are not indexed), so it can match nothing.
NO_WORDS = "no searchable words or numbers: emoji and punctuation are not indexed; search by words"
WINDOW = 5000
#: Unknown names that get a "did you mean": each compares the name with every initiative, so a list
#: of thousands of unknown names held the vault's server for minutes (decision 215).
SUGGESTED_UNKNOWN = 5


def resolve_scopes(session: Session, raw: Any, field: str = "initiatives") -> tuple[list[Initiative], list[Issue]]:
    """The existing initiatives among `raw`; unknown names become `unknown_initiative` warnings."""
    if not isinstance(raw, list) or not raw:
        raise InvalidArgument("initiatives must be a non-empty list of names", field=field)
    found: list[Initiative] = []
    taken: set[int] = set()
    issues: list[Issue] = []
    former: FormerNames | None = None  # the names, read at the first unknown one
    names = [normalise_initiative(value, f"{field}[{i}]") for i, value in enumerate(raw)]
    known = session.initiatives_by_names(names)
    for i, name in enumerate(names):
        initiative = known.get(name)
        if initiative is None:
            hint = ""
            if len(issues) < SUGGESTED_UNKNOWN:
                former = former or FormerNames(session)
                hint = former.hint(name)
            issues.append(Issue("unknown_initiative", f"no initiative named {name!r}{hint}", f"{field}[{i}]"))
        elif initiative.id not in taken:
            taken.add(initiative.id)
            found.append(initiative)
    return found, issues


def _list(raw: Any, field: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(v, str) and v for v in raw):
        raise InvalidArgument(f"{field} must be a list of non-empty strings", field=field)
    return list(dict.fromkeys(raw))


def search(rt: Runtime, request: SearchRequest) -> ReadOutcome:
    """Run one page of a literal search; see the `search` tool description. The contract schema has
    bounded `limit` and `budget_chars` and required text, filters or both."""
    limit = request.limit
    budget = request.budget_chars
    text = request.text
    filters = request.filters or {}
    current = filters.get("current", "preferred")
    args = request.wire()
    tokens = query_tokens(text) if text is not None else []
    if request.match == "all" and not request.prefix and any(t not in STOP_WORDS for t in tokens):
        # Every word, but not `the`, `a`, `that` (decision 290): "the deploy failed" found no note
        # that says "deploy failed on staging". A query of stop words alone keeps them.
        tokens = [t for t in tokens if t not in STOP_WORDS]
    issues: list[Issue] = []
    if len(tokens) > MAX_QUERY_TOKENS:
        issues.append(Issue("invalid_argument", f"query cut to its first {MAX_QUERY_TOKENS} distinct tokens", "text"))
        tokens = tokens[:MAX_QUERY_TOKENS]
    with rt.store.read() as session:
        scopes, scope_issues = resolve_scopes(session, request.initiatives)
        issues.extend(scope_issues)
        coverage = Coverage(initiatives=[s.name for s in scopes])
        if not scopes or (text is not None and not tokens):
            if text is not None and not tokens:
                issues.append(Issue("invalid_argument", NO_WORDS, "text"))
            return ReadOutcome(hits=[], total=0, coverage=coverage, issues=issues)
        offset = 0
        verdicts = Verdicts(session)
        list_id: str | None = None
        seqs: dict[str, int] = {}  # id -> storage seq, for the hits ranked by this call
        secret = b""  # the vault's cursor key, read only when a cursor is decoded or made
        resumed: list[str] | None = None
        counted: int | None = None  # the hits a resumed list's query counted past its end
        audit_past = False  # audit records older than those read (`_ranked`)
        if request.cursor:
            secret = session.vault_secret()
            offset, list_id, resumed, counted, audit_past = cursors.resume_counted(
                session, rt.cursor_lists, secret, request.cursor, "search", cursors.args_key(args)
            )
            if resumed is None:  # not held here: ranked again, continued at the token's position
                issues.append(cursors.rerun_issue("search"))
        types = _list(filters.get("types"), "filters.types")
        statuses = _list(filters.get("statuses"), "filters.statuses")
        query = SearchQuery(
            initiative_ids=[s.id for s in scopes],
            tokens=tokens,
            match_all=request.match == "all",
            prefix=request.prefix,
            types=types,
            tiers=_list(filters.get("tiers"), "filters.tiers"),
            layers=_list(filters.get("layers"), "filters.layers"),
            statuses=statuses,
            tags=[canonical(tag) for tag in _list(filters.get("tags"), "filters.tags")],
            omit_superseded=current == "preferred",
            window=WINDOW,
        )
        with_audit = "audit_event" in types and not (query.layers or query.statuses or query.tags)
        if resumed is not None:
            items = resumed
            total = max(counted or 0, len(items))
            superseded_omitted = 0
        else:
            if statuses:
                from kaeru.service.tasks import unknown_statuses  # imported when first needed (16.S1)

                issues.extend(unknown_statuses(session, scopes, statuses, "filters.statuses", types))
            # A token whose list is not held here starts as its first page did and grows below by
            # the same steps, so the list is the one the server that held it built.
            ranked = _ranked(session, verdicts, query, WINDOW, limit, with_audit, seqs)
            items, total, superseded_omitted, audit_past = ranked
            if not total and query.tags:
                from kaeru.service.tag_spelling import unheld_tags  # imported when first needed (16.S1)

                alone = not (query.tokens or query.columns) and len(query.tags) == 1
                issues.extend(unheld_tags(session, query.initiative_ids, query.tags, "filters.tags", alone=alone))
        if total > len(items) and offset + limit >= len(items):
            items, total, past = _extended(session, verdicts, query, items, total, offset + limit, with_audit, seqs)
            audit_past = audit_past if past is None else past
            if list_id is not None:
                # The same list, longer: earlier tokens still name it. Another page may have grown it
                # first; this page is served from the list kept, which its token names.
                items = rt.cursor_lists.grow(list_id, items)
                total = max(total, len(items))
        page_ids = items[offset : offset + limit]
        marked = [i for i in page_ids if _VIA in i]  # hits reached through supersession (rare)
        if marked:
            page_ids = [_bare(i) for i in page_ids]
        nodes = _page_nodes(session, page_ids, seqs)
        nodes.update(audit.load(session, page_ids))
        live = [nodes[i] for i in page_ids if i in nodes and not nodes[i].retracted]
        if resumed is not None and grants.granted_ids(session) is not None:
            # A node moved out of the caller's grant since its first page (decisions 15.K2, 364).
            visible = grants.visible_ids(session, [n.id for n in live if not n.id.startswith(audit.PREFIX)])
            live = [n for n in live if n.id in visible or n.id.startswith(audit.PREFIX)]
        vanished = len(page_ids) - len(live)
        views, truncated = budgeted_views(session, live, budget, {s.id: s.name for s in scopes}, verdicts)
        shown = views
        # Items deferred by the budget start the next page, so nothing is skipped.
        consumed = len(page_ids) - (len(live) - len(shown))
        next_offset = offset + consumed
        if superseded_omitted:
            coverage.omitted.append(Omission("hits", superseded_omitted, "superseded"))
        if len(live) > len(shown):
            coverage.omitted.append(Omission("hits", len(live) - len(shown), "budget"))
        if vanished:
            coverage.omitted.append(Omission("hits", vanished, grants.gone_reason()))
        if audit_past:
            # At least one more audit event may match, not counted: among the audit records older
            # than those read, or (a list not yet ranked to its last node hit) among all of them.
            coverage.omitted.append(Omission("hits", 1, "window"))
        beyond = total - (offset + len(page_ids))
        if beyond > 0:
            # Past this page's `limit`: the continuation's next pages hold them (those past the
            # ranked list too: the page that reaches its end ranks the next window).
            coverage.omitted.append(Omission("hits", beyond, "limit"))
        if current == "preferred":
            issues.extend(_supersession_issues(session, shown, marked, scopes))
        if any(v.node.node_type == NodeType.CONCEPT for v in shown):
            from kaeru.service.rules_in_force import not_in_force  # imported when first needed (16.S1)

            # The nodes as stored: a view of one for a token limited to some initiatives has its
            # task scrubbed when the task lies outside them, and `not_in_force` hides it itself.
            stored = {n.id: n for n in live}
            issues.extend(not_in_force(session, [stored.get(v.node.id, v.node) for v in shown], rt.today, scopes))
        if truncated:
            issues.append(
                Issue(
                    "budget_truncated",
                    f"{truncated} bodies cut to fit budget_chars={budget}; read them whole",
                )
            )
        more = next_offset < len(items) or total > len(items)
        if more and not secret:
            secret = session.vault_secret()
    # The next page's token is made after the read snapshot closes (it writes nothing: a long list
    # is kept in this process's memory, decision 15.P4).
    continuation = None
    if more:
        coverage.complete = False
        continuation = cursors.continuation(
            rt, secret, "search", cursors.args_key(args), items, next_offset, list_id, args, total, audit_past
        )
    if any(o.reason in ("budget", "window") for o in coverage.omitted):
        coverage.complete = False
    coverage.rules_complete = coverage.complete
    return ReadOutcome(hits=views, total=total, coverage=coverage, continuation=continuation, issues=issues)


def _ranked(
    session: Session,
    verdicts: Verdicts,
    base: SearchQuery,
    window: int,
    page: int,
    with_audit: bool,
    seqs: dict[str, int],
) -> tuple[list[str], int, int, bool]:
    """The first `window` hits of `base` in the search's order (score, currentness, recency; the
    successors of superseded matches and, when asked for, audit events joined), every hit counted,
    how many matches were left out as superseded, and whether audit events asked for may match
    where this ranking did not look; `seqs` gets each ranked node's storage seq.

    A larger window lists a smaller one's hits first, in the same places (no writes between), so a
    list grown window by window (`_extended`) is in rank order; but for a successor that matched
    itself past the smaller window, listed where its superseded match ranked in that one and where
    it ranked itself in the larger. So a server that no longer holds a list grows it again by the
    same steps from the first window, never ranks the token's depth at once."""
    query = replace(base, window=window, superseded_out=[], superseded_head=SUCCESSOR_HEAD)
    rows, total, superseded_omitted = session.search(query)
    verdicts.none_against([r.id for r in rows[:TIE_HEAD] if r.contested is False])
    items = _currentness_order(rows, verdicts, page)
    seqs.update((r.id, r.seq) for r in rows)
    if superseded_omitted:
        # Only here, never on the common path: some matches were left out as superseded in
        # scope, so their successors in scope join the list, each where its match ranked.
        items, reached_total = _with_successors(session, verdicts, query, items, full=total > len(rows))
        total += reached_total
    audit_past = with_audit
    if with_audit and total <= len(items):
        # Audit events come after the node hits, so only a ranking that holds every node hit reads
        # them (the others neither list nor count them: `audit_past`). They are those of the newest
        # `WINDOW` audit records whatever the window, so every ranking of the query lists the same.
        ids = query.initiative_ids
        extra = audit.matching(session, ids, query.tokens, query.match_all, query.prefix, WINDOW)
        items += extra
        total += len(extra)
        audit_past = len(session.audit_records(ids, WINDOW + 1)) > WINDOW
    return items, total, superseded_omitted, audit_past


def _extended(
    session: Session,
    verdicts: Verdicts,
    query: SearchQuery,
    items: list[str],
    total: int,
    reach: int,
    with_audit: bool,
    seqs: dict[str, int],
) -> tuple[list[str], int, bool | None]:
    """`items` (a ranked list that `total` says more hits lie past) grown until it reaches `reach`
    places or holds every hit, its total again, and the last ranking's `audit_past` (None: none ran).

    The first page ranks one window, not every match: a broad search's first page would otherwise
    pay for ranking all of them, most never paged to. A page that reaches its end ranks the query again a window further
    (`len(items) + WINDOW`) and appends the hits the list does not hold yet, in their order. So the
    pages reach every hit that still matches — those ranked after the end in the new ranking, and
    any that moved ahead of it since (appended, not lost) — never repeat one, and the list's
    positions, which earlier tokens name, stay where they were. The list ends only when a ranking
    held every match."""
    audit_past: bool | None = None
    while total > len(items) and reach >= len(items):
        held = {_bare(i) for i in items}
        ranked, counted, _, audit_past = _ranked(session, verdicts, query, len(items) + WINDOW, 0, with_audit, seqs)
        new = [i for i in dict.fromkeys(ranked) if _bare(i) not in held]
        items = items + new
        if counted <= len(ranked) or not new:  # every match ranked: the list now holds all there are
            return items, len(items), audit_past
        total = max(total, len(items) + counted - len(ranked))
    return items, total, audit_past


def _page_nodes(session: Session, page_ids: list[str], seqs: dict[str, int]) -> dict[str, Node]:
    """The page's nodes: by storage seq where this call ranked them, else (a cursor's later page) by id."""
    known = [seqs[i] for i in page_ids if i in seqs]
    nodes = session.nodes_by_seqs(known) if known else {}
    rest = [i for i in page_ids if i not in nodes and not i.startswith(audit.PREFIX)]
    if rest:
        nodes.update(session.nodes_by_ids(rest))
    return nodes


#: Ties are re-ordered by currentness within the head of the ranking only (the pages people read).
TIE_HEAD = 200


def _currentness_order(rows: list[SearchRow], verdicts: Verdicts, page: int) -> list[str]:
    """Ids by score, then currentness (current first), then the storage's recency order.

    The verdicts of the first `page` hits are asked for with those of the tied hits: reordering only
    moves hits within a group of equal scores, so the first page is among those ids, and showing it
    needs no second query.
    """
    head = rows[:TIE_HEAD]
    tied = [
        r.id
        for i, r in enumerate(head)
        if (i and head[i - 1].score == r.score) or (i + 1 < len(head) and head[i + 1].score == r.score)
    ]
    found = verdicts.of([r.id for r in rows[:page]] + tied)
    if not tied:
        return [r.id for r in rows]
    refuted = {r.id for r in head if r.refuted}
    stale = {i for i in tied if found.get(i) or i in refuted}
    order = sorted(range(len(head)), key=lambda i: (head[i].score, head[i].id in stale, i))
    return [head[i].id for i in order] + [r.id for r in rows[TIE_HEAD:]]


# --- successors of superseded matches (issue 13) -----------------------------------------------
#
# With `filters.current = preferred`, a match that a live node in scope supersedes is left out
# (counted in `coverage.omitted` as `superseded`). When every match was superseded the page used to
# be empty: the caller concluded the memory knew nothing, though the current fact sat one edge away.
# Now the successors in scope of those matches are listed in their place (each where its match
# ranked), and an informational issue `reached_through_supersession` names each such hit and the
# matches it was reached from: the contract's NodeData has no field for it (decision 13.A2).

#: Only the best-ranked superseded matches are followed (the rest stay counted as omitted).
SUCCESSOR_HEAD = 200
#: How many supersessions deep a chain of successors is followed.
MAX_SUCCESSOR_DEPTH = 32
#: Separates a reached successor's id from the matches it was reached from, inside the result list
#: (the list travels in the cursor, so later pages still know which hits were reached).
_VIA = "<"


def _bare(item: str) -> str:
    return item.split(_VIA, 1)[0]


def _via(item: str) -> list[str]:
    return item.split(_VIA, 1)[1].split(",") if _VIA in item else []


def _passes(node: Node, query: SearchQuery, scope: set[int]) -> bool:
    """Whether `node` is live, in scope and within the call's filters (as the store applies them)."""
    return (
        not node.retracted
        and node.node_type != NodeType.AUDIT_EVENT
        and not scope.isdisjoint(node.initiatives)
        and (not query.types or node.node_type.value in query.types)
        and (not query.tiers or node.tier.value in query.tiers)
        and (not query.layers or node.layer.value in query.layers)
        and (not query.statuses or node.status in query.statuses)
        and all(any(spelled in node.tags for spelled in forms(tag)) for tag in query.tags)
    )


def _successors_in_scope(
    session: Session, verdicts: Verdicts, matches: list[str], query: SearchQuery
) -> dict[str, list[str]]:
    """For each superseded match, the ends of its chains of supersession inside the scope.

    A successor outside the scope is not followed (nor shown: other initiatives do not leak into
    this search); a node in scope whose only successors lie outside is an end — it is what this
    search would have shown had it matched, and its view says `superseded` with those successors.
    """
    scope = set(query.initiative_ids)
    nodes: dict[str, Node] = {}
    ends: dict[str, list[str]] = {m: [] for m in matches}
    frontier: dict[str, list[str]] = {m: [m] for m in matches}
    seen: dict[str, set[str]] = {m: {m} for m in matches}
    for _ in range(MAX_SUCCESSOR_DEPTH):
        asked = list(dict.fromkeys(n for here in frontier.values() for n in here))
        if not asked:
            break
        found = verdicts.of(asked)
        later = {n: [src for src, kind in found.get(n, ()) if kind == EdgeType.SUPERSEDES] for n in asked}
        missing = [i for ids in later.values() for i in ids if i not in nodes]
        if missing:
            nodes.update(session.nodes_by_ids(list(dict.fromkeys(missing))))
        following: dict[str, list[str]] = {}
        for match, here in frontier.items():
            for node_id in here:
                inside = [
                    i
                    for i in later[node_id]
                    if i in nodes and not nodes[i].retracted and not scope.isdisjoint(nodes[i].initiatives)
                ]
                if not inside:
                    if node_id != match and node_id not in ends[match]:
                        ends[match].append(node_id)
                    continue
                for nxt in inside:
                    if nxt not in seen[match]:
                        seen[match].add(nxt)
                        following.setdefault(match, []).append(nxt)
        frontier = following
    return {m: [e for e in found_ends if _passes(nodes[e], query, scope)] for m, found_ends in ends.items()}


def _with_successors(
    session: Session,
    verdicts: Verdicts,
    query: SearchQuery,
    items: list[str],
    full: bool = False,
) -> tuple[list[str], int]:
    """`items` with the in-scope successors of the superseded matches, and how many were reached.

    The superseded matches, and where each ranked among the kept ones, are those the store noted
    in `query.superseded_out` while it omitted them (no second search). A successor that matched
    itself is already listed and is not repeated; a successor of several matches is listed once,
    where the best of them ranked. When more kept matches lie past the window (`full`), the
    successors of a match ranked after the window's last are counted, not listed: where they belong
    among the matches past it is known to the larger window that ranks them, which lists them there.
    """
    omitted = list(query.superseded_out or ())
    if not omitted:
        return items, 0
    kept = set(items)
    successors = _successors_in_scope(session, verdicts, [m for _, m in omitted], query)
    reached: dict[str, list[str]] = {}
    inserts: dict[int, list[str]] = {}
    for before, match in omitted:  # `before`: how many kept matches rank before it
        for successor in successors.get(match, ()):
            if successor in kept:
                continue
            if successor in reached:
                reached[successor].append(match)
                continue
            reached[successor] = [match]
            if not (full and before >= len(items)):
                inserts.setdefault(before, []).append(successor)
    if not inserts:
        return items, len(reached)

    def tagged(successor: str) -> str:
        return f"{successor}{_VIA}{','.join(reached[successor])}"

    merged: list[str] = []
    for position, item in enumerate(items):
        merged.extend(tagged(s) for s in inserts.pop(position, ()))
        merged.append(item)
    for position in sorted(inserts):
        merged.extend(tagged(s) for s in inserts[position])
    return merged, len(reached)


def _supersession_issues(
    session: Session, shown: list[NodeView], marked: list[str], scopes: list[Initiative]
) -> list[Issue]:
    """`reached_through_supersession` for each shown hit that did not match itself, and
    `successor_out_of_scope` (with the exact `read` call) for each shown hit superseded outside the scope.

    Costs nothing on the common path: no hit reached, no hit superseded, no query.
    """
    issues: list[Issue] = []
    via = {_bare(item): _via(item) for item in marked}
    for view in shown if via else ():
        matched = via.get(view.node.id)
        if matched:
            issues.append(
                Issue(
                    "reached_through_supersession",
                    f"hit {view.node.id} ({view.node.name!r}) did not match the query itself: it is the "
                    f"successor in scope of the superseded match(es) {', '.join(matched)}",
                )
            )
    superseded = [v for v in shown if v.currentness == Currentness.SUPERSEDED]
    if not superseded:
        return issues
    scope = {s.id for s in scopes}
    successors = session.nodes_by_ids(list(dict.fromkeys(i for v in superseded for i in v.successors)))
    for view in superseded:
        outside = [i for i in view.successors if i in successors and scope.isdisjoint(successors[i].initiatives)]
        for successor in outside:
            call = json.dumps({"initiative": scopes[0].name, "node": {"id": successor}})
            issues.append(
                Issue(
                    "successor_out_of_scope",
                    f"hit {view.node.id} ({view.node.name!r}) is superseded by {successor}, outside the "
                    f"searched initiatives, so it is not listed; to see it: read {call}",
                )
            )
    return issues
