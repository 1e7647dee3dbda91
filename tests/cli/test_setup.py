"""`kaeru setup CLIENT` (issue 19): each client's configuration parses and starts (or reaches) kaeru;
`--write` merges into an existing file in a temporary HOME, keeping everything else and a backup."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from tests.backends import VaultSpec
from tests.cli.support import Run, kaeru, write_notes

CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode", "codex", "windsurf")
#: Where each client's user-level file sits under HOME (Linux), and the key holding its servers.
FILES = {
    "claude-code": (".claude.json", "mcpServers"),
    "claude-desktop": (".config/Claude/claude_desktop_config.json", "mcpServers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "vscode": (".config/Code/User/mcp.json", "servers"),
    "codex": (".codex/config.toml", "mcp_servers"),
    "windsurf": (".codeium/windsurf/mcp_config.json", "mcpServers"),
}
URL = "http://127.0.0.1:9876/mcp"


def setup(home: Path, *args: str) -> Run:
    env = {"KAERU_VAULT": str(home / "vault")}
    return kaeru(
        env,
        "setup",
        *args,
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        CODEX_HOME=str(home / ".codex"),
    )


def parse(client: str, text: str) -> dict[str, Any]:
    parsed: dict[str, Any] = tomllib.loads(text) if client == "codex" else json.loads(text)
    return parsed


@pytest.mark.parametrize("client", CLIENTS)
def test_printed_config_parses_and_starts_kaeru_serve(client: str, tmp_path: Path) -> None:
    run = setup(tmp_path, client)
    assert run.code == 0, run.stderr
    server = parse(client, run.stdout)[FILES[client][1]]["kaeru"]
    argv = [server["command"], *server["args"]]
    assert argv[-1] == "serve"
    assert Path(argv[0]).name in ("kaeru", "kaeru.exe") or argv[-3:-1] == ["-m", "kaeru"]
    assert Path(argv[0]).is_absolute()
    # The vault this command was pointed at is the one the client's server opens.
    assert server["env"]["KAERU_VAULT"] == str((tmp_path / "vault").resolve())
    assert FILES[client][0] in run.stderr


@pytest.mark.parametrize("client", CLIENTS)
def test_http_config_names_the_url_and_reads_the_token_from_the_environment(client: str, tmp_path: Path) -> None:
    run = setup(tmp_path, client, "--http", URL, "--token-env", "KAERU_AUTH_TOKEN")
    assert run.code == 0, run.stderr
    server = parse(client, run.stdout)[FILES[client][1]]["kaeru"]
    assert URL in json.dumps(server)
    assert "KAERU_AUTH_TOKEN" in json.dumps(server)
    if client == "codex":
        assert server == {"url": URL, "bearer_token_env_var": "KAERU_AUTH_TOKEN"}
    elif client == "claude-desktop":
        assert server["command"] == "npx" and "mcp-remote" in server["args"]
    else:
        assert server["headers"]["Authorization"].startswith("Bearer ${")


def test_an_http_url_a_client_cannot_use_is_refused_and_one_without_its_path_gets_mcp(tmp_path: Path) -> None:
    """`--http 127.0.0.1:9876` was written as the URL as it was (no client can reach it: no scheme),
    and `--http http://127.0.0.1:9876` made the client post to `/`, which answers 404; nothing was
    said and `--write` wrote either into the client's file."""
    for bad in ("127.0.0.1:9876", "localhost:9876/mcp", "ftp://127.0.0.1:9876/mcp", "http:///mcp"):
        run = setup(tmp_path, "claude-code", "--http", bad, "--write")
        assert run.code == 2, (bad, run.stdout, run.stderr)
        assert "http://127.0.0.1:9876/mcp" in run.stderr and bad in run.stderr, run.stderr
        assert not (tmp_path / ".claude.json").exists()
    for bare in ("http://127.0.0.1:9876", "http://127.0.0.1:9876/"):
        run = setup(tmp_path, "cursor", "--http", bare)
        assert run.code == 0, run.stderr
        assert parse("cursor", run.stdout)["mcpServers"]["kaeru"]["url"] == URL
        assert "/mcp" in run.stderr
    proxied = "https://kaeru.example.org/team/mcp"
    run = setup(tmp_path, "cursor", "--http", proxied)
    assert run.code == 0 and parse("cursor", run.stdout)["mcpServers"]["kaeru"]["url"] == proxied


def test_an_http_url_of_another_machine_without_a_token_variable_says_a_token_is_needed(tmp_path: Path) -> None:
    """A server bound beyond loopback always asks for a token, so a configuration without one fails
    with 401 when the client first calls it (decision 233); on this machine none may be needed."""
    remote = "http://teamhost.example:9876/mcp"
    run = setup(tmp_path, "cursor", "--http", remote)
    assert run.code == 0 and "--token-env" in run.stderr and "no token" in run.stderr, run.stderr
    run = setup(tmp_path, "cursor", "--http", remote, "--token-env", "KAERU_TEAM_TOKEN")
    assert run.code == 0 and "no token" not in run.stderr, run.stderr
    for local in (URL, "http://localhost:9876/mcp", "http://[::1]:9876/mcp"):
        run = setup(tmp_path, "cursor", "--http", local)
        assert run.code == 0 and "no token" not in run.stderr, (local, run.stderr)


@pytest.mark.parametrize("client", CLIENTS)
def test_write_merges_into_an_existing_file_and_keeps_a_backup(client: str, tmp_path: Path) -> None:
    rel, key = FILES[client]
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if client == "codex":
        before = 'model = "o3"\n\n[mcp_servers.other]\ncommand = "other"\nargs = ["x"]\n\n[mcp_servers.kaeru]\ncommand = "old"\n\n[mcp_servers.kaeru.env]\nA = "1"\n'
    else:
        before = json.dumps(
            {"theme": "dark", key: {"other": {"command": "other", "args": ["x"]}, "kaeru": {"command": "old"}}}
        )
    path.write_text(before)
    run = setup(tmp_path, client, "--write")
    assert run.code == 0, run.stderr
    after = parse(client, path.read_text())
    assert after[key]["other"] == {"command": "other", "args": ["x"]}
    assert after[key]["kaeru"]["args"][-1] == "serve" and after[key]["kaeru"]["command"] != "old"
    assert after.get("theme", after.get("model")) in ("dark", "o3")
    if client == "codex":
        # the entry's own setting kept beside the vault setup names (decision 449)
        assert after[key]["kaeru"]["env"] == {"A": "1", "KAERU_VAULT": str((tmp_path / "vault").resolve())}
    backups = list(path.parent.glob(path.name + ".bak-*"))
    assert [b.read_text() for b in backups] == [before]
    # Writing the same again changes nothing and makes no second backup.
    again = setup(tmp_path, client, "--write")
    assert again.code == 0 and "already holds it" in again.stderr
    assert list(path.parent.glob(path.name + ".bak-*")) == backups


def test_write_creates_a_missing_file_and_refuses_one_that_does_not_parse(tmp_path: Path) -> None:
    created = setup(tmp_path, "cursor", "--write")
    assert created.code == 0
    assert json.loads((tmp_path / ".cursor/mcp.json").read_text())["mcpServers"]["kaeru"]["args"] == ["serve"]
    broken = tmp_path / ".codeium/windsurf/mcp_config.json"
    broken.parent.mkdir(parents=True)
    broken.write_text("{not json")
    refused = setup(tmp_path, "windsurf", "--write")
    assert refused.code == 1 and "not valid JSON" in refused.stderr
    assert broken.read_text() == "{not json" and not list(broken.parent.glob("*.bak-*"))


def test_write_merges_into_a_vscode_file_with_comments_and_trailing_commas(tmp_path: Path) -> None:
    """VS Code writes and reads `mcp.json` as JSON with comments; such a file was refused as "not
    valid JSON". Its servers are kept (a `//` inside a string is no comment), the result is plain
    JSON, and the user is told the comments are only in the backup."""
    project = tmp_path / "project" / ".vscode" / "mcp.json"
    project.parent.mkdir(parents=True)
    before = (
        '{\n  // my servers\n  "servers": {\n    "docs": {"type": "http", "url": "https://x.example//mcp",},\n'
        '    /* a note, with "quotes" */ "odd": {"command": "a\\"// b", "args": ["1", "2",],},\n  },\n}\n'
    )
    project.write_text(before)
    run = setup(tmp_path, "vscode", "--path", str(project), "--write")
    assert run.code == 0, run.stderr
    servers = json.loads(project.read_text())["servers"]
    assert servers["docs"] == {"type": "http", "url": "https://x.example//mcp"}
    assert servers["odd"] == {"command": 'a"// b', "args": ["1", "2"]}
    assert servers["kaeru"]["args"] == ["serve"]
    assert [b.read_text() for b in project.parent.glob("mcp.json.bak-*")] == [before]
    assert "comments" in run.stderr and "backup" in run.stderr


def test_claude_code_command_line_quotes_a_name_with_spaces(tmp_path: Path) -> None:
    """The printed `claude mcp add` line runs as is in a shell: a name with a space is one argument."""
    run = setup(tmp_path, "claude-code", "--name", "my kaeru")
    line = next(x for x in run.stderr.splitlines() if "claude mcp add" in x)
    assert " add 'my kaeru' --scope user " in line


def test_claude_code_command_line_names_the_server_before_its_variables(tmp_path: Path) -> None:
    """Claude Code's `-e/--env` takes every word after it up to the next option, so a line that put
    the server's name after `--env KAERU_VAULT=…` failed there ("Invalid environment variable format:
    kaeru", anthropics/claude-code#23365): the name comes right after `add`, and each `--env` holds
    one KEY=VALUE followed by an option or the `--` before the command."""
    import shlex

    run = setup(tmp_path, "claude-code", "--tools", "core")
    assert run.code == 0, run.stderr
    line = next(x for x in run.stderr.splitlines() if "claude mcp add" in x)
    words = shlex.split(line.split("# or: ", 1)[1])
    assert words[:4] == ["claude", "mcp", "add", "kaeru"]
    end = words.index("--")
    options = words[4:end]
    given = [options[i + 1] for i, word in enumerate(options) if word == "--env"]
    assert given == [f"KAERU_VAULT={(tmp_path / 'vault').resolve()}", "KAERU_TOOLS=core"]
    for i, word in enumerate(options):
        if word == "--env":
            assert i + 2 == len(options) or options[i + 2].startswith("-"), line
    assert words[end + 1 :][-1] == "serve" and Path(words[end + 1]).is_absolute()


def test_path_writes_a_project_file(tmp_path: Path) -> None:
    project = tmp_path / "project" / ".vscode" / "mcp.json"
    run = setup(tmp_path, "vscode", "--http", URL, "--path", str(project), "--write")
    assert run.code == 0, run.stderr
    assert json.loads(project.read_text()) == {"servers": {"kaeru": {"type": "http", "url": URL}}}


def test_codex_write_keeps_the_comments_around_the_replaced_tables(tmp_path: Path) -> None:
    """docs/clients.md: `--write` replaces only the `[mcp_servers.kaeru]` tables, "the rest of the
    file stays as it was, comments included" — also a comment that sits after the old kaeru table,
    above the next table or at the end of the file."""
    path = tmp_path / ".codex/config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(
        '# my codex settings\nmodel = "o3"\n\n[mcp_servers.kaeru]\ncommand = "old"\n\n'
        '[mcp_servers.kaeru.env]\nA = "1"\n\n# the sandbox, keep it strict\n[sandbox]\nmode = "strict"\n\n'
        '[mcp_servers.kaeru.extra]\nB = "2"\n# last words\n'
    )
    run = setup(tmp_path, "codex", "--write")
    assert run.code == 0, run.stderr
    text = path.read_text()
    for comment in ("# my codex settings", "# the sandbox, keep it strict", "# last words"):
        assert comment in text
    assert text.index("# the sandbox, keep it strict") < text.index("[sandbox]")
    after = tomllib.loads(text)
    assert after["sandbox"] == {"mode": "strict"} and after["model"] == "o3"
    assert after["mcp_servers"]["kaeru"]["command"] != "old"
    # A table of the entry's own settings is kept, written again with the entry (decision 449).
    assert after["mcp_servers"]["kaeru"]["extra"] == {"B": "2"}


def test_write_leaves_every_file_it_cannot_merge_into_as_it_is(tmp_path: Path) -> None:
    """Invalid TOML, JSON that is no object, a servers key that is no object: each refused (exit 1,
    naming the file and what is wrong), the file untouched and no backup made."""
    cases = {
        "codex": ("[mcp_servers\nbroken", "not valid TOML"),
        "cursor": ("[1, 2]", "does not hold a JSON object"),
        "claude-desktop": ('{"mcpServers": ["kaeru"]}', "'mcpServers' is not an object"),
    }
    for client, (content, why) in cases.items():
        path = tmp_path / FILES[client][0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        refused = setup(tmp_path, client, "--write")
        assert refused.code == 1 and why in refused.stderr and str(path) in refused.stderr, (client, refused.stderr)
        assert path.read_text() == content and not list(path.parent.glob("*.bak-*")), client


def test_token_env_needs_http_and_json_reports_what_was_written(tmp_path: Path) -> None:
    usage = setup(tmp_path, "cursor", "--token-env", "KAERU_TOKEN")
    assert usage.code == 2 and "--token-env goes with --http" in usage.stderr
    path = tmp_path / FILES["cursor"][0]
    path.parent.mkdir(parents=True)
    path.write_text('{"mcpServers": {"other": {"command": "other"}}}')
    env = {"KAERU_VAULT": str(tmp_path / "vault")}
    run = kaeru(
        env, "setup", "cursor", "--write", as_json=True, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / ".config")
    )
    assert run.code == 0, run.stderr
    report = run.json()
    assert report["ok"] is True and report["written"] is True and report["path"] == str(path)
    assert report["backup"] and Path(report["backup"]).read_text() == '{"mcpServers": {"other": {"command": "other"}}}'
    assert set(json.loads(path.read_text())["mcpServers"]) == {"other", "kaeru"}
    assert report["config"]["mcpServers"]["kaeru"] == json.loads(path.read_text())["mcpServers"]["kaeru"]


def test_a_postgresql_vault_is_passed_on_without_its_password_and_the_server_opens_it(
    vault: VaultSpec, tmp_path: Path
) -> None:
    """With `KAERU_DATABASE_URL` set, the client's server must open that vault, not the default
    SQLite one (it did: the configuration passed no vault at all); the password stays out of the
    file, and libpq finds it in `~/.pgpass` (decision 179)."""
    if vault.backend != "postgres" or not vault.database_url:
        pytest.skip("a PostgreSQL vault")
    url = urlsplit(vault.database_url)
    assert url.password, "the test cluster's URL carries a password"
    write_notes(
        vault, "team", "marker-pgpass-7: the team vault lives in PostgreSQL"
    )  # in process: setup is the subject

    home = tmp_path / "home"
    home.mkdir()
    run = kaeru(vault, "setup", "claude-code", "--write", HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    assert run.code == 0, run.stderr
    assert url.password not in run.stdout and url.password not in (home / ".claude.json").read_text()
    assert "~/.pgpass" in run.stderr
    server = json.loads((home / ".claude.json").read_text())["mcpServers"]["kaeru"]
    assert server["env"] == {"KAERU_DATABASE_URL": vault.database_url.replace(f":{url.password}@", "@")}

    pgpass = home / ".pgpass"
    pgpass.write_text(f"{url.hostname}:{url.port or 5432}:{url.path.lstrip('/')}:{url.username}:{url.password}\n")
    pgpass.chmod(0o600)

    async def found() -> list[str]:
        from mcp import Client, StdioServerParameters

        # The client's own environment: no PGPASSWORD, no KAERU_* but what the file gives.
        params = StdioServerParameters(
            command=server["command"],
            args=server["args"],
            env={**server["env"], "HOME": str(home), "PATH": "/usr/bin:/bin"},
        )
        async with Client(params) as client:
            result = await client.call_tool("search", {"text": "pgpass", "initiatives": ["team"]})
        envelope: dict[str, Any] = result.structured_content or {}
        assert envelope.get("state") == "ok", envelope
        return [hit["name"] for hit in envelope["data"]["hits"]]

    assert len(anyio.run(found)) == 1
