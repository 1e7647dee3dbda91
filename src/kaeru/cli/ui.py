"""`kaeru ui`: the web viewer over the vault, for people who run the stdio server (issue 19).

It serves only `/ui` on 127.0.0.1 and prints two lines: the viewer's address, and a link that
signs in with a one-off token made for this run (anyone else on the machine needs a token too:
that one, or a person's `kaeru token add` token, decision 19.W5).
"""

from __future__ import annotations

import click

from kaeru.cli.common import cli, open_service, require_vault, settings_of, store_of


@cli.command()
@click.option("--port", default=0, type=click.IntRange(0, 65535), help="Port on 127.0.0.1 (default: any free port).")
@click.pass_context
def ui(ctx: click.Context, port: int) -> None:
    """Serve the web viewer on 127.0.0.1 and print its address (until interrupted)."""
    from kaeru.mcp.server import build_server
    from kaeru.mcp.ui import run_ui

    settings = settings_of(ctx)
    require_vault(settings)  # the viewer only reads: no vault is made for it
    store = store_of(ctx, lasting=True)
    kaeru = build_server(open_service(settings, store), settings=settings)
    try:
        run_ui(kaeru, settings, port, click.echo)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
