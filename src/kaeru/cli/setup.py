"""`kaeru setup CLIENT [--http URL] [--write]`: the MCP client configuration that starts (or reaches) kaeru.

Prints the snippet for the client's own configuration file on stdout (where it goes on stderr);
`--write` merges it into that file — every other server and setting kept, the file's previous
content saved beside it as `<name>.bak-<UTC time>` — and says what it did; the `env` keys of the
entry already there that this setup does not set are kept, and a vault it changes is said
(`cli/setup_write.py`, decision 449). Clients and files
(user level; `--path` names another, e.g. a project's `.vscode/mcp.json`), see docs/clients.md:

| client | file | key |
|---|---|---|
| claude-code | `~/.claude.json` | `mcpServers` (`type` stdio/http) |
| claude-desktop | `~/Library/Application Support/Claude/claude_desktop_config.json` (macOS), `%APPDATA%\\Claude\\…` (Windows), `~/.config/Claude/…` (Linux) | `mcpServers` (HTTP through `npx mcp-remote`) |
| cursor | `~/.cursor/mcp.json` | `mcpServers` (`url` for HTTP) |
| vscode | the user profile's `mcp.json` (`~/.config/Code/User/mcp.json` on Linux) | `servers` (`type` stdio/http) |
| codex | `$CODEX_HOME/config.toml` (`~/.codex/config.toml`) | `[mcp_servers.<name>]` (`url`, `bearer_token_env_var`) |
| windsurf | `~/.codeium/windsurf/mcp_config.json` | `mcpServers` (`serverUrl` for HTTP) |

A bearer token is never written into a file: `--token-env NAME` makes the configuration read it from
that environment variable, in the client's own syntax (decision 19.I4) — except Claude Desktop's,
which starts `mcp-remote` with only the entry's `env` and expands no variable of its own: there
`--write` puts the token from NAME into the entry's `env` (the file made 0600 before it holds it) and
says so. What is printed leaves secrets out (`shown`): the file holds them (decision 488).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import click

from kaeru.cli.common import EXIT_FAILED, EXIT_REJECTED, cli, echo_json, fail, settings_of, tools_flag, wants_json
from kaeru.cli.setup_toml import toml_text
from kaeru.cli.setup_write import HEADER_ENV, NameTaken, Written, write
from kaeru.config import NoHome, default_vault_dir, url_password_replaced

CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode", "codex", "windsurf")


def server_command() -> list[str]:
    """How a client starts this kaeru: the `kaeru` script beside this interpreter, else on PATH,
    else `python -m kaeru` with this interpreter (clients start servers with a bare PATH, so the
    path is absolute)."""
    beside = Path(sys.executable).parent / ("kaeru.exe" if os.name == "nt" else "kaeru")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("kaeru")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "kaeru"]


def _config_home() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    if os.name == "nt":
        return Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def config_path(client: str) -> Path:
    """The client's user-level configuration file."""
    home = Path.home()
    if client == "claude-code":
        return home / ".claude.json"
    if client == "claude-desktop":
        return _config_home() / "Claude" / "claude_desktop_config.json"
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    if client == "vscode":
        return _config_home() / "Code" / "User" / "mcp.json"
    if client == "codex":
        return Path(os.environ.get("CODEX_HOME") or home / ".codex") / "config.toml"
    if client == "windsurf":
        return home / ".codeium" / "windsurf" / "mcp_config.json"
    raise ValueError(client)


#: mcp-remote's hosts that plain http may reach without `--allow-http` (not `[::1]`, nor 127.0.0.2).
MCP_REMOTE_PLAIN = ("localhost", "127.0.0.1")


def entry(
    client: str, *, http: str | None, token_env: str | None, env: dict[str, str], token: str | None = None
) -> dict[str, Any]:
    """The one server entry for `client`; `token`: the bearer token itself, for Claude Desktop's."""
    if http is None:
        command, *prefix = server_command()
        stdio: dict[str, Any] = {"command": command, "args": [*prefix, "serve"]}
        if env:
            stdio["env"] = env
        if client in ("claude-code", "vscode"):
            return {"type": "stdio", **stdio}
        return stdio
    header = {"Authorization": f"Bearer {_reference(client, token_env)}"} if token_env else {}
    if client == "claude-desktop":
        # Claude Desktop's file starts local servers only; `mcp-remote` bridges stdio to HTTP.
        # Claude Desktop starts it with a default environment and the entry's `env` only, so the
        # token goes in that `env`; the header argument has no space (mcp-remote's README: Claude
        # Desktop on Windows and Cursor split arguments at spaces).
        args = ["-y", "mcp-remote", http, *(["--allow-http"] if mcp_remote_refuses(http) else [])]
        if not token_env:
            return {"command": "npx", "args": args}
        args += ["--header", f"Authorization:${{{HEADER_ENV}}}"]
        return {"command": "npx", "args": args, "env": {HEADER_ENV: f"Bearer {token or _unwritten(token_env)}"}}
    if client == "codex":
        return {"url": http, **({"bearer_token_env_var": token_env} if token_env else {})}
    key = "serverUrl" if client == "windsurf" else "url"
    remote: dict[str, Any] = {key: http}
    if client in ("claude-code", "vscode"):
        remote = {"type": "http", **remote}
    if header:
        remote["headers"] = header
    return remote


def _unwritten(token_env: str) -> str:
    return f"<the token in {token_env}>"


def mcp_remote_refuses(url: str) -> bool:
    """Whether `mcp-remote` refuses `url` without `--allow-http`: plain http to a host it does not
    take for this machine ("Non-HTTPS URLs are only allowed for localhost")."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.scheme == "http" and (parts.hostname or "") not in MCP_REMOTE_PLAIN


#: The `env` keys whose values are left out of what setup prints: named like a secret (`GITHUB_TOKEN`,
#: `PGPASSWORD`, `OPENAI_API_KEY`, `KAERU_AUTH_TOKEN`…; not `KAERU_SECRET_POLICY`). An entry setup
#: rewrites keeps the user's keys (decision 449), and the whole entry is printed on stdout.
SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|KEY|CREDENTIALS?|AUTH|COOKIE)$", re.IGNORECASE)


def shown(server: dict[str, Any], token_env: str | None) -> dict[str, Any]:
    """`server` as it is printed: the values of its `env` that are secrets left out — Claude
    Desktop's token, whatever `--token-env` says, a value under a name like a secret's, and the
    password of a `KAERU_DATABASE_URL` kept from the entry. The file holds them; stdout goes to
    terminals, logs and agents' transcripts."""
    env = server.get("env")
    if not isinstance(env, dict):
        return server
    hidden: dict[str, Any] = {}
    for key, value in env.items():
        if key == HEADER_ENV:
            hidden[key] = f"Bearer {_unwritten(token_env)}" if token_env else "Bearer <the token, in the file>"
        elif SECRET_NAME.search(str(key)):
            hidden[key] = "<in the file, not shown>"
        elif key == "KAERU_DATABASE_URL" and isinstance(value, str) and url_password_replaced(value, None) != value:
            hidden[key] = url_password_replaced(value, "<not shown>")
    return {**server, "env": {**env, **hidden}} if hidden else server


def _reference(client: str, name: str | None) -> str:
    """`name`'s value as the client expands an environment variable in its file."""
    if client in ("cursor", "vscode", "windsurf"):
        return f"${{env:{name}}}"
    return f"${{{name}}}"


def document(client: str, name: str, server: dict[str, Any]) -> dict[str, Any]:
    key = "servers" if client == "vscode" else "mcp_servers" if client == "codex" else "mcpServers"
    return {key: {name: server}}


def strict_json(text: str) -> str:
    """`text` without the comments and trailing commas of JSON with comments, which VS Code (and
    Cursor, Windsurf) write and accept in `mcp.json`: refusing such a file left the user to add the
    entry by hand. The rewritten file is plain JSON; the comments stay in the backup."""
    return _outside_strings(_outside_strings(text, comments=True), comments=False)


def _outside_strings(text: str, *, comments: bool) -> str:
    """`text` with its comments (or, once they are gone, its trailing commas) left out; strings are
    copied as they are, so a `//` in a URL stays."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            i = end + 1
        elif comments and text.startswith("//", i):
            line_end = text.find("\n", i)
            i = n if line_end < 0 else line_end
        elif comments and text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
        elif not comments and char == "," and _next_char(text, i + 1) in ("}", "]"):
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _next_char(text: str, start: int) -> str:
    """The first character at or after `start` that is not white space ("" at the end)."""
    while start < len(text) and text[start].isspace():
        start += 1
    return text[start : start + 1]


def _had_comments(path: Path) -> bool:
    """Whether the JSON file at `path` had comments or trailing commas (`strict_json` left them out)."""
    text = path.read_text(encoding="utf-8")
    return strict_json(text) != text


@cli.command()
@click.argument("client", type=click.Choice(CLIENTS))
@click.option("--http", "http", metavar="URL", help="Reach a running `kaeru serve --http` at URL (…/mcp) instead.")
@click.option("--token-env", metavar="NAME", help="With --http: send the bearer token from this environment variable.")
@click.option("--name", default="kaeru", show_default=True, help="The server's name in the client.")
@click.option(
    "--path", "target", type=click.Path(path_type=Path), help="Another file (e.g. a project's .vscode/mcp.json)."
)
@click.option("--write", "do_write", is_flag=True, help="Merge into the file (a backup of it is kept).")
@click.option(
    "--tools",
    "tools",
    metavar="LIST",
    help="The server the client starts offers only these tools (KAERU_TOOLS: names and presets, e.g. core).",
)
@click.pass_context
def setup(
    ctx: click.Context,
    client: str,
    http: str | None,
    token_env: str | None,
    name: str,
    target: Path | None,
    do_write: bool,
    tools: str | None,
) -> None:
    """Print (or --write) CLIENT's configuration for kaeru: claude-code, claude-desktop, cursor,
    vscode, codex or windsurf."""
    if token_env and not http:
        raise click.UsageError("--token-env goes with --http")
    if tools is not None:
        if http:
            raise click.UsageError(
                "--tools goes with a server the client starts: over --http, `kaeru serve --tools` decides"
            )
        if not tools.strip(" ,"):
            raise click.UsageError("--tools is empty: name tools or a preset (core, all), or leave it out for all")
        tools_flag(tools)  # refused here, not by the server the client starts
    completed = http is not None and http_url(http) != http
    http = http_url(http) if http is not None else None
    root = ctx.find_root().obj or {}
    env: dict[str, str] = {}
    settings = root.get("settings")
    if settings is None and not isinstance(root.get("settings_error"), NoHome):
        settings_of(ctx)  # says what is wrong with them; with no home, setup --path needs none
    password_left_out = False
    if http is None and settings is not None and settings.database_url:
        # The server the client starts must open this same PostgreSQL vault, not the default SQLite
        # one; its password never goes into a file (libpq finds it in ~/.pgpass or PGPASSWORD).
        env["KAERU_DATABASE_URL"] = url_password_replaced(settings.database_url, None)
        password_left_out = env["KAERU_DATABASE_URL"] != settings.database_url
    elif http is None and settings is not None and (os.environ.get("KAERU_VAULT") or _vault_given(ctx)):
        env["KAERU_VAULT"] = str(Path(settings.vault_dir).expanduser().resolve())
    default_vault = http is None and settings is not None and not env and _default_moved(settings.vault_dir)
    if default_vault and settings is not None:
        # This shell's default vault is where its XDG_DATA_HOME says; the client starts its server
        # without that variable, so it would open an empty vault under ~/.local/share instead.
        env["KAERU_VAULT"] = str(Path(settings.vault_dir).expanduser().resolve())
    if http is None and settings is not None and settings.semantic and os.environ.get("KAERU_SEMANTIC"):
        # The server the client starts runs with the semantic channel as this shell does: without
        # it, its writes store no vectors and its recalls stay lexical, unsaid.
        env["KAERU_SEMANTIC"] = os.environ["KAERU_SEMANTIC"]
    if tools is not None:
        env["KAERU_TOOLS"] = tools.strip()
    token = None
    if client == "claude-desktop" and token_env and do_write:
        token = os.environ.get(token_env)
        if not token:
            raise click.UsageError(
                f"{token_env} is not set in this shell: Claude Desktop starts mcp-remote with only the entry's "
                f"env, so --write puts the token from {token_env} there; set it to the token and run again (or "
                "leave out --write and put the token in the printed entry yourself)"
            )
    server = entry(client, http=http, token_env=token_env, env=env, token=token)
    try:
        path = (target or config_path(client)).expanduser()
    except RuntimeError:  # no HOME and no password entry (decision 189)
        raise click.UsageError(
            f"this account has no home directory to find {client}'s configuration in: give --path"
        ) from None
    done = Written(server)
    if do_write:
        try:
            # The entry the file holds keeps its env keys this setup does not set (decision 449).
            done = write(
                path, client, name, server, keep_env=http is None, default_vault=default_vault, private=bool(token)
            )
        except NameTaken as exc:
            fail(ctx, "invalid_argument", str(exc), EXIT_REJECTED)
        except (ValueError, OSError) as exc:
            fail(ctx, "setup_failed", str(exc), EXIT_FAILED)
        server = done.server
    server = shown(server, token_env)
    changed, backup = done.changed, done.backup
    rendered = toml_text(name, server) if client == "codex" else json.dumps(document(client, name, server), indent=2)
    if wants_json(ctx):
        echo_json(
            {
                "ok": True,
                "client": client,
                "path": str(path),
                "config": document(client, name, server),
                "written": changed,
                "backup": str(backup) if backup else None,
                # What the human output says on stderr, for a script or an agent to tell its
                # person: the client's server needs the password from ~/.pgpass or PGPASSWORD.
                "password_left_out": password_left_out,
                **done.document(),
            }
        )
        return
    click.echo(rendered, nl=not rendered.endswith("\n"))
    if completed:
        click.echo(f"# the URL has no path: {http} is where `kaeru serve --http` answers", err=True)
    if http is not None and not token_env and not _on_this_machine(http):
        click.echo(
            "# no token: a server on another machine asks every client for one (KAERU_AUTH_TOKEN or "
            "`kaeru token add NAME` there); run again with --token-env VAR, VAR holding it where the client runs",
            err=True,
        )
    if client == "claude-desktop" and http is not None and mcp_remote_refuses(http):
        click.echo(
            "# --allow-http: mcp-remote reaches plain http only on localhost without it"
            + ("" if _on_this_machine(http) else "; the requests (and the token) cross the network unencrypted"),
            err=True,
        )
    if client == "claude-desktop" and token_env:
        click.echo(
            f"# the token from {token_env} is written in the entry's env ({HEADER_ENV}; the file is 0600 now): "
            "Claude Desktop does not pass its own environment on"
            if token
            else f"# put the token in place of {_unwritten(token_env)}: Claude Desktop does not pass its own "
            f"environment on (--write puts the one in {token_env} there)",
            err=True,
        )
    if default_vault and server.get("env", {}).get("KAERU_VAULT") == env["KAERU_VAULT"]:
        click.echo(
            f"# KAERU_VAULT is set: this shell's XDG_DATA_HOME puts the vault at {env['KAERU_VAULT']}, and "
            "the client starts its server without XDG_DATA_HOME",
            err=True,
        )
    if password_left_out:
        click.echo(
            "# the PostgreSQL password is not written: libpq reads it from ~/.pgpass (chmod 600) or from "
            "PGPASSWORD where the client runs",
            err=True,
        )
    if do_write:
        for line in done.said():
            click.echo(f"# {line}", err=True)
        written = done.target if done.target is not None and done.target != path else None
        said = (
            f"wrote {written or path}"
            + (f" (the file {path} links to)" if written else "")
            + (f" (previous content in {backup})" if backup else "")
            if changed
            else f"{path} already holds it"
        )
        if backup and client != "codex" and _had_comments(backup):
            said += "; it is plain JSON now: its comments and trailing commas are only in the backup"
        click.echo(said, err=True)
    else:
        click.echo(f"# put this in {path} (or run again with --write)", err=True)
        if client == "claude-code" and http is None:
            given = "".join(f" --env {shlex.quote(f'{k}={v}')}" for k, v in env.items())
            command = " ".join(shlex.quote(part) for part in server_command())
            # The name first: Claude Code's `--env` takes every word after it up to the next option,
            # so a name after it was read as one more variable ("Invalid environment variable format").
            click.echo(f"# or: claude mcp add {shlex.quote(name)} --scope user{given} -- {command} serve", err=True)


def _on_this_machine(url: str) -> bool:
    """Whether `url` names a loopback host, where a server may be reached without a token."""
    from urllib.parse import urlsplit

    from kaeru.mcp.addresses import is_loopback

    return is_loopback(urlsplit(url).hostname or "")


def http_url(given: str) -> str:
    """The `--http` URL as a client can use it: http(s) with a host; with no path, kaeru's `/mcp`
    (a client posting to `/` gets 404). A proxy's own path is kept.

    Raises:
        click.UsageError: no http(s) scheme or no host — the client could not reach it.
    """
    from urllib.parse import urlsplit

    parts = urlsplit(given.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise click.UsageError(
            f"--http takes the URL `kaeru serve --http` announces, such as http://127.0.0.1:9876/mcp; "
            f"{given!r} has no http:// or https:// and host"
        )
    if parts.path in ("", "/"):
        return parts._replace(path="/mcp").geturl()
    return parts.geturl()


def _default_moved(vault_dir: Path) -> bool:
    """Whether the default vault of this shell is not the one a client's server finds: clients start
    servers with a bare environment (HOME, PATH, USER...), without the XDG_DATA_HOME that moved it."""
    if not os.environ.get("XDG_DATA_HOME"):
        return False
    try:
        bare = default_vault_dir({k: os.environ[k] for k in ("HOME",) if k in os.environ})
    except ValueError:  # no home: the client's server finds no default vault at all
        return True
    return Path(vault_dir).expanduser().resolve() != bare.expanduser().resolve()


def _vault_given(ctx: click.Context) -> bool:
    source = ctx.find_root().get_parameter_source("vault")
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT")
