"""A server's PostgreSQL store across a restore into the database it uses (`pg_restore --clean` of an
older dump): its searches answer as a new process's — never from the in-memory copies (decision
16.C1) or the ids by row number read from the tables the restore dropped, before or after new writes.

The restored rows keep the transaction ids they were written with, older than the copies' snapshot,
and the restore sets the `seq` counter back, so new notes take the row numbers of notes the restore
took away: the change log alone could name none of it (a probe: 1230 hits in the server where a new
process found 1195)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kaeru.api.envelope import read_envelope
from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.service import Service
from kaeru.storage.postgres.store import PostgresStore
from tests.pg import NEEDS_POSTGRES

pytestmark = [
    NEEDS_POSTGRES,
    pytest.mark.skipif(not (shutil.which("pg_dump") and shutil.which("pg_restore")), reason="no pg_dump/pg_restore"),
]
pytest.importorskip("numpy")


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[tuple[str, Service]]:
    """A new vault database and a long-lived store on it, as `kaeru serve --http` holds one."""
    from tests.pg import blank_database, drop_database

    url = blank_database()
    store = PostgresStore(url)
    store.copies.warm = None  # the copies read in place: the test checks what they answer, not when
    try:
        yield url, Service(store, Settings(vault_dir=tmp_path, database_url=url, secret_policy="allow"))
    finally:
        store.close()
        drop_database(url)


def _note(service: Service, text: str) -> str:
    outcome, _ = service.note(parse("note", {"initiative": "core", "kind": "observation", "text": text}))
    return str(outcome.primary.id)


def _search(service: Service, text: str) -> tuple[list[Any], Any]:
    found = service.search(parse("search", {"initiatives": ["core"], "text": text, "limit": 5}))
    data = read_envelope("search", found)["data"]
    return [hit.get("id") for hit in data.get("hits", data.get("items", []))], data.get("total")


def _new_process(url: str, tmp_path: Path, text: str) -> tuple[list[Any], Any]:
    """What a process that starts now answers (no copies: a one-shot command's store)."""
    store = PostgresStore(url, search_cache_bytes=0)
    try:
        return _search(Service(store, Settings(vault_dir=tmp_path, database_url=url, secret_policy="allow")), text)
    finally:
        store.close()


def _dumped_before_nine_more(service: Service, url: str, tmp_path: Path) -> Path:
    """Twelve notes, a dump of the database then, and nine notes more it lacks: the dump."""
    for i in range(12):
        _note(service, f"quokka brolnol dailmaigu before the dump {i}")
    dump = tmp_path / "older.dump"
    subprocess.run(["pg_dump", "-Fc", "--no-owner", "-f", str(dump), "-d", url], check=True, capture_output=True)
    for i in range(9):
        _note(service, f"quokka brolnol dailmaigu after the dump {i}")
    return dump


def test_a_restore_in_place_is_searched_as_a_new_process_would(vault: tuple[str, Service], tmp_path: Path) -> None:
    url, service = vault
    store = service.store
    assert isinstance(store, PostgresStore)
    dump = _dumped_before_nine_more(service, url, tmp_path)
    ranked = store.copies.ranked
    assert _search(service, "brolnol dailmaigu")[1] == 21
    assert store.copies.ranked > ranked  # the server ranks from its copies

    subprocess.run(
        ["pg_restore", "--clean", "--if-exists", "--no-owner", "-d", url, str(dump)], check=True, capture_output=True
    )
    assert _search(service, "brolnol dailmaigu") == _new_process(url, tmp_path, "brolnol dailmaigu")
    assert _search(service, "brolnol dailmaigu")[1] == 12

    written = [_note(service, f"walrus brolnol dailmaigu after the restore {i}") for i in range(4)]
    ranked = store.copies.ranked
    server = _search(service, "brolnol dailmaigu walrus")
    assert store.copies.ranked > ranked  # still from the copies, read again from the restored tables
    assert server == _new_process(url, tmp_path, "brolnol dailmaigu walrus")
    assert server[1] == 16 and set(written) <= set(server[0])  # the new notes, by their own ids


def _restore_step(url: str, dump: Path, *args: str) -> None:
    subprocess.run(["pg_restore", "--no-owner", "-d", url, *args, str(dump)], check=True, capture_output=True)


def test_a_search_while_a_restore_loads_the_tables_leaves_no_empty_copies(
    vault: tuple[str, Service], tmp_path: Path
) -> None:
    """pg_restore without `--single-transaction` commits each step: the new, empty tables first, then
    each table's rows, then the indexes and triggers — the one that logs node writes among them. A
    search in between answers as a new process would then, and the rows loaded after it are found."""
    url, service = vault
    store = service.store
    assert isinstance(store, PostgresStore)
    dump = _dumped_before_nine_more(service, url, tmp_path)
    assert _search(service, "brolnol dailmaigu")[1] == 21
    listing = subprocess.run(["pg_restore", "-l", str(dump)], check=True, capture_output=True, text=True).stdout
    data = [line for line in listing.splitlines() if " TABLE DATA " in line]
    nodes = [line for line in data if line.split()[-2:-1] == ["nodes"]]  # `… TABLE DATA public nodes owner`
    assert len(nodes) == 1
    (tmp_path / "others.list").write_text("\n".join(line for line in data if line not in nodes) + "\n")
    (tmp_path / "nodes.list").write_text(nodes[0] + "\n")

    _restore_step(url, dump, "--clean", "--if-exists", "--section=pre-data")
    _restore_step(url, dump, "-L", str(tmp_path / "others.list"))  # initiatives, memberships…: no nodes yet
    assert _search(service, "brolnol dailmaigu") == _new_process(url, tmp_path, "brolnol dailmaigu") == ([], 0)
    _restore_step(url, dump, "-L", str(tmp_path / "nodes.list"))
    assert _search(service, "brolnol dailmaigu") == _new_process(url, tmp_path, "brolnol dailmaigu")
    _restore_step(url, dump, "--section=post-data")

    ranked = store.copies.ranked
    server = _search(service, "brolnol dailmaigu")
    assert store.copies.ranked > ranked  # from the copies again, read from the restored rows
    assert server == _new_process(url, tmp_path, "brolnol dailmaigu")
    assert server[1] == 12
