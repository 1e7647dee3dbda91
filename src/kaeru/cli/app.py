"""`kaeru` — serve the MCP server, or inspect and edit a vault from the terminal."""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Callable
from typing import Any

import click

from kaeru import __version__
from kaeru.api import envelope as env
from kaeru.config import Settings
from kaeru.domain.text import refusal_of_lone_surrogate
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.storage.factory import open_store


def _service(ctx: click.Context) -> Service:
    settings: Settings = ctx.obj["settings"]
    if "service" not in ctx.obj:
        from kaeru.semantic import open_embedder

        ctx.obj["service"] = Service(open_store(settings), settings, embedder=open_embedder(settings))
    service: Service = ctx.obj["service"]
    return service


def _emit(ctx: click.Context, envelope: dict[str, Any], human: Callable[[dict[str, Any]], None]) -> None:
    if ctx.obj["json"]:
        click.echo(json.dumps(envelope, indent=2, ensure_ascii=False))
    else:
        human(envelope)
    if envelope["state"] == "rejected":
        sys.exit(2)


def _print_issues(envelope: dict[str, Any]) -> None:
    for issue in envelope["issues"]:
        field = f" [{issue['field']}]" if issue.get("field") else ""
        click.echo(f"{issue['code']}{field}: {issue['message']}", err=True)


@click.group()
@click.option("--vault", envvar="KAERU_VAULT", help="Vault directory (default: the user data dir).")
@click.option("--json", "as_json", is_flag=True, help="Print the API envelope as JSON.")
@click.version_option(__version__)
@click.pass_context
def cli(ctx: click.Context, vault: str | None, as_json: bool) -> None:
    """kaeru-memory: persistent, scoped, typed-graph memory for LLM agents."""
    ctx.ensure_object(dict)
    try:
        overrides: dict[str, Any] = {}
        if vault:
            from pathlib import Path

            overrides["vault_dir"] = Path(vault).expanduser()
        ctx.obj["settings"] = Settings.from_env(**overrides)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    ctx.obj["json"] = as_json


@cli.command()
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP at /mcp instead of stdio.")
@click.option("--host", default=None, help="HTTP bind address (default 127.0.0.1).")
@click.option("--port", default=None, type=int, help="HTTP port (default 9876).")
@click.pass_context
def serve(ctx: click.Context, use_http: bool, host: str | None, port: int | None) -> None:
    """Run the MCP server (stdio by default; --http for streamable HTTP)."""
    from kaeru.mcp.server import build_server
    from kaeru.mcp.transports import run_http, run_stdio

    settings: Settings = ctx.obj["settings"]
    kaeru = build_server(_service(ctx))
    # Everything allocated so far (modules, schemas, validators) lives as long as the server: keep
    # it out of the collector's full passes, which would otherwise walk it between calls.
    gc.collect()
    gc.freeze()
    if use_http:
        try:
            run_http(kaeru, settings, host or settings.http_host, settings.http_port if port is None else port)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from exc
    else:
        run_stdio(kaeru)


def _show_hits(envelope: dict[str, Any]) -> None:
    _print_issues(envelope)
    for hit in envelope["data"]["hits"]:
        flag = "" if hit["currentness"] == "current" else f" [{hit['currentness']}]"
        click.echo(f"{hit['id']}  {hit['node_type']:<10} {hit['name']}{flag}")
        if hit.get("body"):
            click.echo("    " + hit["body"].replace("\n", "\n    ")[:2000])
    cov = envelope.get("coverage") or {}
    for omitted in cov.get("omitted", []):
        click.echo(f"(omitted {omitted['count']} {omitted['section']}: {omitted['reason']})", err=True)
    if envelope.get("continuation"):
        click.echo("(more: pass --cursor " + envelope["continuation"]["cursor"] + ")", err=True)


def _read_envelope(
    ctx: click.Context, operation: str, args: dict[str, Any], build: Callable[[Any], dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Run the read use case `operation` and build its envelope (`build`, else the generic read
    envelope); a refusal becomes the `rejected` envelope, as over MCP."""
    service = _service(ctx)
    try:
        if (refusal := refusal_of_lone_surrogate(args)) is not None:
            raise refusal
        outcome = getattr(service, operation)(args)
        return build(outcome) if build is not None else env.read_envelope(operation, outcome)
    except KaeruError as error:
        return env.rejected_envelope(operation, env.READ_KIND, error)


def _read_call(ctx: click.Context, operation: str, args: dict[str, Any]) -> None:
    _emit(ctx, _read_envelope(ctx, operation, args), _show_hits)


@cli.command()
@click.argument("text", required=False)
@click.option("-i", "--initiative", "initiatives", multiple=True, required=True, help="Initiative(s) to search.")
@click.option("--all-words", is_flag=True, help="Require every word (match all).")
@click.option("--prefix", is_flag=True, help="Match words as prefixes.")
@click.option("--type", "types", multiple=True, help="Only these node types.")
@click.option("--limit", default=10, type=int)
@click.option("--cursor", default=None)
@click.pass_context
def search(
    ctx: click.Context,
    text: str | None,
    initiatives: tuple[str, ...],
    all_words: bool,
    prefix: bool,
    types: tuple[str, ...],
    limit: int,
    cursor: str | None,
) -> None:
    """Literal search across initiatives."""
    args: dict[str, Any] = {"initiatives": list(initiatives), "limit": limit}
    if text:
        args["text"] = text
    if all_words:
        args["match"] = "all"
    if prefix:
        args["prefix"] = True
    if types:
        args["filters"] = {"types": list(types)}
    if cursor:
        args["cursor"] = cursor
    _read_call(ctx, "search", args)


@cli.command()
@click.argument("node")
@click.option("-i", "--initiative", required=True)
@click.option("--at", default=None, help="As of: RFC 3339, a date, or 5m/2h/3d.")
@click.pass_context
def read(ctx: click.Context, node: str, initiative: str, at: str | None) -> None:
    """Show one node in full (optionally as it was at a past moment)."""
    args: dict[str, Any] = {"initiative": initiative, "node": node, "budget_chars": 64000}
    if at:
        args["at"] = at
    _read_call(ctx, "read", args)


@cli.command()
@click.argument("text")
@click.option("-i", "--initiative", required=True)
@click.option("--kind", default="observation")
@click.option("--name", default=None)
@click.option("--request-id", default=None)
@click.pass_context
def note(ctx: click.Context, text: str, initiative: str, kind: str, name: str | None, request_id: str | None) -> None:
    """Capture a note."""
    args: dict[str, Any] = {"initiative": initiative, "text": text, "kind": kind}
    if name:
        args["name"] = name
    if request_id:
        args["request_id"] = request_id
    service = _service(ctx)
    try:
        outcome, replayed = service.note(args)
        envelope = env.mutation_envelope("note", outcome, replayed=replayed, request_id=request_id)
    except KaeruError as error:
        envelope = env.rejected_envelope("note", env.MUTATION_KIND, error, request_id)

    def human(e: dict[str, Any]) -> None:
        _print_issues(e)
        if e["data"]["primary"]:
            click.echo(f"{e['state']}: {e['data']['primary']['id']}")

    _emit(ctx, envelope, human)


@cli.command()
@click.argument("query", required=False)
@click.option("-i", "--initiative", "initiatives", multiple=True, required=True, help="Initiative(s) to recall from.")
@click.option("--intent", default=None, help="resume_work, explain_decision, debug_failure, apply_preference, …")
@click.option("--risk", default="medium", type=click.Choice(["low", "medium", "high"]))
@click.option("--limit", default=10, type=int)
@click.option("--explain", is_flag=True, help="Show each hit's per-channel scores.")
@click.pass_context
def recall(
    ctx: click.Context,
    query: str | None,
    initiatives: tuple[str, ...],
    intent: str | None,
    risk: str,
    limit: int,
    explain: bool,
) -> None:
    """Task-aware recall (when you do not know the exact words)."""
    from kaeru.api.working import recall_envelope

    args: dict[str, Any] = {"initiatives": list(initiatives), "limit": limit, "risk": risk}
    if query:
        args["query"] = query
    if intent:
        args["task_intent"] = intent
    if explain:
        args["explain"] = True
    envelope = _read_envelope(ctx, "recall", args, recall_envelope)

    def human(e: dict[str, Any]) -> None:
        _show_hits(e)
        plan = e["data"].get("retrieval_plan") or {}
        if plan:
            channels = ", ".join(f"{c['name']}={c['weight']}" for c in plan.get("channels", []))
            click.echo(f"(plan {plan.get('plan_hash')}: {channels})", err=True)

    _emit(ctx, envelope, human)


@cli.command()
@click.option("-i", "--initiative", required=True)
@click.option("--task", default=None, help="The task you are working on (adds its scoped rules).")
@click.option("--budget", default=8000, type=int, help="budget_chars (512..64000).")
@click.pass_context
def context(ctx: click.Context, initiative: str, task: str | None, budget: int) -> None:
    """The re-entry bundle for an initiative: rules first, then slots, layers, tasks, claims, …"""
    from kaeru.api.working import context_envelope

    args: dict[str, Any] = {"initiative": initiative, "budget_chars": budget}
    if task:
        args["task"] = task
    envelope = _read_envelope(ctx, "context", args, context_envelope)

    def human(e: dict[str, Any]) -> None:
        _print_issues(e)
        for notice in e["data"].get("notices", []):
            click.echo(f"! {notice}")
        for section in e["data"]["sections"]:
            if not section["items"]:
                continue
            click.echo(f"== {section['name']} ({section['total']})")
            for item in section["items"]:
                body = (item.get("body") or "").replace("\n", " ")[:160]
                click.echo(f"  {item['name']}: {body}")
        for omitted in e["coverage"]["omitted"]:
            click.echo(f"(omitted {omitted['count']} {omitted['section']}: {omitted['reason']})", err=True)

    _emit(ctx, envelope, human)


@cli.command()
@click.option("-i", "--initiative", required=True)
@click.pass_context
def hygiene(ctx: click.Context, initiative: str) -> None:
    """Run one hygiene pass now (layer tidying by fixed rules) and print the moves."""
    service = _service(ctx)
    try:
        moves = service.hygiene(initiative)
    except KaeruError as error:
        raise click.ClickException(f"{error.code}: {error.message}") from error
    for move in moves:
        click.echo(f"{move.name}: {move.before.value} → {move.after.value} ({move.reason})")
    click.echo(f"{len(moves)} node(s) moved", err=True)


def _progress_bar() -> Any:
    from rich.progress import Progress, SpinnerColumn, TextColumn

    return Progress(SpinnerColumn(), TextColumn("{task.description}"), transient=True)


def _open_location(location: str) -> Any:
    """A store from a `postgresql://` URL or a vault directory (SQLite)."""
    from pathlib import Path

    if location.startswith(("postgresql://", "postgres://")):
        return open_store(Settings.from_env({"KAERU_VAULT": "/nonexistent", "KAERU_DATABASE_URL": location}))
    if location.startswith("sqlite://"):
        location = location[len("sqlite://") :]
    path = Path(location).expanduser()
    if path.suffix in (".sqlite3", ".db"):
        path = path.parent
    return open_store(Settings.from_env({"KAERU_VAULT": str(path)}))


@cli.command("export")
@click.argument("path")
@click.option("--format", "fmt", default="amg", type=click.Choice(["amg", "markdown"]))
@click.option("-i", "--initiative", "initiatives", multiple=True, help="Only these initiatives.")
@click.pass_context
def export_cmd(ctx: click.Context, path: str, fmt: str, initiatives: tuple[str, ...]) -> None:
    """Export the vault (amg archive or markdown folder) to PATH."""
    from dataclasses import replace
    from pathlib import Path

    from kaeru.export import archive

    settings: Settings = ctx.obj["settings"]
    target = Path(path).expanduser().resolve()
    local = replace(settings, export_root=target.parent)
    args: dict[str, Any] = {"action": "export", "format": fmt, "path": str(target)}
    if initiatives:
        args["initiatives"] = list(initiatives)
    with _progress_bar() as bar:
        task = bar.add_task("reading the vault", total=None)
        outcome = archive.export(
            _service(ctx).store, local, args, lambda stage, n: bar.update(task, description=f"{stage}: {n}")
        )
    envelope = env.mutation_envelope("archive", outcome, replayed=False, request_id=None)

    def human(e: dict[str, Any]) -> None:
        for art in e["data"]["artifacts"]:
            click.echo(
                f"wrote {art['path']} ({art['format']}, {art['bytes']} bytes, {art['nodes']} nodes, "
                f"{art['edges']} edges, sha256 {art['sha256'][:16]}…)"
            )

    _emit(ctx, envelope, human)


@cli.command("import")
@click.argument("path")
@click.pass_context
def import_cmd(ctx: click.Context, path: str) -> None:
    """Import an amg archive into the vault (records already present are skipped)."""
    from dataclasses import replace
    from pathlib import Path

    from kaeru.export import archive

    settings: Settings = ctx.obj["settings"]
    source = Path(path).expanduser().resolve()
    try:
        with _progress_bar() as bar:
            task = bar.add_task("importing", total=None)
            outcome = archive.import_(
                _service(ctx).store,
                replace(settings, export_root=source.parent),
                {"action": "import", "path": str(source)},
                lambda stage, n: bar.update(task, description=f"{stage}: {n}"),
            )
        envelope = env.mutation_envelope("archive", outcome, replayed=False, request_id=None)
    except KaeruError as error:
        envelope = env.rejected_envelope("archive", env.MUTATION_KIND, error)

    def human(e: dict[str, Any]) -> None:
        _print_issues(e)
        click.echo(", ".join(f"{c['field'].split('.', 1)[1]}={c['after']}" for c in e["data"]["changes"]))

    _emit(ctx, envelope, human)


@cli.command()
@click.option("--from", "source", required=True, help="Source vault: a directory (SQLite) or postgresql:// URL.")
@click.option("--to", "target", required=True, help="Target vault: a directory (SQLite) or postgresql:// URL.")
@click.option("--force", is_flag=True, help="Copy into a target that already holds memory.")
def copy(source: str, target: str, force: bool) -> None:
    """Copy a whole vault between backends, then verify counts and a content digest."""
    from kaeru.export import archive

    src, dst = _open_location(source), _open_location(target)
    try:
        with dst.read() as session:
            if session.all_initiatives() and not force:
                raise click.ClickException("the target vault is not empty (use --force to merge into it)")
        with _progress_bar() as bar:
            task = bar.add_task("copying", total=None)
            report, digest = archive.copy(src, dst, lambda stage, n: bar.update(task, description=f"{stage}: {n}"))
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        src.close()
        dst.close()
    click.echo(
        f"copied {report.node_revisions} node revisions, {report.edge_revisions} edge revisions, "
        f"{report.slot_revisions} slot revisions, {report.audit} audit records; verified digest {digest[:16]}…"
    )


@cli.command()
@click.pass_context
def reindex(ctx: click.Context) -> None:
    """Compute the semantic channel's vectors for every node that lacks a current one."""
    service = _service(ctx)
    if service.rt.embedder is None:
        raise click.ClickException(
            "semantic recall is off: pip install 'kaeru-memory[semantic]' and set KAERU_SEMANTIC=1"
        )
    with _progress_bar() as bar:
        task = bar.add_task("embedding", total=None)
        written = service.reindex(lambda done, seq: bar.update(task, description=f"embedded {done} (at node #{seq})"))
    click.echo(f"{written} vector(s) written")


@cli.command()
@click.pass_context
def migrate(ctx: click.Context) -> None:
    """Apply pending schema migrations to the vault (both backends) and report its state."""
    store = _service(ctx).store
    click.echo(json.dumps(store.describe(), indent=2))


@cli.command()
@click.pass_context
def tools(ctx: click.Context) -> None:
    """Print `tools/list` (names, descriptions, schemas, annotations) as JSON."""
    from kaeru.mcp.server import build_server

    kaeru = build_server(_service(ctx))
    listing = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in kaeru.registry.list_tools()]
    click.echo(json.dumps(listing, indent=2, ensure_ascii=False))


@cli.command()
@click.pass_context
def doctor(ctx: click.Context) -> None:
    """Check the vault opens, is migrated, and answers a search."""
    settings: Settings = ctx.obj["settings"]
    service = _service(ctx)
    info = service.store.describe()
    with service.store.read() as session:
        initiatives = session.all_initiatives()
    report = {
        "version": __version__,
        "store": info,
        "initiatives": len(initiatives),
        "secret_policy": settings.secret_policy,
        "ok": True,
    }
    click.echo(json.dumps(report, indent=2))


def main() -> None:
    cli(obj={})


if __name__ == "__main__":
    main()
