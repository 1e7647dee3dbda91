"""`kaeru salvage` on the damage a probe found it could not mend, and `kaeru doctor` on what it left.

- A vault cut short (a full disk, a copy cut off) salvaged nothing: SQLite refuses a file shorter than
  its header says before a row is read, although every page it still holds reads.
- A damaged `schema_migrations` page left every table and no migration record: each command then
  ran migration 001 again (a traceback, `table meta already exists`), and the doctor advised
  `kaeru migrate`, which did the same.
- `memberships` and `edges` were copied raw: a table without rowid is read from both ends, so one
  damaged page lost every row between (an initiative showed 258 of its 549 notes) while the nodes
  and the edge revisions held them all, and the doctor said healthy.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import apsw
import pytest

from tests.backends import VaultSpec
from tests.cli.support import kaeru
from tests.cli.test_doctor import _sql
from tests.cli.test_doctor_damage import _doctor

pytestmark = pytest.mark.timeout(600)

NOTES = [f"note {i} about herons, the pond at dusk and the {i}th reed" for i in range(700)]
POND, REEDS = 640, 60  # the first notes are in `pond`, the rest in `reeds`
LINKS = 320  # the first notes link to the one before


def _write(vault: VaultSpec) -> list[str]:
    """Notes in two initiatives, links between them (some reweighted: two revisions), a slot taken
    three times; through the service, as `kaeru note`, `kaeru call link` and `slot` write them."""
    from kaeru.api.requests import parse
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    settings = vault.settings()
    store = open_store(settings)
    try:
        service = Service(store, settings)
        ids: list[str] = []
        for i, text in enumerate(NOTES):
            note: dict[str, Any] = {"initiative": "pond" if i < POND else "reeds", "text": text}
            if 0 < i <= LINKS:
                note.update(link_to=ids[-1], weight=0.5)
            outcome, _ = service.note(parse("note", note))  # type: ignore[arg-type]
            assert outcome.primary is not None
            ids.append(outcome.primary.id)
        for i in range(1, LINKS, 4):
            link = {"initiative": "pond", "from": ids[i], "to": ids[i - 1], "edge_type": "refers_to"}
            service.link(parse("link", {**link, "action": "reweight", "weight": 0.8}))  # type: ignore[arg-type]
        for holder in ids[:3]:
            service.slot(parse("slot", {"initiative": "pond", "slot": "handoff", "node": holder}))  # type: ignore[arg-type]
    finally:
        store.close()
    return ids


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """One SQLite vault for the module (its writes take a while); each test damages a copy."""
    folder = tmp_path_factory.mktemp("written") / "vault"
    return folder, _write(VaultSpec("sqlite", folder))


def _copy(written: tuple[Path, list[str]], tmp_path: Path) -> tuple[dict[str, str], Path]:
    folder = tmp_path / "vault"
    folder.mkdir(mode=0o700)
    (folder / "vault.sqlite3").write_bytes((written[0] / "vault.sqlite3").read_bytes())
    (folder / "vault.sqlite3").chmod(0o600)
    return {"KAERU_VAULT": str(folder)}, folder / "vault.sqlite3"


def _pages(path: Path, table: str) -> list[int]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [
            int(r[0])
            for r in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path", (table,)
            )
        ]
    finally:
        conn.close()


def _garble(path: Path, *pages: int) -> None:
    with path.open("r+b") as file:
        for page in pages:
            file.seek((page - 1) * 4096)
            file.write(b"\xa5" * 4096)


def _salvage(env: dict[str, str], target: Path) -> dict[str, Any]:
    run = kaeru(env, "salvage", str(target), as_json=True)
    assert "Traceback" not in run.stderr and run.code in (0, 1), run.stderr
    report: dict[str, Any] = run.json()
    assert report["integrity"] == "ok"
    return report


def _healthy(env: dict[str, str]) -> dict[str, dict[str, Any]]:
    code, checks, _ = _doctor(VaultSpec("sqlite", Path(env["KAERU_VAULT"])))
    assert code == 0, {n: c for n, c in checks.items() if c["status"] == "fail"}
    return checks


def _members(env: dict[str, str]) -> dict[str, int]:
    """Each initiative's notes, as `kaeru initiatives` counts them (from its memberships)."""
    run = kaeru(env, "initiatives", as_json=True)
    assert run.code == 0, run.stderr
    return {i["name"]: i["counts"]["total"] for i in run.json()["data"]["initiatives"]}


def _linked(env: dict[str, str], node: str) -> bool:
    """Whether `kaeru call trail` shows `node`'s link to the note before it."""
    run = kaeru(env, "call", "trail", "-a", "initiative=pond", "-a", f"node={node}", as_json=True)
    assert run.code == 0, run.stderr
    return bool(run.json()["data"].get("edges") or "refers_to" in json.dumps(run.json()["data"]))


@pytest.mark.parametrize("kept", [0.9, 0.5, 0.37])
def test_a_vault_cut_short_is_salvaged_up_to_where_it_ends(
    written: tuple[Path, list[str]], tmp_path: Path, kept: float
) -> None:
    env, path = _copy(written, tmp_path)
    with path.open("r+b") as file:
        file.truncate(int(path.stat().st_size * kept))  # 0.37: mid-page, as a copy cut off leaves it
    assert _doctor(VaultSpec("sqlite", path.parent))[0] != 0
    report = _salvage(env, tmp_path / "saved")
    saved = {"KAERU_VAULT": str(tmp_path / "saved")}
    _healthy(saved)
    assert report["tables"]["nodes"]["copied"] > 0, report
    assert (
        report["tables"]["schema_migrations"] == {"copied": 22, "damaged": []}
        or report["tables"]["schema_migrations"]["copied"] >= 22
    )
    if kept == 0.9:
        assert _members(saved)["pond"] >= POND * 0.8, "the notes in the pages that remain"
    exported = kaeru(saved, "export", "-")
    assert exported.code == 0, exported.stderr


def test_a_node_whose_json_was_cut_is_left_out_and_said(written: tuple[Path, list[str]], tmp_path: Path) -> None:
    """A page cut short can read as a row whose text is cut: a node's `properties` no longer JSON.
    The index over its reminders (`nodes_attention`) refused the whole salvage — "could not write the
    new vault (malformed JSON)" — now that row is left out and said, as a row that did not read."""
    env, path = _copy(written, tmp_path)

    def index_sql(sql: str | None = None) -> str:
        """The reminders index's definition; with `sql`, written in its place (as damage would, unchecked)."""
        conn = apsw.Connection(str(path))
        try:
            if sql is not None:
                conn.execute("PRAGMA writable_schema = ON")
                conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'nodes_attention'", (sql,))
            return str(next(iter(conn.execute("SELECT sql FROM sqlite_master WHERE name = 'nodes_attention'")))[0])
        finally:
            conn.close()

    # The index refuses the cut text at once: set it aside, cut one node's text, put it back.
    index = index_sql()
    index_sql("CREATE INDEX nodes_attention ON nodes (seq) WHERE 0")
    conn = apsw.Connection(str(path))
    try:
        [(rowid, node)] = list(conn.execute("SELECT rowid, id FROM nodes ORDER BY rowid DESC LIMIT 1"))
        conn.execute("UPDATE nodes SET properties = ? WHERE rowid = ?", ('{"reminder": {"at', rowid))
    finally:
        conn.close()
    assert index_sql(index) == index
    report = _salvage(env, tmp_path / "saved")
    assert report["tables"]["nodes"]["damaged"] == [f"rowid {rowid} to {rowid} (properties not JSON)"], report
    saved = {"KAERU_VAULT": str(tmp_path / "saved")}
    _healthy(saved)
    gone = kaeru(saved, "call", "read", "-a", "initiative=reeds", "-a", f"nodes={node}", as_json=True)
    assert node not in json.dumps(gone.json().get("data") or {}), gone.stdout


def test_a_garbled_migration_record_is_written_again(written: tuple[Path, list[str]], tmp_path: Path) -> None:
    env, path = _copy(written, tmp_path)
    assert _pages(path, "schema_migrations") == [2], "page 2 holds the records"
    _garble(path, 2)
    report = _salvage(env, tmp_path / "saved")
    assert report["complete"] is True and report["tables"]["schema_migrations"]["damaged"] == []
    saved = {"KAERU_VAULT": str(tmp_path / "saved")}
    checks = _healthy(saved)
    assert checks["migrations"]["status"] == "ok"
    assert _members(saved) == {"pond": POND, "reeds": REEDS}
    found = kaeru(saved, "search", "-i", "pond", "--all-words", "17th reed", as_json=True)
    assert found.code == 0 and [h["body"] for h in found.json()["data"]["hits"]] == [NOTES[17]]


def test_damaged_memberships_and_edges_are_made_again_from_nodes_and_revisions(
    written: tuple[Path, list[str]], tmp_path: Path
) -> None:
    env, path = _copy(written, tmp_path)
    ids = written[1]
    members, edges = _pages(path, "memberships"), _pages(path, "edges")
    assert len(members) >= 2 and len(edges) >= 3, "the test needs pages beside the damaged one"
    _garble(path, members[len(members) // 2], edges[len(edges) // 2])
    report = _salvage(env, tmp_path / "saved")
    assert report["complete"] is True, report  # nothing was lost: both are made from what read
    assert report["tables"]["nodes"]["damaged"] == [] and report["tables"]["edge_revisions"]["damaged"] == []
    saved = {"KAERU_VAULT": str(tmp_path / "saved")}
    assert _healthy(saved)["derived"]["status"] == "ok"
    assert _members(saved) == {"pond": POND, "reeds": REEDS}
    assert all(_linked(saved, ids[i]) for i in range(1, LINKS, 40))


# ------------------------------------------------------------------------------------------------
# What any kaeru says of such a vault: both backends.
# ------------------------------------------------------------------------------------------------


def _notes(vault: VaultSpec) -> None:
    """40 notes in `pond`, 10 in `reeds`, each of those linked to a note of `pond`."""
    from tests.cli.support import write_notes

    ids = write_notes(vault, "pond", *NOTES[:40])
    write_notes(vault, "reeds", *({"text": NOTES[40 + i], "link_to": ids[i]} for i in range(10)))


def test_a_vault_without_migration_records_is_refused_by_name(vault: VaultSpec, tmp_path: Path) -> None:
    _notes(vault)
    _sql(vault, "DELETE FROM schema_migrations")
    for args in (("search", "-i", "pond", "heron"), ("migrate",), ("context", "pond"), ("initiatives",)):
        run = kaeru(vault, *args, as_json=True)
        assert run.code == 1 and "Traceback" not in run.stderr, (args, run.stderr)
        error = run.json()["error"]
        assert error["code"] == "unavailable" and "no record of the migrations" in error["message"], error
    code, checks, _ = _doctor(vault)
    assert code != 0 and checks["migrations"]["status"] == "fail"
    assert "no record of the migrations" in checks["migrations"]["summary"]
    fix = checks["migrations"]["fix"]
    assert ("kaeru salvage" in fix) if vault.backend == "sqlite" else ("backup" in fix)
    assert "kaeru migrate" not in fix
    if vault.backend == "sqlite":  # salvage writes the records again: the schema is this kaeru's
        report = _salvage(vault.env(), tmp_path / "saved")
        saved = {"KAERU_VAULT": str(tmp_path / "saved")}
        assert report["complete"] is True and _healthy(saved)["migrations"]["status"] == "ok"
        assert _members(saved) == {"pond": 40, "reeds": 10}


def test_the_doctor_finds_memberships_and_edges_that_differ_from_their_sources(vault: VaultSpec) -> None:
    _notes(vault)
    assert _doctor(vault)[1]["derived"]["status"] == "ok"
    _sql(vault, "DELETE FROM memberships WHERE node_seq % 3 = 0")
    _sql(vault, "DELETE FROM edges WHERE dst IN (SELECT id FROM nodes WHERE seq % 2 = 0)")
    code, checks, _ = _doctor(vault)
    derived = checks["derived"]
    assert code != 0 and derived["status"] == "fail", derived
    assert "memberships lacks" in derived["summary"] and "edges lacks" in derived["summary"], derived
    assert ("kaeru salvage" in derived["fix"]) if vault.backend == "sqlite" else ("kaeru copy" in derived["fix"])


def test_the_doctor_says_a_full_disk_refuses_every_write(tmp_path: Path) -> None:
    """On a full disk every write was refused `unavailable` while the doctor said healthy."""
    from tests.cli.support import write_notes
    from tests.lifecycle.test_disk_full import _fill, _mounted

    for place in _mounted(3 * 2**20):  # a real, small file system (root only; skipped elsewhere)
        vault = VaultSpec("sqlite", place / "vault")
        write_notes(vault, "pond", *NOTES[:5])
        assert _doctor(vault)[1]["writable"]["status"] == "ok"
        ballast = _fill(place)
        # A few pages free: the doctor's connection opens (its -shm fits), a note's write does not.
        os.truncate(ballast, ballast.stat().st_size - 48 * 1024)
        refused = kaeru(vault, "note", "-i", "pond", "one more heron", as_json=True)
        assert refused.code == 1 and "disk holding the vault is full" in refused.stdout, refused.stdout
        code, checks, _ = _doctor(vault)
        writable = checks["writable"]
        assert code != 0 and writable["status"] == "fail" and "disk holding the vault is full" in writable["summary"]
        assert "free some space" in writable["fix"]
        ballast.unlink()
        assert _doctor(vault)[0] == 0


def test_a_damaged_page_found_while_reading_is_said_as_damage_not_a_fault(
    written: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """The vault opens, and a read then meets a garbled page of `nodes`: `unavailable`, naming the
    doctor and salvage — not `internal`, which asks the person to report a fault of kaeru's (the
    backup probe, session 51)."""
    env, path = _copy(written, tmp_path)
    _garble(path, *_pages(path, "nodes"))
    run = kaeru(env, "search", "-i", "pond", "herons", as_json=True)
    assert run.code != 0 and "Traceback" not in run.stderr, run.stderr
    answer = run.json()
    assert answer["state"] == "rejected", answer
    assert [(i["code"], i["retryable"]) for i in answer["issues"]] == [("unavailable", False)], answer
    assert "kaeru salvage" in answer["issues"][0]["message"], answer
