"""`timeline`: nodes in time order around an anchor, around the best match of a query, or in a window."""

from __future__ import annotations

from typing import Any

from kaeru.domain.budget import allocate, cut
from kaeru.domain.text import query_tokens
from kaeru.domain.timefmt import fmt, parse_moment
from kaeru.errors import InvalidArgument, NotFound
from kaeru.service.outcomes import Coverage, Omission, ReadOutcome
from kaeru.service.resolve import resolve_node
from kaeru.service.runtime import Runtime
from kaeru.service.search import resolve_scopes
from kaeru.service.views import build_views
from kaeru.storage.base import SearchQuery

DEFAULT_SPAN = 5
DEFAULT_BUDGET = 8000


def timeline(rt: Runtime, args: dict[str, Any]) -> tuple[ReadOutcome, str | None]:
    """The nodes and the anchor's id (None for a window)."""
    before = int(args.get("before", DEFAULT_SPAN))
    after = int(args.get("after", DEFAULT_SPAN))
    limit = int(args.get("limit", 20))
    budget = int(args.get("budget_chars", DEFAULT_BUDGET))
    moments = {}
    for key in ("since", "until"):
        if args.get(key) is not None:
            try:
                moments[key] = fmt(parse_moment(str(args[key]), rt.now()))
            except ValueError as exc:
                raise InvalidArgument(f"{key}: {exc}", field=key) from exc
    if args.get("anchor") is not None and args.get("query") is not None:
        raise InvalidArgument("give anchor or query, not both", field="query")
    with rt.store.read() as session:
        scopes, issues = resolve_scopes(session, args.get("initiatives"))
        coverage = Coverage(initiatives=[s.name for s in scopes])
        if not scopes:
            return ReadOutcome(hits=[], total=0, coverage=coverage, issues=issues), None
        ids = [s.id for s in scopes]
        anchor = None
        if args.get("anchor") is not None:
            anchor = resolve_node(session, args["anchor"], scopes[0], "anchor")
        elif args.get("query") is not None:
            tokens = query_tokens(str(args["query"]))
            rows, _, _ = (
                session.search(SearchQuery(initiative_ids=ids, tokens=tokens[:256], window=1)) if tokens else ([], 0, 0)
            )
            if not rows:
                raise NotFound("nothing matches the query to anchor the timeline on", field="query")
            anchor = session.get_node(rows[0].id)
        if anchor is not None:
            found = session.timeline(
                ids,
                since=moments.get("since"),
                until=moments.get("until"),
                pivot=(anchor.created_at, anchor.seq),
                before=before,
                after=after,
            )
        else:
            found = session.timeline(
                ids, since=moments.get("since"), until=moments.get("until"), pivot=None, before=0, after=limit + 1
            )
            if len(found) > limit:
                coverage.omitted.append(Omission("timeline", len(found) - limit, "limit"))
                coverage.complete = False
                found = found[:limit]
        nodes = session.nodes_by_ids(found)
        ordered = [nodes[i] for i in found if i in nodes]
        grants = allocate([len(n.body or "") for n in ordered], budget) or []
        shown = ordered[: len(grants)]
        if len(shown) < len(ordered):
            coverage.omitted.append(Omission("timeline", len(ordered) - len(shown), "budget"))
            coverage.complete = False
        bodies = {}
        for node, grant in zip(shown, grants, strict=True):
            piece = cut(node.body or "", 0, grant)
            bodies[node.id] = (piece.text if node.body is not None else None, piece if piece.truncated else None)
        views = build_views(session, shown, bodies=bodies, only_initiatives={s.id: s.name for s in scopes})
    return ReadOutcome(hits=views, total=len(views), coverage=coverage, issues=issues), anchor.id if anchor else None
