"""The read commands — `search`, `read`, `recall`, `context` — printing the tools' envelopes."""

from __future__ import annotations

import sys
from typing import Any

import click

from kaeru.cli.common import (
    EXIT_REJECTED,
    cli,
    complete_initiative,
    emit,
    initiatives_option,
    print_issues,
    read_envelope,
    wants_json,
)
from kaeru.cli.nodes import head, hit_body, kind_of, link, omission, one_line
from kaeru.cli.terminal import printed, say
from kaeru.domain.graphemes import display_width

#: What a page after the first says at the terminal, in place of the tools' warning that "this
#: server no longer held the cursor's result list" (`service/cursors.rerun_issue`): a long list is
#: held only by the process that ranked it, and every `kaeru` command is a new process, so every such
#: page is ranked again — the risk is the warning's, but no server is involved.
RERUN_NOTE = (
    "(this page comes from running the {operation} again, as every kaeru command is a new process; "
    "if the vault changed since the first page, a hit may repeat or be missed)"
)


#: Longest body `context` prints on an item's line (`kaeru read` prints it whole).
CONTEXT_LINE_CHARS = 160


def show_hits(envelope: dict[str, Any]) -> None:
    """A search's or a recall's hits — each its id, kind, name, status and successors (`nodes.head`),
    its body `shown` (stored text is printed through `terminal.say`: decision on escapes); with a
    recall's `explain`, each hit's per-channel scores on the line below it."""
    issues = envelope["issues"]
    rerun = envelope["state"] != "rejected" and any(i["code"] == "cursor_invalid" for i in issues)
    print_issues({**envelope, "issues": [i for i in issues if not rerun or i["code"] != "cursor_invalid"]})
    if rerun:
        click.echo(RERUN_NOTE.format(operation=envelope["operation"]), err=True)
    data = envelope["data"]
    scores = data.get("explain") or {}
    if "hits" in data:
        for hit in data["hits"]:
            say(head(hit))
            if hit["id"] in scores:
                click.echo("    scores: " + " ".join(f"{k}={v:.3g}" for k, v in scores[hit["id"]].items()))
            if hit.get("body"):
                say("\n".join(hit_body(hit)))
        if not data["hits"] and not data.get("raw_hits") and envelope["state"] != "rejected":
            click.echo("(no hits)", err=True)  # said where a person reads it; stdout stays empty for a script
    cov = envelope.get("coverage") or {}
    for omitted in cov.get("omitted", []):
        click.echo(omission(omitted), err=True)
    if envelope.get("continuation"):
        click.echo("(more: repeat this command with --cursor " + envelope["continuation"]["cursor"] + ")", err=True)


def kind_hint(envelope: dict[str, Any], types: tuple[str, ...]) -> None:
    """For `--type decision` (a note's kind, not a node type: the tool names the `kind:` tag),
    the option that finds such notes."""
    said = " ".join(i["message"] for i in envelope["issues"] if i["code"] == "invalid_argument")
    kinds = [t for t in types if f"{t!r} is a note kind" in said]
    if kinds:
        click.echo("(a note's kind is a tag: " + " ".join(f"--tag kind:{k}" for k in kinds) + ")", err=True)


def refuse_if_no_initiative(envelope: dict[str, Any], initiatives: tuple[str, ...]) -> None:
    """Exit 2 when every initiative named is unknown (the envelope stays the tool's: `ok`, each
    name warned `unknown_initiative`, decision 20). Nothing was searched then, and exit 0 let a
    script take a mistyped name for "no hits"; one known name among them is searched, and exits 0."""
    unknown = {
        issue.get("field")
        for issue in envelope["issues"]
        if issue["code"] == "unknown_initiative" and str(issue.get("field")).startswith("initiatives[")
    }
    if envelope["state"] != "rejected" and initiatives and len(unknown) == len(initiatives):
        sys.exit(EXIT_REJECTED)


@cli.command()
@click.argument("text", nargs=-1)
@initiatives_option("Initiative(s) to search.")
@click.option("--all-words", is_flag=True, help="Require every word (match all).")
@click.option("--prefix", is_flag=True, help="Match words as prefixes.")
@click.option("--type", "types", multiple=True, help="Only these node types.")
@click.option("--tag", "tags", multiple=True, help="Only memory carrying every one of these tags (kind:decision, …).")
@click.option("--limit", default=10, type=int)
@click.option("--cursor", default=None, help="The continuation cursor of the previous page.")
@click.pass_context
def search(
    ctx: click.Context,
    text: tuple[str, ...],
    initiatives: tuple[str, ...],
    all_words: bool,
    prefix: bool,
    types: tuple[str, ...],
    tags: tuple[str, ...],
    limit: int,
    cursor: str | None,
) -> None:
    """Literal search across initiatives. TEXT may be several words, quoted or not."""
    args: dict[str, Any] = {"initiatives": list(initiatives), "limit": limit}
    if text:
        args["text"] = " ".join(text)
    if all_words:
        args["match"] = "all"
    if prefix:
        args["prefix"] = True
    if types:
        args.setdefault("filters", {})["types"] = list(types)
    if tags:
        args.setdefault("filters", {})["tags"] = list(tags)
    if cursor:
        args["cursor"] = cursor
    envelope = read_envelope(ctx, "search", args)

    def human(e: dict[str, Any]) -> None:
        show_hits(e)
        kind_hint(e, types)

    emit(ctx, envelope, human)
    refuse_if_no_initiative(envelope, initiatives)


@cli.command()
@click.argument("node")
@click.option("-i", "--initiative", required=True, shell_complete=complete_initiative)
@click.option("--at", default=None, help="As of: RFC 3339, a date, or 5m/2h/3d.")
@click.option(
    "--offset", default=None, type=click.IntRange(0), help="--json: the body from this character on (the next page)."
)
@click.option("--neighbours", is_flag=True, help="Also its links, both ways (what supports, refers to, follows it).")
@click.pass_context
def read(ctx: click.Context, node: str, initiative: str, at: str | None, offset: int | None, neighbours: bool) -> None:
    """Show one node in full (optionally as it was at a past moment).

    A body longer than one answer (64,000 characters) is read page by page and printed whole;
    with --json the first page is printed, and its `continuation` names the next --offset.
    """
    args: dict[str, Any] = {"initiative": initiative, "node": node, "budget_chars": 64000}
    if at:
        args["at"] = at
    if neighbours:
        args["neighbours"] = True
    if offset is not None:
        args["body_offset"] = offset
    envelope = read_envelope(ctx, "read", args)
    if not wants_json(ctx):
        envelope = _whole_body(ctx, envelope)
    emit(ctx, envelope, show_node)


def _whole_body(ctx: click.Context, envelope: dict[str, Any]) -> dict[str, Any]:
    """The envelope with the rest of its node's body read page by page (same revision), for a person."""
    while envelope["state"] != "rejected" and (envelope.get("continuation") or {}).get("next_arguments"):
        first = envelope["data"]["hits"][0]
        page = read_envelope(ctx, "read", envelope["continuation"]["next_arguments"])
        hits = page["data"].get("hits") or []
        if page["state"] == "rejected" or not hits or hits[0]["revision"] != first["revision"]:
            click.echo("(the node changed while it was read: run the command again)", err=True)
            break
        first["body"] += hits[0]["body"]
        envelope["continuation"] = page.get("continuation")
    return envelope


def show_node(envelope: dict[str, Any]) -> None:
    """One node as a person reads it: what it is (its kind, and what superseded it), where it sits,
    when, its links (`--neighbours`), then its whole body — stored text `shown`."""
    print_issues(envelope)
    for node in envelope["data"].get("hits", []):
        say(head(node, status=False))  # the status is on the facts line below
        facts = [f"rev {node['revision']}", f"{node['tier']}/{node['layer']}", "in " + ", ".join(node["initiatives"])]
        if node["node_type"] != kind_of(node):
            facts.insert(0, node["node_type"])
        if node.get("status"):
            facts.append(f"status {node['status']}")
        facts.append(f"recorded {node['recorded_at']}")
        say("    " + " · ".join(facts))
        if node.get("tags"):
            say("    tags: " + ", ".join(node["tags"]))
        if node.get("description"):
            say("    " + node["description"].replace("\n", "\n    "))
        edges = envelope["data"].get("edges")
        if edges is not None:
            say("    links:" + "".join(f"\n      {link(e, node['id'])}" for e in edges) if edges else "    links: none")
        if node.get("body"):
            click.echo("")
            say(node["body"].rstrip("\n"))
    cov = envelope.get("coverage") or {}
    for omitted in cov.get("omitted", []):
        click.echo(omission(omitted, "read"), err=True)


@cli.command()
@click.argument("query", nargs=-1)
@initiatives_option("Initiative(s) to recall from.")
@click.option("--intent", default=None, help="resume_work, explain_decision, debug_failure, apply_preference, …")
@click.option(
    "--risk",
    default="medium",
    type=click.Choice(["low", "medium", "high"]),
    help="high: only current memory, from direct evidence; low and medium are the same.",
)
@click.option("--limit", default=10, type=int)
@click.option("--explain", is_flag=True, help="Show each hit's per-channel scores.")
@click.option("--cursor", default=None, help="The continuation cursor of the previous page.")
@click.option("--type", "types", multiple=True, help="Only these node types.")
@click.option("--tag", "tags", multiple=True, help="Only memory carrying every one of these tags.")
@click.option("--layer", "layers", multiple=True, help="Only these layers (naming cold or frozen admits them).")
@click.option("--branch", default=None, help="Only memory written on this git branch (and memory without one).")
@click.option("--include-stale", is_flag=True, help="Also cold and frozen memory.")
@click.option("--include-suppressed", is_flag=True, help="Also released or expired rules and reminders not yet due.")
@click.pass_context
def recall(
    ctx: click.Context,
    query: tuple[str, ...],
    initiatives: tuple[str, ...],
    intent: str | None,
    risk: str,
    limit: int,
    explain: bool,
    cursor: str | None,
    types: tuple[str, ...],
    tags: tuple[str, ...],
    layers: tuple[str, ...],
    branch: str | None,
    include_stale: bool,
    include_suppressed: bool,
) -> None:
    """Task-aware recall (when you do not know the exact words). QUERY may be several words, quoted
    or not."""
    from kaeru.api.working import recall_envelope

    args: dict[str, Any] = {"initiatives": list(initiatives), "limit": limit, "risk": risk}
    if query:
        args["query"] = " ".join(query)
    if intent:
        args["task_intent"] = intent
    if explain:
        args["explain"] = True
    for key, values in (("types", types), ("tags", tags), ("layers", layers)):
        if values:
            args[key] = list(values)
    if branch:
        args["branch"] = branch
    if include_stale:
        args["include_stale"] = True
    if include_suppressed:
        args["include_suppressed"] = True
    if cursor:
        args["cursor"] = cursor
    envelope = read_envelope(ctx, "recall", args, recall_envelope)

    def human(e: dict[str, Any]) -> None:
        show_hits(e)
        for raw in e["data"].get("raw_hits") or []:
            say(f"{raw['id']}  {'source':<11} {raw['name']}  (at {raw['offset']} of {raw['chars']})")
            say("    " + raw["excerpt"].replace("\n", "\n    "))
        if e["data"].get("raw_hits_error"):
            click.echo(f"(sources not searched: {e['data']['raw_hits_error']})", err=True)
        plan = e["data"].get("retrieval_plan") or {}
        if plan and explain:  # how it searched, for a person who asked why: not on every answer
            channels = ", ".join(f"{c['name']}={c['weight']}" for c in plan.get("channels", []))
            click.echo(f"(plan {plan.get('plan_hash')}: {channels})", err=True)

    emit(ctx, envelope, human)
    refuse_if_no_initiative(envelope, initiatives)


@cli.command()
@click.argument("name", required=False, shell_complete=complete_initiative)
@click.option("-i", "--initiative", default=None, shell_complete=complete_initiative, help="The same as NAME.")
@click.option("--task", default=None, help="The task you are working on (adds its scoped rules).")
@click.option("--budget", default=8000, type=int, help="budget_chars (512..64000).")
@click.pass_context
def context(ctx: click.Context, name: str | None, initiative: str | None, task: str | None, budget: int) -> None:
    """The re-entry bundle for an initiative (`kaeru context NAME` or `-i NAME`): rules first, then
    slots, layers, tasks, claims, …"""
    from kaeru.api.working import context_envelope

    if name is not None and initiative is not None and name != initiative:
        raise click.UsageError(f"two initiatives named: {name!r} and -i {initiative!r}; give one")
    chosen = name if name is not None else initiative
    if chosen is None:
        raise click.UsageError("Missing initiative: kaeru context NAME (or -i NAME); `kaeru initiatives` lists them")
    args: dict[str, Any] = {"initiative": chosen, "budget_chars": budget}
    if task:
        args["task"] = task
    envelope = read_envelope(ctx, "context", args, context_envelope)

    def human(e: dict[str, Any]) -> None:
        print_issues(e)
        if e["state"] == "rejected":
            return
        for notice in e["data"].get("notices", []):
            say(f"! {notice}")
        cut = any(i["code"] == "budget_truncated" for i in e["issues"])
        for section in e["data"]["sections"]:
            if not section["items"]:
                continue
            say(f"== {section['name']} ({section['total']})")
            overdue = set(section.get("overdue", []))
            for item in section["items"]:
                body = one_line(item.get("body") or "", CONTEXT_LINE_CHARS)
                cut = cut or body.endswith("…") or bool(item.get("body_range"))
                # What the model's text says of a task, said to a person too: a six-year-late task
                # was a name and a body like any other (decision 342).
                due = (item.get("properties") or {}).get("due")
                marks = [
                    item.get("status"),
                    f"due {due}" if due else None,
                    "OVERDUE" if item["id"] in overdue else None,
                ]
                shown = " · ".join(str(m) for m in marks if m)
                say(f"  {item['name']}{f' [{shown}]' if shown else ''}: {body}")
        if cut:
            click.echo(
                f"(a text cut with … is printed whole by: kaeru read NAME -i {e['data']['initiative']})", err=True
            )
        for omitted in e["coverage"]["omitted"]:
            click.echo(omission(omitted, "context"), err=True)

    emit(ctx, envelope, human)


@cli.command()
@click.option("--prefix", default=None, help="Only initiatives whose name starts with this.")
@click.option("--limit", default=100, type=int, help="Initiatives on a page (1..500).")
@click.option("--cursor", default=None, help="The continuation cursor of the previous page.")
@click.pass_context
def initiatives(ctx: click.Context, prefix: str | None, limit: int, cursor: str | None) -> None:
    """List the initiatives, most active first: name, memories held, last activity (the names the
    other commands' NAME and -i take)."""
    from kaeru.api.working import initiatives_envelope

    args: dict[str, Any] = {"limit": limit}
    if prefix:
        args["prefix"] = prefix
    if cursor:
        args["cursor"] = cursor
    envelope = read_envelope(ctx, "initiatives", args, initiatives_envelope)

    def human(e: dict[str, Any]) -> None:
        print_issues(e)
        if e["state"] == "rejected":
            return
        listed = e["data"]["initiatives"]
        # Padded by the columns each name takes as printed (`printed`: a bidi control is 6 of them,
        # so is `東` where the locale lacks it) and drawn (`東京` is 4), not by its characters: a
        # wide name pushed its row's counts right.
        names = [printed(i["name"]) for i in listed]
        width = max(map(display_width, names), default=0)
        for name, found in zip(names, listed, strict=True):
            counts = found["counts"]
            last = (found.get("last_activity") or "")[:16].replace("T", " ")
            pad = " " * (width - display_width(name))
            click.echo(f"{name}{pad}  {counts['total']:>6} memories  last {last or '-'}")
        if not listed:
            click.echo("(no initiatives)", err=True)
        elif len(listed) < e["data"]["total"]:
            click.echo(f"({len(listed)} of {e['data']['total']})", err=True)
        if e.get("continuation"):
            click.echo("(more: repeat this command with --cursor " + e["continuation"]["cursor"] + ")", err=True)

    emit(ctx, envelope, human)
