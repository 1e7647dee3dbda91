"""The commands that change a vault: `note`, `hygiene`, `export` (writes a file), `import`."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from kaeru.cli.common import (
    cli,
    complete_initiative,
    echo_json,
    emit,
    path_argument,
    print_issues,
    progress_bar,
    read_envelope,
    refuse_lone_surrogates,
    request,
    service_of,
    settings_of,
    wants_json,
)
from kaeru.cli.inputs import FILE_NAME, stdin_text
from kaeru.cli.interrupt import interrupted
from kaeru.cli.terminal import say
from kaeru.errors import InvalidArgument, KaeruError


@cli.command()
@click.argument("text", nargs=-1, required=True)
@click.option("-i", "--initiative", required=True, shell_complete=complete_initiative)
@click.option(
    "--kind", default="observation", help="observation, decision, rule, reference, idea, … (the note tool's kind)."
)
@click.option("--name", default=None, help="A stable name for the node (default: derived from the text).")
@click.option("--tag", "tags", multiple=True, help="A free tag (repeat for more).")
@click.option("--occurred-at", default=None, help="When it happened, if not now (RFC 3339, a date, or 2d ago).")
@click.option("--request-id", default=None, help="Replay key: the same id and arguments answer the first outcome.")
@click.pass_context
def note(
    ctx: click.Context,
    text: tuple[str, ...],
    initiative: str,
    kind: str,
    name: str | None,
    tags: tuple[str, ...],
    occurred_at: str | None,
    request_id: str | None,
) -> None:
    """Capture a note. TEXT may be several words, quoted or not (joined by a space); TEXT `-` alone
    reads the text from standard input (a file, a command's output).

    Every other parameter of the note tool: `kaeru call note` (`kaeru tools note` lists them).
    """
    from kaeru.api import envelope as env

    if text == ("-",) and sys.stdin is None:  # `<&-`
        raise click.UsageError("stdin is closed: nothing to read for TEXT '-' (give the text, or pipe it in)")
    body = stdin_text() if text == ("-",) else " ".join(text)
    args: dict[str, Any] = {"initiative": initiative, "text": body, "kind": kind}
    if name:
        args["name"] = name
    if tags:
        args["tags"] = list(tags)
    if occurred_at:
        args["occurred_at"] = occurred_at
    if request_id:
        args["request_id"] = request_id
    try:
        parsed = request("note", args)  # refused before the vault is opened: it would create one
    except KaeruError as error:
        emit(ctx, env.rejected_envelope("note", env.MUTATION_KIND, error, request_id), lambda e: refused_kind(e, kind))
        return
    service = service_of(ctx)
    try:
        outcome, replayed = service.note(parsed)
        envelope = env.mutation_envelope("note", outcome, replayed=replayed, request_id=request_id)
    except KaeruError as error:
        envelope = env.rejected_envelope("note", env.MUTATION_KIND, error, request_id)

    def human(e: dict[str, Any]) -> None:
        print_issues(e)
        if primary := e["data"]["primary"]:
            # The id, then the name every other command accepts for it (made from the text when
            # none was given: read back, the envelope names ids only); a replay says it wrote nothing.
            read = read_envelope(ctx, "read", {"initiative": initiative, "node": primary["id"], "budget_chars": 512})
            named = "".join(f" {n['name']}" for n in (read["data"] or {}).get("hits") or ())
            replayed = " (replayed: the first answer to this --request-id; nothing written again)"
            say(f"{e['state']}: {primary['id']}{named}{replayed if e['replayed'] else ''}")

    emit(ctx, envelope, human)


#: What writes a node of a kind `note` does not make: the tool, and the command for it.
MADE_BY = {
    "task": "kaeru call task -a initiative=NAME -a text=...",
    "hypothesis": "kaeru call claim -a initiative=NAME -a text=...",
    "experiment": "kaeru call claim -a initiative=NAME -a text=... -a evidence.method=...",
}


def refused_kind(envelope: dict[str, Any], kind: str) -> None:
    """A refused note's issues, and for `--kind task` (a kind another tool makes) that tool's command."""
    print_issues(envelope)
    if kind in MADE_BY and any(i.get("field") == "kind" for i in envelope["issues"]):
        click.echo(f"(a {kind} is not a note: {MADE_BY[kind]})", err=True)


@cli.command()
@click.option("-i", "--initiative", required=True, shell_complete=complete_initiative)
@click.pass_context
def hygiene(ctx: click.Context, initiative: str) -> None:
    """Run one hygiene pass now (layer tidying by fixed rules) and print the moves.

    --json: {"ok": true, "initiative", "moved": N, "moves": [{"id", "name", "before", "after", "reason"}]}.
    """
    refuse_lone_surrogates({"initiative": initiative})
    moves = service_of(ctx, existing=True).hygiene(initiative)
    if wants_json(ctx):
        echo_json(
            {
                "ok": True,
                "initiative": initiative,
                "moved": len(moves),
                "moves": [
                    {
                        "id": m.node_id,
                        "name": m.name,
                        "before": m.before.value,
                        "after": m.after.value,
                        "reason": m.reason,
                    }
                    for m in moves
                ],
            }
        )
        return
    for move in moves:
        say(f"{move.name}: {move.before.value} → {move.after.value} ({move.reason})")
    click.echo(f"{len(moves)} node(s) moved", err=True)


@cli.command("export")
@click.argument("path", type=FILE_NAME)
@click.option("--format", "fmt", default="amg", type=click.Choice(["amg", "markdown"]))
@click.option(
    "-i",
    "--initiative",
    "initiatives",
    multiple=True,
    help="Only these initiatives.",
    shell_complete=complete_initiative,
)
@click.pass_context
def export_cmd(ctx: click.Context, path: str, fmt: str, initiatives: tuple[str, ...]) -> None:
    """Export the vault (amg archive or markdown folder) to PATH.

    PATH `-` writes the amg archive to standard output (`kaeru export - | gzip > vault.amg.gz`); what
    is said about it (with `--json`, the envelope) then goes to standard error."""
    from kaeru.api import envelope as env
    from kaeru.export import archive
    from kaeru.export.stopping import InterruptedInPlace

    to_stdout = path == "-"
    if to_stdout and fmt != "amg":
        raise click.UsageError("a markdown export is a folder: name it (`-`, standard output, takes an amg archive)")
    if to_stdout and getattr(sys.stdout, "closed_at_start", False):
        # Written to nobody, the archive was lost and the command said "wrote standard output".
        raise click.UsageError("standard output is closed (`>&-`): the archive would be lost; name a file, or pipe `-`")
    if fmt == "amg" and path.endswith(("/", os.sep)):
        # A `Path` drops the `/`: `exports/` was written as one file named `exports`.
        folder = InvalidArgument(
            f"{path!r} names a folder, and an amg export writes one file: name it, e.g. {path}vault.amg.gz",
            field="path",
        )
        emit(ctx, env.rejected_envelope("archive", env.MUTATION_KIND, folder), print_issues)
        return
    target = Path("-") if to_stdout else path_argument(path).resolve()
    local = settings_of(ctx) if to_stdout else replace(settings_of(ctx), export_root=target.parent)
    args: dict[str, Any] = {"action": "export", "format": fmt, "path": str(target)}
    if initiatives:
        args["initiatives"] = list(initiatives)
    try:
        parsed = request("archive", args)  # bad arguments are told before a missing vault
    except KaeruError as error:
        emit(ctx, env.rejected_envelope("archive", env.MUTATION_KIND, error), print_issues, err=to_stdout)
        return
    service = service_of(ctx, existing=True)  # an export of no vault would create one (decision 197)
    try:
        with progress_bar(ctx) as bar:
            task = bar.add_task("reading the vault", total=None)
            outcome = archive.export(
                service.store,
                local,
                parsed,
                lambda stage, n: bar.update(task, description=f"{stage}: {n}"),
                stream=sys.stdout.buffer if to_stdout else None,
            )
        envelope = env.mutation_envelope("archive", outcome, replayed=False, request_id=None)
    except KaeruError as error:
        if to_stdout and isinstance(error.__cause__, BrokenPipeError):
            # The reader went away (`kaeru export - | head -c 10`): nothing said, exit 0, as for
            # any command whose reader stops reading (decision 170).
            return
        envelope = env.rejected_envelope("archive", env.MUTATION_KIND, error)
    except InterruptedInPlace as stop:  # the new export is in place: not "stopped before it ended"
        interrupted(stop.detail, as_json=wants_json(ctx))

    def human(e: dict[str, Any]) -> None:
        print_issues(e)
        for art in e["data"]["artifacts"]:
            where = "standard output" if art["path"] == "-" else art["path"]
            click.echo(
                f"wrote {where} ({art['format']}, {art['bytes']} bytes, {art['nodes']} nodes, "
                f"{art['edges']} edges, sha256 {art['sha256'][:16]}…)",
                err=to_stdout,
            )

    emit(ctx, envelope, human, err=to_stdout)


@cli.command("import")
@click.argument("path", type=FILE_NAME)
@click.pass_context
def import_cmd(ctx: click.Context, path: str) -> None:
    """Import an amg archive into the vault (records already present are skipped).

    The archive passes the same limits and secret policy as a tool write: under `reject` a refused
    record (named by line and field) stops the whole import before anything is written. PATH `-`
    reads the archive (gzip or not) from standard input, kept in a temporary file while it is read.

    A node, edge or slot this vault and the archive's vault each changed after they parted keeps
    this vault's history; the archive's revisions of it from there on are left out and named
    (import_conflict). An archive holds memory, not retries: replay keys stay behind, so a retry
    with an old request_id is written anew (a restored `kaeru backup` keeps them).
    """
    with contextlib.ExitStack() as stack:
        source = spooled_stdin(stack) if path == "-" else path_argument(path).resolve()
        _import(ctx, path, source)


def spooled_stdin(stack: contextlib.ExitStack) -> Path:
    """Standard input copied to a private temporary file (an import reads its archive twice: screened
    whole, then written), named `.amg.gz` when it starts with gzip's magic bytes; removed by `stack`."""
    if sys.stdin is None:  # `<&-`
        raise click.UsageError("stdin is closed: nothing to read for PATH '-' (name the archive, or pipe it in)")
    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kaeru-import-")))
    spool = folder / "stdin.amg"
    with spool.open("wb") as out:
        head = sys.stdin.buffer.read(2)
        out.write(head)
        shutil.copyfileobj(sys.stdin.buffer, out)
    if head == b"\x1f\x8b":
        spool = spool.rename(folder / "stdin.amg.gz")
    return spool


#: What a Ctrl-C during `kaeru import` says: the chunks written stay, and the same import again
#: skips them and writes the rest.
INTERRUPTED_IMPORT = (
    "stopped by Ctrl-C (SIGINT): part of the archive may have been written; run the same import again "
    "to complete it (what the vault already holds is skipped)"
)


def _import(ctx: click.Context, path: str, source: Path) -> None:
    from kaeru.api import envelope as env
    from kaeru.export import archive

    local = replace(settings_of(ctx), export_root=source.parent)
    origin = "-" if path == "-" else None  # standard input, not the spool that is gone
    try:
        refuse_lone_surrogates({"path": path})
        parsed = request("archive", {"action": "import", "path": str(source)})
        with progress_bar(ctx) as bar:
            bar.add_task("reading the archive", total=None)
            # The archive found and read whole before the vault is opened, which would create one:
            # a missing file, a SQLite file or an archive cut short left an empty vault (decision 448).
            read = archive.read_for_import(local, parsed, origin)
    except KaeruError as error:
        emit(ctx, env.rejected_envelope("archive", env.MUTATION_KIND, error), print_issues)
        return
    service = service_of(ctx)
    try:
        with progress_bar(ctx) as bar:
            task = bar.add_task("importing", total=None)
            outcome = archive.import_(
                service.store,
                local,
                parsed,
                lambda stage, n: bar.update(task, description=f"{stage}: {n}"),
                origin=origin,
                read=read,
            )
        envelope = env.mutation_envelope("archive", outcome, replayed=False, request_id=None)
    except KaeruError as error:
        envelope = env.rejected_envelope("archive", env.MUTATION_KIND, error)
    except KeyboardInterrupt:
        # The import writes in chunks, each committed: what was committed stays. Said, as a
        # `partial` import says it, instead of click's bare "Aborted!".
        interrupted(INTERRUPTED_IMPORT, as_json=wants_json(ctx))

    def human(e: dict[str, Any]) -> None:
        print_issues(e)
        if e["state"] != "rejected":
            click.echo(", ".join(f"{c['field'].split('.', 1)[1]}={c['after']}" for c in e["data"]["changes"]))

    emit(ctx, envelope, human)
