"""A full disk under the embedded vault: a real, small file system (tmpfs), filled for real.

A laptop's disk fills up; the agent's next write must then be told so, in words a person can act
on, with `retryable` set and nothing half-written — and once space is freed, the same call (same
`request_id`) must apply exactly once. Opening a vault on a full disk must say so too, not print a
traceback. Mounting needs root (CI runs as root); elsewhere these tests are skipped, saying why.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kaeru.api import envelope as env
from kaeru.api.requests import parse
from kaeru.api.schemas import output_for
from kaeru.config import Settings
from kaeru.errors import KaeruError
from kaeru.export import archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from kaeru.storage.migrate import VaultUnusable
from tests.cli.support import kaeru, write_notes

#: Small enough to fill in a few dozen notes, large enough for the vault's schema and its WAL.
DISK_BYTES = 3 * 2**20
FILLER = "lorem ipsum dolor sit amet " * 20
#: The text of each note an import writes after the disk fills (`test_an_import_the_disk_stops_...`).
#: SQLite writes a chunk into its log (WAL), and a log file kept from earlier chunks — restarted by a
#: checkpoint, not yet cut back — is room a full disk does not refuse. That room is at most what was
#: written to the vault before the disk filled (on a loaded machine, when the checkpointer restarts
#: the log only after the second chunk: all of it, more than 200 notes of `FILLER * 3` needed, and
#: the import was not stopped). 200 notes of this text are more than all of it: the disk stops them.
LATER = FILLER * 16


@pytest.fixture
def small_disk() -> Iterator[Path]:
    """A file system of `DISK_BYTES` mounted on a fresh folder that other users may enter (the
    PostgreSQL server's own user keeps a tablespace there), unmounted and removed after the test."""
    yield from _mounted(DISK_BYTES)


@pytest.fixture
def roomier_disk() -> Iterator[Path]:
    """Three times `small_disk`: room for a whole import once what filled it is gone, however much
    of the log SQLite kept when the disk filled."""
    yield from _mounted(3 * DISK_BYTES)


def _mounted(size: int) -> Iterator[Path]:
    place = Path(tempfile.mkdtemp(prefix="kaeru-small-disk-"))
    place.chmod(0o755)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=755", "tmpfs", str(place)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        place.rmdir()
        pytest.skip(f"cannot mount a small file system here (needs root): {mounted.stderr.decode().strip()}")
    try:
        yield place
    finally:
        subprocess.run(["umount", "-l", str(place)], capture_output=True, check=False)
        place.rmdir()


def _fill(place: Path) -> Path:
    """Take every free byte of `place`'s file system with one file (returned, to free it later)."""
    ballast = place / "ballast"
    with ballast.open("wb", buffering=0) as out:  # unbuffered: no remainder to fail at close
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    return ballast


def _note(run: Any, i: int) -> dict[str, Any]:
    args = {"initiative": "full", "text": f"marker{i} {FILLER}", "request_id": f"fill-{i}"}
    result: dict[str, Any] = run("note", args)
    return result


def _write_until_refused(run: Any, most: int) -> tuple[int, dict[str, Any]]:
    """Notes with request ids until one is refused: how many were applied, and the refusal."""
    for i in range(most):
        result = _note(run, i)
        if result["state"] != "applied":
            assert i > 0, result
            return i, result
    raise AssertionError("the disk never filled")


def _applies_once_when_space_returns(run: Any, ballast: Path, refused_at: int) -> None:
    """Free `ballast`; the refused call, sent again, applies once and replays after."""
    ballast.unlink()
    again = _note(run, refused_at)
    assert again["state"] == "applied" and again["replayed"] is False, again
    replay = _note(run, refused_at)
    assert replay["replayed"] is True and replay["data"]["primary"]["id"] == again["data"]["primary"]["id"]
    hits = run("search", {"initiatives": ["full"], "text": f"marker{refused_at}"})["data"]["hits"]
    assert [h["id"] for h in hits] == [again["data"]["primary"]["id"]], "written exactly once"


def test_a_write_on_a_full_disk_is_refused_cleanly_and_applies_once_when_space_returns(small_disk: Path) -> None:
    vault = small_disk / "vault"
    settings = Settings.from_env({}, vault_dir=vault)
    store = open_store(settings)
    ballast = small_disk / "ballast"
    ballast.write_bytes(b"\0" * 2**20)  # what will be freed: the notes fill the rest
    try:
        run = build_server(Service(store, settings)).registry.run
        applied, refused = _write_until_refused(run, 2000)  # a 3 MiB disk holds a few dozen such notes
        issue = refused["issues"][0]
        assert issue["code"] == "unavailable" and issue["retryable"] is True, issue
        assert "the disk holding the vault is full" in issue["message"] and str(vault) in issue["message"], issue

        # Every earlier write is whole, and reads go on while the disk is full.
        found = run("search", {"initiatives": ["full"], "text": f"marker{applied - 1}"})
        assert found["state"] == "ok" and len(found["data"]["hits"]) == 1
        assert run("search", {"initiatives": ["full"], "text": f"marker{applied}"})["data"]["hits"] == []
        assert run("recall", {"initiatives": ["full"], "query": "lorem ipsum"})["state"] == "ok"
        _applies_once_when_space_returns(run, ballast, applied)
    finally:
        store.close()


def test_opening_a_vault_on_a_full_disk_says_so(small_disk: Path) -> None:
    ballast = _fill(small_disk)
    with pytest.raises(VaultUnusable) as raised:
        open_store(Settings.from_env({}, vault_dir=small_disk / "new"))
    message = str(raised.value)
    assert message.startswith("cannot open the vault: the disk holding the vault") and "KiB free" in message, message

    cli = kaeru({"KAERU_VAULT": str(small_disk / "cli")}, "note", "-i", "full", "hello")  # fails on a traceback
    assert cli.code == 1 and "cannot open the vault: the disk holding the vault" in cli.stderr, cli.stderr
    ballast.unlink()
    assert kaeru({"KAERU_VAULT": str(small_disk / "cli")}, "note", "-i", "full", "hello").code == 0


@pytest.fixture
def database_on_small_disk(small_disk: Path) -> Iterator[tuple[str, Path]]:
    """A new PostgreSQL database whose tables are created on `small_disk` (a tablespace there), and
    the folder beside the tablespace where a test may put a file to free later. Needs the test
    server (`KAERU_TEST_DATABASE_URL`), a superuser, and the server on this machine."""
    import os
    import uuid

    import psycopg

    from tests.backends import postgres_admin_url
    from tests.pg import database_url

    admin_url = postgres_admin_url()
    if admin_url is None:
        pytest.skip("no KAERU_TEST_DATABASE_URL: the README's test command starts a PostgreSQL")
    tag = uuid.uuid4().hex[:10]
    space, name = f"kaeru_small_{tag}", f"kaeru_full_{tag}"
    location = small_disk / "tablespace"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        row = admin.execute("SELECT current_setting('data_directory')").fetchone()
        data = Path(str(row[0])) if row else None
        if data is None or not data.exists():
            pytest.skip("the PostgreSQL server's files are not on this machine")
        location.mkdir()
        os.chown(location, data.stat().st_uid, data.stat().st_gid)
        admin.execute(f"CREATE TABLESPACE {space} LOCATION '{location}'")
        admin.execute(f"CREATE DATABASE {name} TEMPLATE template0")
        admin.execute(f"ALTER DATABASE {name} SET default_tablespace = {space}")
        try:
            yield database_url(admin_url, name), small_disk
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.execute(f"DROP TABLESPACE IF EXISTS {space}")


def test_a_write_on_a_full_database_disk_is_refused_cleanly_and_applies_once_later(
    database_on_small_disk: tuple[str, Path], tmp_path: Path
) -> None:
    url, disk = database_on_small_disk
    settings = Settings.from_env({}, vault_dir=tmp_path / "pg", database_url=url)
    store = open_store(settings)  # the schema is made on the small disk
    ballast = disk / "ballast"
    ballast.write_bytes(b"\0" * 2**20)
    try:
        run = build_server(Service(store, settings)).registry.run
        applied, refused = _write_until_refused(run, 20000)
        issue = refused["issues"][0]
        assert issue["code"] == "unavailable" and issue["retryable"] is True, issue
        assert "the database server's disk is full" in issue["message"], issue
        assert len(run("search", {"initiatives": ["full"], "text": f"marker{applied - 1}"})["data"]["hits"]) == 1
        _applies_once_when_space_returns(run, ballast, applied)
    finally:
        store.close()


def _pages(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (hidden ones too), by its path relative to it."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_an_export_that_fills_the_disk_leaves_the_last_export_as_it_was(small_disk: Path, tmp_path: Path) -> None:
    """An amg or markdown export whose disk fills half-way is refused as `unavailable` (retryable,
    the cause named) and leaves no truncated archive, no half folder and no hidden scraps: an earlier
    export at the same path is byte for byte as it was. Once space returns, the same export is whole
    (decision 166). Before, the archive was truncated in place and the CLI printed a traceback."""
    settings = Settings.from_env({"KAERU_EXPORT_ROOT": str(small_disk)}, vault_dir=tmp_path / "vault")
    store = open_store(settings)
    try:
        service = Service(store, settings)

        def note(i: int) -> None:
            service.note(parse("note", {"initiative": "full", "text": f"marker{i} {FILLER}"}))

        def export(path: str, fmt: str) -> Any:
            return archive.export(store, settings, parse("archive", {"action": "export", "path": path, "format": fmt}))

        for i in range(20):
            note(i)
        export("v.amg", "amg")
        export("pages", "markdown")
        before = _pages(small_disk)
        assert "v.amg" in before and "pages/README.md" in before
        for i in range(20, 400):  # the next exports are several times the space left below
            note(i)
        ballast = _fill(small_disk)
        with ballast.open("r+b") as out:  # some room, far less than a whole export
            out.truncate(ballast.stat().st_size - 96 * 1024)
        for path, fmt in (("v.amg", "amg"), ("pages", "markdown"), ("new.amg", "amg"), ("new-pages", "markdown")):
            with pytest.raises(KaeruError) as caught:
                export(path, fmt)
            assert caught.value.code == "unavailable" and caught.value.retryable, caught.value
            assert "No space left on device" in caught.value.message and "nothing was written" in caught.value.message
            assert {k: v for k, v in _pages(small_disk).items() if k != "ballast"} == {
                k: v for k, v in before.items() if k != "ballast"
            }, fmt
        cli = kaeru(
            {"KAERU_VAULT": str(tmp_path / "vault"), "KAERU_EXPORT_ROOT": str(small_disk)},
            "export",
            str(small_disk / "v.amg"),
        )
        assert cli.code == 1 and "No space left on device" in cli.stderr, cli.stderr  # unavailable (171), no traceback
        ballast.unlink()
        done = export("v.amg", "amg")
        assert done.artifacts[0]["nodes"] == 400 and (small_disk / "v.amg").stat().st_size == done.artifacts[0]["bytes"]
        pages = export("pages", "markdown")
        assert pages.artifacts[0]["nodes"] == 400
        assert not [p for p in small_disk.rglob("*") if p.name.endswith(".partial")]
    finally:
        store.close()


def test_a_backup_that_fills_the_disk_leaves_nothing_and_the_last_backup_as_it_was(
    small_disk: Path, tmp_path: Path
) -> None:
    """Decision 181, and review: the hidden copy and its `-journal` are removed, not left behind."""
    env = {"KAERU_VAULT": str(tmp_path / "vault")}
    write_notes(env, "full", *(f"marker{i} {FILLER}" for i in range(5)))  # in process: the backups are the subject
    earlier = small_disk / "kaeru.sqlite3"
    assert kaeru(env, "backup", str(tmp_path / "first.sqlite3")).code == 0
    earlier.write_bytes((tmp_path / "first.sqlite3").read_bytes())  # an earlier backup of this vault
    ballast = _fill(small_disk)
    refused = kaeru(env, "backup", str(earlier))
    assert refused.code == 1 and "nothing was put in place" in refused.stderr, refused.stderr
    assert sorted(p.name for p in small_disk.iterdir()) == ["ballast", "kaeru.sqlite3"]
    assert earlier.read_bytes() == (tmp_path / "first.sqlite3").read_bytes()
    ballast.unlink()
    assert kaeru(env, "backup", str(earlier)).code == 0


def test_an_import_the_disk_stops_part_way_is_partial_and_the_same_import_completes_it(
    roomier_disk: Path, tmp_path: Path
) -> None:
    """An import writes its records in chunks, each its own transaction (15.P2). When the vault's
    disk fills after some chunks were committed, the answer is `partial`: the committed records
    counted, the failed step naming the archive line it stopped at and what to do. `rejected`, as
    before, said nothing was applied while a thousand records were (SPEC 2.1, decision 212). The
    same import, once space returns, writes the rest exactly once."""
    total, before_fill = 1200, 1000
    source_settings = Settings.from_env({"KAERU_EXPORT_ROOT": str(tmp_path)}, vault_dir=tmp_path / "source")
    source = open_store(source_settings)
    try:
        writer = Service(source, source_settings)
        for i in range(total):
            # The notes after the disk fills are long: more than the log's room kept from before.
            text = f"marker{i} the heron at the weir" + (f" {LATER}" if i >= before_fill else "")
            writer.note(parse("note", {"initiative": "full", "text": text}))
        archive.export(source, source_settings, parse("archive", {"action": "export", "path": "all.amg"}))
    finally:
        source.close()

    settings = Settings.from_env({"KAERU_EXPORT_ROOT": str(tmp_path)}, vault_dir=roomier_disk / "vault")
    store = open_store(settings)
    request = parse("archive", {"action": "import", "path": "all.amg"})
    ballast: list[Path] = []
    log_room: list[int] = []

    def disk_fills_mid_import(stage: str, n: int) -> None:
        if stage == "nodes" and not ballast:  # after the first 1,000 nodes, inside a later chunk
            log_room.append(sum(p.stat().st_size for p in (roomier_disk / "vault").glob("*-wal")))
            ballast.append(_fill(roomier_disk))

    try:
        stopped = archive.import_(store, settings, request, disk_fills_mid_import)
        later = (total - before_fill) * len(LATER)
        assert log_room[0] < later, f"the log kept {log_room[0]} bytes: the {later} after the disk filled may fit"
        assert stopped.state == "partial", stopped
        [step] = stopped.failed_steps
        assert step.code == "unavailable" and "import the same archive again" in step.message, step
        assert step.step.startswith("records from line ")
        committed = {c.field: c.after for c in stopped.changes}["imported.node_revisions"]
        assert 0 < committed < total, stopped.changes
        envelope = env.mutation_envelope("archive", stopped, replayed=False, request_id=None)
        assert not list(Draft202012Validator(output_for("archive", env.MUTATION_KIND)).iter_errors(envelope))
        run = build_server(Service(store, settings)).registry.run

        def found(i: int) -> int:
            return len(run("search", {"initiatives": ["full"], "text": f"marker{i}"})["data"]["hits"])

        assert found(committed - 1) == 1 and found(committed) == 0, "the counts are what the vault holds"

        ballast[0].unlink()
        rest = run("archive", {"action": "import", "path": "all.amg"})
        assert rest["state"] == "applied" and rest["data"]["failed_steps"] == [], rest
        changes = {c["field"]: c["after"] for c in rest["data"]["changes"]}
        assert changes["imported.node_revisions"] == total - committed and changes["imported.skipped"] >= committed
        assert all(found(i) == 1 for i in (0, committed - 1, committed, total - 1)), "each once"
    finally:
        store.close()


def test_an_import_from_a_folder_the_disk_stops_part_way_says_so_and_running_it_again_finishes(
    roomier_disk: Path, tmp_path: Path
) -> None:
    """`kaeru import-from` writes a folder in chunks too: stopped by a full disk after some were
    committed, its `unavailable` now says how much was written and that the same command finishes
    (decision 212); run again once space returns, every note is there once."""
    from kaeru.export.importers import notes
    from kaeru.export.importers.core import apply

    folder = tmp_path / "notes"
    folder.mkdir()
    total = 300
    for i in range(total):
        body = f"marker{i} the heron at the weir" + (f" {FILLER * 3}" if i >= 100 else "")
        (folder / f"n{i:03}.md").write_text(f"{body}\n")
    settings = Settings.from_env({}, vault_dir=roomier_disk / "vault")
    store = open_store(settings)
    ballast: list[Path] = []

    def disk_fills_after_the_first_chunk(stage: str, done: int, of: int) -> None:
        if not ballast:
            ballast.append(_fill(roomier_disk))

    try:
        service = Service(store, settings)
        with pytest.raises(KaeruError) as stopped:
            apply(service, "folder", notes.read_markdown(folder), chunk=100, progress=disk_fills_after_the_first_chunk)
        assert stopped.value.code == "unavailable", stopped.value
        assert "stopped part way, after 100 changes were written" in stopped.value.message
        assert "the same command again writes the rest" in stopped.value.message
        ballast[0].unlink()
        rest = apply(service, "folder", notes.read_markdown(folder), chunk=100)
        assert rest.created == total - 100 and rest.unchanged == 100, rest
        run = build_server(service).registry.run
        for i in (0, 99, 100, total - 1):
            assert len(run("search", {"initiatives": ["folder"], "text": f"marker{i}"})["data"]["hits"]) == 1
    finally:
        store.close()
