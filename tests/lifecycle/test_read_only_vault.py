"""A vault its user cannot write — a read-only file (`chmod 444`), a read-only folder (`chmod 555`) —
as a terminal user and an HTTP server meet it (decisions 171, 172). Root ignores file modes, so as
root the commands run without the capabilities that override them (`file_modes_bind`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.backends import new_vault
from tests.cli.support import file_modes_bind, kaeru, valid_envelope
from tests.wire.support import (
    KAERU_SERVE,
    http_server,
    initialize_request,
    raw_post,
    subprocess_env,
    tools_call_request,
)

pytestmark = pytest.mark.timeout(300)


def test_a_read_only_vault_file_answers_reads_and_fails_writes_with_exit_1(tmp_path: Path) -> None:
    prefix = file_modes_bind()
    vault = new_vault("sqlite", tmp_path)
    assert kaeru(vault, "note", "-i", "ro", "the stilt wades in the lagoon").code == 0
    vault.settings().sqlite_path.chmod(0o444)

    found = kaeru(vault, "search", "stilt", "-i", "ro", as_json=True, prefix=prefix)
    assert found.code == 0 and valid_envelope(found, "search", "read", "ok")["data"]["total"] == 1

    refused = kaeru(vault, "note", "-i", "ro", "a second stilt", as_json=True, prefix=prefix)
    issue = valid_envelope(refused, "note", "mutation", "rejected")["issues"][0]
    assert issue["code"] == "unavailable" and "cannot be written" in issue["message"], issue
    # The vault could not answer: a failure (1), as `kaeru call note` and an unopenable vault say,
    # not a refusal of the request (2), which a script would not retry.
    assert refused.code == 1
    human = kaeru(vault, "note", "-i", "ro", "a third stilt", prefix=prefix)
    assert human.code == 1 and "cannot be written" in human.stderr
    called = kaeru(vault, "call", "note", '{"initiative": "ro", "text": "a fourth"}', prefix=prefix)
    assert called.code == 1


def test_a_read_only_vault_folder_is_named_at_once(tmp_path: Path) -> None:
    prefix = file_modes_bind()
    vault = new_vault("sqlite", tmp_path)
    assert kaeru(vault, "note", "-i", "ro", "the avocet").code == 0
    vault.vault_dir.chmod(0o555)
    try:
        for args in (("search", "avocet", "-i", "ro"), ("note", "-i", "ro", "x")):
            run = kaeru(vault, *args, prefix=prefix)
            assert run.code == 1 and "cannot open the vault" in run.stderr, run.stderr
            assert str(vault.settings().sqlite_path) in run.stderr
    finally:
        vault.vault_dir.chmod(0o755)


def test_tokens_on_a_read_only_vault_still_read_over_http(tmp_path: Path) -> None:
    """A token's `last_used` is bookkeeping: a vault that cannot be written still serves the token's
    reads (it answered 500 to every request, the server logging a traceback)."""
    prefix = file_modes_bind()
    vault = new_vault("sqlite", tmp_path)
    added = kaeru(vault, "token", "add", "rosa", as_json=True)
    assert added.code == 0
    headers = {"Authorization": f"Bearer {added.json()['token']}"}
    assert kaeru(vault, "note", "-i", "ro", "the curlew calls at dawn").code == 0
    vault.settings().sqlite_path.chmod(0o444)

    with http_server(subprocess_env(vault.env()), tmp_path, serve=(*prefix, *KAERU_SERVE)) as server:
        status, body = raw_post(server.url, initialize_request(), headers)
        assert status == 200, body
        status, body = raw_post(
            server.url, tools_call_request(2, "search", {"initiatives": ["ro"], "text": "curlew"}), headers
        )
        assert status == 200 and '"state":"ok"' in body, body
        status, body = raw_post(server.url, tools_call_request(3, "note", {"initiative": "ro", "text": "x"}), headers)
        assert status == 200 and '"code":"unavailable"' in body, body
        assert raw_post(server.url, initialize_request(), {"Authorization": "Bearer kaeru_wrong"})[0] == 401
    assert "Traceback" not in server.log.read_text(errors="replace")


def test_the_doctor_says_a_read_only_vault_file_cannot_be_written(tmp_path: Path) -> None:
    """Every other check passes on such a vault (it opens, reads and searches): it said "healthy"."""
    prefix = file_modes_bind()
    vault = new_vault("sqlite", tmp_path)
    assert kaeru(vault, "note", "-i", "ro", "the godwit probes the mud").code == 0
    path = vault.settings().sqlite_path
    assert {c["name"]: c["status"] for c in kaeru(vault, "doctor", as_json=True).json()["checks"]}["writable"] == "ok"
    path.chmod(0o444)

    run = kaeru(vault, "doctor", as_json=True, prefix=prefix)
    assert run.code == 1
    checks = {c["name"]: c for c in run.json()["checks"]}
    assert checks["writable"]["status"] == "fail" and str(path) in checks["writable"]["summary"]
    assert checks["search"]["status"] == "ok"
    human = kaeru(vault, "doctor", prefix=prefix)
    assert human.code == 1 and human.stdout.rstrip().endswith("unhealthy: writable")
