"""`kaeru doctor`: read-only health checks of the vault and the settings, each with its fix."""

from __future__ import annotations

import click

from kaeru import __version__
from kaeru.cli.common import EXIT_FAILED, cli, echo_json, settings_of, wants_json

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

    report = diagnose(
        settings_of(ctx),
        version=__version__,
        semantic_installed=semantic.available(),
        is_loopback=is_loopback,
        open_health=open_health,
        load_semantic=semantic.load_model,
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
