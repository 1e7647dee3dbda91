"""`kaeru doctor` on a vault with a table gone or unreadable — the command every damage message
sends people to. The read-only look at a SQLite vault passed the driver's errors on as they were:
a table a damaged vault lacks (`DROP TABLE` on a copy) or a page that no longer reads ended the
doctor in a traceback. Now each is a failed check with its fix, and the doctor exits 1.
PostgreSQL's statements were already said as the project's errors; the cases run on both."""

from __future__ import annotations

from typing import Any

import apsw
import pytest

from kaeru import semantic
from tests.backends import VaultSpec
from tests.cli.support import kaeru, write_notes
from tests.cli.test_doctor import _sql

pytestmark = pytest.mark.timeout(300)


def _doctor(vault: VaultSpec, **env: str) -> tuple[int, dict[str, dict[str, Any]], str]:
    """The exit code, the checks by name (`--json`), and the human output; neither run ends in a
    traceback, and every failed check says what to do."""
    as_json = kaeru(vault, "doctor", as_json=True, **env)
    human = kaeru(vault, "doctor", **env)
    for run in (as_json, human):
        assert "Traceback" not in run.stderr + run.stdout, run.stderr
    assert as_json.code == human.code, (as_json.stdout, human.stdout)
    report = as_json.json()
    checks = {c["name"]: c for c in report["checks"]}
    for check in checks.values():
        if check["status"] == "fail":
            assert check["fix"] and f"fix: {check['fix']}" in human.stdout, check
    return as_json.code, checks, human.stdout


def _failed(checks: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {name: c["summary"] for name, c in checks.items() if c["status"] == "fail"}


@pytest.mark.parametrize("table", ["initiatives", "nodes", "nodes_fts", "meta"])
def test_a_table_the_vault_lacks_fails_a_check_not_the_doctor(vault: VaultSpec, table: str) -> None:
    write_notes(vault, "doc", "the heron waits by the weir")
    if vault.backend == "postgres" and table == "nodes_fts":
        pytest.skip("PostgreSQL's full-text index is a column of nodes, not a table")
    _sql(vault, f"DROP TABLE {table}", f"DROP TABLE {table} CASCADE")
    code, checks, human = _doctor(vault)
    assert code == 1 and "unhealthy: " in human, human
    failed = _failed(checks)
    assert any(f"{table}" in summary for summary in failed.values()), failed


def test_unreadable_tokens_fail_a_check_of_their_own(sqlite_vault: VaultSpec) -> None:
    """The pages of the tokens table (and its index) overwritten: reading them ended the doctor
    in a traceback; said as no token, the `http` check would judge the vault open to anyone."""
    write_notes(sqlite_vault, "doc", "the heron waits by the weir")
    assert kaeru(sqlite_vault, "token", "add", "carol").code == 0
    path = sqlite_vault.settings().sqlite_path
    conn = apsw.Connection(str(path))
    pages = [r[0] for r in conn.execute("SELECT rootpage FROM sqlite_schema WHERE tbl_name = 'tokens' AND rootpage")]
    size = next(conn.execute("PRAGMA page_size"))[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with path.open("r+b") as damaged:
        for page in pages:
            damaged.seek((page - 1) * size)
            damaged.write(b"\xff" * size)
    code, checks, _ = _doctor(sqlite_vault)
    assert code == 1
    tokens = checks["tokens"]
    assert tokens["status"] == "fail" and tokens["summary"].startswith("the tokens could not be read: "), tokens
    assert "kaeru salvage NEW_FOLDER" in tokens["fix"] and "kaeru token add" in tokens["fix"]
    assert checks["integrity"]["status"] == "fail" and checks["http"]["status"] in ("ok", "warn", "fail")


@pytest.mark.slow
def test_a_vector_table_the_vault_lacks_is_named_with_semantic_recall_on(sqlite_vault: VaultSpec) -> None:
    """With semantic recall on, the doctor loads the model and counts the vectors: their missing
    table ended it in a traceback, then failed the `vectors` check; now `schema_objects` names it
    before anything reads it (decision 446), and the vectors are not counted on a failing vault.
    SQLite only: PostgreSQL's read already said a missing table as `internal` (one model load per run)."""
    if not semantic.available():
        pytest.skip("the [semantic] extra is not installed")
    write_notes(sqlite_vault, "doc", "the heron waits by the weir")
    _sql(sqlite_vault, "DROP TABLE node_vectors")
    code, checks, _ = _doctor(sqlite_vault, KAERU_SEMANTIC="1")
    assert code == 1 and set(_failed(checks)) == {"schema_objects"}, _failed(checks)
    assert "table node_vectors" in checks["schema_objects"]["summary"], checks["schema_objects"]
    assert "vectors" not in checks


def test_a_vault_file_that_no_longer_reads_is_sent_to_salvage_as_every_command_sends_it(
    sqlite_vault: VaultSpec,
) -> None:
    """The doctor's fix for a file that is not a database any more said "check the vault file's
    permissions; restore it from an export", while `search` on the same file named `kaeru salvage`
    (the terminal probe, session 48): one way out, said alike."""
    vault = sqlite_vault
    write_notes(vault, "doc", "the heron waits by the weir")
    path = vault.vault_dir / "vault.sqlite3"
    path.write_bytes(b"\0" * 100 + path.read_bytes()[100:])  # the header gone
    code, checks, _ = _doctor(vault)
    assert code == 1 and checks["vault"]["status"] == "fail", checks
    assert "kaeru salvage NEW_FOLDER" in checks["vault"]["fix"], checks["vault"]
    searched = kaeru(vault, "search", "heron", "-i", "doc")
    assert searched.code != 0 and "salvage" in searched.stderr, searched.stderr


def test_a_vault_another_process_holds_locked_is_not_sent_to_salvage(sqlite_vault: VaultSpec) -> None:
    """The fix for a file that does not open followed the error: a vault locked by another process
    (an exclusive lock) was sent to `kaeru salvage` as a damaged one (found in review)."""
    vault = sqlite_vault
    write_notes(vault, "doc", "the heron waits by the weir")
    holder = apsw.Connection(str(vault.settings().sqlite_path))
    try:
        for statement in ("PRAGMA locking_mode=EXCLUSIVE", "BEGIN EXCLUSIVE", "INSERT INTO meta VALUES ('held', '1')"):
            holder.execute(statement)  # one at a time: apsw runs the rest of a string as its cursor is read
        code, checks, _ = _doctor(vault, KAERU_BUSY_TIMEOUT_MS="200")
    finally:
        holder.close()
    failed = next(c for c in checks.values() if c["status"] == "fail")
    assert code == 1 and "locked" in failed["fix"] and "salvage" not in failed["fix"], failed
