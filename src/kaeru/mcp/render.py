"""The compact text of a tool result: what a model needs to act, from the API 1 envelope.

`structuredContent` carries the full envelope; the text block is what a model reads in clients that
read `content` (decision 18.C1). It keeps every handle the next call needs — ids, names, revisions,
the next page's exact arguments, `next_step` —, when each memory happened (the day of its
`created_at`, `when`), whether a task is overdue and a rule not in force where the answer knows it,
and leaves out what the envelope repeats on every hit: full timestamps, tier, layer, visibility,
empty fields and derived tags (`topic:`, `lang:`; `kind:` is shown as the kind). `KAERU_TEXT=json`
returns the envelope as JSON text instead.

Layout, one fact per line:

    search ok: 2 of 4 hits
    - db-choice · decision · 2027-01-04 · id=01a2… rev=1-a5560d4e24b4 · tags: infra
      We chose SQLite because it needs no server.
    omitted: hits 2 (limit)
    next: search {"initiatives":["demo"],"text":"sqlite","limit":2,"cursor":"…"}

A list argument of many items (a search of thousands of initiatives) is not repeated on the `next:`
line: `next: search {"text":"sqlite","cursor":"…"} plus "initiatives" (3000 items) exactly as in
this call`. The envelope's `next_arguments` keep every argument.

The id and revision are written in full (`id=`, `rev=`): an agent copies them into `node` and
`expected_revision`. Values that are not plain words are written as JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime, tzinfo
from typing import Any

from kaeru.domain.graphemes import shortened
from kaeru.mcp.render_context import applicability_words, node_marks, section_notes

#: Tag families the server derives (`export.screen.SERVER_TAG_FAMILIES`; the kind and status are shown on their own).
_DERIVED = ("topic:", "lang:", "kind:", "status:")
#: Properties not shown at their usual value (a rule in force is `constraint_state: active`).
_QUIET = {"constraint_state": "active"}
#: The `recall` argument that brings back what an omission's reason left out.
_BRINGS_BACK = {"stale": "`include_stale: true`", "suppressed": "`include_suppressed: true`"}
#: Longest before/after value of a change shown in full; longer ones are cut with their length.
_CHANGE_CHARS = 160
#: A list argument of more items than this is not repeated on the `next:` line: a search of
#: thousands of initiatives wrote every name there, for a page of a few hits. The line names it instead.
_NEXT_ITEMS = 20


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _kind(node: dict[str, Any]) -> str:
    for tag in node.get("tags") or ():
        if tag.startswith("kind:"):
            return str(tag[5:])
    return str(node.get("node_type") or "node")


def _named(node: dict[str, Any]) -> list[str]:
    """Its name and kind. A name the server made up (the body's first words and the id's last six
    digits) is left out: the id and the body say it."""
    name = node.get("name")
    return [name, _kind(node)] if name and not name.endswith("-" + node["id"][-6:]) else [_kind(node)]


def handle(node: dict[str, Any]) -> str:
    """`name · kind · id=… rev=…`: what names the node in the next call."""
    return " · ".join([*_named(node), f"id={node['id']} rev={node['revision']}"])


def _local(stamp: Any, zone: tzinfo | None) -> datetime | None:
    """A stored UTC timestamp on the user's clock (`zone`; None: the machine's own)."""
    try:
        return datetime.fromisoformat(stamp).astimezone(zone) if isinstance(stamp, str) else None
    except ValueError:
        return None


def when(node: dict[str, Any], zone: tzinfo | None = None, clock: bool = False) -> str:
    """When the memory happened: the day of its `created_at` (its valid time: `occurred_at` when one
    was given), with the time of day where the answer is about order within days (`clock`), and the
    day this revision was recorded when that is another day (a later revision, a back-dated note).
    On the user's calendar (`zone`, as `today=` and every "today" is, decision 188), where the tools'
    `at`, `as_of`, `since` and `until` read a bare date or a time without an offset (decision 342): a
    day shown here can be passed back as it is. Without it a model back after a month read a January
    deploy and a February incident as equally fresh; `today=` and `trail` were the only times shown."""
    created = _local(node.get("created_at"), zone)
    if created is None:
        return ""
    said = created.strftime("%Y-%m-%d %H:%M" if clock else "%Y-%m-%d")
    recorded = _local(node.get("recorded_at"), zone)
    if recorded is not None and recorded.date() != created.date():
        said += f" (recorded {recorded.date().isoformat()})"
    return said


def dated_handle(node: dict[str, Any], zone: tzinfo | None = None, clock: bool = False) -> str:
    """`name · kind · when · id=… rev=…`: the handle with when the memory happened, where a model
    reads it with the name, before the ids it copies."""
    dated = when(node, zone, clock)
    return " · ".join([*_named(node), *([dated] if dated else []), f"id={node['id']} rev={node['revision']}"])


def node_lines(
    node: dict[str, Any],
    *,
    indent: str = "",
    body: bool = True,
    zone: tzinfo | None = None,
    clock: bool = False,
    overdue: bool = False,
    out_of_force: str | None = None,
    marks: Iterable[str] = (),
    names: dict[str, str] | None = None,
) -> list[str]:
    """A node: its handle line — name, kind, when it happened (`when`), id and revision, then
    currentness, status and free tags when they say something, whether the answer found it overdue
    (a task) or not in force (a rule: `out_of_force`, the reason), what the answer's section says of
    it (`marks`: the slots it holds…) and a rule's applicability in words, the task by its name where
    the answer shows it (`names`) — then its description and body, indented."""
    head = dated_handle(node, zone, clock)
    extras: list[str] = [*marks]
    if out_of_force:
        extras.append(f"not in force: {out_of_force}")
    currentness = node.get("currentness")
    if currentness and currentness != "current":
        successors = node.get("successors") or []
        extras.append(currentness + (f" by {', '.join(successors)}" if successors else ""))
    if node.get("status"):
        extras.append(f"status={node['status']}")
    properties = {k: v for k, v in (node.get("properties") or {}).items() if _QUIET.get(k) != v}
    if properties.get("occurred_at") == node.get("created_at"):
        del properties["occurred_at"]  # a back-dated note's valid time: `when` says it
    due = properties.pop("due", None) if node.get("node_type") == "task" else None
    if isinstance(due, str):
        extras.append(f"overdue, due {due}" if overdue else f"due {due}")
    elif due is not None:
        properties["due"] = due
    if isinstance(properties.get("applicability"), dict):
        said = applicability_words(properties["applicability"], names or {})
        if said:
            extras.append(said)
            del properties["applicability"]
    if node.get("pinned"):
        extras.append("pinned")
    if node.get("metadata_is_current") is False:
        extras.append("metadata not current")
    tags = [t for t in node.get("tags") or () if not t.startswith(_DERIVED)]
    if tags:
        extras.append("tags: " + ", ".join(tags))
    if properties:
        extras.append("properties=" + _json(properties))
    line = f"{indent}- {head}" + "".join(f" · {e}" for e in extras)
    lines = [line]
    inner = indent + "  "
    if node.get("description"):
        first, *rest = str(node["description"]).split("\n")
        lines += [f"{inner}description: {first}", *(inner + part for part in rest)]
    if body and node.get("body") is not None:
        cut = node.get("body_range")
        if cut:
            lines.append(f"{inner}(body chars {cut['start']}–{cut['end']} of {cut['total']})")
        lines += [inner + part for part in str(node["body"]).split("\n")]
    return lines


def _edge(edge: dict[str, Any]) -> str:
    gone = " (retracted)" if edge.get("retracted") else ""
    named = (edge.get("properties") or {}).get("relations")
    said = f" ({', '.join(map(str, named))})" if isinstance(named, list) and named else ""
    return f"{edge['from']} -{edge['edge_type']}{said} {edge['weight']:g}-> {edge['to']}{gone}"


def _cut(value: Any, cut_range: dict[str, Any] | None = None) -> str:
    """A change's value, cut to `_CHANGE_CHARS` (between clusters: `shortened`) with its length; a value the server cut (its range
    given) says the length of the whole text, and that its rest is not here."""
    text = value if isinstance(value, str) and "\n" not in value else _json(value)
    if cut_range:
        return f"{shortened(text, _CHANGE_CHARS)}… ({cut_range['end']} of {cut_range['total']} chars here)"
    if len(text) > _CHANGE_CHARS:
        return f"{shortened(text, _CHANGE_CHARS)}… ({len(text)} chars)"
    return text


def _changes(changes: Iterable[dict[str, Any]], indent: str = "") -> list[str]:
    return [
        f"{indent}{c['field']}: {_cut(c['before'], c.get('before_range'))} → {_cut(c['after'], c.get('after_range'))}"
        for c in changes
    ]


def _issues(envelope: dict[str, Any]) -> list[str]:
    lines = []
    for issue in envelope.get("issues") or ():
        where = f" [{issue['field']}]" if issue.get("field") else ""
        retry = " (retryable)" if issue.get("retryable") else ""
        lines.append(f"! {issue['code']}{where}{retry}: {issue['message']}")
    return lines


def _tail(envelope: dict[str, Any]) -> list[str]:
    """What was left out, and the exact next call."""
    lines = []
    coverage = envelope.get("coverage") or {}
    omitted = coverage.get("omitted") or []
    if omitted:
        lines.append("omitted: " + "; ".join(f"{o['section']} {o['count']} ({o['reason']})" for o in omitted))
        asked = envelope.get("operation") == "recall"
        flags = [_BRINGS_BACK[o["reason"]] for o in omitted if asked and o["reason"] in _BRINGS_BACK]
        if flags:  # a model read "hits 2 (stale)" and never learnt that a flag brings them back
            lines.append(f"(left out by rule: {' / '.join(dict.fromkeys(flags))} brings them back)")
        if envelope.get("operation") == "context":
            lines.extend(_listings(envelope, omitted))
        else:
            lines.extend(_past_the_limit(envelope, omitted))
    continuation = envelope.get("continuation")
    if continuation:
        lines.append(_next(envelope["operation"], continuation["next_arguments"]))
    return lines


def _listings(envelope: dict[str, Any], omitted: list[dict[str, Any]]) -> list[str]:
    """For each section `context` left out part of, the `search` that lists it all (paged): the
    section's `filters`, those of the query `context` chose it by (reminders and slots have none).
    "omitted: tasks 4945 (limit)" told a model that work was missing and not how to see it. No
    filter says "in force": the rules' line says how many rules it lists that do not apply here."""
    data = envelope.get("data") or {}
    initiative = data.get("initiative")
    if not isinstance(initiative, str):
        return []
    sections = {s.get("name"): s for s in data.get("sections") or []}
    lines = []
    for section in dict.fromkeys(str(o["section"]) for o in omitted):
        filters = (sections.get(section) or {}).get("filters")
        if filters:
            args = {"initiatives": [initiative], "filters": filters}
            line = f"all {section}: search {_json(args)}"
            if others := (sections.get(section) or {}).get("filters_not_applying"):
                line += f" (and {others} rule(s) that do not apply here: released, ended, or for a task not named)"
            lines.append(line)
    return lines


def _past_the_limit(envelope: dict[str, Any], omitted: list[dict[str, Any]]) -> list[str]:
    """The `trail` call that shows what `read` with `neighbours` and `current_state` leave out past
    their limits, which neither pages: "omitted: edges 4900 (limit)" and `continuation: null` told a
    model that links were missing, not how to see them. `trail kind=neighbours` pages every edge of
    a node (decision 87); a chain of `supersedes` is followed back from the last predecessor shown,
    one step a call (nothing pages a chain's predecessors)."""
    data = envelope.get("data") or {}
    scopes = (envelope.get("coverage") or {}).get("initiatives") or []
    limited = {str(o["section"]) for o in omitted if o.get("reason") == "limit"}
    if not scopes or not limited:
        return []
    if envelope.get("operation") == "read" and "edges" in limited and data.get("hits"):
        args = {"initiative": scopes[0], "node": data["hits"][0]["id"], "kind": "neighbours"}
        return [f"all edges: trail {_json(args)} (every edge as it is now, paged)"]
    if envelope.get("operation") == "current_state" and "predecessors" in limited and data.get("predecessors"):
        last = data["predecessors"][-1]["id"]
        args = {"initiative": scopes[0], "node": last, "kind": "neighbours", "edge_types": ["supersedes"]}
        return [f"older predecessors: trail {_json(args)} (one step back a call: repeat from the older node)"]
    return []


def _next(operation: str, arguments: dict[str, Any]) -> str:
    """The `next:` line: the next page's arguments, save a list of more than `_NEXT_ITEMS` items,
    which is named with its count: the next call sends it as this call did (every continuation
    repeats the call's own arguments, and the cursor was made for them)."""
    long = {k: v for k, v in arguments.items() if isinstance(v, list) and len(v) > _NEXT_ITEMS}
    line = f"next: {operation} {_json({k: v for k, v in arguments.items() if k not in long})}"
    if long:
        named = ", ".join(f"{_json(k)} ({len(v)} items)" for k, v in long.items())
        line += f" plus {named} exactly as in this call"
    return line


def _hits(
    hits: list[dict[str, Any]],
    zone: tzinfo | None,
    *,
    clock: bool = False,
    overdue: frozenset[str] = frozenset(),
    out_of_force: dict[str, str] | None = None,
    marks: dict[str, list[str]] | None = None,
    names: dict[str, str] | None = None,
) -> list[str]:
    lines: list[str] = []
    for hit in hits:
        why = (out_of_force or {}).get(hit["id"])
        said = (marks or {}).get(hit["id"], ())
        lines += node_lines(
            hit, zone=zone, clock=clock, overdue=hit["id"] in overdue, out_of_force=why, marks=said, names=names
        )
    return lines


def _names(hits: Iterable[dict[str, Any]]) -> dict[str, str]:
    """The names the answer shows, by id: a rule scoped to a task is said with the task's name."""
    return {h["id"]: h["name"] for h in hits if isinstance(h.get("name"), str)}


#: How a `not_in_force` issue begins (`service/rules_in_force.not_in_force`): the rule's id and why.
_NOT_IN_FORCE = re.compile(r"rule (\S+) is not in force \(([^)]*)\)")


def _out_of_force(envelope: dict[str, Any]) -> dict[str, str]:
    """The rules the answer found not in force today, by id, with why: written on the rule's own
    line, where a model reading the rule reads it (NodeData has no field for it)."""
    found: dict[str, str] = {}
    for issue in envelope.get("issues") or ():
        said = _NOT_IN_FORCE.match(issue.get("message") or "") if issue.get("code") == "not_in_force" else None
        if said:
            found[said[1]] = said[2]
    return found


def _head(envelope: dict[str, Any], summary: str = "") -> str:
    replayed = " (replayed)" if envelope.get("replayed") else ""
    request = f" request_id={envelope['request_id']}" if envelope.get("request_id") else ""
    return f"{envelope['operation']} {envelope['state']}{replayed}{request}" + (f": {summary}" if summary else "")


def _of(count: int, total: int, noun: str) -> str:
    return f"{count} {noun}" if count == total else f"{count} of {total} {noun}"


def _read(envelope: dict[str, Any], zone: tzinfo | None) -> list[str]:
    data = envelope["data"]
    op = envelope["operation"]
    if op == "initiatives":
        lines = [_head(envelope, f"{data['total']} initiatives")]
        for item in data["initiatives"]:
            counts = ", ".join(f"{k} {v}" for k, v in item["counts"].items())
            slots = f" · slots: {', '.join(item['slots'])}" if item.get("slots") else ""
            lines.append(f"- {item['name']} · {counts} · last {item['last_activity']}{slots}")
        return lines
    if op == "context":
        head = [f"initiative={data['initiative']}"] + [f"{k}={data[k]}" for k in ("today", "task") if data.get(k)]
        lines = [_head(envelope, " ".join(head))]
        lines += [f"notice: {n}" for n in data.get("notices") or ()]
        overdue = frozenset(i for s in data["sections"] for i in s.get("overdue") or ())
        names = _names(item for s in data["sections"] for item in s["items"])
        marks = node_marks(data["sections"])
        for section in data["sections"]:
            if not section["items"] and not section["total"]:
                continue
            lines.append(f"## {section['name']} ({_of(len(section['items']), section['total'], 'items')})")
            # The overdue tasks and the slots' holders are said on their own lines, in words.
            lines += section_notes(section, names)
            lines += _hits(section["items"], zone, overdue=overdue, marks=marks, names=names)
        return lines
    if op == "reflect":
        counts = ", ".join(f"{k} {v}" for k, v in data["counts"].items() if v)
        lines = [_head(envelope, f"{data['total']} findings" + (f" ({counts})" if counts else ""))]
        for item in data["items"]:
            ref = f" [{item.get('name') or item.get('node')}]" if item.get("node") or item.get("name") else ""
            fix = f" · fix: {item['fix']['tool']} {_json(item['fix']['arguments'])}" if item.get("fix") else ""
            lines.append(f"- {item['kind']}{ref}: {item['message']}{fix}")
        return lines
    if op == "trail":
        lines = [_head(envelope, f"{data['kind']}, {_of(len(data['entries']), data['total'], 'entries')}")]
        if data.get("subject"):
            lines += node_lines(data["subject"], body=False, zone=zone)
        for entry in data["entries"]:
            bits = [entry.get(k) for k in ("at", "kind", "action", "direction") if entry.get(k)]
            if entry.get("depth") is not None:
                bits.append(f"depth {entry['depth']}")
            if entry.get("actor"):
                bits.append(f"by {entry['actor']}")
            elif entry["kind"] == "edge":  # neither its revision nor an audit record names it
                bits.append("actor unknown")
            if entry.get("request_id"):
                bits.append(f"request_id={entry['request_id']}")
            lines.append("* " + " ".join(str(b) for b in bits))
            if entry.get("node"):
                lines.append(f"  {handle(entry['node'])}")
            if entry.get("edge"):
                lines.append(f"  edge {_edge(entry['edge'])}")
            lines += _changes(entry.get("changes") or (), "  ")
        return lines
    if op == "current_state":
        slot = f" slot={data['slot']} slot_revision={data['slot_revision']}" if data.get("slot") else ""
        lines = [_head(envelope, f"{data['status']}{slot}")]
        if data.get("current"):
            lines.append("current:")
            lines += node_lines(data["current"], zone=zone)
        if data.get("subject") and (not data.get("current") or data["subject"]["id"] != data["current"]["id"]):
            lines.append("subject:")
            lines += node_lines(data["subject"], zone=zone)
        if data.get("predecessors"):
            lines.append("predecessors:")
            lines += [f"- {dated_handle(p, zone)} · {p.get('currentness')}" for p in data["predecessors"]]
        lines += [f"edge {_edge(e)}" for e in data.get("edges") or ()]
        if data.get("candidates"):
            lines.append("candidates: " + ", ".join(data["candidates"]))
        return lines
    # search, read, recall, timeline: a page of nodes.
    hits = data["hits"]
    summary = _of(len(hits), data["total"], "hits")
    omitted = (envelope.get("coverage") or {}).get("omitted") or ()
    if op == "timeline" and any(o.get("reason") == "window" for o in omitted):
        # Its `total` stops counting past the counted window (13.F2): "100 of 301" read as exact.
        summary = f"{len(hits)} of at least {data['total']} hits"
    if data.get("anchor"):
        summary += f" around {data['anchor']}"
    lines = [_head(envelope, summary)]
    # A timeline is about order within days, and a `read` about one revision: both give the time of day.
    # recall knows today, and says which tasks are overdue (`overdue`), as context does.
    lines += _hits(
        hits,
        zone,
        clock=op in ("timeline", "read"),
        overdue=frozenset(data.get("overdue") or ()),
        out_of_force=_out_of_force(envelope),
        names=_names(hits),
    )
    lines += [f"edge {_edge(e)}" for e in data.get("edges") or ()]
    if data.get("next_step"):
        lines += _next_step(data["next_step"], {hit["id"] for hit in hits})
    if data.get("explain"):
        lines.append(f"explain: {_json(data['explain'])}")
    lines += _raw_hits(data)
    return lines


def _raw_hits(data: dict[str, Any]) -> list[str]:
    """recall's raw fallback: each source passage with where it starts (for `read body_offset=`)."""
    lines: list[str] = []
    if data.get("raw_hits"):
        lines.append(f"raw_hits: {len(data['raw_hits'])} passages of stored sources (not curated hits)")
        for hit in data["raw_hits"]:
            lines.append(f"- {hit['name']} · source · id={hit['id']} rev={hit['revision']}")
            lines.append(f"  at {hit['offset']} of {hit['chars']} chars (read body_offset={hit['offset']})")
            lines.append("  " + " ".join(hit["excerpt"].split()))
    if data.get("raw_hits_error"):
        lines.append(f"raw_hits_error: {data['raw_hits_error']}")
    return lines


def _next_step(step: dict[str, Any], hits: set[str]) -> list[str]:
    """`next_step`: one line when its calls differ only in which hit they name, else one per call."""
    calls = step.get("calls")
    if not isinstance(calls, list) or "tool" not in step:
        return [f"next_step: {_json(step)}"]
    why = f" ({step['why']})" if step.get("why") else ""
    shapes: set[str] = set()
    for call in calls:
        node = call.get("node") if isinstance(call, dict) else None
        if not (isinstance(node, dict) and node.get("id") in hits):
            shapes = set()
            break
        shapes.add(_json({**call, "node": {"id": "<hit id>"}}))
    if len(shapes) == 1:
        return [f"next_step: {step['tool']} {shapes.pop()} for any hit{why}"]
    return [f"next_step: {step['tool']}{why}"] + [f"  {step['tool']} {_json(call)}" for call in calls]


def _entity(entity: dict[str, Any]) -> str:
    return f"id={entity['id']} rev={entity['revision']}"


def _mutation(envelope: dict[str, Any]) -> list[str]:
    data = envelope["data"]
    primary = data.get("primary")
    lines = [_head(envelope, _entity(primary) if primary else "")]
    primary_id = primary["id"] if primary else None
    created = [e for e in data.get("created") or () if e["id"] != primary_id]
    affected = [e for e in data.get("affected") or () if e["id"] != primary_id]
    if created:
        lines.append("created: " + "; ".join(_entity(e) for e in created))
    if affected:
        lines.append("affected: " + "; ".join(_entity(e) for e in affected))
    lines += _changes(data.get("changes") or ())
    lines += [f"evidence: id={e['id']} {e['relation']}" for e in data.get("evidence") or ()]
    lines += [f"slot: {_json(s)}" for s in data.get("slots") or ()]
    lines += [f"failed step {s['step']}: {s['code']}: {s['message']}" for s in data.get("failed_steps") or ()]
    lines += [f"artifact: {_json(a)}" for a in data.get("artifacts") or ()]
    return lines


def compact(envelope: dict[str, Any], zone: tzinfo | None = None) -> str:
    """The envelope as compact text (see the module doc); its dates on the calendar of `zone`, the
    user's (`Settings.zone()`; None: the machine's own, as there)."""
    if envelope["state"] == "rejected":
        lines = [_head(envelope)]
    elif "primary" in envelope["data"]:
        lines = _mutation(envelope)
    else:
        lines = _read(envelope, zone)
    lines += _issues(envelope)
    lines += _tail(envelope)
    return "\n".join(lines)
