"""What a client's server sees: clients start it with a bare environment (HOME, PATH, USER...) and the
entry's own `env`, not the shell's. So Claude Desktop's `mcp-remote` gets the bearer token through
the entry's `env` (it has no `${VAR}` of its own; a header named by a variable the client does not
pass ended in "Environment variable … not found"), plain http to another host gets `--allow-http`
(mcp-remote refuses it otherwise), and a vault this shell's XDG_DATA_HOME moved is pinned in `env`
(the client's server opened an empty one under ~/.local/share)."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

from tests.cli.support import Run, kaeru

TOKEN = "sekret-1796642856268831382"
DESKTOP = Path(".config/Claude/claude_desktop_config.json")


def setup(home: Path, *args: str, as_json: bool = False, **env: str) -> Run:
    """`kaeru setup ARGS` with HOME at `home` and no vault named, in a shell with `env`."""
    shell = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": "",
        "CODEX_HOME": str(home / ".codex"),
    }
    return kaeru({**shell, **env}, "setup", *args, as_json=as_json)


def mcp_remote_headers(entry: dict[str, Any]) -> dict[str, str]:
    """The headers `mcp-remote` sends, as it reads its arguments (0.15: `--header Name:Value`, each
    `${VAR}` taken from its own environment, which is the entry's `env` and the client's few)."""
    args, env, headers = entry["args"], entry.get("env", {}), {}
    for i, arg in enumerate(args[:-1]):
        if arg == "--header":
            name, value = re.fullmatch(r"([A-Za-z0-9_-]+):\s*(.*)", args[i + 1]).groups()  # type: ignore[union-attr]
            missing = [v for v in re.findall(r"\$\{([^}]+)\}", value) if v not in env]
            assert not missing, f"Environment variable {missing} not found for header {name}"
            headers[name] = re.sub(r"\$\{([^}]+)\}", lambda m: env[m.group(1)], value)
    return headers


def test_claude_desktop_over_http_gets_the_token_in_the_entrys_env(tmp_path: Path) -> None:
    url = "https://memory.example.org/mcp"
    run = setup(
        tmp_path, "claude-desktop", "--http", url, "--token-env", "KAERU_AUTH_TOKEN", "--write", KAERU_AUTH_TOKEN=TOKEN
    )
    assert run.code == 0, run.stderr
    path = tmp_path / DESKTOP
    entry = json.loads(path.read_text())["mcpServers"]["kaeru"]
    assert entry["command"] == "npx" and entry["args"][:3] == ["-y", "mcp-remote", url]
    assert mcp_remote_headers(entry) == {"Authorization": f"Bearer {TOKEN}"}
    # No space in an argument: Claude Desktop on Windows and Cursor split them there (mcp-remote's README).
    assert not any(" " in arg for arg in entry["args"]), entry["args"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert TOKEN not in run.stdout + run.stderr, "the token is printed"
    assert "written in the entry's env" in run.stderr and "0600" in run.stderr, run.stderr
    path.chmod(0o644)  # opened up by hand: the token in it is private again, though it is not rewritten
    args = ("claude-desktop", "--http", url, "--token-env", "KAERU_AUTH_TOKEN", "--write")
    again = setup(tmp_path, *args, as_json=True, KAERU_AUTH_TOKEN=TOKEN)
    assert again.json()["written"] is False and TOKEN not in again.stdout + again.stderr, again.stdout
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_claude_desktop_without_the_token_in_the_shell_writes_nothing(tmp_path: Path) -> None:
    url = "https://memory.example.org/mcp"
    run = setup(tmp_path, "claude-desktop", "--http", url, "--token-env", "KAERU_AUTH_TOKEN", "--write")
    assert run.code == 2 and "KAERU_AUTH_TOKEN is not set" in run.stderr, run.stderr
    assert not (tmp_path / DESKTOP).exists()
    # Printed, the entry holds a place for the token and says so; the shell's token is not printed.
    printed = setup(
        tmp_path, "claude-desktop", "--http", url, "--token-env", "KAERU_AUTH_TOKEN", KAERU_AUTH_TOKEN=TOKEN
    )
    assert printed.code == 0 and TOKEN not in printed.stdout + printed.stderr
    entry = json.loads(printed.stdout)["mcpServers"]["kaeru"]
    assert mcp_remote_headers(entry) == {"Authorization": "Bearer <the token in KAERU_AUTH_TOKEN>"}
    assert "put the token in place of" in printed.stderr, printed.stderr


def test_claude_desktop_over_plain_http_to_another_host_allows_it(tmp_path: Path) -> None:
    """mcp-remote: "Non-HTTPS URLs are only allowed for localhost or when --allow-http flag is
    provided" (localhost and 127.0.0.1 only)."""
    for url, allowed in (
        ("http://192.0.2.2:19877/mcp", True),
        ("http://[::1]:9876/mcp", True),
        ("http://127.0.0.1:9876/mcp", False),
        ("http://localhost:9876/mcp", False),
        ("https://192.0.2.2/mcp", False),
    ):
        run = setup(tmp_path, "claude-desktop", "--http", url, "--token-env", "KAERU_AUTH_TOKEN")
        assert run.code == 0, run.stderr
        args = json.loads(run.stdout)["mcpServers"]["kaeru"]["args"]
        assert ("--allow-http" in args) is allowed, (url, args)
        assert args[2] == url and ("--allow-http" in run.stderr) is allowed, run.stderr
        assert ("unencrypted" in run.stderr) is (url == "http://192.0.2.2:19877/mcp"), run.stderr


def test_a_vault_moved_by_xdg_data_home_is_pinned_for_the_client(tmp_path: Path) -> None:
    xdg = tmp_path / "data"
    run = setup(tmp_path, "cursor", "--write", XDG_DATA_HOME=str(xdg))
    assert run.code == 0, run.stderr
    entry = json.loads((tmp_path / ".cursor/mcp.json").read_text())["mcpServers"]["kaeru"]
    assert entry["env"] == {"KAERU_VAULT": str((xdg / "kaeru").resolve())}
    assert "XDG_DATA_HOME" in run.stderr, run.stderr
    # Where the client's server finds the same vault by itself, nothing is pinned.
    for same in ("", str(tmp_path / ".local" / "share")):
        plain = setup(tmp_path, "vscode", XDG_DATA_HOME=same)
        assert plain.code == 0 and "env" not in json.loads(plain.stdout)["servers"]["kaeru"], plain.stdout


def test_an_entrys_own_vault_stays_when_only_xdg_data_home_names_one(tmp_path: Path) -> None:
    """The shell names no vault (decision 449): the entry's own stays."""
    path = tmp_path / ".cursor/mcp.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"mcpServers": {"kaeru": {"command": "kaeru", "env": {"KAERU_VAULT": "/srv/team"}}}}))
    run = setup(tmp_path, "cursor", "--write", XDG_DATA_HOME=str(tmp_path / "data"))
    assert run.code == 0, run.stderr
    assert json.loads(path.read_text())["mcpServers"]["kaeru"]["env"] == {"KAERU_VAULT": "/srv/team"}
    assert "the entry keeps its vault /srv/team" in run.stderr and "XDG_DATA_HOME" not in run.stderr, run.stderr


def test_claude_desktop_back_to_a_started_server_leaves_the_token_out(tmp_path: Path) -> None:
    """From HTTP back to the server the client starts, the entry kept `KAERU_AUTH_HEADER` ("kept
    from the entry") and printed the token on stdout: it is setup's own key, left out."""
    url = "https://memory.example.org/mcp"
    args = ("claude-desktop", "--http", url, "--token-env", "KAERU_AUTH_TOKEN", "--write")
    assert setup(tmp_path, *args, KAERU_AUTH_TOKEN=TOKEN).code == 0
    path = tmp_path / DESKTOP
    for as_json in (False, True):
        run = setup(tmp_path, "claude-desktop", "--write", as_json=as_json)
        assert run.code == 0, run.stderr
        assert TOKEN not in run.stdout + run.stderr, run.stdout
        entry = json.loads(path.read_text())["mcpServers"]["kaeru"]
        assert entry["args"] == ["serve"] and "env" not in entry, entry
        assert TOKEN not in path.read_text()
        if not as_json:
            assert "left out the entry's KAERU_AUTH_HEADER" in run.stderr and "kept from" not in run.stderr
        assert setup(tmp_path, *args, KAERU_AUTH_TOKEN=TOKEN).code == 0  # and over HTTP again
    # The backups that hold the token are as private as the file was.
    backups = [b for b in path.parent.glob("*.bak-*") if TOKEN in b.read_text()]
    assert backups and all(stat.S_IMODE(b.stat().st_mode) == 0o600 for b in backups)


def test_secrets_in_the_entrys_env_are_not_printed(tmp_path: Path) -> None:
    """The entry setup rewrites keeps the user's `env` keys (decision 449), and the whole entry is
    printed: a password or token among them is in the file, not on stdout."""
    path = tmp_path / ".cursor/mcp.json"
    path.parent.mkdir()
    env = {
        "KAERU_DATABASE_URL": "postgresql://me:dbpw-s3cret@db.example.org/kaeru",
        "PGPASSWORD": "pgpw-s3cret",
        "KAERU_AUTH_HEADER": "Bearer hdr-s3cret",
        "KAERU_STRUCTURED": "off",
    }
    path.write_text(json.dumps({"mcpServers": {"kaeru": {"command": "kaeru", "env": env}}}))
    for as_json in (False, True):
        run = setup(tmp_path, "cursor", "--write", as_json=as_json)
        assert run.code == 0, run.stderr
        assert "s3cret" not in run.stdout + run.stderr, run.stdout
        printed = run.json()["config"] if as_json else json.loads(run.stdout)
        assert printed["mcpServers"]["kaeru"]["env"]["KAERU_STRUCTURED"] == "off"
    kept = json.loads(path.read_text())["mcpServers"]["kaeru"]["env"]
    assert kept == {k: v for k, v in env.items() if k != "KAERU_AUTH_HEADER"}, kept


def test_a_file_open_to_all_is_private_before_the_token_is_written(tmp_path: Path) -> None:
    """The token went into a file that took the old file's 0644, made 0600 only once in place; the
    backup kept 0644. Both are the owner's only now."""
    path = tmp_path / DESKTOP
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {"other": {"command": "other"}}}))
    path.chmod(0o644)
    url = "https://memory.example.org/mcp"
    run = setup(
        tmp_path, "claude-desktop", "--http", url, "--token-env", "KAERU_AUTH_TOKEN", "--write", KAERU_AUTH_TOKEN=TOKEN
    )
    assert run.code == 0, run.stderr
    assert TOKEN in path.read_text() and stat.S_IMODE(path.stat().st_mode) == 0o600
    [backup] = path.parent.glob("*.bak-*")
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no staged file left
