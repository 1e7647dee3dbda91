"""The `kaeru` command group and what its commands share: the vault, output, errors, exit codes.

Exit codes: 0 done; 1 failed (the vault cannot be opened — `unavailable` —, an `internal` error, a
`partial` import, a copy did not verify or its target already holds memory, `doctor` found a
problem, `setup --write` met a file that does not parse, the semantic extra is missing for
`reindex`); 130 interrupted (Ctrl-C: one line, `cli/interrupt.py`);
2 rejected (the API's `rejected` envelope or another refusal such as `unknown_initiative`, or bad
arguments — click's usage errors exit 2 too).

With `--json`, every command prints one JSON document on stdout: the API envelope for the commands
that mirror a tool (`search`, `read`, `recall`, `context`, `note`, `export`, `import`) and for `call`
(any tool), the list of tool definitions for `tools` (one tool's definition for `tools NAME`), otherwise a documented object with `"ok"`; a failure outside an
envelope prints `{"ok": false, "error": {"code": …, "message": …}}`; `export -`, whose standard output
is the archive, prints its envelope on standard error. Bad usage (click's usage errors, exit 2) is
click's message on stderr, with nothing on stdout.

Output that cannot be written (decision 170): when the reader of stdout or of stderr goes away
(`kaeru search … | head -1`, `… 2>&1 | head -1`) the rest is dropped and the command ends as it
would have, its exit code its own (a `note` that was applied exits 0); when stdout fails otherwise (a
full disk, `> /dev/full`) the command still runs to its end, then says `error: output: <why>` on
stderr and exits 1 (or its own non-zero code); stderr failing so (`2> /dev/full`) exits alike, with
nowhere to say it. A stream closed at the start (`>&-`, `2>&-`) is one nobody reads (decision 449).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

import click

from kaeru import __version__
from kaeru.cli.inputs import argv_value
from kaeru.cli.interrupt import interrupted
from kaeru.cli.streams import GuardedOutput
from kaeru.cli.terminal import json_text, shown, speaks_utf8
from kaeru.config import SettingError, Settings, expanded, not_utf8, tool_set
from kaeru.domain.surrogates import refusal_of_unstorable
from kaeru.errors import KaeruError, NotFound
from kaeru.storage.base import Store

if TYPE_CHECKING:
    # The service layer is imported by the commands that use it: `kaeru serve` answers `initialize`
    # before it is loaded (decision 16.O1).
    from kaeru.service import Service

EXIT_FAILED = 1
EXIT_REJECTED = 2
#: The error codes that say the vault could not answer, not that the request was refused: exit 1.
FAILURES = ("unavailable", "internal")


def wants_json(ctx: click.Context) -> bool:
    return bool((ctx.find_root().obj or {}).get("json"))


def echo_json(document: Any, err: bool = False) -> None:
    """`document` as JSON text; to a stream in another encoding than UTF-8 (a Latin-1 or EUC-JP
    locale), every character past ASCII as its JSON escape: the same value, parsed back exactly
    wherever the bytes are read, where the terminal's encoding could not hold `東京`."""
    raw = json.dumps(document, indent=2, ensure_ascii=not speaks_utf8(err=err))
    click.echo(json_text(raw), err=err)


def fail(ctx: click.Context, code: str, message: str, exit_code: int = EXIT_FAILED) -> NoReturn:
    """End the command with an error: a JSON error object with `--json`, else one line on stderr."""
    if wants_json(ctx):
        echo_json({"ok": False, "error": {"code": code, "message": message}})
    else:
        click.echo(shown(f"error: {code}: {message}"), err=True)
    sys.exit(exit_code)


class _Context(click.Context):
    """The root context, whose end closes the vault (`call_on_close`): a Ctrl-C while it closes is
    an interruption like any other (`interrupted`), not click's "Aborted!" and exit 1."""

    def __exit__(self, *exc: Any) -> None:
        try:
            super().__exit__(*exc)
        except KeyboardInterrupt:
            interrupted(as_json=wants_json(self))


class KaeruCommand(click.Command):
    """A command whose text arguments are read by one rule whatever the locale (`cli/inputs.py`):
    bytes that are UTF-8 as UTF-8. What names a file (`FILE_NAME`) or is not text (a number, a
    choice, a `click.Path`) is left as click made it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, args)
        given = (click.ParameterSource.COMMANDLINE, click.ParameterSource.ENVIRONMENT)
        for param in self.params:
            if param.type is click.STRING and param.name and ctx.get_parameter_source(param.name) in given:
                ctx.params[param.name] = argv_value(ctx.params[param.name])
        return rest


class _Group(click.Group):
    """A group of commands under `kaeru` (`kaeru token …`), whose commands read text as `kaeru`'s do."""

    command_class = KaeruCommand


#: The options of `kaeru` itself, which go before the command.
GLOBAL_OPTIONS = ("--json", "--vault")


class KaeruGroup(click.Group):
    """Ends a command that raised a project error with its code and message, never a traceback, one
    whose output could not be written with one line on stderr (module docstring), and one stopped by
    Ctrl-C with one line and exit 130 (`cli/interrupt.py`)."""

    context_class = _Context
    command_class = KaeruCommand
    group_class = _Group

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt:
            interrupted()

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # stderr is guarded as stdout is: `kaeru … 2>&1 | head -1` puts both on one pipe, and a message written
        # after its reader left (an issue, "(more: …)") ended a command done with exit 1 — a stored note looked failed.
        failures: list[OSError] = []
        err_failures: list[OSError] = []
        stdout, stderr = sys.stdout, sys.stderr
        if sys.stdin is None:  # `<&-`: left None, a `-` that reads it says so (a usage error)
            GuardedOutput.hold(0)
        sys.stdout = cast(TextIO, GuardedOutput(stdout, failures, 1))
        sys.stderr = cast(TextIO, GuardedOutput(stderr, err_failures, 2))
        said = sys.stderr
        try:
            return super().main(*args, **kwargs)
        except SystemExit as done:
            lost = [f for f in (failures[:1] + err_failures[:1]) if f.errno != errno.EPIPE]
            if not lost:
                raise
            if failures and failures[0].errno != errno.EPIPE:
                why = failures[0].strerror or failures[0]
                with contextlib.suppress(OSError):  # stderr gone too: the exit code says it
                    said.write(f"error: output: {why} (the command ran to its end; what it printed was lost)\n")
                    said.flush()
            raise SystemExit(done.code if done.code not in (None, 0) else EXIT_FAILED) from None
        finally:
            sys.stdout, sys.stderr = stdout, stderr

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as refused:
            if refused.option_name not in GLOBAL_OPTIONS:
                raise
            # `kaeru doctor --json` was "No such option", while each command's help shows "--json: {…}".
            value = " DIR" if refused.option_name == "--vault" else ""
            raise click.UsageError(
                f"{refused.option_name} is a global option: give it before the command "
                f"(kaeru {refused.option_name}{value} COMMAND …)",
                ctx=refused.ctx,
            ) from None
        except KaeruError as error:
            failed = error.code in FAILURES
            fail(ctx, error.code, error.message, EXIT_FAILED if failed else EXIT_REJECTED)
        except KeyboardInterrupt:
            interrupted(as_json=wants_json(ctx))


@click.group(cls=KaeruGroup)
@click.option("--vault", envvar="KAERU_VAULT", help="Vault directory (default: the user data dir).")
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document (the API envelope, or the command's object)."
)
@click.version_option(__version__)
@click.pass_context
def cli(ctx: click.Context, vault: str | None, as_json: bool) -> None:
    """kaeru-memory: persistent, scoped, typed-graph memory for LLM agents."""
    ctx.ensure_object(dict)
    ctx.obj["json"] = as_json
    if vault == "":
        # `--vault "$VAULT"` with VAULT unset: read as "not given", the memory went to the default
        # vault. (An empty KAERU_VAULT is unset, as every empty KAERU_* is: click never passes it.)
        raise click.BadParameter(
            "is empty: name the vault's folder, or leave --vault out for the default vault", param_hint="--vault"
        )
    try:
        overrides: dict[str, Any] = {}
        if vault:
            folder = expanded(vault, "--vault (KAERU_VAULT)")
            # The vault's own file names its folder, as `kaeru copy` reads it (decision 448): it was
            # looked for at vault.sqlite3/vault.sqlite3, "no vault" beside the vault.
            is_file = folder.name == "vault.sqlite3" and folder.is_file()
            overrides["vault_dir"] = folder.parent if is_file else folder
        ctx.obj["settings"] = Settings.from_env(**overrides)
    except ValueError as exc:
        # Said by the first command that needs the settings (`settings_of`): a `--help` needs none,
        # nor `setup --path` where the only trouble is a missing home (decision 189), and the
        # doctor reports each bad one and checks the vault without them (decision 341).
        ctx.obj["settings_error"] = exc
        if isinstance(exc, SettingError) and exc.names:
            with contextlib.suppress(ValueError):
                ctx.obj["settings_despite"] = Settings.despite(**overrides)


def complete_initiative(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Tab completion of an initiative's name (click's shell completion, decision 183): the vault's
    names that start with what was typed, read without creating or migrating anything; none when the
    vault cannot be read — a completion must never print into the user's shell."""
    from kaeru.storage.factory import open_health

    try:
        vault = ctx.find_root().params.get("vault")
        settings = Settings.from_env(vault_dir=expanded(vault, "--vault") if vault else None)
        # A tab press waits for a PostgreSQL server that does not answer at most this long.
        health = open_health(settings, connect_timeout_s=2)
    except (KaeruError, ValueError, OSError):
        return []
    try:
        with health.read() as session:
            names = sorted(initiative.name for initiative in session.all_initiatives())
    except Exception:  # any storage failure: no completion rather than a traceback in the shell
        return []
    finally:
        health.close()
    from kaeru.domain.naming import canonical

    typed = canonical(incomplete)  # either Unicode form (decision 184)
    return [name for name in names if canonical(name).startswith(typed)]


def initiatives_option(help_text: str) -> Callable[[Any], Any]:
    """`-i/--initiative` given once or more (required), completing from the vault's names."""
    return click.option(
        "-i",
        "--initiative",
        "initiatives",
        multiple=True,
        required=True,
        help=help_text,
        shell_complete=complete_initiative,
    )


class BadSetting(click.ClickException):
    """A setting in the environment kaeru cannot use: said as itself, not as a misused command line
    (click's usage text above it sent people to `--help`), with exit status 2 as before."""

    exit_code = 2


def settings_of(ctx: click.Context) -> Settings:
    obj = ctx.find_root().obj
    if "settings" not in obj:
        error = obj.get("settings_error", "no settings")
        hint = " (a setting in the environment: correct or unset it; `kaeru doctor` lists every one)"
        raise BadSetting(f"{error}{hint if isinstance(error, SettingError) and error.names else ''}")
    settings: Settings = obj["settings"]
    return settings


def service_of(ctx: click.Context, *, existing: bool = False) -> Service:
    """The vault's service, opened (and migrated) once per command and closed when it ends.
    `existing`: the command only reads, so a SQLite vault that is not there is refused
    (`require_vault`) rather than created empty."""
    obj = ctx.find_root().obj
    if "service" not in obj:
        if existing:
            require_vault(settings_of(ctx))
        obj["service"] = open_service(settings_of(ctx), store_of(ctx))
    service: Service = obj["service"]
    return service


def require_vault(settings: Settings, named_by: str = "--vault / KAERU_VAULT") -> None:
    """Refuse a SQLite vault file that does not exist (decision 196): a command that only reads
    would create an empty vault there and answer "no initiative named …" — a mistyped `--vault`
    reads as a memory that lost everything, and leaves a vault behind. A PostgreSQL database is
    made by its administrator; one without kaeru's tables is set up as before. Nor is an empty file
    (made by hand, a copy cut short) a vault: a read migrated it (decision 450)."""
    path = settings.sqlite_path
    if settings.database_url is None and (not path.exists() or (path.is_file() and path.stat().st_size == 0)):
        why = " (an empty file)" if path.exists() else ""
        if path.parent.exists() and not path.parent.is_dir():
            why = f" ({path.parent} is a file, not a vault's folder)"
        raise NotFound(
            f"there is no vault at {path}{why}: check {named_by}; a new "
            "vault is created by the first `kaeru note` or `kaeru migrate`"
        )


def require_postgres_vault(settings: Settings, named_by: str) -> None:
    """Refuse a PostgreSQL database that holds no kaeru vault (no `schema_migrations` table in its
    search_path) where one is read from (`kaeru copy --from`), as `require_vault` refuses a missing
    SQLite vault (decision 219). Opening it as a store would run the migrations in it — a source is
    never written — and copy a "verified" vault of nothing. Looked at read-only (`open_health`).

    Raises:
        NotFound: the database holds no vault (the URL named without its password).
        Unavailable: the server cannot be reached or refuses the connection.
    """
    from kaeru.config import url_password_replaced
    from kaeru.storage.factory import open_health

    health = open_health(settings)
    try:
        present = health.has_table("schema_migrations")
    finally:
        health.close()
    if not present:
        raise NotFound(
            f"there is no vault at {url_password_replaced(named_by, '***')}: the database holds no kaeru "
            "vault (no schema_migrations table in its search_path); check the URL"
        )


def store_of(ctx: click.Context, *, upgrade_in_background: bool = False, lasting: bool = False) -> Store:
    """The vault's store, opened (and migrated) once per command and closed when it ends; an older
    vault's migrations left to a thread of their own with `upgrade_in_background` (`kaeru serve`).

    Only a `lasting` process (`serve`, `ui`) keeps in-memory copies of common words
    (`KAERU_SEARCH_CACHE_MB`; decision 268): a copy is read whole — every row holding the word, and
    the size of every row — for the calls after the one that reads it, and a command that makes one
    call has none, so SQL ranks it from the rows it reads anyway."""
    obj = ctx.find_root().obj
    if "store" not in obj:
        settings = settings_of(ctx) if lasting else dataclasses.replace(settings_of(ctx), search_cache_mb=0)
        opened = _opener(ctx)(settings, upgrade_in_background=upgrade_in_background)
        ctx.find_root().call_on_close(opened.close)
        obj["store"] = opened
    store: Store = obj["store"]
    return store


def open_store_at(ctx: click.Context, settings: Settings) -> Store:
    """A store on the vault `settings` names (not the command's own: `kaeru bench`'s scratch vault),
    opened the way the composition root opens every store; the caller closes it."""
    return _opener(ctx)(settings)


def _opener(ctx: click.Context) -> Callable[..., Store]:
    """How a command opens a vault (`storage.factory.open_store`): given by the composition root
    (`cli/app.py`), which alone picks a backend."""
    opener: Callable[..., Store] = ctx.find_root().obj["open_store"]
    return opener


def open_service(settings: Settings, store: Store) -> Service:
    """The service over an open store."""
    from kaeru.semantic import open_embedder
    from kaeru.service import Service

    return Service(store, settings, embedder=open_embedder(settings))


def refuse_lone_surrogates(args: dict[str, Any]) -> None:
    """Raise the `invalid_argument` a tool call would get for an argv byte that is not UTF-8, or for
    a NUL character (a file's text can hold one; refused alike on both backends)."""
    if (refusal := refusal_of_unstorable(args)) is not None:
        raise refusal


def request(operation: str, args: dict[str, Any]) -> Any:
    """The tool `operation`'s request model from `args`, validated as a tool call is (one path:
    `api/requests.py`); raises the same `invalid_argument` a tool call would get."""
    from kaeru.api.requests import parser_for

    refuse_lone_surrogates(args)
    return parser_for(operation).parse(args)


def emit(
    ctx: click.Context, envelope: dict[str, Any], human: Callable[[dict[str, Any]], None], *, err: bool = False
) -> None:
    """Print an API envelope (JSON or `human`); a `rejected` one exits 2, or 1 when the vault could
    not answer (`unavailable`, `internal`: a read-only or full vault, a lost server), as the same
    error raised outside an envelope does (decision 171). `err`: the JSON goes to standard error,
    standard output being the command's product (`kaeru export -`)."""
    if wants_json(ctx):
        echo_json(envelope, err=err)
    else:
        human(envelope)
    if (code := exit_code(envelope)) != 0:
        sys.exit(code)


def exit_code(envelope: dict[str, Any]) -> int:
    """0 for an answer (applied, unchanged, replayed, ok), 1 for a failure (`FAILURES`, or a `partial`
    mutation: some of it could not be applied), 2 for a refusal."""
    if envelope.get("state") == "partial":
        return EXIT_FAILED
    if envelope.get("state") != "rejected":
        return 0
    codes = {issue.get("code") for issue in envelope.get("issues", [])}
    return EXIT_FAILED if codes & set(FAILURES) else EXIT_REJECTED


def print_issues(envelope: dict[str, Any]) -> None:
    """The envelope's issues, and a `partial` mutation's failed steps, on stderr."""
    for issue in envelope["issues"]:
        field = f" [{issue['field']}]" if issue.get("field") else ""
        click.echo(shown(f"{issue['code']}{field}: {issue['message']}"), err=True)  # it may quote stored text
    for step in (envelope.get("data") or {}).get("failed_steps") or ():
        click.echo(shown(f"failed step {step['step']}: {step['code']}: {step['message']}"), err=True)


def read_envelope(
    ctx: click.Context, operation: str, args: dict[str, Any], build: Callable[[Any], dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Run the read use case `operation` and build its envelope (`build`, else the generic read
    envelope); a refusal becomes the `rejected` envelope, as over MCP."""
    from kaeru.api import envelope as env

    try:
        parsed = request(operation, args)  # bad arguments are told before a missing vault
    except KaeruError as error:
        return env.rejected_envelope(operation, env.READ_KIND, error)
    service = service_of(ctx, existing=True)
    try:
        outcome = getattr(service, operation)(parsed)
        return build(outcome) if build is not None else env.read_envelope(operation, outcome)
    except KaeruError as error:
        return env.rejected_envelope(operation, env.READ_KIND, error)


def progress_bar(ctx: click.Context) -> Any:
    """A spinner on stderr for long work (silent with `--json`, whose stdout stays one document, and
    when stderr is no terminal: a log or a pipe got one empty line from it, and nothing else)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn

    console = Console(stderr=True)
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        transient=True,
        console=console,
        disable=wants_json(ctx) or not console.is_terminal,
    )


def path_argument(path: str) -> Path:
    """A path given on the command line, a leading `~` made the home directory — said in words
    where the account has none (decision 189)."""
    try:
        return expanded(path, path)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


def tools_flag(raw: str) -> tuple[str, ...]:
    """The tools a `--tools LIST` names (`config.tool_set`); one kaeru cannot read is a usage error."""
    try:
        return tool_set(raw, "--tools")
    except SettingError as exc:
        raise click.UsageError(str(exc)) from None


def vault_at(folder: Path) -> Settings:
    """The settings of a SQLite vault in `folder`, named on the command line; a folder SQLite cannot
    name (not UTF-8: decision 440) is a usage error, before anything is made there."""
    if (named := not_utf8(folder)) is not None:
        raise click.UsageError(f"{named} is not named in UTF-8, and SQLite opens only UTF-8 file names: name another")
    return Settings.from_env({"KAERU_VAULT": str(folder)})


def open_location(location: str, *, existing: bool = False) -> Store:
    """A store from a `postgresql://` URL or a vault directory (SQLite), or its `vault.sqlite3`: any
    other file's name is not its folder (decision 448; `kaeru copy` refuses one). `existing`: the
    location is read from (`kaeru copy --from`), so a SQLite vault that is not there is refused
    (`require_vault`) rather than created empty and copied as a vault of nothing."""
    opener = _opener(click.get_current_context())
    if location.startswith(("postgresql://", "postgres://")):
        settings = Settings.from_env({"KAERU_VAULT": "/nonexistent", "KAERU_DATABASE_URL": location})
        if existing:
            require_postgres_vault(settings, named_by=location)
        return opener(settings)
    location = location.removeprefix("sqlite://")
    path = path_argument(location)
    settings = vault_at(path.parent if path.name == "vault.sqlite3" else path)
    if existing:
        require_vault(settings, named_by=location)
    return opener(settings)
