"""The write path shared by every mutating use case.

`run_mutation` is the only place that opens a write transaction: it claims the `request_id` for
replay, resolves the initiative, lets the use case do its work through a `WriteContext`, appends
the audit record and stores the outcome for replay — all in one transaction, so a mutation
applies whole or not at all.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kaeru.domain.indexroom import cut_of, index_cut_message
from kaeru.domain.languages import from_tags as language_of
from kaeru.domain.model import (
    FREE_SLOT_REVISION,
    Edge,
    EdgeType,
    Layer,
    Node,
    NodeType,
    Tier,
    Visibility,
    default_tier,
    revision_token,
)
from kaeru.domain.naming import auto_name
from kaeru.domain.surrogates import refusal_of_unstorable
from kaeru.domain.text import DERIVED_FAMILIES, TOKENISER, indexed_name, lang_tag, merge_tags, topic_tags
from kaeru.domain.timefmt import fmt, parse_ts
from kaeru.errors import (
    CommitUnknown,
    InvalidArgument,
    RequestIdReused,
    SlotConflict,
    Unavailable,
    UnknownInitiative,
)
from kaeru.service import grants
from kaeru.service.checks import (
    MAX_TAGS,
    check_name,
    check_tag,
    check_text,
    normalise_initiative,
    refuse_invisible,
    screen_secrets,
)
from kaeru.service.outcomes import EntityRef, Issue, MutationOutcome, SlotChange
from kaeru.service.recent import CallKey
from kaeru.service.replay import RETRY_GUARDED, call_digests, remember, repeated
from kaeru.service.reruns import runs_again
from kaeru.service.resolve import resolve_node
from kaeru.service.runtime import Runtime
from kaeru.service.supersession import edges_back_to
from kaeru.storage.base import AuditRecord, Initiative, RequestKey, Session, SlotState

SLOT_PATTERN = re.compile(r"^[a-z][a-z0-9_-]*$")


def topic_name(name: str, node_id: str) -> str:
    """The name without an auto-name's unique suffix (the suffix is not a topic)."""
    suffix = "-" + node_id.replace("-", "")[-6:]
    return name[: -len(suffix)] if name.endswith(suffix) else name


def derived_tags(name: str, body: str | None) -> list[str]:
    lang = lang_tag(f"{name} {body or ''}")
    return [*topic_tags(name, body, lang=lang.removeprefix("lang:")), lang]


def retag(tags: tuple[str, ...], name: str, body: str | None, node_id: str = "") -> tuple[str, ...]:
    """Re-derive the `topic:`/`lang:` families after a text change; every other tag is kept."""
    kept = [t for t in tags if not t.startswith(DERIVED_FAMILIES)]
    # An auto-name's words are its first body's: after a text change they are not this body's, and
    # topics drawn from them kept the memory found by what it used to say (decision 451).
    auto = bool(node_id) and topic_name(name, node_id) != name
    return merge_tags(kept, derived_tags("" if auto else name, body))


#: A long operation done in chunks, each its own transaction (a merge, a delete, an import), waits
#: this long between two of them: a writer waiting for the vault's lock meanwhile — SQLite's tries
#: again every millisecond (`storage.sqlite.machine.BUSY_POLL_S`) — takes its turn then, instead of
#: waiting for the whole operation (decision 137).
WRITERS_TURN_S = 0.003


def give_writers_a_turn() -> None:
    """Between two chunks of a long operation: let a waiting writer in (`WRITERS_TURN_S`)."""
    time.sleep(WRITERS_TURN_S)


@dataclass
class WriteContext:
    """Everything a use case may do inside its one transaction."""

    rt: Runtime
    session: Session
    now: datetime
    #: `now` as stored text, formatted once: a write reads it ~10 times.
    now_s: str
    initiative: Initiative
    operation: str
    request_id: str | None
    actor: str
    outcome: MutationOutcome
    changes_log: list[dict[str, Any]] = field(default_factory=list)
    #: The latest stamp this write recorded (a revision after one at `now` or later is stamped past
    #: it): its audit record's time, which the next write is stamped after (`Runtime.write_time`).
    last_s: str = ""

    # --- text hygiene -------------------------------------------------------------------------
    def clean(self, field_name: str, text: str | None) -> str | None:
        """Apply the limits and the secret policy to one text field; reject, redact or pass it through."""
        if text is None:
            return None
        check_text(field_name, text)
        text, issue = screen_secrets(self.rt.settings.secret_policy, field_name, text)
        if issue is not None:
            self.outcome.issues.append(issue)
        return text

    def clean_name(self, field_name: str, name: str) -> str:
        name = check_name(field_name, name)
        return self.clean(field_name, name) or name

    def clean_tags(self, field_name: str, tags: list[str] | None) -> list[str]:
        out: list[str] = []
        for i, raw in enumerate(tags or []):
            tag = check_tag(field_name, i, raw)
            out.append(self.clean(f"{field_name}[{i}]", tag) or tag)
        if len(out) > MAX_TAGS:
            raise InvalidArgument(f"at most {MAX_TAGS} tags", field=field_name)
        return list(dict.fromkeys(out))

    # --- nodes ----------------------------------------------------------------------------------
    def resolve(self, raw: Any, field_name: str) -> Node:
        """The live node `raw` names, row-locked for the rest of the transaction (for compare-and-set)."""
        found = resolve_node(self.session, raw, self.initiative, field_name)
        return self.session.get_node(found.id, for_update=True) or found

    def _stamp(self, previous: str | None) -> str:
        """A recorded_at strictly after the previous revision's, so history keeps issue order."""
        if previous is None:
            return self.now_s
        floor = parse_ts(previous) + timedelta(microseconds=1)
        stamp = fmt(max(self.now, floor))
        self.last_s = max(self.last_s, stamp)
        return stamp

    def create_node(
        self,
        *,
        node_type: NodeType,
        body: str | None,
        name: str | None = None,
        name_fallback: str = "note",
        description: str | None = None,
        tags: list[str] | None = None,
        layer: Layer = Layer.WARM,
        status: str | None = None,
        properties: dict[str, Any] | None = None,
        tier: Tier | None = None,
        created_at: str | None = None,
        initiatives: tuple[int, ...] | None = None,
    ) -> Node:
        node_id = self.rt.new_id(self.now)
        final_name = name if name is not None else auto_name(body, node_id, name_fallback)
        recorded = self.now_s
        node = Node(
            id=node_id,
            rev_no=1,
            revision=revision_token(node_id, 1, recorded),
            node_type=node_type,
            tier=tier or default_tier(node_type),
            name=final_name,
            body=body,
            description=description,
            tags=merge_tags(tags or [], derived_tags(topic_name(final_name, node_id), body)),
            layer=layer,
            visibility=Visibility.LOCAL,
            status=status,
            properties=properties or {},
            initiatives=initiatives if initiatives is not None else (self.initiative.id,),
            created_at=created_at or recorded,
            recorded_at=recorded,
        )
        self.session.put_node(node, request_id=self.request_id, actor=self.actor, new=True)
        self.outcome.created.append(EntityRef(node.id, node.revision))
        self._say_index_cut(node)
        return node

    def update_node(self, node: Node, **changes: Any) -> Node:
        """Write `changes` as the next revision of `node` (same id)."""
        recorded = self._stamp(node.recorded_at)
        rev_no = node.rev_no + 1
        updated = node.evolve(
            **changes, rev_no=rev_no, revision=revision_token(node.id, rev_no, recorded), recorded_at=recorded
        )
        self.session.put_node(updated, request_id=self.request_id, actor=self.actor)
        if "body" in changes or "description" in changes:
            self._say_index_cut(updated)
        return updated

    def _say_index_cut(self, node: Node) -> None:
        """Warn when the full-text index cannot hold every word of `node`'s text (decision 234)."""
        if node.retracted or not (node.body or node.description):
            return
        cut = cut_of(indexed_name(node), node.description, node.body, node.tags, language_of(node.tags))
        if cut is not None:
            self.outcome.issues.append(Issue("index_truncated", index_cut_message(cut), None))

    @staticmethod
    def outcome_ref(node: Node) -> EntityRef:
        return EntityRef(node.id, node.revision)

    def mark_affected(self, node: Node) -> None:
        """List `node` (at its latest revision) among the outcome's affected entities."""
        kept = [ref for ref in self.outcome.affected if ref.id != node.id]
        self.outcome.affected = [*kept, EntityRef(node.id, node.revision)]

    # --- edges ----------------------------------------------------------------------------------
    def put_edge(self, edge: Edge) -> None:
        """Store `edge`'s new revision naming this write's actor and request id, as a node's revision
        names them: what a history page's link event says made it."""
        self.session.put_edge(edge, request_id=self.request_id, actor=self.actor)

    def add_edge(
        self, src: Node, dst: Node, edge_type: EdgeType, weight: float, properties: dict[str, Any] | None = None
    ) -> Edge:
        """Create (or re-assert with a new weight) a live edge src → dst (`properties`: a carried
        edge's own, as a settle carries them)."""
        if not 0.0 <= weight <= 1.0:
            raise InvalidArgument("weight must be between 0 and 1", field="weight")
        previous = self.session.get_edge(src.id, dst.id, edge_type)
        if previous is not None and not previous.retracted and previous.weight == weight:
            return previous
        recorded = self._stamp(previous.recorded_at if previous else None)
        edge = Edge(
            src=src.id,
            dst=dst.id,
            edge_type=edge_type,
            weight=weight,
            rev_no=(previous.rev_no + 1) if previous else 1,
            recorded_at=recorded,
            created_at=previous.created_at if previous and not previous.retracted else recorded,
            properties=dict(properties or {}),
        )
        self.put_edge(edge)
        self.changes_log.append({"edge": [src.id, dst.id, edge_type.value], "weight": weight})
        return edge

    def retract_edge(self, edge: Edge) -> Edge:
        """Retract a live edge (a new revision marked retracted; history keeps it)."""
        recorded = self._stamp(edge.recorded_at)
        gone = Edge(
            src=edge.src,
            dst=edge.dst,
            edge_type=edge.edge_type,
            weight=edge.weight,
            rev_no=edge.rev_no + 1,
            recorded_at=recorded,
            created_at=edge.created_at,
            properties=edge.properties,
            retracted=True,
        )
        self.put_edge(gone)
        self.changes_log.append({"edge": [edge.src, edge.dst, edge.edge_type.value], "retracted": True})
        return gone

    # --- slots ----------------------------------------------------------------------------------
    def take_slot(
        self,
        slot: str,
        holder: Node,
        expected_revision: str | None,
        field: str = "options.expected_slot_revision",
        *,
        named_in: str | None = None,
        initiative_id: int | None = None,
    ) -> SlotChange:
        """Give `slot` to `holder`; a different previous holder is superseded by it and cooled.
        `named_in`: the request's field that named the slot. Its name is then screened for secrets
        as a handle (decision 362); a slot a merge or a successor carries over is not screened again.
        For a token limited to some initiatives, a holder outside its grants is left as it is (not
        superseded, not cooled, no edge of its own written) and the answer names it as None: the
        slot is the initiative's, the node another initiative's. `initiative_id`: the slot's
        initiative when it is not the call's (a successor takes its source's roles in every
        initiative, decision 376); such a slot is not listed in the answer, whose slot changes carry
        no initiative and are the call's.
        """
        scope = self.initiative.id if initiative_id is None else initiative_id
        if not isinstance(slot, str) or len(slot) > 64 or not SLOT_PATTERN.match(slot):
            raise InvalidArgument("a slot name matches ^[a-z][a-z0-9_-]*$ and has at most 64 characters", field="slot")
        if named_in is not None:
            screen_secrets(self.rt.settings.secret_policy, named_in, slot, handle=True)
        while True:
            state, previous = self._hold_slot(scope, slot, holder.id)
            current = state.revision if state else FREE_SLOT_REVISION
            if expected_revision is not None and expected_revision != current:
                raise SlotConflict(
                    f"slot {slot!r} is at revision {current!r}, not {expected_revision!r}; re-read it and retry",
                    field=field,
                )
            before = state.node_id if state else None
            if before == holder.id and state is not None:
                return SlotChange(slot, before, holder.id, state.revision)
            hidden = grants.hidden_ids(self.session, [holder.id] if before is None else [before, holder.id])
            if previous is not None and not previous.retracted and not hidden:
                for edge in edges_back_to(self.session, previous.id, holder.id):  # a hand-back
                    self.retract_edge(edge)
                self.add_edge(holder, previous, EdgeType.SUPERSEDES, 1.0)
                if previous.layer != Layer.COLD:
                    cooled = self.update_node(previous, layer=Layer.COLD)
                    self.mark_affected(cooled)
            try:
                revision = self.put_slot(scope, slot, holder.id, state)
                break
            except SlotConflict:
                # Another writer's take of the slot this one saw free committed first (PostgreSQL):
                # nothing was written for it yet; read it again, now held (a row is never removed
                # while its initiative is held), and take it from that holder — or lose the
                # compare-and-set naming its revision — as one write after the other would.
                if state is not None:
                    raise
        change = SlotChange(
            slot, None if before in hidden else before, None if holder.id in hidden else holder.id, revision
        )
        if scope == self.initiative.id:  # the answer's slots are the call's initiative's (review, session 41)
            self.outcome.slots.append(change)
        return change

    def _hold_slot(self, scope: int, slot: str, holder_id: str) -> tuple[SlotState | None, Node | None]:
        """The slot's state, row-locked, and its holder other than `holder_id` (None: free, or held
        by it), locked before it. A write that locks a node and then a slot it holds — `forget`,
        `evolve` handing the slot on, `slot` giving it to its holder again — locks them in that
        order; a take that locked the slot and then its holder deadlocked with it on PostgreSQL
        (decision 461). The holder is read unlocked, locked, and read again until it stays: another
        take changes it only with its holder locked. A slot without a row is not read locked: a
        first take that commits meanwhile makes the insert conflict (`take_slot`)."""
        seen = self.session.get_slot(scope, slot)
        locked: dict[str, Node | None] = {}
        while seen is not None and seen.node_id and seen.node_id != holder_id and seen.node_id not in locked:
            locked[seen.node_id] = self.session.get_node(seen.node_id, for_update=True)
            seen = self.session.get_slot(scope, slot)
        if seen is None:
            return None, None
        state = self.session.get_slot(scope, slot, for_update=True)
        before = state.node_id if state is not None else None
        if before is None or before == holder_id:
            return state, None
        return state, locked[before] if before in locked else self.session.get_node(before, for_update=True)

    def put_slot(self, scope: int, slot: str, node_id: str | None, previous: SlotState | None) -> str:
        """The slot's next revision, holding `node_id` (None: released), stamped after `previous`
        as a node's revision is after the one it follows (`_stamp`): stamped by the writer's clock
        alone, a slot's second holder could be recorded before its first, and no `as_of` showed
        the first (decision 404). Returns the new revision."""
        rev_no = previous.rev_no + 1 if previous is not None else 1
        stamp = self._stamp(previous.updated_at if previous is not None else None)
        revision = revision_token(f"slot:{scope}:{slot}", rev_no, stamp)
        self.session.put_slot(SlotState(scope, slot, node_id, rev_no, revision, stamp))
        return revision


def run_mutation(
    rt: Runtime,
    *,
    operation: str,
    initiative: Any,
    request_id: str | None,
    args: dict[str, Any],
    actor: str,
    body: Callable[[WriteContext], None],
    create: bool = True,
    exclusive: bool = False,
) -> tuple[MutationOutcome, bool]:
    """Run one mutation as one transaction, with replay. Returns the outcome and whether it was replayed.
    `exclusive`: the write ends or renames its initiative (it waits for the others writing there).
    A transaction PostgreSQL rolls back because another write crossed it runs again, whole, from
    its start (`runs_again`).

    Raises:
        KaeruError: the mutation was rejected; nothing was written — but for `CommitUnknown`: the
            database's answer to COMMIT was lost, and the write may stand.
    """
    if (refusal := refusal_of_unstorable(args)) is not None:
        raise refusal
    name = normalise_initiative(initiative)
    if request_id:  # a handle the next call names it by: refused, never redacted (decision 362)
        screen_secrets(rt.settings.secret_policy, "request_id", request_id, handle=True)
    digests = call_digests(args, name)
    digest = digests[0]
    key = RequestKey(name, operation, request_id) if request_id else None
    # Without a key, the same call again within minutes may be a retry: it is applied, and says so
    # (decision 291).
    call: CallKey | None = (operation, name, actor, digest) if key is None and operation in RETRY_GUARDED else None
    runs = 0
    while True:
        runs += 1
        outcome = MutationOutcome()
        try:
            with TOKENISER.holding_long_texts(), rt.store.write() as session:
                now = rt.write_time(session.newest_stamp())  # never before the vault's newest write
                now_s = fmt(now)
                if key is not None:
                    stored = session.begin_request(key, digest, now_s)
                    if stored is not None:
                        if stored.args_hash not in digests:
                            raise RequestIdReused(
                                f"request_id {request_id!r} was already used for a different {operation} call "
                                f"in {name!r}, or by another caller (a request_id is one caller's); use a new request_id for "
                                "a new operation",
                                field="request_id",
                            )
                        return MutationOutcome.from_json(stored.response), True
                target = _target(rt, session, name, now_s, outcome, create=create, exclusive=exclusive)
                ctx = WriteContext(rt, session, now, now_s, target, operation, request_id, actor, outcome)
                body(ctx)
                if call is not None and (again := repeated(rt, session, call, now)) is not None:
                    outcome.issues.append(again)
                if outcome.state != "unchanged":
                    session.touch_initiative(target.id, ctx.now_s)
                    session.append_audit(
                        AuditRecord(
                            at=max(ctx.now_s, ctx.last_s),
                            operation=operation,
                            actor=actor,
                            request_id=request_id,
                            initiative_id=target.id,
                            affected=[r.id for r in (*outcome.created, *outcome.affected)],
                            changes=[{"field": c.field, "before": c.before, "after": c.after} for c in outcome.changes]
                            + ctx.changes_log,
                        )
                    )
                if key is not None:
                    session.finish_request(key, outcome.to_json())
        except CommitUnknown:
            # The write may stand (its COMMIT's answer was lost): a retry without a key is told it
            # repeats it, as after an answer that arrived (decision 444). Never run again here.
            remember(rt, call, outcome)
            raise
        except Unavailable as exc:
            if not runs_again(exc, operation, runs):
                raise
            continue
        remember(rt, call, outcome)
        return outcome, False


def _target(
    rt: Runtime, session: Session, name: str, now_s: str, outcome: MutationOutcome, *, create: bool, exclusive: bool
) -> Initiative:
    """The initiative named `name`, held until the commit (decision 301); made anew when there is none
    (merged away or deleted meanwhile) and `create`, the outcome saying so."""
    target = session.hold_initiative_named(name, exclusive)
    if target is not None:
        return target
    from kaeru.domain.similar import suggest  # imported when first needed (decision 16.S1)
    from kaeru.service.former_names import FormerNames, refuse_former_name

    known = FormerNames(session)  # the names, and what became of this one, read once
    if not create:
        raise UnknownInitiative(f"no initiative named {name!r}{known.hint(name)}", field="initiative")
    refuse_invisible(name, "initiative")
    screen_secrets(rt.settings.secret_policy, "initiative", name, handle=True)
    moved = refuse_former_name(session, name, known)  # renamed or merged: never a second project
    # Only the writer whose insert made the row says so: a concurrent writer of the same new name
    # (PostgreSQL waits on the unique index, then takes the committed row) did not create it.
    target, inserted = session.claim_initiative(name, now_s)
    if inserted:
        close = suggest(name, known.visible_names())
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        ended = f" ({moved.said()}: this is another)" if moved is not None else ""
        outcome.issues.append(Issue("new_initiative", f"created a new initiative {name!r}{ended}.{hint}", "initiative"))
    return target
