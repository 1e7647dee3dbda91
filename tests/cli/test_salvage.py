"""`kaeru salvage TARGET`: what still reads of a damaged SQLite vault, in a new vault that works.

`kaeru doctor` told the owner of a damaged vault to "`kaeru export` what still reads", and export
stopped at the first bad page with "restore it from an export": a circle with no way out. Salvage is
the way out; these tests damage real pages of a real vault (found through SQLite's `dbstat`) and
check what the new vault holds, through the commands a user runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest

from tests.cli.support import kaeru, write_notes

pytestmark = pytest.mark.timeout(300)

NOTES = [f"note {i} about herons, the pond at dusk and the {i}th reed" for i in range(240)]


def _vault(tmp_path: Path) -> tuple[dict[str, str], Path]:
    env = {"KAERU_VAULT": str(tmp_path / "vault")}
    write_notes(env, "pond", *NOTES)
    return env, tmp_path / "vault" / "vault.sqlite3"


def _pages(path: Path, table: str, kind: str) -> list[int]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [
            row[0] for row in conn.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = ?", (table, kind))
        ]
    finally:
        conn.close()


def _rows_on(path: Path, page: int) -> int:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(next(iter(conn.execute("SELECT ncell FROM dbstat WHERE pageno = ?", (page,))))[0])
    finally:
        conn.close()


def _damage(path: Path, page: int) -> None:
    size = int(next(iter(apsw.Connection(str(path)).execute("PRAGMA page_size")))[0])
    with path.open("r+b") as file:
        file.seek((page - 1) * size)
        file.write(b"\xa5" * size)


def _texts(env: dict[str, str]) -> set[str]:
    """Every note's text in the vault, as `kaeru export` writes it."""
    exported = kaeru(env, "export", "-")
    assert exported.code == 0, exported.stderr
    return {r["body"] for line in exported.stdout.splitlines() if "body" in (r := json.loads(line))}


def _found(env: dict[str, str], words: str) -> list[str]:
    """The texts `kaeru search` finds for `words` (the full-text index at work)."""
    found = kaeru(env, "search", "-i", "pond", "--all-words", words, as_json=True)
    assert found.code == 0, found.stdout
    return [hit["body"] for hit in found.json()["data"]["hits"]]


def test_a_damaged_page_of_notes_loses_only_its_rows_and_the_rest_is_a_working_vault(tmp_path: Path) -> None:
    env, path = _vault(tmp_path)
    leaf = _pages(path, "nodes", "leaf")[len(_pages(path, "nodes", "leaf")) // 2]
    lost = _rows_on(path, leaf)
    _damage(path, leaf)
    assert kaeru(env, "export", str(tmp_path / "x.amg")).code != 0, "export stops at the damage"
    target = tmp_path / "saved"
    run = kaeru(env, "salvage", str(target))
    assert run.code == 1, run.stderr  # written, but not everything read
    assert "nodes:" in run.stdout and "could not read rowid" in run.stdout and "doctor" in run.stdout
    saved = {"KAERU_VAULT": str(target)}
    assert kaeru(saved, "doctor").code == 0
    texts = _texts(saved)
    assert texts <= set(NOTES) and len(texts) == len(NOTES) - lost
    assert 0 < lost < len(NOTES) // 4
    kept = sorted(texts)[0]
    assert _found(saved, kept.split()[1] + "th reed") == [kept], "the full-text index was built afresh"
    # The new vault takes writes and finds them.
    assert kaeru(saved, "note", "-i", "pond", "herons came back at dawn").code == 0
    assert _found(saved, "herons dawn") == ["herons came back at dawn"]


def test_damage_to_an_index_alone_loses_nothing(tmp_path: Path) -> None:
    env, path = _vault(tmp_path)
    _damage(path, _pages(path, "nodes_type_seq", "leaf")[0])
    run = kaeru(env, "salvage", str(tmp_path / "saved"), as_json=True)
    assert run.code == 0, run.stderr
    report = run.json()
    assert report["complete"] is True and report["integrity"] == "ok"
    assert report["tables"]["nodes"] == {"copied": len(NOTES), "damaged": []}
    assert _texts({"KAERU_VAULT": str(tmp_path / "saved")}) == set(NOTES)


def test_a_damaged_page_of_a_table_without_rowid_keeps_the_rows_on_both_sides(tmp_path: Path) -> None:
    """`requests` (the replay records of writes sent with a `request_id`) has no rowid: it is read
    from both ends, and only the damaged page's records are lost."""
    env = {"KAERU_VAULT": str(tmp_path / "vault")}
    write_notes(env, "pond", *({"text": text, "request_id": f"write-{i}"} for i, text in enumerate(NOTES)))
    path = tmp_path / "vault" / "vault.sqlite3"
    leaves = _pages(path, "requests", "leaf")
    assert len(leaves) >= 3, "the test needs a page in the middle"
    middle = leaves[len(leaves) // 2]
    lost = _rows_on(path, middle)
    _damage(path, middle)
    run = kaeru(env, "salvage", str(tmp_path / "saved"), as_json=True)
    assert run.code == 1
    requests = run.json()["tables"]["requests"]
    assert requests["copied"] == len(NOTES) - lost and len(requests["damaged"]) == 1
    assert run.json()["tables"]["nodes"]["damaged"] == [] and _texts({"KAERU_VAULT": str(tmp_path / "saved")}) == set(
        NOTES
    )


def test_salvage_refuses_what_it_should_not_touch(tmp_path: Path) -> None:
    env, _ = _vault(tmp_path)
    itself = kaeru(env, "salvage", str(tmp_path / "vault"))
    assert itself.code == 2 and "damaged vault itself" in itself.stderr
    taken = {"KAERU_VAULT": str(tmp_path / "other")}
    write_notes(taken, "x", "a note already there")
    assert kaeru(env, "salvage", str(tmp_path / "other")).code == 2
    assert kaeru({"KAERU_VAULT": str(tmp_path / "nowhere")}, "salvage", str(tmp_path / "t")).code != 0
    assert not (tmp_path / "nowhere").exists() and not (tmp_path / "t").exists()
    (tmp_path / "a-file").write_text("in the way")  # a traceback, found in review
    blocked = kaeru(env, "salvage", str(tmp_path / "a-file"))
    assert blocked.code == 1 and "salvage_failed" in blocked.stderr and "a-file" in blocked.stderr


def test_the_doctor_names_salvage_for_a_damaged_vault(tmp_path: Path) -> None:
    env, path = _vault(tmp_path)
    _damage(path, _pages(path, "nodes", "leaf")[1])
    doctor = kaeru(env, "doctor", as_json=True)
    integrity = next(c for c in doctor.json()["checks"] if c["name"] == "integrity")
    assert integrity["status"] == "fail" and "kaeru salvage" in integrity["fix"]
    export = kaeru(env, "export", str(tmp_path / "x.amg"))
    assert "kaeru salvage" in export.stderr, "the error names the way out, not a circle"
    assert json.loads(kaeru(env, "salvage", str(tmp_path / "s"), as_json=True).stdout)["integrity"] == "ok"
