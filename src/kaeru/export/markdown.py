"""The markdown export: an Obsidian-friendly folder rendered from an `amg` archive (pure, deterministic).

Each live node is one page `<tier>/<type>/<slug>.md` with YAML front matter and `## Outgoing` /
`## Incoming` wikilinks that keep edge types and weights; README.md, INDEX.md (by tier and type,
provenance trees, open questions) and LOG.md (the audit trail) sit at the top.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from kaeru.export.amg import Archive

_SLUG = re.compile(r"[^a-z0-9]+")


def _slug(name: str, node_id: str, taken: set[str]) -> str:
    base = _SLUG.sub("-", name.lower()).strip("-")[:60] or "node"
    slug = base
    if slug in taken:
        slug = f"{base}-{node_id.replace('-', '')[-8:]}"
    taken.add(slug)
    return slug


def _yaml(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def render(archive: Archive) -> dict[str, str]:
    """Relative path → file content, for every file of the export."""
    latest: dict[str, dict[str, Any]] = {}
    for record in archive.nodes:
        latest[record["id"]] = record
    live = {i: r for i, r in latest.items() if not r["retracted"]}
    edges: dict[tuple[str, str, str], dict[str, Any]] = {}
    for record in archive.edges:
        edges[(record["src"], record["dst"], record["edge_type"])] = record
    live_edges = [e for e in edges.values() if not e["retracted"] and e["src"] in live and e["dst"] in live]
    ordered = sorted(live.values(), key=lambda r: (r["tier"], r["node_type"], r["created_at"], r["id"]))
    taken: set[str] = set()
    slugs = {r["id"]: _slug(r["name"], r["id"], taken) for r in ordered}
    paths = {r["id"]: f"{r['tier']}/{r['node_type']}/{slugs[r['id']]}.md" for r in ordered}
    outgoing: dict[str, list[dict[str, Any]]] = defaultdict(list)
    incoming: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for edge in sorted(live_edges, key=lambda e: (e["src"], e["dst"], e["edge_type"])):
        outgoing[edge["src"]].append(edge)
        incoming[edge["dst"]].append(edge)
    files: dict[str, str] = {}
    for record in ordered:
        node_id = record["id"]
        front = {
            "id": node_id,
            "type": record["node_type"],
            "tier": record["tier"],
            "layer": record["layer"],
            "status": record["status"],
            "initiatives": record["initiatives"],
            "tags": record["tags"],
            "created_at": record["created_at"],
            "recorded_at": record["recorded_at"],
            "revision": record["revision"],
        }
        lines = ["---", *[f"{k}: {_yaml(v)}" for k, v in front.items()], "---", "", f"# {record['name']}", ""]
        if record["description"]:
            lines += [f"> {record['description']}", ""]
        if record["body"]:
            lines += [record["body"], ""]
        if outgoing[node_id]:
            lines += ["## Outgoing", ""]
            lines += [f"- {e['edge_type']} ({e['weight']:g}) → [[{slugs[e['dst']]}]]" for e in outgoing[node_id]]
            lines.append("")
        if incoming[node_id]:
            lines += ["## Incoming", ""]
            lines += [f"- [[{slugs[e['src']]}]] → {e['edge_type']} ({e['weight']:g})" for e in incoming[node_id]]
            lines.append("")
        files[paths[node_id]] = "\n".join(lines)
    header = archive.header()
    files["README.md"] = "\n".join(
        [
            "# kaeru memory export",
            "",
            f"Initiatives: {', '.join(header['initiatives']) or '(none)'}. Exported as of {header['exported_at']}.",
            f"{len(live)} live nodes, {len(live_edges)} live edges. One page per node under `<tier>/<type>/`;",
            "links keep their edge type and weight. INDEX.md lists everything; LOG.md is the audit trail.",
            "The lossless form of this vault is the `amg` archive (docs/amg.md).",
            "",
        ]
    )
    index = ["# Index", ""]
    by_group: dict[tuple[str, str], list[str]] = defaultdict(list)
    for record in ordered:
        by_group[(record["tier"], record["node_type"])].append(record["id"])
    for (tier, node_type), ids in sorted(by_group.items()):
        index += [f"## {tier} / {node_type}", ""] + [f"- [[{slugs[i]}]]" for i in ids] + [""]
    roots = [r["id"] for r in ordered if any(e["edge_type"] == "derived_from" for e in outgoing[r["id"]])]
    if roots:
        index += ["## Provenance", ""]
        for root in roots:
            index.append(f"- [[{slugs[root]}]]")
            index += [
                f"  - derived from [[{slugs[e['dst']]}]]" for e in outgoing[root] if e["edge_type"] == "derived_from"
            ]
        index.append("")
    questions = [r["id"] for r in ordered if r["node_type"] == "hypothesis" and r["status"] == "open"]
    if questions:
        index += ["## Open questions", ""] + [f"- [[{slugs[i]}]]" for i in questions] + [""]
    files["INDEX.md"] = "\n".join(index)
    log = ["# Log", ""]
    for record in archive.audit:
        who = f"{record['actor']}" + (f" ({record['request_id']})" if record["request_id"] else "")
        log.append(f"- {record['at']} {record['operation']} by {who}: {len(record['affected'])} node(s)")
    files["LOG.md"] = "\n".join(log) + "\n"
    return dict(sorted(files.items()))
