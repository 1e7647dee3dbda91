"""How the read commands say a node, a link and an omission to a person at a terminal.

A hit's line names what a person decides by before opening it: its kind (a decision, a rule — the
note's `kind:` tag; the node type when it has none), whether it is done, supported, superseded and
by what. Every decision, observation and rule printed as `episode` or `concept`, and a done task or
a refuted hypothesis looked like an open one (the status was in `--json` only).
"""

from __future__ import annotations

from typing import Any

from kaeru.domain.graphemes import shortened

#: What an omission's reason means to a person, and what brings the memories back where something does.
OMITTED = {
    "limit": "past --limit; the next page has them",
    "budget": "cut to fit the answer's size; the next page has them",
    "superseded": "older versions of nodes a later one replaced; `kaeru call search` with "
    "-a filters.current=all lists them too",
    "window": "not ranked: the query matched more than is read; add words, --tag or --type to narrow it",
    "stale": "cold or frozen memory; --include-stale shows it",
    "suppressed": "released or expired rules, reminders not yet due; --include-suppressed shows them",
    "task_scoped": "rules scoped to another task; --task NAME adds a task's",
}
#: Longest body a search or recall hit prints (`kaeru read` prints it whole).
HIT_BODY_CHARS = 2000


def kind_of(node: dict[str, Any]) -> str:
    """The note's kind (`kind:decision`), else its node type."""
    for tag in node.get("tags") or ():
        if tag.startswith("kind:"):
            return str(tag[5:])
    return str(node["node_type"])


def marks(node: dict[str, Any], *, status: bool = True) -> str:
    """` [done · superseded by 01b…]`: its status, and its currentness with its successors' ids
    when it is not current; empty when there is nothing to say."""
    said = [str(node["status"])] if status and node.get("status") else []
    if node.get("currentness", "current") != "current":
        successors = node.get("successors") or []
        said.append(node["currentness"] + (f" by {', '.join(successors)}" if successors else ""))
    return f" [{' · '.join(said)}]" if said else ""


def head(node: dict[str, Any], *, status: bool = True) -> str:
    """A node's first line: id, kind, name and `marks`."""
    return f"{node['id']}  {kind_of(node):<11} {node['name']}{marks(node, status=status)}"


def whole_body_command(node: dict[str, Any]) -> str:
    """The command that prints `node` whole."""
    initiatives = node.get("initiatives") or []
    return f"kaeru read {node['id']}" + (f" -i {initiatives[0]}" if initiatives else "")


def hit_body(hit: dict[str, Any]) -> list[str]:
    """A hit's body, indented, cut to `HIT_BODY_CHARS` between two characters as a reader sees them
    (`shortened`: an accent or an emoji's other half is not left behind); a cut (here, or by the
    answer's budget) ends with `…` and the command that prints it whole."""
    body = str(hit["body"])
    cut = hit.get("body_range")
    total = int(cut["total"]) if cut else len(body)
    kept = shortened(body, HIT_BODY_CHARS)
    lines = ["    " + line for line in kept.split("\n")]
    if cut or len(kept) < len(body):
        lines[-1] += "…"
        lines.append(f"    ({len(kept)} of {total} characters shown; {whole_body_command(hit)} prints it whole)")
    return lines


def one_line(text: str, chars: int) -> str:
    """`text` on one line, cut to `chars` (`shortened`) with `…`."""
    flat = text.replace("\n", " ")
    return flat if len(flat) <= chars else shortened(flat, chars) + "…"


def link(edge: dict[str, Any], node_id: str) -> str:
    """An edge of `node_id` as seen from it: `→ supports 0.9 01b…` (outgoing) or `← refers_to 1 01c…`."""
    outgoing = edge["from"] == node_id
    other = edge["to"] if outgoing else edge["from"]
    named = (edge.get("properties") or {}).get("relations")
    relations = f" ({', '.join(map(str, named))})" if isinstance(named, list) and named else ""
    gone = " (retracted)" if edge.get("retracted") else ""
    return f"{'→' if outgoing else '←'} {edge['edge_type']}{relations} {edge['weight']:g} {other}{gone}"


#: What `limit` and `budget` mean where the command has no next page (review of decision 480).
UNPAGED = {
    "context": {
        "limit": "past the section's cap; `kaeru search` with the section's filters lists them all",
        "budget": "cut to fit the answer's size; --budget raises it",
    },
    "read": {
        "limit": "more links than a read shows; `kaeru call trail -a kind=neighbours` pages through them",
        "budget": "cut to fit the answer's size",
    },
}


def omission(omitted: dict[str, Any], command: str = "search") -> str:
    """`(omitted 3 hits: stale — cold or frozen memory; …)`: the envelope's words, then what they
    mean for `command` (`search` and `recall` page on; `context` and `read` do not)."""
    meaning = UNPAGED.get(command, {}).get(omitted["reason"]) or OMITTED.get(omitted["reason"])
    return f"(omitted {omitted['count']} {omitted['section']}: {omitted['reason']}{f' — {meaning}' if meaning else ''})"
