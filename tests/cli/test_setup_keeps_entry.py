"""`kaeru setup CLIENT --write` on a file that already holds a `kaeru` entry (decision 449): the keys
of its `env` this setup does not set are kept (the README tells people to add `KAERU_STRUCTURED=off`
or `KAERU_SEMANTIC=1` there by hand), a vault it changes is said, a file reached through a symbolic
link is written where the link points (the link kept), and a Codex entry written in a form setup
cannot edit is refused in words that say what to do."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.cli.support import Run, kaeru
from tests.cli.test_setup import FILES

#: An entry a person wrote, or edited as the README says.
HAND_ENV = {
    "KAERU_STRUCTURED": "off",
    "KAERU_SEMANTIC": "1",
    "KAERU_VAULT": "/home/me/work-vault",
    "KAERU_ACTOR": "alice",
}


def setup(home: Path, *args: str, vault: Path | None = None) -> Run:
    """`kaeru setup ARGS` with HOME at `home`, in a shell whose KAERU_VAULT is `vault` (none: unset)."""
    return kaeru(
        {"KAERU_VAULT": str(vault)} if vault else {},
        "setup",
        *args,
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        CODEX_HOME=str(home / ".codex"),
    )


def _existing(client: str, path: Path, env: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if client == "codex":
        lines = ['[mcp_servers.kaeru]\ncommand = "old"\nargs = ["serve"]\n\n[mcp_servers.kaeru.env]']
        lines += [f'{k} = "{v}"' for k, v in env.items()]
        path.write_text("\n".join(lines) + "\n")
    else:
        key = FILES[client][1]
        path.write_text(json.dumps({key: {"kaeru": {"command": "old", "args": ["serve"], "env": env}}}))


def _entry(client: str, path: Path) -> dict[str, Any]:
    text = path.read_text()
    parsed: dict[str, Any] = tomllib.loads(text) if client == "codex" else json.loads(text)
    entry: dict[str, Any] = parsed[FILES[client][1]]["kaeru"]
    return entry


@pytest.mark.parametrize("client", list(FILES))
def test_the_entrys_own_env_is_kept_and_a_new_vault_is_said(client: str, tmp_path: Path) -> None:
    path = tmp_path / FILES[client][0]
    _existing(client, path, HAND_ENV)
    vault = (tmp_path / "vault").resolve()
    run = setup(tmp_path, client, "--write", "--tools", "core", vault=vault)
    assert run.code == 0, run.stderr
    entry = _entry(client, path)
    assert entry["command"] != "old"
    assert entry["env"] == {
        "KAERU_STRUCTURED": "off",
        "KAERU_SEMANTIC": "1",
        "KAERU_VAULT": str(vault),
        "KAERU_ACTOR": "alice",
        "KAERU_TOOLS": "core",
    }
    assert f"the entry pointed at /home/me/work-vault; it now points at {vault}" in run.stderr
    assert "kept from the entry: KAERU_STRUCTURED, KAERU_SEMANTIC, KAERU_ACTOR" in run.stderr
    assert len(list(path.parent.glob(path.name + ".bak-*"))) == 1


def test_json_says_the_vault_change_and_what_was_kept(tmp_path: Path) -> None:
    path = tmp_path / FILES["cursor"][0]
    _existing("cursor", path, {**HAND_ENV, "KAERU_TOOLS": "core"})
    vault = (tmp_path / "vault").resolve()
    done = kaeru(
        {"KAERU_VAULT": str(vault)}, "setup", "cursor", "--write", "--tools", "all", as_json=True, HOME=str(tmp_path)
    )
    assert done.code == 0, done.stderr
    answer = done.json()
    assert answer["vault_changed"] == {"was": "/home/me/work-vault", "now": str(vault)}
    assert answer["env_kept"] == ["KAERU_STRUCTURED", "KAERU_SEMANTIC", "KAERU_ACTOR"]
    assert answer["env_changed"] == [{"key": "KAERU_TOOLS", "was": "core", "now": "all"}]
    assert answer["config"]["mcpServers"]["kaeru"] == _entry("cursor", path)  # what was written


def test_a_shell_that_names_no_vault_keeps_the_entrys_vault(tmp_path: Path) -> None:
    path = tmp_path / FILES["claude-code"][0]
    _existing("claude-code", path, HAND_ENV)
    run = setup(tmp_path, "claude-code", "--write", "--tools", "core")
    assert run.code == 0, run.stderr
    assert _entry("claude-code", path)["env"]["KAERU_VAULT"] == "/home/me/work-vault"
    assert "the entry keeps its vault /home/me/work-vault" in run.stderr


def test_a_postgresql_entry_moved_to_a_folder_loses_its_url(tmp_path: Path) -> None:
    """A URL left beside the new folder would still win: the vault named is the vault opened."""
    path = tmp_path / FILES["windsurf"][0]
    _existing("windsurf", path, {"KAERU_DATABASE_URL": "postgresql://me@db/team", "KAERU_ACTOR": "alice"})
    vault = (tmp_path / "vault").resolve()
    run = setup(tmp_path, "windsurf", "--write", vault=vault)
    assert run.code == 0, run.stderr
    assert _entry("windsurf", path)["env"] == {"KAERU_ACTOR": "alice", "KAERU_VAULT": str(vault)}
    assert f"the entry pointed at postgresql://me@db/team; it now points at {vault}" in run.stderr


def test_an_http_entry_takes_no_env_from_the_old_one(tmp_path: Path) -> None:
    path = tmp_path / FILES["cursor"][0]
    _existing("cursor", path, HAND_ENV)
    run = setup(tmp_path, "cursor", "--write", "--http", "http://127.0.0.1:9876/mcp")
    assert run.code == 0, run.stderr
    assert _entry("cursor", path) == {"url": "http://127.0.0.1:9876/mcp"}


def test_a_linked_client_file_is_written_through_the_link(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "windsurf.json"
    real.write_text(json.dumps({"mcpServers": {"other": {"command": "other"}}}))
    link = tmp_path / FILES["windsurf"][0]
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    run = setup(tmp_path, "windsurf", "--write", vault=tmp_path / "vault")
    assert run.code == 0, run.stderr
    assert link.is_symlink() and link.resolve() == real.resolve()
    written = json.loads(real.read_text())["mcpServers"]
    assert set(written) == {"other", "kaeru"}
    assert [b.name.startswith("windsurf.json.bak-") for b in dotfiles.iterdir() if b != real] == [True]
    assert not list(link.parent.glob("*.bak-*"))
    assert f"wrote {real.resolve()} (the file {link} links to)" in run.stderr


@pytest.mark.parametrize(
    "form",
    [
        '[mcp_servers]\nkaeru = { command = "old", args = ["serve"] }\n',
        'model = "o3"\nmcp_servers.kaeru.command = "old"\nmcp_servers.kaeru.args = ["serve"]\n',
    ],
)
def test_a_codex_entry_setup_cannot_edit_is_said_so(form: str, tmp_path: Path) -> None:
    path = tmp_path / FILES["codex"][0]
    path.parent.mkdir(parents=True)
    path.write_text(form)
    run = setup(tmp_path, "codex", "--write", vault=tmp_path / "vault")
    assert run.code == 1
    assert "holds its [mcp_servers.kaeru] entry in a form setup cannot edit" in run.stderr
    assert "write that entry as a [mcp_servers.kaeru] table, or delete it, and run again" in run.stderr
    assert path.read_text() == form
    assert not list(path.parent.glob("*.bak-*"))


@pytest.mark.parametrize("header", ["[mcp_servers.kaeru] # mine", "[ mcp_servers.kaeru ]", '[mcp_servers."kaeru"]'])
def test_a_codex_table_header_spelt_otherwise_is_still_the_entry(header: str, tmp_path: Path) -> None:
    """A comment after the header, spaces or quotes: still the `[mcp_servers.kaeru]` table, which
    setup replaces (its env kept); only the bare spelling was known, and setup then declared the
    table twice and said the entry was in a form it cannot edit (found in review)."""
    path = tmp_path / FILES["codex"][0]
    path.parent.mkdir(parents=True)
    path.write_text(f'{header}\ncommand = "old"\n\n[mcp_servers.kaeru.env]\nKAERU_SEMANTIC = "1"\n')
    run = setup(tmp_path, "codex", "--write", vault=tmp_path / "vault")
    assert run.code == 0, run.stderr
    entry = tomllib.loads(path.read_text())["mcp_servers"]["kaeru"]
    assert entry["command"] != "old" and entry["env"]["KAERU_SEMANTIC"] == "1", entry
