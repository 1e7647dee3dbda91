"""In-place revisions: `revise` (patch fields, same id) and `replace` (new immutable source bytes)."""

from __future__ import annotations

import hashlib
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import RULE_TAG, Node, NodeType
from kaeru.errors import Forbidden, ImmutableSource, InvalidArgument, RevisionConflict
from kaeru.service import grants
from kaeru.service.capture import parse_applicability, parse_reminder
from kaeru.service.checks import normalise_initiative
from kaeru.service.mutation import WriteContext, retag
from kaeru.service.outcomes import Change
from kaeru.service.supersession import say_revised_superseded
from kaeru.service.trail_pages import bounded_changes
from kaeru.service.views import hidden_in

if TYPE_CHECKING:
    from kaeru.service.requests import ReplaceRequest, ReviseRequest
    from kaeru.storage.base import Session

PATCH_FIELDS = ("name", "body", "description", "constraint_state", "applicability", "reminder")
#: The characters of text a revise's `changes` show at most, all values together: what `read` shows
#: by default (its `budget_chars`). A revise of a long body answered the old and the new body whole;
#: past this, each long value shows its start and the answer names the `read` that shows the rest.
CHANGE_CHARS = 8000


def check_revision(node: Node, expected: str | None, session: Session) -> None:
    """Refuse a write made against another revision than the node's, saying what changed since and
    who changed it (with `session`): "re-read it and retry" alone sent an agent to re-read a node
    whose only change was another agent's bookkeeping, not knowing whether its own edit still held."""
    if expected is not None and expected != node.revision:
        since = _changed_since(session, node, expected)
        raise RevisionConflict(
            f"node {node.id} is at revision {node.revision!r}, not {expected!r}{since}; re-read it and retry",
            field="expected_revision",
        )


#: Fields of a node compared to say what a later revision changed.
_COMPARED = ("name", "body", "description", "tags", "layer", "status", "pinned", "tier", "node_type", "retracted")
#: Revisions named in a conflict's message at most (the newest).
_NAMED = 5


def _changed_since(session: Session, node: Node, expected: str) -> str:
    """`: since it, alice changed body (2-…); bob changed properties.reminder (3-…)`, or that no
    revision of the node has that name.

    A token limited to some initiatives is told only of the revisions it may see — those written
    while the node was in one of them, as `trail` and `read … at` show it (decision 374): nothing
    of the others, not their actors, fields, names or number. A revision it sees after some it
    does not is compared with the last one it saw, and said to differ from it (its writer did not
    necessarily make those changes); an `expected` it may not see is no revision it knows of."""
    granted = grants.granted_ids(session)
    log = [(i, e) for i, e in enumerate(session.revision_log(node.id)) if grants.node_visible(e.node, granted)]
    at = next((i for i, (_, entry) in enumerate(log) if entry.node.revision == expected), None)
    if at is None:
        return " (no revision of this node has that name)"
    steps = []
    for (place, before), (next_place, after) in pairwise(log[at:]):
        fields = [f for f in _COMPARED if getattr(before.node, f) != getattr(after.node, f)]
        keys = sorted(set(before.node.properties) | set(after.node.properties))
        fields += [f"properties.{k}" for k in keys if before.node.properties.get(k) != after.node.properties.get(k)]
        what, who = ", ".join(fields) or "nothing visible", after.actor or "someone"
        if next_place == place + 1:  # no revision between that the caller may not see
            steps.append(f"{who} changed {what} ({after.node.revision})")
        else:
            steps.append(f"{after.node.revision} by {who} differs in {what}")
    shown = steps[-_NAMED:]
    earlier = f"{len(steps) - len(shown)} earlier revision(s), then " if len(steps) > len(shown) else ""
    return f": since it, {earlier}{'; '.join(shown)}"


def is_rule(node: Node) -> bool:
    return node.node_type == NodeType.CONCEPT and RULE_TAG in node.tags


def has_source(node: Node) -> bool:
    source = node.properties.get("source")
    return isinstance(source, dict) and bool(source.get("immutable"))


def revise(ctx: WriteContext, request: ReviseRequest) -> None:
    """Patch a node in place; omitted fields stay, `null` clears applicability/reminder."""
    patch = request.patch
    if not isinstance(patch, dict) or not patch:
        raise InvalidArgument("patch must name at least one field", field="patch")
    unknown = sorted(set(patch) - set(PATCH_FIELDS))
    if unknown:
        raise InvalidArgument(f"patch cannot change {', '.join(unknown)}", field=f"patch.{unknown[0]}")
    node = ctx.resolve(request.node, "node")
    check_revision(node, request.expected_revision, ctx.session)
    fields: dict[str, Any] = {}
    properties = dict(node.properties)
    changes: list[Change] = []
    # `changes` show `before` as a read shows the node to the caller: a token limited to some
    # initiatives reads no node outside them that the node's body or properties name (15.K2).
    hiding = hidden_in(ctx.session, [node])
    seen = hiding.node(node) if hiding is not None else node

    if "name" in patch:
        new_name = ctx.clean_name("patch.name", str(patch["name"]))
        if new_name != node.name:
            fields["name"] = new_name
            changes.append(Change("name", node.name, new_name))
    if "body" in patch:
        new_body = ctx.clean("patch.body", patch["body"])
        if seen.body != node.body and new_body == seen.body:
            # The body as this token reads it (`…` for a step outside its initiatives), sent back
            # with other fields: no change — it wrote the `…` over the stored name (decision 431).
            new_body = node.body
        if new_body != node.body:
            if has_source(node):
                raise ImmutableSource(
                    "this reference's body is its verbatim source, which is immutable; use `replace` to "
                    "record new source bytes as a new revision",
                    field="patch.body",
                )
            fields["body"] = new_body
            changes.append(Change("body", seen.body, new_body))
    if "description" in patch:
        new_description = ctx.clean("patch.description", patch["description"]) or None
        if new_description != node.description:
            fields["description"] = new_description
            changes.append(Change("description", node.description, new_description))
    if "constraint_state" in patch:
        if not is_rule(node):
            raise InvalidArgument(
                "constraint_state applies only to rules (note kind=rule)", field="patch.constraint_state"
            )
        state = patch["constraint_state"]
        if state not in ("active", "released"):
            raise InvalidArgument("constraint_state is active or released", field="patch.constraint_state")
        if properties.get("constraint_state") != state:
            changes.append(Change("constraint_state", properties.get("constraint_state"), state))
            properties["constraint_state"] = state
    if "applicability" in patch:
        if not is_rule(node):
            raise InvalidArgument("applicability applies only to rules (note kind=rule)", field="patch.applicability")
        value = parse_applicability(ctx, patch["applicability"], "patch.applicability")
        after = value
        if seen is not node and (hidden := _hidden_task(node, seen)) is not None:
            value = _keeping_task(value, hidden)
            after = {**value, "task": None}  # as a read shows it to the token
        if properties.get("applicability") != value:
            changes.append(Change("applicability", seen.properties.get("applicability"), after))
            if value is None:
                properties.pop("applicability", None)
            else:
                properties["applicability"] = value
    if "reminder" in patch:
        value = parse_reminder(patch["reminder"], "patch.reminder")
        if properties.get("reminder") != value:
            changes.append(Change("reminder", properties.get("reminder"), value))
            if value is None:
                properties.pop("reminder", None)
            else:
                # A new reminder starts a new window: it has not been seen yet.
                properties["reminder"] = value
    if not changes:
        ctx.outcome.state = "unchanged"
        ctx.outcome.primary = ctx.outcome_ref(node)
        return
    if properties != node.properties:
        fields["properties"] = properties
    if "name" in fields or "body" in fields:
        fields["tags"] = retag(node.tags, fields.get("name", node.name), fields.get("body", node.body), node.id)
    updated = ctx.update_node(node, **fields)
    shown, cut = bounded_changes(
        changes, CHANGE_CHARS, normalise_initiative(request.initiative), node.id, node.recorded_at, updated.recorded_at
    )
    ctx.outcome.changes.extend(shown)
    if cut is not None:
        ctx.outcome.issues.append(cut)
    ctx.outcome.primary = ctx.outcome_ref(updated)
    ctx.mark_affected(updated)
    if set(fields) - {"name", "tags"}:  # what it says changed, not only what it is called (decision 462)
        say_revised_superseded(ctx, updated)


def _hidden_task(node: Node, shown: Node) -> str | None:
    """The task `node` (a rule) is scoped to when the caller reads it unnamed (`shown`)."""
    stored, seen = node.properties.get("applicability"), shown.properties.get("applicability")
    if isinstance(stored, dict) and isinstance(seen, dict) and stored.get("task") and seen.get("task") is None:
        return str(stored["task"])
    return None


def _keeping_task(value: dict[str, Any] | None, task: str) -> dict[str, Any]:
    """A limited token's patch of a rule scoped to a task it may not see (read as `task: null`),
    keeping that task. Omitting `task` keeps it — the token reads the scope as there and unnamed, so
    sending `{through}` back changes the date and not what it cannot see; replacing the whole value,
    as the admin's patch does, would drop that scope silently. A patch that names a task or clears
    `applicability` would drop a scope the token cannot see, and is refused: the admin may."""
    if value is None or "task" in value:
        raise Forbidden(
            "this rule is scoped to a task outside this token's initiatives: a patch that names a task "
            "or clears applicability would drop that scope; omit `task` to keep it (`through` alone)",
            field="patch.applicability" if value is None else "patch.applicability.task",
        )
    return {"task": task, **value}


def replace(ctx: WriteContext, request: ReplaceRequest) -> None:
    """New verbatim source bytes for a reference, as a new revision (old bytes stay in history)."""
    node = ctx.resolve(request.node, "node")
    check_revision(node, request.expected_revision, ctx.session)
    if node.node_type != NodeType.REFERENCE:
        raise InvalidArgument("replace applies to reference notes only", field="node")
    source = ctx.clean("source", request.source)
    assert source is not None
    digest = hashlib.sha256(source.encode()).hexdigest()
    old = node.properties.get("source") if has_source(node) else None
    if old is not None and old.get("sha256") == digest:
        ctx.outcome.state = "unchanged"
        ctx.outcome.primary = ctx.outcome_ref(node)
        return
    properties = dict(node.properties)
    properties["source"] = {"sha256": digest, "chars": len(source), "immutable": True}
    description = node.description if old is not None else (node.description or node.body)
    updated = ctx.update_node(
        node,
        body=source,
        description=description,
        properties=properties,
        tags=retag(node.tags, node.name, source, node.id),
    )
    ctx.outcome.changes.append(Change("source.sha256", old.get("sha256") if old else None, digest))
    ctx.outcome.primary = ctx.outcome_ref(updated)
    ctx.mark_affected(updated)
