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
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

if TYPE_CHECKING:
    from kaeru.mcp.adapter import ToolRegistry

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

_CONTEXT = re.compile(r"^kaeru://initiative/(?P<name>[^/]+)/context$")
_NODE = re.compile(r"^kaeru://node/(?P<id>[^/]+)$")


def context_uri(name: str) -> str:
    return f"kaeru://initiative/{quote(name, safe='')}/context"


def initiative_names(registry: ToolRegistry, prefix: str = "") -> list[str]:
    """The vault's initiative names starting with `prefix` (case-insensitive), sorted; only those the
    request's principal has a grant for."""
    from kaeru.service import grants

    with registry.service.store.read() as session:
        names = grants.visible_names(i.name for i in session.all_initiatives())
    from kaeru.domain.naming import folded

    wanted = folded(prefix)
    return sorted(n for n in names if folded(n).startswith(wanted))


def node_ids(registry: ToolRegistry, typed: str) -> list[str]:
    """Ids of live nodes whose name is like `typed` (or `typed` itself, a whole id of a live node: a
    forgotten one was offered, and reading it failed); only nodes of an initiative the request's
    principal has a grant for."""
    from kaeru.service import grants

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
    """The `LISTED` most recently active initiatives the request's principal may see, most active first."""
    from kaeru.service import initiatives

    with registry.service.store.read() as session:
        return initiatives.most_active(session, LISTED)


async def list_resources(registry: ToolRegistry) -> types.ListResourcesResult:
    names = await anyio.to_thread.run_sync(recent_names, registry)
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
        home = await anyio.to_thread.run_sync(_home_initiative, registry, node_id)
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
        issue = envelope["issues"][0] if envelope["issues"] else {"code": "rejected", "message": "rejected"}
        raise MCPError(RESOURCE_NOT_FOUND, f"{issue['code']}: {issue['message']}", {"uri": uri})
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=JSON, text=json.dumps(envelope, ensure_ascii=False))]
    )


def _home_initiative(registry: ToolRegistry, node_id: str) -> str | None:
    """The name of an initiative holding live node `node_id` (its first the principal may see), None
    if there is none — as for a node outside the grants, which is not named either."""
    from kaeru.service import grants

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
    """Values for a template's argument (None when `ref` is not one of ours)."""
    if not isinstance(ref, types.ResourceTemplateReference):
        return None
    if ref.uri == CONTEXT_TEMPLATE and argument.name == "name":
        values = initiative_names(registry, argument.value)
    elif ref.uri == NODE_TEMPLATE and argument.name == "id":
        values = node_ids(registry, argument.value)
    else:
        return types.Completion(values=[])
    return types.Completion(values=values[:LISTED], total=len(values), has_more=len(values) > LISTED)
