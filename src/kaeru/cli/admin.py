"""Running and maintaining a vault: `serve`, `copy`, `reindex`, `migrate`, `tools`."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from kaeru.cli.common import (
    EXIT_FAILED,
    cli,
    echo_json,
    fail,
    open_location,
    open_service,
    path_argument,
    progress_bar,
    service_of,
    settings_of,
    store_of,
    tools_flag,
    wants_json,
)
from kaeru.cli.inputs import FILE_NAME
from kaeru.cli.terminal import say
from kaeru.storage.base import Store


@cli.command()
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP at /mcp instead of stdio.")
@click.option("--host", default=None, help="HTTP bind address (default KAERU_HOST, else 127.0.0.1).")
@click.option("--port", default=None, type=click.IntRange(0, 65535), help="HTTP port (default KAERU_PORT, else 9876).")
@click.option(
    "--tls-cert", type=click.Path(path_type=Path), help="With --http: serve HTTPS with this PEM certificate (chain)."
)
@click.option("--tls-key", type=click.Path(path_type=Path), help="With --http: the certificate's PEM private key.")
@click.option(
    "--tools",
    "tools",
    default=None,
    metavar="LIST",
    help="Offer only these tools: names and presets (core, all), -NAME to take one away "
    "(default KAERU_TOOLS, else all; `kaeru tools` lists them).",
)
@click.pass_context
def serve(
    ctx: click.Context,
    use_http: bool,
    host: str | None,
    port: int | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    tools: str | None,
) -> None:
    """Run the MCP server (stdio by default; --http for streamable HTTP, HTTPS with --tls-cert/--tls-key).

    Its output is the MCP protocol (stdout on stdio), so --json changes nothing here.
    """
    # Everything allocated from here to serving (modules, the SDK's models, the store) lives as long
    # as the server: no collection while it is built — they found nothing to free and took a tenth
    # of start-up. `settle_heap` collects once, freezes it all out of the collector's full passes
    # (decision 66) and switches the collector on again: over HTTP before serving, on stdio once the
    # first `tools/list` or call has built the tools (decision 16.O1).
    gc.disable()
    from kaeru.cli.upgrades import say_upgrade_due
    from kaeru.errors import Unavailable
    from kaeru.mcp.logs import configure
    from kaeru.mcp.server import build_server
    from kaeru.mcp.transports import run_http, run_stdio

    configure(http=use_http)  # one timed line per event on stderr (on stdio, warnings and errors only)

    settings = settings_of(ctx)
    if tools is not None:
        settings = replace(settings, tools=tools_flag(tools))
    if tls_cert is not None or tls_key is not None:
        if not use_http:
            raise click.UsageError("--tls-cert and --tls-key go with --http")
        if tls_cert is None or tls_key is None:
            raise click.UsageError("--tls-cert and --tls-key go together")
        settings = replace(settings, tls_cert=tls_cert, tls_key=tls_key)
    # The vault is opened now, so an unavailable one ends the command at once; the service and the
    # tools are built at the first `tools/list` or call (decision 16.O1). On stdio an older vault's
    # migrations run beside serving: the agent's client waits for `initialize` with a timeout
    # (decision 139). Over HTTP the server answers only once the vault is ready (and a token check
    # before serving reads it).
    if use_http:
        say_upgrade_due(settings)  # it runs before the server listens; its progress is logged
    try:
        store: Any = store_of(ctx, upgrade_in_background=not use_http, lasting=True)
        if getattr(store, "upgrade_under_way", ""):  # said where a client's log shows it (stderr)
            said = f"upgrading the vault ({store.upgrade_under_way}) beside serving"
            click.echo(f"{said}: until it is done, calls wait for it or answer `unavailable`", err=True)
    except Unavailable as exc:
        # A stdio server is the agent's memory for its whole session: a database that refused the
        # connection at start (a VPN coming up after the editor) is waited for, call by call; what
        # waiting cannot fix (`VaultUnusable`) and an HTTP server (its manager restarts it) fail now.
        if use_http or not settings.database_url or not exc.retryable:
            raise
        from kaeru.storage.pending import StoreWhenReachable

        click.echo(f"warning: {exc.message}; serving: calls answer `unavailable` until the database answers", err=True)
        store = StoreWhenReachable(lambda: store_of(ctx, upgrade_in_background=True, lasting=True), exc)
    if not settings.database_url:
        from kaeru.storage.sqlite.place import REMEDY, shared_place

        shared = shared_place(settings.vault_dir)
        if shared is not None:  # said where a client's log shows it, not on stdout (decision 182)
            click.echo(f"warning: {shared}; {REMEDY}", err=True)
    from kaeru import semantic

    if settings.semantic and not semantic.available():  # said once, where a client's log shows it
        click.echo(f"warning: {semantic.missing_half(settings)}; recall stays lexical", err=True)
    elif semantic.available() and not settings.semantic and _holds_vectors(store):
        # A vault served with the channel before: what this server writes gets no vector, and a later
        # semantic recall does not find it by meaning until `kaeru reindex`. A vault without vectors
        # (the extra installed, the channel never used) is not told of it at every start.
        click.echo(
            f"warning: {semantic.missing_half(settings)}; this vault holds vectors for semantic recall, "
            "but the memories this server writes get none (`kaeru reindex` adds them later)",
            err=True,
        )
    kaeru = build_server(store=store, open_service=lambda: open_service(settings, store), settings=settings)
    if use_http:
        try:
            run_http(kaeru, settings, host or settings.http_host, settings.http_port if port is None else port)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from exc
    else:
        if sys.stdin is None:  # `<&-`: no client can reach it
            raise click.UsageError(
                "stdin is closed: kaeru serve speaks MCP on its stdin and stdout, started by an agent's "
                "client (kaeru setup CLIENT); or serve over HTTP (kaeru serve --http)"
            )
        if sys.stdin.isatty():  # a person at a terminal, not a client's pipe (decision 190)
            click.echo(STDIO_AT_A_TERMINAL, err=True)
        run_stdio(kaeru)


def _holds_vectors(store: Any) -> bool:
    """Whether the vault holds a vector of any model: one row read, and none while an upgrade is
    under way (a read would wait for it) or the database was not reached."""
    from kaeru.errors import KaeruError
    from kaeru.storage.pending import StoreWhenReachable

    if getattr(store, "upgrade_under_way", "") or isinstance(store, StoreWhenReachable):
        return False
    try:
        with store.read() as session:
            return bool(session.stored_vectors(None, 1))
    except KaeruError:
        return False


#: What `kaeru serve` tells a person who started it at a terminal: it waits for an agent's client,
#: and what to run instead.
STDIO_AT_A_TERMINAL = (
    "kaeru serve speaks MCP on stdin/stdout and is waiting for an agent's client, not for typing "
    "(Ctrl-C stops it).\n"
    "  connect a client:   kaeru setup claude-code   (or claude-desktop, cursor, vscode, codex, windsurf)\n"
    "  from this terminal: kaeru note / search / recall / context / call TOOL '{...}'   (kaeru --help)\n"
    "  in a browser:       kaeru ui"
)


@cli.command()
@click.option(
    "--from", "source", required=True, type=FILE_NAME, help="Source vault: a directory (SQLite) or postgresql:// URL."
)
@click.option(
    "--to", "target", required=True, type=FILE_NAME, help="Target vault: a directory (SQLite) or postgresql:// URL."
)
@click.option("--force", is_flag=True, help="Copy into a target that already holds memory.")
@click.pass_context
def copy(ctx: click.Context, source: str, target: str, force: bool) -> None:
    """Copy a whole vault between backends, then verify counts and a content digest.

    The source is screened first: a record breaking the write path's limits refuses the copy before
    anything is written; secret-looking texts are copied as they are and listed (decision 15.N3).
    The target records a `copy` audit record in each initiative the copy wrote to (audit is read
    per initiative), each with the whole copy's counts.

    With --force into a target that holds memory, the copy is verified as holding every record of
    the source (the target keeps its own memory besides).

    Then the semantic channel's stored vectors (every model's) follow, each only onto a live node
    of the target that says the text it was computed from, so recall by meaning needs no reindex.

    --json: {"ok": true, "copied": {"initiatives", "ended_initiatives", "node_revisions", "edge_revisions",
    "slot_revisions", "audit", "skipped", "conflicts", "vectors"}, "digest", "merged", "flagged": [{"line", "field", "message"}]}.
    """
    from kaeru.errors import KaeruError, Unavailable
    from kaeru.export import archive
    from kaeru.export.vectors_copy import copy_vectors

    if _same_vault(source, target):  # it said "the target vault is not empty (use --force …)"
        fail(ctx, "invalid_argument", f"source and target are the same vault ({target}): name another target", 2)
    src = _opened(source, "--from", existing=True)
    try:
        dst = _opened(target, "--to")
    except BaseException:
        src.close()
        raise
    try:
        with dst.read() as session:
            live = bool(session.all_initiatives())
            held = live or bool(session.ended_initiatives())
        if live and not force:
            fail(
                ctx,
                "target_not_empty",
                "the target vault is not empty (use --force to merge into it; a copy that stopped part way "
                "is completed so, skipping what it wrote)",
            )
        with progress_bar(ctx) as bar:
            task = bar.add_task("copying", total=None)

            def show(stage: str, n: int) -> None:
                bar.update(task, description=f"{stage}: {n}")

            done = archive.copy(
                src,
                dst,
                show,
                settings_of(ctx).actor,
                merge=force and held,  # the target keeps its own memory: the source's must be in it
            )
            vectors = copy_vectors(src, dst, show)  # once the records are verified: an archive holds none
    except RuntimeError as exc:
        if force and held:  # what was merged stands (a diverged record cannot be held): its vectors go with it
            with contextlib.suppress(KaeruError):
                copy_vectors(src, dst)
        fail(ctx, "copy_not_verified", str(exc))
    except Unavailable as exc:  # the target (or the source) stopped answering, maybe part way
        fail(
            ctx,
            exc.code,
            f"{exc.message}; once it answers, the same copy completes it (--force if it stopped part way)",
        )
    except KaeruError as exc:
        fail(ctx, exc.code, exc.message)
    finally:
        src.close()
        dst.close()
    if target.startswith(("postgresql://", "postgres://")):
        # Planner statistics now, not when autovacuum comes by: a table just filled has none, and
        # the first minute's searches would run on plans made without them (decision 70).
        from kaeru.storage.factory import settle

        settle(replace(settings_of(ctx), database_url=target))
    report, digest = done.report, done.digest
    flagged = [{"line": f.line, "field": f.field, "message": f.message} for f in done.flagged]
    if wants_json(ctx):
        copied = {**report.counts(), "vectors": vectors}
        echo_json({"ok": True, "copied": copied, "digest": digest, "merged": done.merged, "flagged": flagged})
        return
    for f in done.flagged:
        say(f"warning: line {f.line} {f.field}: {f.message}", err=True)  # a message may quote stored text
    verified = "every record of the source is in the target; " if done.merged else ""
    click.echo(
        f"copied {report.node_revisions} node revisions, {report.edge_revisions} edge revisions, "
        f"{report.slot_revisions} slot revisions, {report.audit} audit records, {vectors} vectors; "
        f"{verified}verified digest {digest[:16]}…"
    )


def _opened(location: str, option: str, *, existing: bool = False) -> Store:
    """`open_location`, a place that cannot hold a vault said with the option that named it: the
    store's advice names --vault and KAERU_VAULT, which name another vault (decision 424)."""
    from kaeru.storage.sqlite.machine import UnfitPlace

    if not location.startswith(("postgresql://", "postgres://")):
        _vault_folder(location, option)
    try:
        return open_location(location, existing=existing)
    except UnfitPlace as error:
        raise error.named_by(option) from error


def _vault_folder(location: str, option: str) -> Path:
    """The folder of the SQLite vault `location` names: a folder (`sqlite://` before it or not), or
    its `vault.sqlite3`. Any other database file is refused (decision 448): a vault is always its
    folder's `vault.sqlite3`, and taking a file's folder copied `bk/vault.sqlite3` — another vault —
    for `--from bk/monday.sqlite3`, with a verified digest, and made `bk3/vault.sqlite3` for `--to
    bk3/mine.sqlite3` without a word. Any other file is left to the store ("is a file, not a folder")."""
    from kaeru.errors import InvalidArgument
    from kaeru.export.staged import is_sqlite_file

    path = path_argument(location.removeprefix("sqlite://"))
    if path.name == "vault.sqlite3":
        return path.parent
    if path.is_dir() or not (path.suffix in (".sqlite3", ".db") or is_sqlite_file(path)):
        return path
    if option == "--from":
        advice = (
            "a backup file is opened by putting it in a new, empty folder as vault.sqlite3 and naming that "
            "folder with --from (README: Back up and restore)"
        )
    else:
        advice = f"name a folder with {option}: the vault is made in it as vault.sqlite3"
    named = "names a file" if path.exists() else "is named as a database file"
    raise InvalidArgument(
        f"{location} {named}, and kaeru copy takes a vault folder (it holds vault.sqlite3): {advice}",
        field=option.lstrip("-"),
    )


def _same_vault(source: str, target: str) -> bool:
    """Whether two `copy` locations name one vault: the same URL, or the same SQLite folder however
    it is spelt (`sqlite://`, its `vault.sqlite3` file, a relative path)."""
    if source.startswith(("postgresql://", "postgres://")) or target.startswith(("postgresql://", "postgres://")):
        return source == target
    return _vault_folder(source, "--from").resolve() == _vault_folder(target, "--to").resolve()


@cli.command()
@click.option("--text", "text_index", is_flag=True, help="Rebuild the full-text index instead (doctor's fix).")
@click.pass_context
def reindex(ctx: click.Context, text_index: bool) -> None:
    """Compute the semantic channel's vectors for every node that lacks a current one
    (with --text: rebuild the full-text index from the nodes).

    --json: {"ok": true, "vectors_written": N} (with --text: {"ok": true, "text_rows": N}).
    """
    service = service_of(ctx, existing=True)
    if text_index:
        from kaeru.storage.factory import rebuild_text_index

        rows = rebuild_text_index(service.store)
        if wants_json(ctx):
            echo_json({"ok": True, "text_rows": rows})
        else:
            click.echo(f"full-text index rebuilt: {rows} node(s) indexed")
        return
    if service.rt.embedder is None:
        from kaeru import semantic
        from kaeru.service.embedding import EXTRA_INSTALL

        # The half that is missing, named: the setting, the extra (with the README's install line), or both.
        missing = semantic.missing_half(settings_of(ctx)) or f"{EXTRA_INSTALL}, and set KAERU_SEMANTIC=1"
        fail(ctx, "semantic_off", f"semantic recall is off: {missing}")
    with progress_bar(ctx) as bar:
        task = bar.add_task("embedding", total=None)
        written = service.reindex(lambda done, seq: bar.update(task, description=f"embedded {done} (at node #{seq})"))
    if wants_json(ctx):
        echo_json({"ok": True, "vectors_written": written})
    else:
        click.echo(f"{written} vector(s) written")


@cli.command()
@click.pass_context
def migrate(ctx: click.Context) -> None:
    """Apply pending schema migrations to the vault (both backends) and report its state.

    --json: {"ok", "store": {…}, "migrations": {"applied": N, "applied_now": N, "newest": N, "known": N}}
    (`applied`: recorded in the vault; `applied_now`: by this run, not by another process it waited
    for); a long upgrade says how far it got on stderr; a vault written by a newer kaeru
    (a migration this one does not know) fails: upgrade kaeru.
    """
    from kaeru.cli.upgrades import upgrade_progress_said
    from kaeru.errors import NotFound
    from kaeru.service.doctor import migration_state
    from kaeru.storage.factory import open_health
    from kaeru.storage.migrate import UpgradeGate, VaultTooNew, due, upgrade_said

    # Read before opening (which migrates): the recorded count alone said "22 migration(s) applied"
    # on every run of a current vault.
    try:
        before, _ = migration_state(settings_of(ctx), open_health)
    except NotFound:
        before = []  # no vault yet: opening creates it
    # An upgrade re-indexing a large vault takes a while and printed nothing meanwhile (decision 474):
    # what it is about to do is said first, on stderr (stdout stays one document with --json).
    health = open_health(settings_of(ctx)) if before else None
    if health is not None:
        try:
            what = due(health)
        finally:
            health.close()
        if what:
            click.echo(f"upgrading the vault ({what}); on a large vault this takes a while…", err=True)
    now = 0
    try:
        with upgrade_progress_said():  # a long backfill says how far it got (decision 493)
            store = service_of(ctx).store
        backend: dict[str, Any] | None = store.describe()
        now = len(store.migrated_now) if isinstance(store, UpgradeGate) else 0
    except VaultTooNew:
        backend = None  # opening refuses a newer vault; report what it holds instead
    applied, known = migration_state(settings_of(ctx), open_health)
    # Those another process applied while this one waited for its lock: the records before and after
    # alone said "2 migration(s) applied now" in both processes.
    elsewhere = max(0, len(set(applied) - set(before)) - now)
    newest = max(applied, default=0)
    ok = newest <= known
    info: dict[str, Any] = {"applied": len(applied), "applied_now": now, "newest": newest, "known": known}
    if wants_json(ctx):
        echo_json({"ok": ok, "store": backend, "migrations": info})
    elif ok and backend is not None:
        done = f"migrated: {now} migration(s) applied now" if now else "already current"
        if elsewhere:
            done += f" ({elsewhere} applied meanwhile by another kaeru process, which this one waited for)"
        click.echo(f"{backend['backend']} vault {done}, newest {newest} of {known}")
    else:
        click.echo(
            f"error: the vault is at migration {newest}, newer than this kaeru knows ({known}): {upgrade_said('it')}",
            err=True,
        )
    if not ok:
        ctx.exit(EXIT_FAILED)


@cli.command()
@click.argument("path", type=click.Path())
@click.option("--force", is_flag=True, help="Replace PATH even when it is not an earlier backup of this vault.")
@click.pass_context
def backup(ctx: click.Context, path: str, force: bool) -> None:
    """Copy the SQLite vault to the file PATH, consistently, while servers use it (read-only; the
    copy is a vault file: put it in a folder as vault.sqlite3 to open it). A file at PATH is replaced
    only if it is an earlier backup of this vault (or --force). PostgreSQL: pg_dump, or export.

    --json: {"ok": true, "path", "bytes", "live_nodes", "seconds"}.
    """
    from kaeru.errors import InvalidArgument
    from kaeru.export.backup import backup as make

    # What a path says before it is a `Path`, which drops a trailing `/` (then `backups/` was
    # written as a file named `backups`); an existing folder is refused by `make`.
    if path == "-":
        raise InvalidArgument(
            "a backup is a SQLite file and cannot go to standard output: name the file "
            "(`kaeru export -` streams an archive)",
            field="path",
        )
    if path.endswith(("/", os.sep)):
        raise InvalidArgument(
            f"{path!r} names a folder: name the backup file in it, e.g. {path}kaeru-YYYY-MM-DD.sqlite3", field="path"
        )
    made = make(settings_of(ctx), Path(path), force=force)
    if wants_json(ctx):
        echo_json(
            {
                "ok": True,
                "path": str(made.path),
                "bytes": made.bytes,
                "live_nodes": made.live_nodes,
                "seconds": round(made.seconds, 3),
            }
        )
    else:
        click.echo(
            f"wrote {made.path} ({made.bytes / 2**20:.1f} MiB, {made.live_nodes:,} live nodes, quick_check ok) "
            f"in {made.seconds:.1f} s"
        )
