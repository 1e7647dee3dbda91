"""Where a vault is and what is set, as a person types it: `copy` takes a vault spelt `sqlite://DIR`
or as its `vault.sqlite3` file and warns of each secret-looking text it copied, a target that
cannot hold a vault is named (and the source is left as it was); an import path that is not text
is refused before a vault is made; the default vault follows XDG_DATA_HOME; a port out of range, a
TLS certificate without its key (flag or variable) and an option no command has are each named;
a tab completion over a file that is no vault offers nothing and leaves it as it was."""

from __future__ import annotations

from pathlib import Path

from tests.cli.support import kaeru, valid_envelope, write_notes

SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def test_copy_takes_a_vault_spelt_as_a_url_or_its_file_and_warns_of_what_it_flagged(tmp_path: Path) -> None:
    source = {"KAERU_VAULT": str(tmp_path / "source"), "KAERU_SECRET_POLICY": "allow"}
    write_notes(source, "keys", f"the deploy key is {SECRET}, kept here on purpose", "the heron waits")
    human = kaeru({}, "copy", "--from", f"sqlite://{tmp_path / 'source'}", "--to", f"{tmp_path / 'one'}/vault.sqlite3")
    assert human.code == 0, human.stderr
    assert "warning: line " in human.stderr and "secret-looking span(s) (rule github_pat)" in human.stderr
    assert SECRET not in human.stderr
    assert human.stdout.startswith("copied 2 node revisions")
    document = kaeru(
        {},
        "copy",
        "--from",
        f"{tmp_path / 'source'}/vault.sqlite3",
        "--to",
        f"sqlite://{tmp_path / 'two'}/",
        as_json=True,
    )
    assert document.code == 0, document.stderr
    [flagged] = document.json()["flagged"]
    assert flagged["field"] == "body" and "github_pat" in flagged["message"]
    for copy in ("one", "two"):
        found = kaeru({"KAERU_VAULT": str(tmp_path / copy)}, "search", "heron", "-i", "keys", as_json=True)
        assert valid_envelope(found, "search", "read", "ok")["data"]["total"] == 1, copy

    (tmp_path / "plain").write_text("a file, not a folder")
    refused = kaeru({}, "copy", "--from", str(tmp_path / "source"), "--to", str(tmp_path / "plain" / "v"))
    assert refused.code == 1 and f"{tmp_path / 'plain'} is a file, not a folder" in refused.stderr, refused.stderr
    again = kaeru({}, "copy", "--from", str(tmp_path / "source"), "--to", str(tmp_path / "three"))
    assert again.code == 0, "the source was closed and left usable"


def test_an_import_path_that_is_not_text_is_refused_before_a_vault_is_made(tmp_path: Path) -> None:
    vault = {"KAERU_VAULT": str(tmp_path / "typo")}
    run = kaeru(vault, "import", str(tmp_path).encode() + b"/\xff.amg", as_json=True)
    assert run.code == 2
    issue = valid_envelope(run, "archive", "mutation", "rejected")["issues"][0]
    assert issue["code"] == "invalid_argument" and issue["field"] == "path", issue
    assert not (tmp_path / "typo").exists()


def test_the_default_vault_follows_xdg_data_home(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data")}
    assert kaeru(env, "note", "-i", "xdg", "kept where XDG_DATA_HOME says").code == 0
    assert (tmp_path / "data" / "kaeru" / "vault.sqlite3").is_file()
    assert not (tmp_path / "home").exists()


def test_a_port_out_of_range_and_a_certificate_without_its_key_are_named(tmp_path: Path) -> None:
    vault = {"KAERU_VAULT": str(tmp_path / "v")}
    for port in ("65536", "-1"):
        run = kaeru(vault, "search", "x", "-i", "a", KAERU_PORT=port)
        assert run.code == 2 and "KAERU_PORT must be a port number, 0 to 65535" in run.stderr, run.stderr
    variable = kaeru(vault, "serve", "--http", KAERU_TLS_CERT=str(tmp_path / "cert.pem"))
    assert variable.code == 2 and "KAERU_TLS_CERT and KAERU_TLS_KEY" in variable.stderr, variable.stderr
    flag = kaeru(vault, "serve", "--http", "--tls-cert", str(tmp_path / "cert.pem"))
    assert flag.code == 2 and "--tls-cert and --tls-key go together" in flag.stderr, flag.stderr
    unknown = kaeru(vault, "search", "x", "-i", "a", "--frobnicate")
    assert unknown.code == 2 and "No such option '--frobnicate'" in unknown.stderr, unknown.stderr
    assert not (tmp_path / "v").exists()


def test_a_completion_over_a_file_that_is_no_vault_offers_nothing(tmp_path: Path) -> None:
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "vault.sqlite3").write_bytes(b"")
    done = kaeru(
        {"KAERU_VAULT": str(tmp_path / "v")},
        _KAERU_COMPLETE="bash_complete",
        COMP_WORDS="kaeru context -i w",
        COMP_CWORD="3",
    )
    assert done.code == 0 and done.stdout.strip() == "" and done.stderr == "", done
    assert sorted(p.name for p in (tmp_path / "v").iterdir()) == ["vault.sqlite3"]
    assert (tmp_path / "v" / "vault.sqlite3").read_bytes() == b""
