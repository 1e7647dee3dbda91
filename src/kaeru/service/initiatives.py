"""Initiatives (scopes): listing them, and rename / merge / delete / attach / detach / set_board."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import Edge, EdgeType, Node, NodeType
from kaeru.domain.naming import folded
from kaeru.domain.timefmt import fmt, parse_ts
from kaeru.errors import CursorInvalid, InvalidArgument, Unavailable
from kaeru.service import cursors, grants, tasks, token_grants
from kaeru.service.checks import normalise_initiative, refuse_invisible, screen_secrets
from kaeru.service.former_names import MERGED_FROM
from kaeru.service.lifecycle import release_slot
from kaeru.service.mutation import WriteContext, give_writers_a_turn
from kaeru.service.outcomes import Change, Continuation, Coverage, FailedStep, Issue, MutationOutcome, Omission
from kaeru.service.runtime import Runtime
from kaeru.service.supersession import say_current_again
from kaeru.storage.base import Initiative, ListedInitiative, Session, SlotState

if TYPE_CHECKING:
    from kaeru.service.requests import InitiativeRequest, InitiativesRequest


@dataclass
class InitiativeSummary:
    name: str
    created_at: str
    last_activity: str
    counts: dict[str, int]
    slots: list[str]


@dataclass
class InitiativesOutcome:
    initiatives: list[InitiativeSummary]
    coverage: Coverage
    issues: list[Any] = field(default_factory=list)
    #: Every initiative the call matches (visible, with the prefix), not only this page's.
    total: int = 0
    continuation: Continuation | None = None


def _follows(initiative: ListedInitiative, key: tuple[str, str] | None) -> bool:
    """`initiative` comes after the key (last_activity, name) in the order most active first."""
    if key is None:
        return True
    return initiative.last_activity < key[0] or (initiative.last_activity == key[0] and initiative.name > key[1])


def _page(
    session: Session, prefix: str, after: tuple[str, str] | None, limit: int
) -> tuple[list[ListedInitiative], int, int]:
    """The page's initiatives (most active first, after the key `after`), how many the call matches
    in all and how many follow the page.

    Without a prefix or grants the order, the cut and the counts are SQL's; a prefix matches by
    Unicode case folding, which neither engine's SQL does (SQLite's lower() folds ASCII only), and
    a grant is a list of names, so then the initiatives' rows (small: no node is read) are read in
    the same order and filtered here (decision 101)."""
    principal = grants.current()
    if not prefix and (principal is None or principal.initiatives is None):
        page = session.initiatives_by_activity(after, limit)
        rest = session.count_initiatives((page[-1].last_activity, page[-1].name)) if len(page) == limit else 0
        return page, session.count_initiatives(), rest
    # A limited token's rows are read by the ids it is granted (found once per transaction).
    among = grants.granted_ids(session)
    rows = session.initiatives_by_activity() if among is None else session.initiatives_by_activity_among(sorted(among))
    found = [i for i in rows if (principal is None or principal.may_see(i.name)) and folded(i.name).startswith(prefix)]
    following = [i for i in found if _follows(i, after)]
    return following[:limit], len(found), max(0, len(following) - limit)


def list_initiatives(rt: Runtime, request: InitiativesRequest) -> InitiativesOutcome:
    """The initiatives (or those starting with `prefix`), most active first, `limit` a page, with node
    counts by tier, held slots and last activity: a page reads its own initiatives' counts and slots,
    one query each. Pages follow by the key (last_activity, name) of the last one shown (decision 100)."""
    prefix = folded(request.prefix or "")
    args = request.wire()
    key = cursors.args_key(args)
    with rt.store.read() as session:
        after, served = None, 0
        if request.cursor:
            state = cursors.decode(session.vault_secret(), request.cursor, "initiatives", key)
            if state.position is None:
                raise CursorInvalid("cursor is malformed", field="cursor")
            after, served = (state.position[0], state.position[2]), state.offset
        page, total, rest = _page(session, prefix, after, request.limit)
        ids = [i.id for i in page]
        counts = session.tier_counts(ids)
        slots = session.held_slots(ids)
        summaries = []
        for initiative in page:
            tiers = counts.get(initiative.id, {})
            summaries.append(
                InitiativeSummary(
                    name=initiative.name,
                    created_at=initiative.created_at,
                    last_activity=initiative.last_activity,
                    counts={
                        "operational": tiers.get("operational", 0),
                        "archival": tiers.get("archival", 0),
                        "total": sum(tiers.values()),
                    },
                    slots=slots.get(initiative.id, []),
                )
            )
        coverage = Coverage(initiatives=[s.name for s in summaries])
        continuation = None
        if rest and page:
            last = page[-1]
            position = (last.last_activity, 0, last.name)
            token = cursors.encode(
                session.vault_secret(),
                cursors.CursorState("initiatives", None, served + len(page), key, position=position),
            )
            continuation = Continuation(token, {**{k: v for k, v in args.items() if k != "cursor"}, "cursor": token})
            coverage.omitted.append(Omission("initiatives", rest, "limit"))
            coverage.complete = False
    return InitiativesOutcome(summaries, coverage, total=total, continuation=continuation)


def _move_membership(ctx: WriteContext, node: Node, drop: int | None, add: int | None) -> Node:
    members = [i for i in node.initiatives if i != drop]
    if add is not None and add not in members:
        members.append(add)
    if tuple(members) == node.initiatives:
        return node
    return ctx.update_node(node, initiatives=tuple(members))


#: The actions that end, rename or re-column their initiative: they hold it (and a merge its target)
#: alone, so two board edits at once apply one after the other, never `revision_conflict`.
ALONE = frozenset({"merge", "delete", "rename", "set_board"})


def _screened_to(ctx: WriteContext, raw: Any) -> str:
    """`to` of a rename or merge, screened for secrets as a new initiative's name is (`run_mutation`),
    before it is looked up: no refusal says it back (decision 352). An initiative that holds such a
    name from before stays reachable by it, to be renamed; a merge into it waits for that."""
    name = normalise_initiative(raw, "to")
    screen_secrets(ctx.rt.settings.secret_policy, "to", name, handle=True)
    return name


def _target(ctx: WriteContext, raw: Any) -> Initiative:
    """The initiative a merge moves into, held alone until the merge commits (decision 301)."""
    name = _screened_to(ctx, raw)
    found = ctx.session.hold_initiative_named(name, exclusive=True)
    if found is None:
        raise InvalidArgument(f"no initiative named {name!r} to merge into; rename instead", field="to")
    return found


def _merge_slot(ctx: WriteContext, held: SlotState) -> None:
    """Bring one slot of a merged initiative into the target (`ctx.initiative`).

    When both hold the slot, the holder taken more recently stays current and the other becomes its
    predecessor — in the slot's history, superseded and cooled — exactly as if the older one had been
    handed over first: neither holder vanishes from the slot.
    """
    holder = ctx.session.get_node(held.node_id) if held.node_id else None
    if holder is None or holder.retracted:
        return
    theirs = ctx.session.get_slot(ctx.initiative.id, held.slot)
    kept = ctx.session.get_node(theirs.node_id) if theirs is not None and theirs.node_id else None
    if theirs is None or kept is None or kept.retracted or held.updated_at > theirs.updated_at:
        ctx.take_slot(held.slot, holder, None)
    elif kept.id != holder.id:
        # The target's holder is newer: record the merged holder first, then hand the slot back.
        ctx.put_slot(ctx.initiative.id, held.slot, holder.id, theirs)
        ctx.take_slot(held.slot, kept, None)


def _name_stamp(ctx: WriteContext, initiative_id: int) -> str:
    """When a rename, merge or delete changes an initiative's name history: now, or a microsecond
    after its current name began when the wall clock stepped back since (as node revisions are
    stamped), so the history stays in issue order and no span is overwritten or inverted."""
    spans = ctx.session.name_history([initiative_id]).get(initiative_id, [])
    if not spans:
        return ctx.now_s
    floor = parse_ts(max(s.valid_from for s in spans)) + timedelta(microseconds=1)
    return fmt(max(ctx.now, floor))


def _remember_merge(ctx: WriteContext, subject: Initiative, target: Initiative, stamp: str) -> None:
    """Record on `target` the names `subject` held and those merged into it, so that a call naming
    one of them is told where it went (`former_names`) rather than starting a new initiative."""
    spans = ctx.session.name_history([subject.id]).get(subject.id, [])
    names = [s.name for s in spans if s.name != target.name] or [subject.name]
    carried = [*(target.properties.get(MERGED_FROM) or ()), *(subject.properties.get(MERGED_FROM) or ())]
    carried.extend({"name": name, "at": stamp} for name in dict.fromkeys(names))
    ctx.session.set_initiative_properties(target.id, {**target.properties, MERGED_FROM: carried})


#: Nodes a merge or delete moves or forgets per write transaction (decision 15.P5).
CHUNK = 500


def _members(ctx: WriteContext, limit: int | None = None) -> list[Node]:
    """The initiative's live nodes, oldest first (at most `limit` of them)."""
    ids = ctx.session.member_ids(ctx.initiative.id)
    chosen = ids if limit is None else ids[:limit]
    nodes = ctx.session.nodes_by_ids(chosen)
    return [nodes[i] for i in chosen if i in nodes]


def _boards(ctx: WriteContext, subject: Initiative, target: Initiative) -> tuple[bool, list[dict[str, str]]]:
    """Whether a merge's target has a board of its own (the subject's board is then forgotten, not
    moved: two boards in one initiative, decision 314), and the columns its tasks land in: the
    target's, or when it has none the subject's, whose board then moves with them."""
    board = tasks.board_node(ctx.session, target)
    return board is not None, tasks.columns_of(board) if board is not None else tasks.columns(ctx.session, subject)


def _forget_or_detach(ctx: WriteContext, node: Node, subject: int, gone: list[Edge] | None = None) -> bool:
    """Delete's step for one node: forgotten when the deleted initiative is its only one (True),
    else only taken out of it. `gone` collects the `supersedes` edges out of it that are retracted."""
    if node.initiatives == (subject,):
        for edge in ctx.session.live_edges([node.id]):
            ctx.retract_edge(edge)
            if gone is not None and edge.src == node.id and edge.edge_type == EdgeType.SUPERSEDES:
                gone.append(edge)
        ctx.update_node(node, initiatives=(), retracted=True)
        return True
    _move_membership(ctx, node, subject, None)
    return False


def _say_left_current(ctx: WriteContext, gone: list[Edge], subject: Initiative) -> None:
    """A deleted initiative's nodes may have been all that superseded facts in other initiatives,
    which now read current again: the answer says which (decision 393)."""
    say_current_again(ctx, gone, f"the nodes of {subject.name!r} are forgotten", "initiative", subject.id)


def in_chunks(
    rt: Runtime, request: InitiativeRequest, actor: str, *, most: int | None = None, warned: list[Issue] | None = None
) -> int:
    """A merge's or delete's nodes, moved or forgotten `CHUNK` at a time, each chunk its own mutation
    (own transaction and audit record), until at most `CHUNK` are left for the call itself to finish
    with the rest of its work (slots, the initiative's end). Returns how many nodes the chunks merged
    or forgot; their warnings go to `warned`.

    Resumable: a merge or delete stopped part way leaves whole chunks done, and the nodes they moved
    or forgot are no longer the initiative's, so the same call again carries on with the rest. With a
    `request_id`, chunk `k` is applied under `<request_id>#chunk<k>` and the last, finding nothing
    more to do, is recorded too: a replay of a finished call replays its chunks and stops where it
    stopped, never touching an initiative that took the name since. A chunk refused (no such
    initiative, no target, a reused `request_id`) stops the chunks; the call itself then answers,
    with the same refusal or its replay (decision 15.P5).
    """
    from kaeru.errors import KaeruError
    from kaeru.service.mutation import run_mutation

    action = request.action
    if action not in ("merge", "delete"):
        return 0
    field_name = "merged_nodes" if action == "merge" else "forgotten_nodes"
    request_id = request.request_id
    handled = 0
    k = 0

    def chunk(ctx: WriteContext) -> None:
        subject = ctx.initiative
        target = _target(ctx, request.to) if action == "merge" else None
        if target is not None and target.id == subject.id:
            raise InvalidArgument("cannot merge an initiative into itself", field="to")
        if target is not None:  # refused to a limited token before a node moves; the call itself warns
            token_grants.merge_widening(ctx.session, subject.name, target.name)
        batch = _members(ctx, CHUNK + 1)
        if len(batch) <= CHUNK:
            ctx.outcome.state = "unchanged"  # the call itself does the rest
            return
        done, gone = 0, list[Edge]()
        own, cols = _boards(ctx, subject, target) if target is not None else (False, [])
        for node in batch[:CHUNK]:
            if target is not None and own and node.node_type == NodeType.BOARD:
                _forget_or_detach(ctx, node, subject.id)
            elif target is not None:
                tasks.onto_board(ctx, _move_membership(ctx, node, subject.id, target.id), cols)
                done += 1
            else:
                done += _forget_or_detach(ctx, node, subject.id, gone)
        _say_left_current(ctx, gone, subject)
        ctx.outcome.changes.append(Change(field_name, 0, done))
        ctx.outcome.changes.append(Change("chunk", None, k))

    while most is None or k < most:  # `most`: stop after that many chunks (a process stopped part way)
        k += 1
        try:
            outcome, _ = run_mutation(
                rt,
                operation="initiative",
                initiative=request.initiative,
                request_id=f"{request_id}#chunk{k}" if isinstance(request_id, str) else None,
                args=request.wire(),
                actor=actor,
                body=chunk,
                create=False,
                exclusive=True,
            )
        except KaeruError:
            return handled
        if outcome.state == "unchanged":
            return handled
        handled += sum(int(c.after) for c in outcome.changes if c.field == field_name)
        if warned is not None:
            warned.extend(outcome.issues)
        give_writers_a_turn()
    return handled


def stopped_part_way(
    request: InitiativeRequest, handled: int, error: Unavailable, warned: Sequence[Issue] = ()
) -> MutationOutcome:
    """A merge or delete whose chunks moved or forgot `handled` nodes before the vault refused the
    rest (`error`: a full disk, the database gone, a lock held past its wait): `partial`, not the
    `rejected` that says nothing was applied (SPEC 2.1, decision 213), with the warnings of the
    chunks that were applied (`warned`: a retry finds their work done and cannot give them again).
    The same call again carries on from there (`in_chunks`)."""
    done = "merged" if request.action == "merge" else "forgotten"
    outcome = MutationOutcome(state="partial")
    outcome.issues.extend(warned)
    outcome.changes.append(Change(f"{done}_nodes", 0, handled))
    outcome.failed_steps.append(
        FailedStep(
            f"the rest of the {request.action}",
            error.code,
            f"the vault refused the rest ({error.message}); {handled} nodes are {done}, and the initiative is "
            f"not yet {'merged' if request.action == 'merge' else 'deleted'}: the same call again completes it",
        )
    )
    return outcome


def manage(ctx: WriteContext, request: InitiativeRequest, handled: int = 0, carried: Sequence[Issue] = ()) -> None:
    """Rename, merge, delete, attach/detach a node, or edit the board's columns. `handled`: nodes a
    merge or delete already moved or forgot in chunks before this call (`in_chunks`); `carried`:
    the warnings those chunks gave, which this call's answer repeats."""
    action = request.action
    subject = ctx.initiative
    if action == "rename":
        new_name = _screened_to(ctx, request.to)
        refuse_invisible(new_name, "to")
        if new_name == subject.name:
            ctx.outcome.state = "unchanged"
            return
        taken = ctx.session.initiative_by_name(new_name)
        # Itself, stored decomposed by an older kaeru: renamed to its composed form (decision 184).
        if taken is not None and taken.id != subject.id:
            raise InvalidArgument(f"{new_name!r} already exists; use merge to combine them", field="to")
        # One project must not split across spellings (SPEC 1.3): `Alpha` beside `alpha` (decision 311).
        twin = next(
            (i for i in ctx.session.all_initiatives() if i.id != subject.id and folded(i.name) == folded(new_name)),
            None,
        )
        if twin is not None:
            raise InvalidArgument(
                f"{twin.name!r} already exists, spelled otherwise; use merge to combine them, or another name",
                field="to",
            )
        # Grants are by name: the tokens granted the old one follow it, and those granted the new one
        # come to reach it — refused for a limited caller, before the name changes (`token_grants`).
        regranted = token_grants.follow_rename(ctx.session, subject.name, new_name, ctx.now_s, ctx.actor)
        ctx.session.rename_initiative(subject.id, new_name, _name_stamp(ctx, subject.id))
        ctx.outcome.changes.append(Change("initiative", subject.name, new_name))
        ctx.outcome.issues.extend(regranted)
    elif action == "merge":
        target = _target(ctx, request.to)
        if target.id == subject.id:
            raise InvalidArgument("cannot merge an initiative into itself", field="to")
        # Tokens granted the target and not the subject come to reach its memories: refused for a
        # limited caller before a node moves, as a rename onto their name is (`token_grants`).
        widened = token_grants.merge_widening(ctx.session, subject.name, target.name)
        moved, placed = handled, 0
        own, cols = _boards(ctx, subject, target)
        for node in _members(ctx):
            if own and node.node_type == NodeType.BOARD:  # the target keeps its own columns
                _forget_or_detach(ctx, node, subject.id)
                continue
            updated = _move_membership(ctx, node, subject.id, target.id)
            placed += tasks.onto_board(ctx, updated, cols) is not updated
            moved += 1
        tasks.say_placed(ctx, placed)
        ctx.initiative = target
        for held in ctx.session.slots_of(subject.id):
            _merge_slot(ctx, held)
        ctx.initiative = subject
        stamp = _name_stamp(ctx, subject.id)
        _remember_merge(ctx, subject, target, stamp)
        ctx.session.delete_initiative(subject.id, stamp)
        ctx.outcome.changes.append(Change("merged_nodes", 0, moved))
        ctx.outcome.changes.append(Change("initiative", subject.name, target.name))
        cut = token_grants.merge_warning(ctx.session, subject.name, target.name)  # grants left behind
        ctx.outcome.issues.extend(i for i in (cut, widened) if i is not None)
    elif action == "delete":
        forgotten, gone = handled, list[Edge]()
        for node in _members(ctx):
            forgotten += _forget_or_detach(ctx, node, subject.id, gone)
        ctx.outcome.issues.extend(carried)
        _say_left_current(ctx, gone, subject)
        ctx.session.delete_initiative(subject.id, _name_stamp(ctx, subject.id))
        ctx.outcome.changes.append(Change("forgotten_nodes", 0, forgotten))
        ctx.outcome.changes.append(Change("initiative", subject.name, None))
    elif action in ("attach", "detach"):
        if request.node is None:
            raise InvalidArgument(f"{action} needs node", field="node")
        node = ctx.resolve(request.node, "node")
        if action == "attach":
            from kaeru.service.task_boards import refuse_off_board  # imported when first needed (16.S1)

            # A task's one status is every board's it is on: not moved to fit this one (decision 311
            # did, which took it off its own board), refused when this board lacks its column.
            refuse_off_board(ctx.session, node, subject)
            updated = _move_membership(ctx, node, None, subject.id)
        else:
            if subject.id not in node.initiatives:
                raise InvalidArgument(f"{node.name!r} is not in {subject.name!r}", field="node")
            if len(node.initiatives) == 1:
                raise InvalidArgument("this is the node's last initiative: use forget to remove it", field="node")
            updated = _move_membership(ctx, node, subject.id, None)
            for held in ctx.session.slots_held_by(node.id):
                if held.initiative_id == subject.id:  # a role in an initiative it left (decision 311)
                    release_slot(ctx, held)
        if updated is node:
            ctx.outcome.state = "unchanged"
        else:
            ctx.mark_affected(updated)
            # Only the granted initiatives, as a read shows the node's (decision 15.K2).
            names = ctx.session.initiative_names([*node.initiatives, *updated.initiatives])
            ctx.outcome.changes.append(
                Change(
                    "initiatives",
                    grants.visible_names(names.get(i, str(i)) for i in node.initiatives),
                    grants.visible_names(names.get(i, str(i)) for i in updated.initiatives),
                )
            )
        ctx.outcome.primary = ctx.outcome_ref(updated)
    else:  # set_board
        tasks.set_board(ctx, request.columns)
