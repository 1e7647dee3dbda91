"""`kaeru doctor`: read-only health checks of the vault and the settings, each with its fix."""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from kaeru import __version__
from kaeru.cli.common import EXIT_FAILED, cli, echo_json, settings_of, wants_json
from kaeru.cli.inputs import FILE_NAME

_MARK = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL", "info": "info", "skip": "skip"}


@cli.command()
@click.pass_context
def doctor(ctx: click.Context) -> None:
    """Check the vault (read-only: opens, migrations, integrity, full-text index, WAL, a search) and
    the settings (semantic extra, HTTP host and token). Exits 1 when any check fails.

    --json: {"ok", "version", "vault": {…}, "checks": [{"name", "status", "summary", "fix"}]};
    status is ok, warn, fail, info or skip.
    """
    from kaeru import semantic
    from kaeru.mcp.addresses import is_loopback
    from kaeru.service.doctor import diagnose
    from kaeru.storage.factory import open_health

    despite = ctx.find_root().obj.get("settings_despite")  # settings kaeru cannot use: said, and set aside
    settings, unusable = despite if despite else (settings_of(ctx), [])
    report = diagnose(
        settings,
        version=__version__,
        semantic_installed=semantic.available(),
        is_loopback=is_loopback,
        open_health=open_health,
        load_semantic=semantic.load_model,
        unusable=unusable,
    )
    if wants_json(ctx):
        echo_json(report.as_json())
    else:
        click.echo(f"kaeru {report.version}")
        for check in report.checks:
            click.echo(f"[{_MARK[check.status]}] {check.name}: {check.summary}")
            if check.fix and check.status in ("fail", "warn"):
                click.echo(f"       fix: {check.fix}")
        failed = [c.name for c in report.checks if c.status == "fail"]
        click.echo("healthy" if not failed else f"unhealthy: {', '.join(failed)}")
    if not report.ok:
        ctx.exit(EXIT_FAILED)


@cli.command()
@click.argument("target", type=FILE_NAME)
@click.pass_context
def salvage(ctx: click.Context, target: str) -> None:
    """Copy what still reads of a damaged SQLite vault into a new vault at TARGET (a folder).

    For a vault `kaeru doctor` finds damaged, which `kaeru export` cannot read past: the vault
    (--vault / KAERU_VAULT) is only read; every table is read row by row past the pages that do not
    read; indexes and the full-text index are built afresh; what could not be read is listed. Stop
    every kaeru process on the vault first. Then check TARGET with `kaeru --vault TARGET doctor` and
    use it in the old vault's place. Exits 1 when something could not be read (TARGET is written).

    --json: {"ok", "target", "complete", "tables": {name: {"copied": N, "damaged": ["rowid 120 to 181", …]}},
    "integrity": "ok"}.
    """
    import os

    import apsw

    from kaeru.cli.common import fail, open_location, path_argument, require_vault, vault_at
    from kaeru.storage.factory import rebuild_text_index
    from kaeru.storage.sqlite.health import SqliteHealth
    from kaeru.storage.sqlite.salvage import Unsalvageable
    from kaeru.storage.sqlite.salvage import salvage as copy_what_reads

    settings = settings_of(ctx)
    if settings.database_url:
        fail(
            ctx,
            "invalid_argument",
            "salvage reads a SQLite vault; a PostgreSQL database is restored by its server's tools (pg_dump, a base backup)",
            2,
        )
    require_vault(settings)
    folder = path_argument(target)
    into = vault_at(folder).sqlite_path
    if folder.resolve() == settings.vault_dir.resolve():
        fail(ctx, "invalid_argument", f"{target} is the damaged vault itself: name a new folder", 2)
    if into.exists():
        fail(ctx, "target_not_empty", f"{into} already holds a vault: name a new folder", 2)
    partial = into.with_name(into.name + ".salvaging")
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial.unlink(missing_ok=True)
        # Private from its first byte (decision 177): a folder others can read must not show them
        # the vault while it is written.
        os.close(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        done = copy_what_reads(settings.sqlite_path, partial)
        partial.rename(into)
    except Unsalvageable as exc:
        _discard(partial)
        fail(ctx, "unsalvageable", f"{exc}: nothing could be salvaged; restore the vault from a backup or an export")
    except (OSError, apsw.Error) as exc:  # the target cannot be made or written (a file in the way, a full disk)
        _discard(partial)
        fail(ctx, "salvage_failed", f"could not write the new vault at {folder} ({exc}); nothing was kept there")
    store = open_location(str(folder))
    try:
        rebuild_text_index(store)
    finally:
        store.close()
    check = SqliteHealth(into, busy_timeout_ms=settings.busy_timeout_ms)
    integrity = "; ".join(check.integrity())
    tables = {t.name: {"copied": t.copied, "damaged": t.damaged} for t in done.tables}
    complete = not done.damaged
    if wants_json(ctx):
        echo_json({"ok": True, "target": str(folder), "complete": complete, "tables": tables, "integrity": integrity})
    else:
        for t in done.tables:
            if t.copied or t.damaged:
                lost = f"; could not read {', '.join(t.damaged)}" if t.damaged else ""
                click.echo(f"{t.name}: {t.copied} row(s) copied{lost}")
        click.echo(f"salvaged into {folder} (integrity: {integrity})")
        click.echo(
            ("every row read" if complete else "some rows could not be read (listed above)")
            + f": check it with `kaeru --vault {folder} doctor`, then use it in place of {settings.vault_dir}"
        )
    if not complete:
        ctx.exit(EXIT_FAILED)


def _discard(partial: Path) -> None:
    """Remove a salvage's unfinished file, if there is one to remove."""
    with contextlib.suppress(OSError):
        partial.unlink(missing_ok=True)
