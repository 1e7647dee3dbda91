"""The inputs of the reading tools (besides the contract's `search`), and `archive`'s."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field
from pydantic.config import JsonDict

from kaeru.domain.model import EdgeType, Layer, NodeType
from kaeru.domain.plans import Intent, Risk, Role
from kaeru.service.requests.base import (
    BUDGET_DEFAULT,
    BUDGET_MIN,
    Branch,
    Budget,
    InitiativeName,
    Initiatives,
    Ref,
    Request,
    Tag,
    Text,
    one_of,
    ref,
    values,
)
from kaeru.service.requests.writes import _RequestId

#: `context`'s sections in the order it serves them; cold and frozen only when asked for.
SECTIONS = (
    "rules",
    "slots",
    "core",
    "hot",
    "decisions",
    "warm",
    "cortex",
    "tasks",
    "claims",
    "reviews",
    "reminders",
    "recent",
)
ON_REQUEST = ("cold", "frozen")
#: The node types recall can return (the audit log and boards are never ranked), for its `types`.
RECALL_TYPES = values(NodeType, ("audit_event", "board"))
#: At most this many tags in recall's `tags` filter (a hit must carry every one).
MAX_FILTER_TAGS = 32
#: The longest query recall reads, in characters; past it the query is cut at a word's end. A long
#: question ranks by its rarest words (decision 168), so a pasted page reads as its first lines
#: would, while every character was read by the tokenisers and date patterns, and the continuation
#: repeated it whole: megabytes sent cost seconds of one core for each (decision 412).
MAX_QUERY_CHARS = 8000
#: The least `token_budget` recall answers with: the character budget's floor, at 4 characters a
#: token (decision 37). A smaller one is raised to it, and the answer says so.
RECALL_MIN_TOKENS = BUDGET_MIN // 4
#: Intents are accepted with a dash or an underscore.
INTENTS = [form for intent in values(Intent) for form in (intent, intent.replace("_", "-"))]


class ReadRequest(Request):
    initiative: InitiativeName = Field(description="The call's initiative (names resolve in it).")
    node: Ref = Field(description="Its id or exact name, or {initiative, name}.")
    at: Text | None = Field(
        None,
        description="As kaeru had recorded it then: RFC 3339, a date (as at its end), or an offset like 2h, 3d.",
    )
    body_offset: int = Field(0, ge=0, description="Start the body at this character (paging).")
    neighbours: bool = Field(False, description="Also return its edges, both ways (as of `at`).")
    budget_chars: Budget = Field(BUDGET_DEFAULT, description="Most body characters; the rest pages.")


#: Trail entries on a page by default: a node linked from thousands of notes has as many entries.
TRAIL_LIMIT = 100
#: Initiatives on a page of `initiatives` unless the call says otherwise: most vaults fit one page.
INITIATIVES_LIMIT = 100


class TrailRequest(Request):
    APPLIES = ("kind", {"to": ("path",), "edge_types": ("neighbours",), "newest": ("history",)})
    initiative: InitiativeName = Field(description="The call's initiative (names resolve in it).")
    node: Ref = Field(description="The node whose trail to follow.")
    kind: Literal["history", "provenance", "path", "neighbours", "chain"] = Field(
        "history",
        description="What to follow (see the tool description).",
    )
    to: Ref | None = Field(None, description="kind=path: the end node.")
    edge_types: list[Annotated[str, one_of(values(EdgeType))]] | None = Field(
        None,
        min_length=1,
        json_schema_extra={"uniqueItems": True},
        description="kind=neighbours: only these edge types.",
    )
    limit: int = Field(
        TRAIL_LIMIT,
        ge=1,
        le=500,
        description="Entries on a page (a history page ends sooner past ~32,000 characters of text); the rest come with `continuation`.",
    )
    newest: bool = Field(
        False,
        description="kind=history: its last page (the latest changes) instead of its first; `total` counts the whole history.",
    )
    cursor: Text | None = Field(None, description="From `continuation`: the next page.")


class CurrentStateRequest(Request):
    model_config = ConfigDict(json_schema_extra={"oneOf": [{"required": ["slot"]}, {"required": ["node"]}]})

    initiative: InitiativeName = Field(description="The initiative to look in.")
    slot: Annotated[str | None, ref("Slot")] = Field(None, description="Ask who holds this role…")
    node: Ref | None = Field(None, description="…or what currently replaces this node.")
    as_of: Text | None = Field(
        None, description="Answer as of this moment (RFC 3339, a date: as at its end, or 5m/2h/3d ago)."
    )


class InitiativesRequest(Request):
    prefix: str | None = Field(None, description="Only initiatives whose name starts with this (case-insensitive).")
    limit: int = Field(
        INITIATIVES_LIMIT, ge=1, le=500, description="Initiatives on a page; the rest come with `continuation`."
    )
    cursor: Text | None = Field(None, description="From `continuation`: the next page.")


class ContextRequest(Request):
    initiative: InitiativeName = Field(description="The initiative to re-enter.")
    task: Ref | None = Field(None, description="The task you are working on: adds the rules scoped to it.")
    sections: list[Annotated[str, one_of((*SECTIONS, *ON_REQUEST))]] | None = Field(
        None,
        min_length=1,
        json_schema_extra={"uniqueItems": True},
        description="Only these sections (rules always first); cold and frozen only if named.",
    )
    budget_chars: Budget = Field(
        BUDGET_DEFAULT, description="Most body characters in the answer; rules are served first."
    )


class TimelineRequest(Request):
    NEEDS = (("before", ("anchor", "query")), ("after", ("anchor", "query")))
    initiatives: Initiatives = Field(description="The initiatives to walk.")
    anchor: Ref | None = Field(None, description="Show what happened around this node…")
    query: Text | None = Field(None, description="…or around the best literal match of this text.")
    since: Text | None = Field(None, description="Window start (RFC 3339, a date: from its start, or 5m/2h/3d ago).")
    until: Text | None = Field(None, description="Window end (the same forms; a date: through its end).")
    before: int = Field(5, ge=0, le=50, description="Items before the anchor.")
    after: int = Field(5, ge=0, le=50, description="Items after the anchor.")
    limit: int = Field(20, ge=1, le=100, description="Items in a window (no anchor), and on every later page.")
    budget_chars: Budget = Field(BUDGET_DEFAULT, description="Most body characters in the answer.")
    cursor: Text | None = Field(
        None,
        description="From `continuation`: the next page.",
    )


class ReflectRequest(Request):
    initiative: InitiativeName = Field(description="The initiative to review.")
    reviews_after: Text | None = Field(
        None,
        description="The `node` of the last `open_review` item listed: only the next 25 open reviews (older).",
    )


_NON_BLANK: JsonDict = {"required": ["query"], "properties": {"query": {"pattern": "\\S"}}}


class RecallRequest(Request):
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {"if": {"properties": {"explain": {"const": True}}, "required": ["explain"]}, "then": _NON_BLANK},
                {"if": {"properties": {"multi_hop": {"const": True}}, "required": ["multi_hop"]}, "then": _NON_BLANK},
            ]
        }
    )

    initiatives: Initiatives = Field(description="The initiatives to recall from.")
    query: str | None = Field(
        None,
        description=(
            "What you need, in your own words (without one: slots, open tasks, recent memory; a"
            " question only about open work, such as 'what is left to do', adds slots, open tasks and open"
            " claims; one only about decisions, such as 'what did we decide', adds the decisions); a long"
            " question ranks by its 24 rarest words, and one past"
            f" {MAX_QUERY_CHARS:,} characters is read to the last word before them (the answer says so)."
        ),
    )
    task_intent: Annotated[str | None, one_of(INTENTS)] = Field(
        None,
        description="What you are doing; weights the channels (explore_history: every revision of the matches).",
    )
    role: Annotated[str, one_of(values(Role))] = Field(
        Role.CODER.value,
        description="Who is asking (nudges type priors).",
    )
    risk: Annotated[str, one_of(values(Risk))] = Field(
        Risk.MEDIUM.value,
        description="high: only current, non-refuted memory, from direct evidence only (no temporal, graph, "
        "feedback or semantic channel, no raw fallback); low and medium are the same: superseded and refuted "
        "memory ranked lower.",
    )
    token_budget: int = Field(
        4000,
        gt=0,
        le=100000,
        description=(
            "Most characters of the hits' descriptions and bodies (and of the source passages a fallback"
            f" finds) the answer shows, in tokens of 4 characters (at least {RECALL_MIN_TOKENS}: a smaller"
            " budget is raised to it); names, ids and the other fields come on top."
        ),
    )
    include_superseded: bool = Field(False, description="Do not demote superseded and refuted memory.")
    multi_hop: bool = Field(False, description="Second pass with the first hits' words (not with explain).")
    explain: bool = Field(
        False,
        description=(
            "Return each hit's per-channel scores (needs a query; not with multi_hop): its score is the sum"
            " of the channels' parts, times e^priors and e^currentness (multipliers, given as logarithms),"
            " plus `updates` (a newer statement or a successor set just above an older one)."
        ),
    )
    types: list[Annotated[str, one_of(RECALL_TYPES)]] | None = Field(
        None,
        min_length=1,
        json_schema_extra={"uniqueItems": True},
        description="Only these node types.",
    )
    tags: list[Tag] | None = Field(
        None,
        min_length=1,
        max_length=MAX_FILTER_TAGS,
        json_schema_extra={"uniqueItems": True},
        description="Only memory carrying all these tags (matched exactly, case and accents included).",
    )
    layers: list[Annotated[str, one_of(values(Layer))]] | None = Field(
        None,
        min_length=1,
        json_schema_extra={"uniqueItems": True},
        description="Only these layers (naming cold or frozen admits them).",
    )
    branch: Branch | None = Field(
        None,
        description="Only memory from this git branch, and memory with none.",
    )
    include_stale: bool = Field(False, description="Also cold and frozen memory (explore_history always).")
    include_suppressed: bool = Field(
        False,
        description="Also rules not in force (released, expired, of a closed task) and reminders before `after`.",
    )
    limit: int = Field(10, ge=1, le=50, description="Hits per page; fewer curated hits add `raw_hits` from sources.")
    cursor: Text | None = Field(None, description="From continuation: the next page of the same recall.")


class ArchiveRequest(Request):
    APPLIES = ("action", {"initiatives": ("export",)})
    action: Literal["export", "import"] = Field(
        description="export the vault (or some initiatives) to files, or import an amg archive."
    )
    format: Literal["markdown", "amg"] = Field(
        "amg",
        description="amg (lossless) or markdown (export only).",
    )
    path: Text = Field(description="File or folder under the export root.")
    initiatives: Initiatives | None = Field(
        None, description="export: only these initiatives (default: the whole vault)."
    )
    request_id: _RequestId = None
