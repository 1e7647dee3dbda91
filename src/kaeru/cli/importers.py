"""`kaeru import-from FORMAT PATH --initiative NAME`: bring in what another memory held.

Formats: `memory-jsonl` (the official MCP memory server's `memory.jsonl`), `markdown` (a folder of
notes with front matter and `[[wikilinks]]`: Obsidian, basic-memory), `kaeru-md` (the original
kaeru's Markdown export). Idempotent: running it again reports 0 changes (decision 19.I2).
With `--json` it prints `{"ok": true, "format", "initiative", "items", "created", "revised",
"unchanged", "forgotten", "edges_added", "edges_revised", "edges_removed", "edges_unchanged",
"edges_removal_skipped", "changes", "issues"}`. `edges_removal_skipped` is true when a re-import
left the links the source no longer says, because the reader could not read part of it.
"""

from __future__ import annotations

from pathlib import Path

import click

from kaeru.cli.common import (
    EXIT_REJECTED,
    cli,
    complete_initiative,
    echo_json,
    fail,
    progress_bar,
    service_of,
    wants_json,
)
from kaeru.cli.interrupt import interrupted
from kaeru.cli.terminal import say

FORMATS = ("memory-jsonl", "markdown", "kaeru-md")


def stopped_said(committed: dict[str, tuple[int, int]], semantic: bool) -> str:
    """What a Ctrl-C during `import-from` left, from the chunks said committed (`stage` -> (done,
    total)): each chunk is its own transaction, so the ones before the signal stay and the one it
    stopped is not written; a second run finds what is there by its key, leaves it as it is and writes
    the rest. The vectors of the first run's nodes are computed only by `kaeru reindex`: a second run
    embeds what it writes, and those nodes are unchanged for it."""
    (nodes, items), (links, all_links) = committed["nodes"], committed["links"]
    if items and nodes == items and links == all_links:
        kept = f"all {items} item(s) and {all_links} link(s) were written before it"
        vectors = "; `kaeru reindex` computes the semantic vectors it had not" if semantic else ""
        return f"stopped by Ctrl-C (SIGINT): {kept}{vectors}"
    kept = (
        f": at least {nodes} of {items} item(s)" + (f" and {links} of {all_links} link(s)" if links else "")
        if nodes
        else " (its items are written in chunks, each committed on its own)"
    )
    vectors = ", then `kaeru reindex` to compute the semantic vectors of what this run wrote" if semantic else ""
    return (
        f"stopped by Ctrl-C (SIGINT): what was committed before it stays in the vault{kept}; run the same "
        "command again to finish the import — what the vault already holds is found by its key and not "
        f"written twice, the rest is written{vectors}"
    )


@cli.command("import-from")
@click.argument("format_name", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-i",
    "--initiative",
    required=True,
    help="The initiative to import into (created if new).",
    shell_complete=complete_initiative,
)
@click.pass_context
def import_from(ctx: click.Context, format_name: str, path: Path, initiative: str) -> None:
    """Import another memory's content: memory-jsonl FILE, markdown FOLDER or kaeru-md FOLDER.

    \b
    An entity or note becomes a node; a relation or link an edge, named by its
    relation when kaeru has that type (part_of, causal, blocks...), else refers_to
    with the name kept as its label. A relation never marks memory superseded or
    refuted; blocked_by, after and the like are turned round.
    An entity found twice is one node with every observation. A name with a line
    break or tab, or over 200 characters, is made one line and cut, and said.
    A relation to a missing entity or to itself is skipped and said.
    Anything else the write path refuses (a secret, a control character) refuses
    the whole import; nothing is written. Running it again changes nothing
    unless the source changed: then the nodes are revised (what was added in
    kaeru stays: links, a reminder, a task's status; a node's type does not
    change, and that is said), and links it wrote that the source no longer has
    are removed — unless part of the source could not be read (said). An item
    forgotten in kaeru stays forgotten, and is said.
    """
    from kaeru.export.importers import apply, memory_jsonl, notes
    from kaeru.export.importers.core import UNREAD

    if format_name == "memory-jsonl":
        if not path.is_file():
            fail(ctx, "invalid_argument", f"{path} is not a file (memory-jsonl reads memory.jsonl)", EXIT_REJECTED)
        batch = memory_jsonl.read_file(path)
    else:
        if not path.is_dir():
            fail(
                ctx,
                "invalid_argument",
                f"{path} is not a folder ({format_name} reads a folder of .md files)",
                EXIT_REJECTED,
            )
        batch = notes.read_markdown(path) if format_name == "markdown" else notes.read_kaeru(path)
    service = service_of(ctx)
    committed = {"nodes": (0, len(batch.items)), "links": (0, len(batch.links))}
    try:
        with progress_bar(ctx) as bar:
            task = bar.add_task(f"importing {len(batch.items)} item(s), {len(batch.links)} link(s)", total=None)

            def progress(stage: str, done: int, total: int) -> None:
                committed[stage] = (done, total)  # said after each chunk's commit
                bar.update(task, description=f"{stage}: {done}/{total}")

            report = apply(service, initiative, batch, progress=progress)
    except KeyboardInterrupt:
        interrupted(stopped_said(committed, service.rt.embedder is not None), as_json=wants_json(ctx))
    if wants_json(ctx):
        echo_json(report.to_json())
        return
    click.echo(
        f"{report.format} → {report.initiative}: {report.items} item(s): {report.created} created, "
        f"{report.revised} revised, {report.unchanged} unchanged"
        + (f", {report.forgotten} kept forgotten" if report.forgotten else "")
        + f"; edges: {report.edges_added} added, {report.edges_revised} revised, "
        + (f"{report.edges_removed} removed, " if report.edges_removed else "")
        + f"{report.edges_unchanged} unchanged; {report.changes} change(s)"
    )
    if report.edges_removal_skipped:
        unread = sorted({i.code for i in report.issues if i.code in UNREAD})
        click.echo(
            "links it wrote that the source no longer says were not removed: part of the source could not be "
            f"read ({', '.join(unread)} below); import again once all of it reads"
        )
    for issue in report.issues:
        say(f"{issue.code}: {issue.message}", err=True)  # a message may quote the imported text
