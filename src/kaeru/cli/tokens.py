"""`kaeru token add/list/revoke`: who may call the HTTP server, and what each caller may see."""

from __future__ import annotations

from typing import Any

import click

from kaeru.cli.common import cli, echo_json, service_of, settings_of, wants_json


@cli.group()
def token() -> None:
    """Bearer tokens for `kaeru serve --http`, one per person or agent.

    A request to /mcp carries `Authorization: Bearer <token>`; the token's name is the actor of every
    audit record it writes. `--initiatives a,b` limits a token to those initiatives: it gets
    `forbidden` for any other and sees nothing of them (not in `initiatives`, did-you-mean, search,
    recall, trail, timeline, context, reflect; `archive` is refused). `--read-only` refuses every
    mutation. `KAERU_AUTH_TOKEN` stays an admin token (every initiative, write). Once the vault
    holds a token, requests without one are refused even on loopback. stdio and the CLI act as the
    local admin.
    """


@token.command("add")
@click.argument("name")
@click.option(
    "--initiatives",
    default=None,
    help="Comma-separated initiative names this token may see and write (default: every initiative).",
)
@click.option("--read-only", is_flag=True, help="Refuse every mutation made with this token.")
@click.pass_context
def token_add(ctx: click.Context, name: str, initiatives: str | None, read_only: bool) -> None:
    """Make a token NAME and print it ONCE (only its sha256 is stored: keep it somewhere safe).

    Example: kaeru token add alice --initiatives webshop,infra --read-only

    --json: {"ok": true, "name", "token", "initiatives": [..] | null, "read_only", "created_at", "absent": [..]}
    (`absent`: granted initiatives the vault does not hold yet).
    """
    from kaeru.service import grants

    grant = [n for n in initiatives.split(",") if n.strip()] if initiatives is not None else None
    service = service_of(ctx)
    secret, record = grants.add_token(service.rt, name, grant, read_only, settings_of(ctx).actor)
    shown = list(record.initiatives) if record.initiatives is not None else None
    absent = _absent(service, shown or [])
    if wants_json(ctx):
        echo_json(
            {
                "ok": True,
                "name": record.name,
                "token": secret,
                "initiatives": shown,
                "read_only": record.read_only,
                "created_at": record.created_at,
                "absent": [name for name, _ in absent],
            }
        )
        return
    click.echo(secret)
    scope = ", ".join(shown) if shown is not None else "every initiative"
    mode = "read-only" if record.read_only else "read and write"
    click.echo(f"token {record.name!r}: {scope}; {mode}. It is shown only this once.", err=True)
    for wanted, close in absent:
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        click.echo(
            f"warning: the vault holds no initiative {wanted!r} (yet): the token sees nothing there until "
            f"one of that name is made.{hint}",
            err=True,
        )


def _absent(service: Any, granted: list[str]) -> list[tuple[str, list[str]]]:
    """The granted initiatives the vault does not hold, each with the names close to it: a typo in
    `--initiatives` made a token that sees nothing, without a word (decision 450). Granting one not
    made yet stays allowed (a token handed out before the project starts)."""
    from kaeru.domain.similar import suggest

    with service.store.read() as session:
        held = [initiative.name for initiative in session.all_initiatives()]
    return [(name, suggest(name, held)) for name in granted if name not in held]


@token.command("list")
@click.pass_context
def token_list(ctx: click.Context) -> None:
    """List the tokens: name, grants, created, last used (never the token itself).

    --json: {"ok": true, "tokens": [{"name", "initiatives": [..] | null, "read_only", "created_at",
    "last_used"}]}.
    """
    from kaeru.service import grants

    found = grants.list_tokens(service_of(ctx, existing=True).rt)
    rows = [
        {
            "name": t.name,
            "initiatives": list(t.initiatives) if t.initiatives is not None else None,
            "read_only": t.read_only,
            "created_at": t.created_at,
            "last_used": t.last_used,
        }
        for t in found
    ]
    if wants_json(ctx):
        echo_json({"ok": True, "tokens": rows})
        return
    if not rows:
        click.echo("no tokens (HTTP takes KAERU_AUTH_TOKEN, or no token on loopback from this account)")
    for t in found:
        scope = ",".join(t.initiatives) if t.initiatives is not None else "*"
        mode = "read-only" if t.read_only else "read-write"
        click.echo(f"{t.name}\t{scope}\t{mode}\tcreated {t.created_at}\tlast used {t.last_used or '-'}")


@token.command("revoke")
@click.argument("name")
@click.pass_context
def token_revoke(ctx: click.Context, name: str) -> None:
    """Revoke the token NAME: from the next request on it is refused.

    --json: {"ok": true, "revoked": NAME}.
    """
    from kaeru.service import grants

    settings = settings_of(ctx)
    grants.revoke_token(service_of(ctx, existing=True).rt, name, settings.actor)
    if wants_json(ctx):
        echo_json({"ok": True, "revoked": name})
    else:
        click.echo(f"revoked {name!r}")
    if not settings.auth_token and not grants.list_tokens(service_of(ctx).rt):
        # The last token gone opens loopback again (15.K3): said, not left to be found (decision 176).
        click.echo(
            "warning: no token is left: `kaeru serve --http` on loopback now serves a request without a "
            "token from this account as the local admin; add a token or set KAERU_AUTH_TOKEN to keep it closed",
            err=True,
        )
