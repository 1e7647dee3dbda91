"""MCP resources: what a client can attach by @-mention, read through the same tools and service.

* `kaeru://initiatives` — the `initiatives` tool's envelope (its first page: the 100 most active
  initiatives, with counts, and `total`);
* `kaeru://initiative/{name}/context` — the `context` tool's re-entry bundle for one initiative
  (listed for the 100 most recently active initiatives, and a template for any other);
* `kaeru://node/{id}` — the `read` tool's envelope for one node (a template).

Each is the JSON envelope the tool answers (`application/json`), built by the tool's own handler in
a worker thread, so a resource says exactly what the tool would (decision 19.I5). Arguments complete
from the vault: initiative names by prefix, node ids by the node's name.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, unquote

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from kaeru.domain.surrogates import refusal_of_unstorable

if TYPE_CHECKING:
    from collections.abc import Callable

    from kaeru.mcp.adapter import ToolRegistry
    from kaeru.storage.base import Session

INITIATIVES = "kaeru://initiatives"
CONTEXT_TEMPLATE = "kaeru://initiative/{name}/context"
NODE_TEMPLATE = "kaeru://node/{id}"
JSON = "application/json"
#: JSON-RPC code for an unknown resource (MCP specification, resources: error handling).
RESOURCE_NOT_FOUND = -32002
#: How many initiatives `resources/list` names one by one — the most recently active, what a host
#: shows of a vault (the first names in alphabetical order said nothing of which projects are
#: live) — and completion answers at most.
LISTED = 100
#: The issue codes that say the server could not answer, not that the thing asked for is missing or
#: the request is wrong: answered with JSON-RPC -32603, so a client does not drop a resource that is there.
SERVER_FAULTS = frozenset({"unavailable", "internal"})

T = TypeVar("T")

_CONTEXT = re.compile(r"^kaeru://initiative/(?P<name>[^/]+)/context$")
_NODE = re.compile(r"^kaeru://node/(?P<id>[^/]+)$")


def context_uri(name: str) -> str:
    return f"kaeru://initiative/{quote(name, safe='')}/context"


def addressable(name: str) -> bool:
    """Whether `name` survives in a resource's URI: `.` and `..` are dot segments, which URL parsers
    (pydantic's `AnyUrl`, a browser's `new URL`) remove — `kaeru://initiative/../context` reached the
    server as `kaeru://initiative/context`, and was not found. Such names, refused for new
    initiatives, may stand in an older vault: their `context` tool still reads them."""
    return name not in {".", ".."}


def refusal_code(issue: str, otherwise: int) -> int:
    """The JSON-RPC code of a refusal with issue code `issue`: -32603 for a server fault
    (`SERVER_FAULTS`), else `otherwise` (not found, a bad argument)."""
    return INTERNAL_ERROR if issue in SERVER_FAULTS else otherwise


def refused(envelope: dict[str, Any], otherwise: int, data: dict[str, Any] | None = None) -> MCPError:
    """The protocol error for a tool's `rejected` envelope: its first issue's code and message."""
    issue = envelope["issues"][0] if envelope["issues"] else {"code": "rejected", "message": "rejected"}
    return MCPError(refusal_code(issue["code"], otherwise), f"{issue['code']}: {issue['message']}", data)


async def vault_read(registry: ToolRegistry, what: str, read: Callable[..., T], *args: Any) -> T:
    """`read(registry, *args)` in a worker thread, its failure answered as a tool call's: a
    `KaeruError` as its code and message — JSON-RPC -32603 for `unavailable` and `internal`,
    -32602 for any other —, anything else logged once as `internal` (`faults.answered`, which also
    counts an `unavailable` answer in the HTTP server's log), never raised to the SDK, which
    answered it as code 0 and logged its traceback. `what`: the request, as the log names it."""
    try:
        return await anyio.to_thread.run_sync(read, registry, *args)
    except Exception as exc:
        from kaeru.mcp.faults import answered

        error = answered(exc, what, None, registry._service)
        raise MCPError(refusal_code(error.code, INVALID_PARAMS), f"{error.code}: {error.message}") from None


def initiative_names(registry: ToolRegistry, prefix: str = "") -> list[str]:
    """The vault's initiative names starting with `prefix` (case-insensitive), most recently active
    first — the order `resources/list` names them in (a short prefix offered the alphabetically
    first, untouched for a year) —; only those the request's principal has a grant for. Nothing for
    a prefix no name can hold (NUL, a lone surrogate)."""
    from kaeru.domain.naming import folded
    from kaeru.service import grants

    if refusal_of_unstorable(prefix) is not None:
        return []
    with registry.service.store.read() as session:
        ranked = by_activity(session)
    wanted = folded(prefix)
    return [n for n in grants.visible_names(ranked) if folded(n).startswith(wanted)]


def by_activity(session: Session, limit: int | None = None) -> list[str]:
    """The names of the initiatives the request's principal may see, most recently active first (at
    most `limit`). For a token limited to some initiatives only its granted ones that exist are read
    (`grants.granted_ids`): its grants are a few names where the vault may hold thousands, and
    listing every initiative to keep those few made each listing cost as much as the vault was big."""
    from kaeru.service import grants

    granted = grants.granted_ids(session)
    if granted is None:
        listed = session.initiatives_by_activity(limit=limit)
    else:
        listed = session.initiatives_by_activity_among(sorted(granted), limit)
    return [i.name for i in listed]


def node_ids(registry: ToolRegistry, typed: str) -> list[str]:
    """Ids of live nodes whose name is like `typed` (or `typed` itself, a whole id of a live node: a
    forgotten one was offered, and reading it failed); only nodes of an initiative the request's
    principal has a grant for."""
    from kaeru.service import grants

    if refusal_of_unstorable(typed) is not None:
        return []  # no node's name or id holds it (on SQLite, "\x00" matched every name)
    out: list[str] = []
    with registry.service.store.read() as session:
        if typed and (node := session.get_node(typed)) is not None and not node.retracted:
            out = [typed]
        else:
            for name in session.name_candidates(typed, None, 20) if typed else []:
                out.extend(node.id for node in session.live_nodes_named(name, None))
        visible = grants.visible_ids(session, out)
    return [i for i in dict.fromkeys(out) if i in visible][:LISTED]


def recent_names(registry: ToolRegistry) -> list[str]:
    """The `LISTED` most recently active initiatives the request's principal may see, most active
    first, whose name survives in a URI (`addressable`)."""
    with registry.service.store.read() as session:
        return [n for n in by_activity(session, LISTED) if addressable(n)]


async def list_resources(registry: ToolRegistry) -> types.ListResourcesResult:
    names = await vault_read(registry, "resources/list", recent_names)
    listed = [
        types.Resource(
            uri=INITIATIVES,
            name="initiatives",
            title="kaeru initiatives",
            description=(
                f"The initiatives, most active first (the first {LISTED}), with node counts and last activity. "
                f"The context resources listed are those of the {LISTED} most recently active; any other "
                f"initiative's is {CONTEXT_TEMPLATE}."
            ),
            mime_type=JSON,
        )
    ]
    listed += [
        types.Resource(
            uri=context_uri(name),
            name=f"{name} context",
            title=f"Re-entry context: {name}",
            description=f"The re-entry bundle of initiative {name!r} (rules first, then open work and recent memory).",
            mime_type=JSON,
        )
        for name in names
    ]
    return types.ListResourcesResult(resources=listed)


def list_templates() -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(
                uri_template=CONTEXT_TEMPLATE,
                name="initiative context",
                title="Re-entry context of an initiative",
                description="The `context` bundle of one initiative: rules, open tasks and hypotheses, recent memory.",
                mime_type=JSON,
            ),
            types.ResourceTemplate(
                uri_template=NODE_TEMPLATE,
                name="node",
                title="One memory node",
                description="One node in full (the `read` tool's answer), with its edges.",
                mime_type=JSON,
            ),
        ]
    )


async def read_resource(registry: ToolRegistry, uri: str) -> types.ReadResourceResult:
    if uri == INITIATIVES:
        envelope = await registry.envelope("initiatives", {})
    elif (match := _CONTEXT.match(uri)) is not None:
        envelope = await registry.envelope("context", {"initiative": unquote(match["name"])})
    elif (match := _NODE.match(uri)) is not None:
        node_id = unquote(match["id"])
        home = await vault_read(registry, "resources/read", _home_initiative, node_id)
        if home is None:
            raise MCPError(RESOURCE_NOT_FOUND, f"no live node {node_id!r}", {"uri": uri})
        envelope = await registry.envelope("read", {"initiative": home, "node": node_id, "neighbours": True})
    else:
        raise MCPError(
            RESOURCE_NOT_FOUND,
            f"unknown resource {uri!r}; kaeru serves {INITIATIVES}, {CONTEXT_TEMPLATE} and {NODE_TEMPLATE}",
            {"uri": uri},
        )
    if envelope["state"] == "rejected":
        raise refused(envelope, RESOURCE_NOT_FOUND, {"uri": uri})
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=JSON, text=json.dumps(envelope, ensure_ascii=False))]
    )


def _home_initiative(registry: ToolRegistry, node_id: str) -> str | None:
    """The name of an initiative holding live node `node_id` (its first the principal may see), None
    if there is none — as for a node outside the grants, which is not named either."""
    from kaeru.service import grants

    if refusal_of_unstorable(node_id) is not None:
        return None  # no node's id holds it: not found, as on SQLite (PostgreSQL refused the query)
    with registry.service.store.read() as session:
        node = session.get_node(node_id)
        if node is None or node.retracted or not node.initiatives:
            return None
        granted = grants.granted_ids(session)
        homes = [i for i in node.initiatives if granted is None or i in granted]
        if not homes:
            return None
        return session.initiative_names(homes).get(homes[0])


def complete(registry: ToolRegistry, ref: Any, argument: types.CompletionArgument) -> types.Completion | None:
    """Values for a template's argument (None when `ref` is not one of ours); run by `vault_read`."""
    if not isinstance(ref, types.ResourceTemplateReference):
        return None
    if ref.uri == CONTEXT_TEMPLATE and argument.name == "name":
        values = [n for n in initiative_names(registry, argument.value) if addressable(n)]
    elif ref.uri == NODE_TEMPLATE and argument.name == "id":
        values = node_ids(registry, argument.value)
    else:
        return types.Completion(values=[])
    return types.Completion(values=values[:LISTED], total=len(values), has_more=len(values) > LISTED)
