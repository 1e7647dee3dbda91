"""`kaeru token add/list/renew/revoke`: who may call the HTTP server, what each caller may see, and
until when."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, tzinfo
from typing import Any

import click

from kaeru.cli.common import cli, echo_json, service_of, settings_of, wants_json
from kaeru.cli.terminal import say
from kaeru.cli.token_views import clock, names, scope, what_changed
from kaeru.config import Settings


@cli.group()
def token() -> None:
    """Bearer tokens for `kaeru serve --http`, one per person or agent.

    A request to /mcp carries `Authorization: Bearer <token>`; the token's name is the actor of every
    audit record it writes. `--initiative a --initiative b` (or `--initiatives a,b`) limits a token to
    those initiatives: it gets
    `forbidden` for any other and sees nothing of them (not in `initiatives`, did-you-mean, search,
    recall, trail, timeline, context, reflect; `archive` is refused). `--read-only` refuses every
    mutation. `--expires 30d` (or 12h, 8w, a date, an ISO date and time) ends it then: from that
    moment it is refused (a 401 on /mcp tells its holder it expired), until `kaeru token renew NAME --expires …`
    moves the expiry (same token). Without `--expires` a token never expires. `KAERU_AUTH_TOKEN`
    stays an admin token (every initiative, write, no expiry). Once the vault holds a token,
    requests without one are refused even on loopback. stdio and the CLI act as the local admin.
    `kaeru token grant NAME --initiative X` changes a token's grants, keeping the token itself; a
    rename of an initiative grants its new name to the tokens of the old one (its answer names the
    tokens granted the new name already, which come to reach it), a merge does not (its answer says
    which tokens it left without access). `kaeru token history [NAME]` shows who added, renewed, granted
    and revoked tokens, and when.
    """


#: The forms `--expires` takes, as its errors list them.
EXPIRY_FORMS = (
    "a time from now (12h, 30d, 8w), a date (2026-12-31: through its end), "
    "an ISO date and time (2026-12-31T18:00:00Z) or never"
)
_AHEAD = re.compile(r"([0-9]+)\s*([hdw])", re.IGNORECASE)
_UNITS = {"h": "hours", "d": "days", "w": "weeks"}
#: The most records `token history` lists at once: a bound both databases take as a number.
MOST_HISTORY = 10_000


def expiry(text: str, now: datetime, zone: tzinfo | None) -> datetime | None:
    """When `--expires TEXT` ends a token (None: `never`): `Nh`, `Nd`, `Nw` from `now`, or a date
    (through its end) or date and time without an offset on the user's calendar (`zone`), as a due
    date is read (decision 188). A time ago (`2d ago`, `5m`) or `now` is refused, not read as past.

    Raises:
        click.BadParameter: not one of `EXPIRY_FORMS`, past the calendar, or not after `now`.
    """
    from kaeru.domain.timefmt import fmt, is_time_ago, parse_moment

    cleaned = text.strip()
    if cleaned.lower() == "never":
        return None
    ahead = _AHEAD.fullmatch(cleaned)
    try:
        if ahead:
            moment = now + timedelta(**{_UNITS[ahead[2].lower()]: int(ahead[1])})
        elif is_time_ago(cleaned) or cleaned.lower() == "now":
            raise click.BadParameter(f"{cleaned!r} is no time from now: give {EXPIRY_FORMS}", param_hint="--expires")
        else:
            moment = parse_moment(cleaned, now, zone=zone)
    except OverflowError as exc:
        raise click.BadParameter(f"{cleaned!r} falls after the year 9999", param_hint="--expires") from exc
    except ValueError as exc:  # not a moment, past the calendar, or more digits than `int` reads
        raise click.BadParameter(f"{cleaned!r} is no expiry: give {EXPIRY_FORMS}", param_hint="--expires") from exc
    if moment <= now:
        raise click.BadParameter(
            f"{cleaned!r} ({fmt(moment)}) has passed: a token expires later than now ({fmt(now)})",
            param_hint="--expires",
        )
    return moment


def _refuse_an_actors_name(name: str, settings: Settings) -> None:
    """A token named as the local actor (`KAERU_ACTOR`: the CLI, stdio and the admin token
    `KAERU_AUTH_TOKEN` act as it), or as the default actor of a process without one, writes history
    and audit records no one can tell from that actor's (decision 476). Compared case-blind: `Agent`
    beside `agent` is told apart by no reader.

    Raises:
        InvalidArgument: `name` is one of those actors' names.
    """
    from kaeru.errors import InvalidArgument

    for actor, who, whose in (
        (settings.actor, "the CLI, stdio and the admin token KAERU_AUTH_TOKEN write", " (KAERU_ACTOR)"),
        (Settings.actor, "a CLI, stdio server or admin token run without KAERU_ACTOR writes", ""),
    ):
        if name.casefold() == actor.casefold():
            raise InvalidArgument(
                f"a token may not be named {name!r}: {who} history and audit records as {actor!r}{whose}, so two "
                "people would be indistinguishable there; choose another name",
                field="name",
            )


def _grant_of(initiative: tuple[str, ...], initiatives: str | None) -> list[str] | None:
    """The names `--initiative` (one each, any character) and `--initiatives` (comma-separated, kept
    for the scripts that use it) give, in that order; None when neither is given: every initiative."""
    if not initiative and initiatives is None:
        return None
    return [*initiative, *(n for n in (initiatives or "").split(",") if n.strip())]


_INITIATIVE = click.option(
    "--initiative",
    "initiative",
    multiple=True,
    help="An initiative this token may see and write; repeat it for several (a name may hold a comma).",
)


@token.command("add")
@click.argument("name")
@_INITIATIVE
@click.option(
    "--initiatives",
    default=None,
    help="Comma-separated initiative names, as --initiative each (default: every initiative).",
)
@click.option("--read-only", is_flag=True, help="Refuse every mutation made with this token.")
@click.option(
    "--expires",
    default=None,
    help="When the token stops being accepted: 12h, 30d, 8w from now, a date, an ISO date and time (default: never).",
)
@click.pass_context
def token_add(
    ctx: click.Context,
    name: str,
    initiative: tuple[str, ...],
    initiatives: str | None,
    read_only: bool,
    expires: str | None,
) -> None:
    """Make a token NAME and print it ONCE (only its sha256 is stored: keep it somewhere safe).

    NAME may not be the actor's name (KAERU_ACTOR, default `agent`), which the CLI and the admin
    token write as.

    Example: kaeru token add alice --initiative webshop --initiative infra --read-only --expires 30d

    --json: {"ok": true, "name", "token", "initiatives": [..] | null, "read_only", "created_at",
    "expires_at": TIME | null, "absent": [..]} (`absent`: granted initiatives the vault does not hold yet).
    """
    from kaeru.service import grants

    settings = settings_of(ctx)
    _refuse_an_actors_name(name, settings)
    grant = _grant_of(initiative, initiatives)
    service = service_of(ctx)
    until = expiry(expires, service.rt.now(), settings.zone()) if expires is not None else None
    secret, record = grants.add_token(service.rt, name, grant, read_only, settings.actor, until)
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
                "expires_at": record.expires_at,
                "absent": [name for name, _ in absent],
            }
        )
        return
    click.echo(secret)
    granted = names(shown, ", ") if shown is not None else "every initiative"
    mode = "read-only" if record.read_only else "read and write"
    ends = f"expires {record.expires_at}" if record.expires_at else "never expires"
    say(f"token {record.name!r}: {granted}; {mode}; {ends}. It is shown only this once.", err=True)
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
@click.option("--name", "name", default=None, help="Only the tokens whose name holds this text (any case).")
@click.option(
    "--initiative",
    "initiative",
    default=None,
    help="Only the tokens that reach this initiative: granted it by name, or every initiative.",
)
@click.option("--limit", default=None, type=click.IntRange(1), help="Show this many tokens at most (by name).")
@click.pass_context
def token_list(ctx: click.Context, name: str | None, initiative: str | None, limit: int | None) -> None:
    """List the tokens under a header: name, grants, access, created, last used, expiry (never the
    token itself), times on your clock (KAERU_TIMEZONE, else this machine's) as `token history`
    shows them. A grant longer than a line is said as "N initiatives" (`--json` lists it whole); a
    name that could be misread (a comma in it, say) is quoted. A token whose expiry has passed is
    marked `EXPIRED` (it is refused; `kaeru token renew` accepts it again).

    Who added, renewed, granted or revoked a token, and when: `kaeru token history [NAME]`.

    Example: kaeru token list --initiative webshop --limit 20

    --json: {"ok": true, "tokens": [{"name", "initiatives": [..] | null, "read_only", "created_at",
    "last_used", "expires_at": TIME | null, "expired"}], "total"} (`total`: the tokens matching,
    past --limit too).
    """
    from kaeru.domain.naming import canonical
    from kaeru.service import grants

    service = service_of(ctx, existing=True)
    found = grants.list_tokens(service.rt)
    if name is not None:
        found = [t for t in found if name.casefold() in t.name.casefold()]
    if initiative is not None:
        wanted = canonical(initiative)
        # In NFC, as the server reads a grant (an older kaeru stored one as given: decision 184).
        found = [t for t in found if t.initiatives is None or wanted in {canonical(n) for n in t.initiatives}]
    total = len(found)
    found = found[:limit] if limit is not None else found
    now = service.rt.now()
    rows = [
        {
            "name": t.name,
            "initiatives": list(t.initiatives) if t.initiatives is not None else None,
            "read_only": t.read_only,
            "created_at": t.created_at,
            "last_used": t.last_used,
            "expires_at": t.expires_at,
            "expired": grants.expired(t, now),
        }
        for t in found
    ]
    if wants_json(ctx):
        echo_json({"ok": True, "tokens": rows, "total": total})
        return
    if not rows:
        filtered = name is not None or initiative is not None
        click.echo(
            "no token matches"
            if filtered
            else "no tokens (HTTP takes KAERU_AUTH_TOKEN, or no token on loopback from this account)"
        )
        return
    zone = settings_of(ctx).zone()
    say("name\tinitiatives\taccess\tcreated\tlast used\texpiry")
    for t, row in zip(found, rows, strict=True):
        mode = "read-only" if t.read_only else "read-write"
        ends = (
            f"{'EXPIRED' if row['expired'] else 'expires'} {clock(t.expires_at, zone)}"
            if t.expires_at
            else "never expires"
        )
        last = clock(t.last_used, zone) if t.last_used else "-"
        say(f"{t.name}\t{scope(t.initiatives)}\t{mode}\t{clock(t.created_at, zone)}\t{last}\t{ends}")
    if total > len(rows):
        click.echo(f"{total - len(rows)} more tokens not shown: --limit {total} shows them all", err=True)


@token.command("history")
@click.argument("name", required=False)
@click.option(
    "--limit",
    default=50,
    show_default=True,
    type=click.IntRange(1, MOST_HISTORY),
    help=f"Show this many records, the newest (at most {MOST_HISTORY:,}).",
)
@click.pass_context
def token_history(ctx: click.Context, name: str | None, limit: int) -> None:
    """Who added, renewed, granted and revoked tokens, and when, newest first (of the token NAME only, when
    given): one line each, with the time on your clock (KAERU_TIMEZONE, else this machine's), what
    was done, the token, by whom (the KAERU_ACTOR of the `kaeru token` command) and what changed:
    the grants a token was made with or had when revoked, a renewal's expiry before → after, a change
    of grants (`kaeru token grant`, or a rename that moved them) before → after. These
    records belong to no initiative, so a search of an initiative's audit log does not list them.
    The token itself is never in them (only its sha256 is stored, and not there).

    Example: kaeru token history alice --limit 10

    --json: {"ok": true, "history": [{"at": TIME, "operation": "added" | "renewed" | "revoked" |
    "granted", "name", "actor", "grant": {"initiatives": [..] | null, "read_only", "expires_at": TIME |
    null} | null, "expiry": {"before": TIME | null, "after": TIME | null} | null, "before": GRANT |
    null}], "more"} (`grant`: of an added or revoked token, or after a change of grants; `before`: the
    grant that change replaced; `expiry`: of a renewal; `more`: older records exist past --limit).
    """
    from kaeru.service.token_history import token_history as history_of

    zone = settings_of(ctx).zone()
    events, more = history_of(service_of(ctx, existing=True).rt, name, limit)
    if wants_json(ctx):
        history = [
            {
                "at": e.at,
                "operation": e.operation,
                "name": e.name,
                "actor": e.actor,
                "grant": e.grant,
                "expiry": {"before": e.expiry[0], "after": e.expiry[1]} if e.expiry is not None else None,
                "before": e.before,
            }
            for e in events
        ]
        echo_json({"ok": True, "history": history, "more": more})
        return
    if not events:
        say(f"no record of a token named {name!r}" if name is not None else "no token records")
    for e in events:
        say(f"{clock(e.at, zone)}\t{e.operation}\t{e.name}\tby {e.actor}\t{what_changed(e, zone)}")
    if more and limit < MOST_HISTORY:
        click.echo(f"older records not shown: --limit {min(limit * 2, MOST_HISTORY)} shows more", err=True)
    elif more:
        click.echo(f"older records not shown ({MOST_HISTORY:,} at most at once; NAME lists one token's)", err=True)


@token.command("grant")
@click.argument("name")
@_INITIATIVE
@click.option(
    "--remove",
    "remove",
    multiple=True,
    help="An initiative to take out of its grants (one it lacks is refused); repeat for several.",
)
@click.option("--replace", is_flag=True, help="The --initiative names become its grants, instead of joining them.")
@click.pass_context
def token_grant(
    ctx: click.Context, name: str, initiative: tuple[str, ...], remove: tuple[str, ...], replace: bool
) -> None:
    """Change the initiatives the token NAME may see and write, keeping the token itself: its holder
    goes on with the token they have. A renamed initiative's grants move with it; a merged one's do
    not (the merge's answer names the tokens left without access): this gives them the target.
    Recorded in `kaeru token history`.

    Example: kaeru token grant alice --initiative webshop-v2 --remove webshop

    --json: {"ok": true, "name", "initiatives": [..] | null, "before": [..] | null, "changed"}.
    """
    from kaeru.service import token_grants

    settings = settings_of(ctx)
    service = service_of(ctx, existing=True)
    before, after = token_grants.grant_token(service.rt, name, initiative, remove, replace, settings.actor)
    shown = list(after.initiatives) if after.initiatives is not None else None
    if wants_json(ctx):
        was = list(before.initiatives) if before.initiatives is not None else None
        echo_json({"ok": True, "name": after.name, "initiatives": shown, "before": was, "changed": before != after})
        return
    if before == after:
        say(f"token {after.name!r} already has these grants: {scope(after.initiatives, whole=True)}")
        return
    say(f"token {after.name!r}: {scope(after.initiatives, whole=True)} (was {scope(before.initiatives)}); same token")
    for wanted, close in _absent(service, shown or []):
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        click.echo(f"warning: the vault holds no initiative {wanted!r} (yet).{hint}", err=True)


@token.command("renew")
@click.argument("name")
@click.option(
    "--expires",
    required=True,
    help="The new expiry: 12h, 30d, 8w from now, a date, an ISO date and time, or never.",
)
@click.pass_context
def token_renew(ctx: click.Context, name: str, expires: str) -> None:
    """Set when the token NAME stops being accepted, keeping the token itself and its grants: its
    holder goes on with the token they have, an expired one too. `--expires never` lifts the expiry.

    Example: kaeru token renew alice --expires 30d

    --json: {"ok": true, "name", "expires_at": TIME | null}.
    """
    from kaeru.service import grants

    settings = settings_of(ctx)
    service = service_of(ctx, existing=True)
    until = expiry(expires, service.rt.now(), settings.zone())
    record = grants.renew_token(service.rt, name, until, settings.actor)
    if wants_json(ctx):
        echo_json({"ok": True, "name": record.name, "expires_at": record.expires_at})
    else:
        ends = f"expires {record.expires_at}" if record.expires_at else "never expires"
        click.echo(f"token {record.name!r} {ends}")


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
