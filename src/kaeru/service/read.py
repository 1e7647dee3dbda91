"""`read`: one node in full, now or as of a past moment, body paged by the budget."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaeru.domain.budget import cut
from kaeru.domain.model import NodeType
from kaeru.domain.refs import parse_ref
from kaeru.domain.timefmt import fmt, parse_moment
from kaeru.errors import InvalidArgument, NotFound
from kaeru.service import cursors, grants
from kaeru.service.checks import normalise_initiative
from kaeru.service.outcomes import Continuation, Coverage, Issue, Omission, ReadOutcome
from kaeru.service.resolve import resolve_node
from kaeru.service.runtime import Runtime
from kaeru.service.views import build_views

#: Links a `read` with `neighbours` shows at most (the newest); `trail kind=neighbours` pages them all.
READ_EDGES = 100

if TYPE_CHECKING:
    from kaeru.service.requests import ReadRequest


def _missing(moment: str | None, granted: set[int] | None) -> str:
    """The miss of a node that had no revision to show at `moment`. A token limited to some
    initiatives gets one wording whether the node did not exist then, was forgotten, or was in no
    initiative it may see: which of them is not told."""
    if granted is None:
        return f"the node did not exist (or was forgotten) at {moment}"
    return f"the node did not exist (or was forgotten, or was in no initiative this token may see) at {moment}"


def read(rt: Runtime, request: ReadRequest) -> ReadOutcome:
    """One node (current or as of `at`), its body from `body_offset` cut to `budget_chars` (both
    bounded by the schema)."""
    initiative_name = normalise_initiative(request.initiative)
    budget = request.budget_chars
    offset = request.body_offset
    moment: str | None = None
    if request.at is not None:
        try:
            moment = fmt(parse_moment(request.at, rt.now(), zone=rt.settings.zone()))
        except ValueError as exc:
            raise InvalidArgument(f"at: {exc}", field="at") from exc  # the forms it takes are in `exc`
    with rt.store.read() as session:
        scope = session.initiative_by_name(initiative_name)
        node = None
        ref = None
        try:
            ref = parse_ref(request.node)
        except ValueError as exc:
            raise InvalidArgument(str(exc), field="node") from exc
        granted = grants.granted_ids(session)
        if moment is not None and ref.id:
            # A past read may name a node forgotten since: look it up by id without the liveness rule.
            # A revision outside a token's grants is not there for it: the id is then resolved as
            # any other, so a node hidden now misses as an unknown id does, word for word (15.K2).
            node = session.node_at(ref.id, moment)
            node = node if node is not None and grants.node_visible(node, granted) else None
        current = None
        if node is None:
            current = resolve_node(session, request.node, scope, "node", ref)
            node = session.node_at(current.id, moment) if moment is not None else current
        if node is not None and not grants.node_visible(node, granted):
            # A node the token sees now, as of a moment when it was in no granted initiative: the
            # same miss as before it existed (a revision is seen by the memberships it had).
            raise NotFound(_missing(moment, granted), field="at")
        if node is None and current is not None and current.created_at <= (moment or ""):
            # Back-dated (`occurred_at`, an import): it happened before `at` but was recorded after,
            # and "did not exist" read as lost data to someone who had imported old conversations.
            raise NotFound(
                f"the node was not yet recorded at {moment} (`at` is when kaeru recorded it; it happened at "
                f"{current.created_at}): read it without `at`",
                field="at",
            )
        if node is None or (moment is not None and node.retracted):
            raise NotFound(_missing(moment, granted), field="at")
        body_range = None
        body = node.body
        if body is not None:
            piece = cut(body, offset, budget)
            body = piece.text
            body_range = piece if piece.truncated else None
        # The scope's name was read in this snapshot: a node only in it needs no name look-up.
        known = {scope.id: scope.name} if scope is not None else None
        views = build_views(session, [node], at=moment, bodies={node.id: (body, body_range)}, known=known)
        # Pages follow the body as shown: a token limited to some initiatives reads a chain's body
        # without the names of steps outside them (decision 15.K2), shorter than the stored one, so
        # its offsets are checked against, and continue to, the end of what it reads.
        shown = views[0].node.body
        if shown is not None and offset > len(shown):
            raise InvalidArgument(f"body_offset {offset} is past the body's end ({len(shown)})", field="body_offset")
        body_range = views[0].body_range
        edges = None
        linked = 0  # how many edges the node has, of which `edges` are shown
        if request.neighbours and moment is None:
            # The newest links picked and counted in SQL (a node linked from thousands was read whole).
            granted_now = grants.granted_ids(session)
            edges, linked = session.newest_live_edges(
                node.id, READ_EDGES, sorted(granted_now) if granted_now is not None else None
            )
        elif request.neighbours and moment is not None:
            edges = session.edges_at([node.id], moment)
            if grants.granted_ids(session) is not None:
                visible = grants.visible_ids(session, [e.src for e in edges] + [e.dst for e in edges])
                edges = [e for e in edges if e.src in visible and e.dst in visible]
            linked = len(edges)
            if linked > READ_EDGES:
                edges.sort(key=lambda e: e.recorded_at, reverse=True)
                edges = edges[:READ_EDGES]
        coverage = Coverage(initiatives=views[0].initiatives)
        if edges is not None and linked > len(edges):
            # The newest links; all of them page through `trail kind=neighbours` (decision 87).
            coverage.omitted.append(Omission("edges", linked - len(edges), "limit"))
            coverage.complete = False
        continuation = None
        if body_range is not None and body_range.end < body_range.total:
            coverage.complete = False
            coverage.rules_complete = False
            secret = session.vault_secret()
            next_args = {
                **{k: v for k, v in request.wire().items() if k != "body_offset"},
                "body_offset": body_range.end,
            }
            token = cursors.encode(
                secret, cursors.CursorState("read", None, body_range.end, cursors.args_key(next_args, ()))
            )
            continuation = Continuation(token, next_args)
        # A rule read as it is now says whether it is in force today; one read as of `at` is history,
        # and today's verdict would be about another revision than the one shown.
        issues: list[Issue] = []
        if moment is None and node.node_type == NodeType.CONCEPT:
            from kaeru.service.rules_in_force import not_in_force  # imported when first needed (16.S1)

            issues = not_in_force(session, [node], rt.today, [scope] if scope is not None else [])
    return ReadOutcome(hits=views, total=1, coverage=coverage, continuation=continuation, edges=edges, issues=issues)
