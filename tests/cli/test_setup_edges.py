"""`kaeru setup` where the common case does not reach: a backup is never written over an earlier one
of the same second; a vault named by `--vault` is passed on as one named by KAERU_VAULT; a
PostgreSQL URL's password — in the user part or a `password=` parameter — is left out of the
client's file, and saying so needs no database; a Codex array table after kaeru's is kept; a bad
setting is named before anything is written."""

from __future__ import annotations

import json
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.cli.support import kaeru

#: Seconds of backup names taken in advance: past the longest a run could take on a loaded machine.
AHEAD_S = 300


def _home(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config"), "CODEX_HOME": str(tmp_path / ".codex")}


def test_a_backup_of_the_same_second_gets_a_name_of_its_own(tmp_path: Path) -> None:
    """Every name a backup of the next minutes could take is held by an earlier backup: the new one
    takes the next free name beside it (`.bak-STAMP-2`), and no earlier backup is written over."""
    path = tmp_path / ".cursor" / "mcp.json"
    path.parent.mkdir()
    before = '{"mcpServers": {"other": {"command": "other"}}}'
    path.write_text(before)
    now = datetime.now(UTC)
    held = {}
    for s in range(-1, AHEAD_S):
        stamp = (now + timedelta(seconds=s)).strftime("%Y%m%dT%H%M%SZ")
        held[path.with_name(f"mcp.json.bak-{stamp}")] = f"earlier backup {stamp}"
    for earlier, text in held.items():
        earlier.write_text(text)
    run = kaeru({"KAERU_VAULT": str(tmp_path / "vault")}, "setup", "cursor", "--write", as_json=True, **_home(tmp_path))
    assert run.code == 0, run.stderr
    backup = Path(run.json()["backup"])
    assert backup.name.startswith("mcp.json.bak-") and backup.name.endswith("-2"), backup
    assert backup.with_name(backup.name[: -len("-2")]) in held
    assert backup.read_text() == before
    assert all(earlier.read_text() == text for earlier, text in held.items()), "an earlier backup was written over"


def test_a_vault_named_by_flag_is_passed_on_to_the_client(tmp_path: Path) -> None:
    run = kaeru({}, "--vault", str(tmp_path / "flagged"), "setup", "cursor", **_home(tmp_path))
    assert run.code == 0, run.stderr
    server = json.loads(run.stdout)["mcpServers"]["kaeru"]
    assert server["env"] == {"KAERU_VAULT": str((tmp_path / "flagged").resolve())}


def test_a_postgresql_password_stays_out_of_the_clients_file_without_asking_the_database(tmp_path: Path) -> None:
    # Nothing listens on port 1: `setup` only writes what the client's server will be given.
    cases = {
        "postgresql://kaeru:Sup3rSecret@127.0.0.1:1/team": "postgresql://kaeru@127.0.0.1:1/team",
        "postgresql://kaeru@127.0.0.1:1/team?sslmode=require&password=Sup3rSecret": (
            "postgresql://kaeru@127.0.0.1:1/team?sslmode=require"
        ),
    }
    for given, written in cases.items():
        run = kaeru({"KAERU_DATABASE_URL": given}, "setup", "claude-code", "--write", **_home(tmp_path))
        assert run.code == 0, run.stderr
        saved = (tmp_path / ".claude.json").read_text()
        assert "Sup3rSecret" not in saved and "Sup3rSecret" not in run.stdout + run.stderr
        assert json.loads(saved)["mcpServers"]["kaeru"]["env"] == {"KAERU_DATABASE_URL": written}
        assert "the PostgreSQL password is not written" in run.stderr and "~/.pgpass" in run.stderr
    plain = kaeru({"KAERU_DATABASE_URL": "postgresql://kaeru@127.0.0.1:1/team"}, "setup", "cursor", **_home(tmp_path))
    assert plain.code == 0 and "password is not written" not in plain.stderr, plain.stderr


def test_a_codex_array_table_after_kaerus_table_is_kept(tmp_path: Path) -> None:
    path = tmp_path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(
        '[mcp_servers.kaeru]\ncommand = "old"\n\n[[profiles]]\nname = "fast"\n\n[[profiles]]\nname = "careful"\n'
    )
    run = kaeru({"KAERU_VAULT": str(tmp_path / "vault")}, "setup", "codex", "--write", **_home(tmp_path))
    assert run.code == 0, run.stderr
    after = tomllib.loads(path.read_text())
    assert [p["name"] for p in after["profiles"]] == ["fast", "careful"]
    assert after["mcp_servers"]["kaeru"]["command"] != "old"


def test_a_bad_setting_is_named_before_anything_is_written(tmp_path: Path) -> None:
    run = kaeru(
        {"KAERU_VAULT": str(tmp_path / "vault")}, "setup", "cursor", "--write", KAERU_PORT="http", **_home(tmp_path)
    )
    assert run.code == 2 and "KAERU_PORT must be a whole number" in run.stderr, run.stderr
    assert not (tmp_path / ".cursor").exists()


def test_setup_json_says_the_postgresql_password_was_left_out(tmp_path: Path) -> None:
    """The human output says on stderr that the password was not written; `--json` said nothing of
    it, and a script or an agent setting up a client told its person the client was ready, when
    its server cannot connect until the password is in ~/.pgpass or PGPASSWORD (decision 424)."""
    given = {
        "postgresql://kaeru:Sup3rSecret@127.0.0.1:1/team": True,
        "postgresql://kaeru@127.0.0.1:1/team": False,
    }
    for url, left_out in given.items():
        for args in (("--write",), ()):
            run = kaeru({"KAERU_DATABASE_URL": url}, "setup", "cursor", *args, as_json=True, **_home(tmp_path))
            assert run.code == 0, run.stderr
            report = run.json()
            assert report["password_left_out"] is left_out, (url, args, report)
            assert "Sup3rSecret" not in run.stdout + run.stderr
            human = kaeru({"KAERU_DATABASE_URL": url}, "setup", "cursor", *args, **_home(tmp_path))
            assert ("the PostgreSQL password is not written" in human.stderr) is left_out, human.stderr
    sqlite = kaeru({"KAERU_VAULT": str(tmp_path / "vault")}, "setup", "cursor", as_json=True, **_home(tmp_path))
    assert sqlite.code == 0 and sqlite.json()["password_left_out"] is False, sqlite.stdout
