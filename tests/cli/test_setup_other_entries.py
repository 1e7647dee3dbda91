"""`kaeru setup CLIENT --write` beside what the user already has in the file: another server under the
name asked for is refused, not replaced (its secrets were copied into kaeru's `env`); the settings of
kaeru's own entry that setup does not write (`disabled`, `disabledTools`, Codex's timeouts and
`enabled_tools`) are kept; a file that begins with a byte order mark is read and keeps it; a
read-only file is refused, not replaced behind its mode (decision 449)."""

from __future__ import annotations

import json
import stat
import tomllib
from pathlib import Path
from typing import Any

from tests.cli.support import Run, kaeru
from tests.cli.test_setup import FILES

GITHUB = {
    "command": "npx",
    "args": ["-y", "@modelcontextprotocol/server-github"],
    "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_s3cretvalue"},
}


def setup(home: Path, *args: str, as_json: bool = False) -> Run:
    """`kaeru setup ARGS` with HOME at `home`, this shell's vault `home/vault`."""
    return kaeru(
        {"KAERU_VAULT": str(home / "vault")},
        "setup",
        *args,
        as_json=as_json,
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME="",
        CODEX_HOME=str(home / ".codex"),
    )


def _file(home: Path, client: str, text: str) -> Path:
    path = home / FILES[client][0]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _servers(client: str, path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8-sig")
    parsed = tomllib.loads(text) if client == "codex" else json.loads(text)
    servers: dict[str, Any] = parsed[FILES[client][1]]
    return servers


def test_another_server_under_the_name_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    """`--name github` over the GitHub server replaced it and copied its token into kaeru's `env`:
    it is refused (exit 2), the file byte for byte as it was, the other server named."""
    for client in ("cursor", "codex"):
        if client == "codex":
            text = '[mcp_servers.github]\ncommand = "npx"\nargs = ["-y", "@modelcontextprotocol/server-github"]\n'
            text += '\n[mcp_servers.github.env]\nGITHUB_PERSONAL_ACCESS_TOKEN = "ghp_s3cretvalue"\n'
        else:
            text = json.dumps({"mcpServers": {"github": GITHUB}}, indent=2)
        path = _file(tmp_path, client, text)
        run = setup(tmp_path, client, "--name", "github", "--write")
        assert run.code == 2, (client, run.stdout, run.stderr)
        assert "'github'" in run.stderr and "@modelcontextprotocol/server-github" in run.stderr, run.stderr
        assert "--name" in run.stderr and "not kaeru" in run.stderr, run.stderr
        assert "ghp_s3cretvalue" not in run.stdout + run.stderr
        assert path.read_text() == text
        assert list(path.parent.glob("*.bak-*")) == []
        report = setup(tmp_path, client, "--name", "github", "--write", as_json=True).json()
        assert report["ok"] is False and report["error"]["code"] == "invalid_argument", report


def test_kaerus_own_entry_under_another_name_is_still_rewritten(tmp_path: Path) -> None:
    """What tells kaeru's entry: `kaeru` in what it runs, or the URL written now."""
    path = _file(
        tmp_path,
        "cursor",
        json.dumps(
            {
                "mcpServers": {
                    "memory": {"command": "/opt/old/bin/python", "args": ["-m", "kaeru", "serve"]},
                    "remote": {"url": "http://127.0.0.1:9876/mcp"},
                    "github": GITHUB,
                }
            }
        ),
    )
    assert setup(tmp_path, "cursor", "--name", "memory", "--write").code == 0
    assert setup(tmp_path, "cursor", "--name", "remote", "--http", "http://127.0.0.1:9876/mcp", "--write").code == 0
    servers = _servers("cursor", path)
    assert servers["memory"]["command"] != "/opt/old/bin/python"
    assert servers["memory"]["env"] == {"KAERU_VAULT": str((tmp_path / "vault").resolve())}
    assert servers["github"] == GITHUB


def test_the_entrys_own_settings_are_kept(tmp_path: Path) -> None:
    """Windsurf's `disabled` and `disabledTools`, kept when setup rewrites the entry."""
    mine = {"command": "/old/kaeru", "args": ["serve"], "disabled": True, "disabledTools": ["forget"]}
    path = _file(tmp_path, "windsurf", json.dumps({"mcpServers": {"kaeru": mine}}))
    run = setup(tmp_path, "windsurf", "--write")
    assert run.code == 0, run.stderr
    entry = _servers("windsurf", path)["kaeru"]
    assert entry["disabled"] is True and entry["disabledTools"] == ["forget"], entry
    assert entry["command"] != "/old/kaeru" and entry["args"] == ["serve"]
    assert "kept the entry's own settings: disabled, disabledTools" in run.stderr, run.stderr
    report = setup(tmp_path, "windsurf", "--http", "http://127.0.0.1:9876/mcp", "--write", as_json=True).json()
    assert report["settings_kept"] == ["disabled", "disabledTools"], report
    entry = _servers("windsurf", path)["kaeru"]
    assert entry == {"serverUrl": "http://127.0.0.1:9876/mcp", "disabled": True, "disabledTools": ["forget"]}


def test_a_codex_tables_own_settings_are_kept(tmp_path: Path) -> None:
    text = (
        "# my servers\n[mcp_servers.kaeru]\n"
        'command = "/old/kaeru"\nargs = ["serve"]\ncwd = "/work"\nstartup_timeout_sec = 30\n'
        'tool_timeout_sec = 120.5\nenabled_tools = ["note", "recall"]\n\n'
        '[mcp_servers.kaeru.env]\nKAERU_STRUCTURED = "off"\n\n'
        '[mcp_servers.kaeru.tools.note]\napproval = "never"\n\n[profiles.fast]\nmodel = "o4-mini"\n'
    )
    path = _file(tmp_path, "codex", text)
    run = setup(tmp_path, "codex", "--write")
    assert run.code == 0, run.stderr
    after = tomllib.loads(path.read_text())
    entry = after["mcp_servers"]["kaeru"]
    assert entry["command"] != "/old/kaeru"
    assert entry["env"] == {"KAERU_STRUCTURED": "off", "KAERU_VAULT": str((tmp_path / "vault").resolve())}
    kept = {k: entry[k] for k in ("cwd", "startup_timeout_sec", "tool_timeout_sec", "enabled_tools", "tools")}
    assert kept == {
        "cwd": "/work",
        "startup_timeout_sec": 30,
        "tool_timeout_sec": 120.5,
        "enabled_tools": ["note", "recall"],
        "tools": {"note": {"approval": "never"}},
    }
    assert after["profiles"] == {"fast": {"model": "o4-mini"}}
    assert "kept the entry's own settings: cwd, startup_timeout_sec" in run.stderr, run.stderr
    # Over HTTP the stdio-only `cwd` goes (Codex refuses it on a URL entry); the rest stays.
    assert setup(tmp_path, "codex", "--http", "http://127.0.0.1:9876/mcp", "--write").code == 0
    entry = tomllib.loads(path.read_text())["mcp_servers"]["kaeru"]
    assert "cwd" not in entry and "command" not in entry and "env" not in entry
    assert entry["url"] == "http://127.0.0.1:9876/mcp" and entry["startup_timeout_sec"] == 30


def test_a_file_with_a_byte_order_mark_is_read_and_keeps_it(tmp_path: Path) -> None:
    for client, text in (
        ("cursor", '\ufeff{"mcpServers": {"other": {"command": "other"}}}'),
        ("codex", '\ufeff[mcp_servers.other]\ncommand = "other"\n'),
    ):
        path = _file(tmp_path, client, text)
        run = setup(tmp_path, client, "--write")
        assert run.code == 0, (client, run.stderr)
        assert path.read_bytes().startswith(b"\xef\xbb\xbf") and not path.read_bytes().startswith(b"\xef\xbb\xbf" * 2)
        servers = _servers(client, path)
        assert servers["other"] == {"command": "other"} and "kaeru" in servers
        again = setup(tmp_path, client, "--write")
        assert again.code == 0 and "already holds it" in again.stderr, again.stderr


def test_a_read_only_file_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    """Renaming the new content onto it succeeded (its folder is writable), undoing the mode the
    user set; as root, writing it would too."""
    text = '{"mcpServers": {"other": {"command": "other"}}}'
    path = _file(tmp_path, "cursor", text)
    path.chmod(0o444)
    run = setup(tmp_path, "cursor", "--write")
    assert run.code == 1, run.stderr
    assert f"{path} is read-only" in run.stderr and f"chmod u+w {path}" in run.stderr, run.stderr
    assert path.read_text() == text and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert list(path.parent.glob("*.bak-*")) == []
    assert setup(tmp_path, "cursor", "--write", as_json=True).json()["error"]["code"] == "setup_failed"


def test_kaeru_somewhere_in_another_server_does_not_make_it_kaerus(tmp_path: Path) -> None:
    """A filesystem server serving `~/src/kaeru-memory` was taken for kaeru's entry (`kaeru` in it):
    `--name filesystem` replaced it, copied its GITHUB_TOKEN into kaeru's `env` and printed it."""
    filesystem = {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/u/src/kaeru-memory"],
        "env": {"GITHUB_TOKEN": "ghp_s3cretvalue"},
    }
    notes = {"command": "node", "args": ["/opt/kaeru/notes-server.js"], "env": {"NOTES_DIR": "/home/u/kaeru"}}
    text = json.dumps({"mcpServers": {"filesystem": filesystem, "notes": notes}})
    path = _file(tmp_path, "cursor", text)
    for name in ("filesystem", "notes"):
        run = setup(tmp_path, "cursor", "--name", name, "--write")
        assert run.code == 2 and f"{name!r}" in run.stderr and "not kaeru" in run.stderr, run.stderr
        assert "ghp_s3cretvalue" not in run.stdout + run.stderr
        assert path.read_text() == text
    assert list(path.parent.glob("*.bak-*")) == []


def test_what_runs_kaeru_is_kaerus_entry_whatever_its_name(tmp_path: Path) -> None:
    """Told by structure: the `kaeru` script (any folder, `.exe`), a launcher given the package or
    the script, a `KAERU_` variable it sets or reads."""
    shapes = {
        "win": {"command": "C:\\Tools\\Kaeru.EXE", "args": ["serve"]},
        "uvx": {"command": "uvx", "args": ["--from", "kaeru-memory[postgres]", "kaeru", "serve"]},
        "pipx": {"command": "/usr/bin/pipx", "args": ["run", "--spec", "./kaeru_memory-0.1.0-py3-none-any.whl"]},
        "wrapped": {"command": "/usr/local/bin/start-memory", "env": {"KAERU_VAULT": "/srv/v"}},
        "remote": {"url": "https://memory.example.org/mcp", "headers": {"Authorization": "Bearer ${env:KAERU_TOKEN}"}},
    }
    path = _file(tmp_path, "cursor", json.dumps({"mcpServers": {**shapes, "github": GITHUB}}))
    for name in shapes:
        run = setup(tmp_path, "cursor", "--name", name, "--write")
        assert run.code == 0, (name, run.stderr)
    servers = _servers("cursor", path)
    assert all(servers[name]["args"] == ["serve"] for name in shapes), servers
    assert servers["github"] == GITHUB
