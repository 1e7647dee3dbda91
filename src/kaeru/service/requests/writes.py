"""The inputs of the writing tools (besides the contract's `claim` and `revise`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, WithJsonSchema

from kaeru.domain.model import EdgeType, HypothesisStatus, NodeType, NoteKind
from kaeru.service.requests.base import (
    EXPECTED_REVISION,
    REQUEST_ID,
    Branch,
    InitiativeName,
    Json,
    NodeName,
    Ref,
    Request,
    Tag,
    Text,
    Weight,
    one_of,
    ref,
    values,
    wire_schema,
)

EdgeTypeName = Annotated[str, one_of(values(EdgeType))]
#: The audit log and an initiative's board are written by the server only (service/evolve.py).
SERVER_WRITTEN = ("audit_event", "board")
#: How load-bearing a link_to edge is when the caller does not say.
DEFAULT_LINK_WEIGHT = 0.5

_Revision = Annotated[Text | None, Field(description=EXPECTED_REVISION)]
_RequestId = Annotated[Text | None, Field(description=REQUEST_ID)]
_Branch = Annotated[
    Branch | None, Field(description="The git branch you work on (recall's `branch` filter); stored in properties.")
]


def _when(field: str, value: Any, required: list[str], *, default: bool = False) -> dict[str, Any]:
    """`if field is value then required`: one conditional requirement of the schema. The condition
    names `field` as present unless `value` is its `default`: without that, a call that left out
    (or misspelt) a required `mode` was told that `sources` was missing (decision 367)."""
    test = {"enum": value} if isinstance(value, list) else {"const": value}
    condition: dict[str, Any] = {"properties": {field: test}}
    if not default:
        condition["required"] = [field]
    return {"if": condition, "then": {"required": required}}


class NoteRequest(Request):
    NEEDS = (("edge_type", ("link_to",)), ("weight", ("link_to",)))
    initiative: InitiativeName = Field(description="The initiative to write into (created if new, with a warning).")
    text: Text = Field(description="What to remember, in the user's language. Becomes the body.")
    kind: Annotated[str, one_of(values(NoteKind))] = Field(
        NoteKind.OBSERVATION.value,
        description="How you know it (see the tool description).",
    )
    name: NodeName | None = Field(
        None,
        description="Name (default: from the first words).",
    )
    source: Text | None = Field(
        None,
        description="kind=reference: the verbatim text (immutable; `text` becomes the description).",
    )
    url: Text | None = Field(None, description="Where it came from (properties.url).")
    tags: list[Tag] | None = Field(
        None,
        max_length=64,
        json_schema_extra={"uniqueItems": True},
        description="Free tags (`kind:`, `topic:`, `lang:` ones are derived).",
    )
    occurred_at: Text | None = Field(
        None,
        description="When it happened, if not now (RFC 3339, a date, or 2d ago).",
    )
    link_to: Ref | None = Field(None, description="A node to link the new one to.")
    edge_type: EdgeTypeName = Field(
        EdgeType.REFERS_TO.value, description="Type of the link_to edge (new node → link_to)."
    )
    weight: Weight = Field(
        DEFAULT_LINK_WEIGHT,
        description="How load-bearing the link is, 0–1.",
    )
    reminder: Annotated[Json | None, ref("Reminder")] = Field(
        None, description="Resurface it from `after` for `window_days`."
    )
    applicability: Annotated[Json | None, ref("Applicability")] = Field(
        None, description="kind=rule only: applies while working on `task` and/or until `through`."
    )
    options: Annotated[Json | None, ref("CaptureOptions")] = Field(
        None, description="Slot to take, layer, slot compare-and-set."
    )
    branch: _Branch = None
    request_id: _RequestId = None


class ReplaceRequest(Request):
    initiative: InitiativeName = Field(description="The call's initiative (names resolve in it).")
    node: Ref = Field(description="The reference note whose source to replace.")
    source: Text = Field(description="The new verbatim source text.")
    expected_revision: _Revision = None
    request_id: _RequestId = None


class LinkRequest(Request):
    APPLIES = (
        "action",
        {
            "weight": ("add", "reweight"),
            "edge_type": ("add", "remove", "reweight"),
            "name": ("chain",),
            "summary": ("chain",),
        },
    )
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                _when("action", "add", ["weight"], default=True),
                _when("action", "reweight", ["edge_type", "weight"]),
                _when("action", "remove", ["edge_type"]),
            ]
        }
    )

    initiative: InitiativeName = Field(
        description="The call's initiative: scopes name resolution; a chain is saved here."
    )
    action: Literal["add", "remove", "reweight", "chain"] = Field(
        "add",
        description="add, remove, reweight, or chain.",
    )
    source: Ref = Field(alias="from", description="Source node of the edge (or start of the chain).")
    to: Ref = Field(description="Target node of the edge (or end of the chain).")
    edge_type: EdgeTypeName | None = Field(
        None,
        description="Edge type (add: refers_to by default; remove/reweight: required).",
    )
    weight: Weight | None = Field(None, description="Required for add/reweight: how load-bearing, 0–1.")
    name: NodeName | None = Field(None, description="chain only: a name for the saved chain.")
    summary: Text | None = Field(None, description="chain only: what the path explains (the chain's body).")
    request_id: _RequestId = None


class VerdictRequest(Request):
    initiative: InitiativeName = Field(description="The call's initiative: scopes name resolution of `hypothesis`.")
    hypothesis: Ref = Field(description="The hypothesis to close (made by `claim`).")
    status: Annotated[str, one_of(values(HypothesisStatus, ["open"]))] = Field(
        description="The verdict. refuted makes the hypothesis read as refuted everywhere."
    )
    evidence: Annotated[Json | None, ref("Evidence")] = Field(
        None,
        description="{node} that decides it, or {method} of testing.",
    )
    expected_revision: _Revision = None
    request_id: _RequestId = None


class EvolveRequest(Request):
    APPLIES = (
        "mode",
        {
            "source": ("settle", "unsettle", "supersede"),
            "sources": ("synthesise",),
            # One revision cannot guard several sources: refused, never ignored (a caller that sent
            # it believed the synthesis was a compare-and-set).
            "expected_revision": ("settle", "unsettle", "supersede"),
        },
    )
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                _when("mode", "synthesise", ["sources", "new_body"]),
                _when("mode", ["settle", "unsettle", "supersede"], ["source"]),
            ]
        }
    )

    initiative: InitiativeName = Field(description="The call's initiative: scopes name resolution; new nodes join it.")
    mode: Literal["settle", "unsettle", "supersede", "synthesise"] = Field(
        description="What to do (see the tool description)."
    )
    source: Ref | None = Field(None, description="The node to settle, unsettle or supersede.")
    sources: list[Ref] | None = Field(
        None, min_length=1, max_length=100, description="synthesise only: the nodes the synthesis is derived from."
    )
    new_name: NodeName | None = Field(
        None,
        description=(
            "Name of the new node (default: the source's; supersede with new_body: named after it,"
            " as the source keeps its name)."
        ),
    )
    new_body: Text | None = Field(
        None, description="Body of the new node (required for synthesise; supersede's corrected fact)."
    )
    new_type: Annotated[str | None, one_of(values(NodeType, SERVER_WRITTEN))] = Field(
        None,
        description="Type of the new node (default: from the source).",
    )
    expected_revision: _Revision = None
    request_id: _RequestId = None


class ReviewRequest(Request):
    APPLIES = ("action", {"reason": ("flag",), "resolution": ("close",)})
    model_config = ConfigDict(json_schema_extra={"allOf": [_when("action", "flag", ["reason"])]})

    initiative: InitiativeName = Field(description="The call's initiative: scopes name resolution of `target`.")
    action: Literal["flag", "close"] = Field(description="flag a doubt about `target`, or close its open reviews.")
    target: Ref = Field(description="The node under doubt.")
    reason: Text | None = Field(None, description="flag: what is doubtful and why (becomes the review note).")
    resolution: Text | None = Field(
        None, description="close: how it was resolved (a note that supersedes the reviews)."
    )
    request_id: _RequestId = None


class SlotRequest(Request):
    initiative: InitiativeName = Field(description="The initiative whose role this is.")
    slot: Annotated[str, ref("Slot")] = Field(description="The role, e.g. handoff, entrypoint, prod-state.")
    node: Ref | None = Field(None, description="The new holder; omit to release the slot.")
    expected_slot_revision: Text | None = Field(None, description='Slot revision you last saw ("0" if never taken).')
    request_id: _RequestId = None


class LayerRequest(Request):
    model_config = ConfigDict(json_schema_extra={"anyOf": [{"required": ["layer"]}, {"required": ["pin"]}]})

    initiative: InitiativeName = Field(description="The call's initiative: scopes name resolution of `nodes`.")
    nodes: list[Ref] = Field(min_length=1, max_length=200, description="The nodes to move.")
    layer: Annotated[str | None, ref("Layer")] = Field(
        None, description="core, hot, warm (where new nodes start), cold, frozen."
    )
    pin: bool | None = Field(None, description="true: automatic hygiene never moves these nodes; false: unpin.")
    request_id: _RequestId = None


class ForgetRequest(Request):
    initiative: InitiativeName = Field(description="The call's initiative (names resolve in it).")
    node: Ref = Field(description="The node to retract.")
    reason: Text = Field(description="Why (kept in the audit record).")
    expected_revision: _Revision = None
    request_id: _RequestId = None


class TaskRequest(Request):
    NEEDS = (("edge_type", ("link_to",)), ("weight", ("link_to",)))
    initiative: InitiativeName = Field(description="Whose board gets the task; created if new (with a warning).")
    text: Text = Field(description="What to do.")
    name: NodeName | None = Field(None, description="Name (default: from the first words).")
    due: Text | None = Field(None, description="Due date: YYYY-MM-DD, RFC 3339, or a future offset like 3d / 2w.")
    status: Text | None = Field(
        None, description="Board column key (default: the board's first column, `open` on the default board)."
    )
    tags: list[Tag] | None = Field(None, max_length=64, description="Free tags.")
    link_to: Ref | None = Field(None, description="A node the task is about (edge task → node).")
    edge_type: EdgeTypeName = Field(EdgeType.REFERS_TO.value, description="Type of the link_to edge.")
    weight: Weight = Field(DEFAULT_LINK_WEIGHT, description="Weight of the link_to edge.")
    reminder: Annotated[Json | None, ref("Reminder")] = Field(
        None, description="Resurface the task from `after` for `window_days` days."
    )
    options: Annotated[Json | None, ref("CaptureOptions")] = Field(
        None, description="Slot to take, layer, slot compare-and-set."
    )
    branch: _Branch = None
    request_id: _RequestId = None


class TaskUpdateRequest(Request):
    model_config = ConfigDict(json_schema_extra={"anyOf": [{"required": ["status"]}, {"required": ["due"]}]})

    initiative: InitiativeName = Field(description="The task's initiative (its board decides the valid statuses).")
    task: Ref = Field(description="The task.")
    status: Text | None = Field(
        None, description="New board column key; unknown keys are rejected with the valid list."
    )
    #: Null is meaningful here: it clears the due date (absent leaves it).
    due: Annotated[str | None, WithJsonSchema({"type": ["string", "null"], "minLength": 1})] = Field(
        None, description="New due date (date, RFC 3339, 3d/2w); null clears it."
    )
    expected_revision: _Revision = None
    request_id: _RequestId = None


class Column(Request):
    key: Annotated[str, Field(pattern="^[a-z][a-z0-9_-]{0,31}$")] = Field(
        description="Column key, the status of its tasks (e.g. open, done)."
    )
    label: Text | None = Field(None, description="Display name (default: the key).")


class InitiativeRequest(Request):
    APPLIES = ("action", {"to": ("rename", "merge"), "node": ("attach", "detach"), "columns": ("set_board",)})
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                _when("action", ["rename", "merge"], ["to"]),
                _when("action", ["attach", "detach"], ["node"]),
                _when("action", "set_board", ["columns"]),
            ]
        }
    )

    initiative: InitiativeName = Field(description="The initiative to act on.")
    action: Literal["rename", "merge", "delete", "attach", "detach", "set_board"] = Field(
        description="What to do (see the tool description)."
    )
    to: InitiativeName | None = Field(
        None, description="rename: the new name; merge: the initiative to merge into (must exist)."
    )
    node: Ref | None = Field(None, description="attach/detach: the node.")
    columns: list[Annotated[Json, WithJsonSchema(wire_schema(Column))]] | None = Field(
        None,
        min_length=1,
        max_length=20,
        description=(
            "set_board: the ordered columns [{key, label}]; tasks of a removed column move to the first"
            " (finished ones to the closing column), with a warning."
        ),
    )
    request_id: _RequestId = None
