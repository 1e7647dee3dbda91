"""A new or unknown initiative name reads the names of the vault's initiatives, not their records.

To say what became of a name and which names it may be a misspelling of, a note creating an
initiative, a refused write, a `context` of a misspelt name and a search naming unknown initiatives
read every initiative's whole record (its properties too) and every initiative's name history, and
made each into an object: in a vault of ten thousand initiatives that was most of a new
initiative's note, and of a typo's refusal. They now read the names alone, and of the history only
what concerns the name asked about.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.storage.sqlite.store import SqliteStore
from tests.backends import VaultSpec

#: Initiatives in the vault: far more than any answer about one name needs to read.
MANY = 500


@dataclass
class Read:
    """One statement a call ran: its SQL, how many rows it returned, and how many values a row."""

    sql: str
    rows: int = 0
    width: int = 0


@contextmanager
def reads(store: SqliteStore) -> Iterator[list[Read]]:
    """The statements the store's connections run meanwhile, with the rows each returns."""
    ran: list[Read] = []
    current: dict[int, Read] = {}

    def on_statement(cursor: Any, sql: str, _bindings: Any) -> bool:
        current[id(cursor)] = read = Read(sql)
        ran.append(read)
        return True

    def on_row(cursor: Any, row: Any) -> Any:
        if (read := current.get(id(cursor))) is not None:
            read.rows += 1
            read.width = max(read.width, len(row))
        return row

    for conn in store._all:
        conn.exec_trace, conn.row_trace = on_statement, on_row
    try:
        yield ran
    finally:
        for conn in store._all:
            conn.exec_trace = conn.row_trace = None


def read_by(store: SqliteStore, call: Callable[[], object]) -> list[Read]:
    with reads(store) as ran:
        try:
            call()
        except KaeruError:
            pass
    return ran


def beyond_a_few(ran: list[Read]) -> list[tuple[str, int]]:
    """The statements that returned more than a few rows, and how many: a read of one value a row
    is the names alone; any other is named by its SQL."""
    return [("names alone" if r.width == 1 else r.sql, r.rows) for r in ran if r.rows > 5]


def test_a_new_or_unknown_name_reads_the_initiatives_names_not_their_records(sqlite_vault: VaultSpec) -> None:
    """Of 500 initiatives (some renamed, merged, deleted), each of these calls reads every name once,
    one value a row, and no statement returns more than a few rows of more than one value."""
    settings = sqlite_vault.settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    try:
        for i in range(MANY):
            service.note(parse("note", {"initiative": f"project-{i:03d}", "text": f"about project {i}"}))
        service.initiative(parse("initiative", {"initiative": "project-001", "action": "rename", "to": "renamed"}))
        service.initiative(parse("initiative", {"initiative": "project-002", "action": "merge", "to": "project-003"}))
        service.initiative(parse("initiative", {"initiative": "project-004", "action": "delete"}))
        service.search(parse("search", {"initiatives": ["renamed"], "text": "about"}))  # its reader opened
        task = parse("task_update", {"initiative": "projcet-010", "task": {"id": "0" * 36}, "status": "done"})
        unknown = ["project-005", "project-001", "project-002", "project-004", "projetc-011", "zzz-a", "zzz-b"]
        calls = {
            "new initiative": lambda: service.note(parse("note", {"initiative": "project-1000", "text": "x"})),
            "refused write": lambda: service.task_update(task),
            "context": lambda: service.context(parse("context", {"initiative": "porject-012"})),
            "search": lambda: service.search(parse("search", {"initiatives": unknown, "text": "x"})),
        }
        # Beyond a few rows, each reads the live names once, one value a row, and nothing else (499:
        # one of the 500 was merged away, one deleted, and the note's `project-1000` made).
        found = {what: beyond_a_few(read_by(store, call)) for what, call in calls.items()}
        assert found == {what: [("names alone", MANY - 1)] for what in calls}
    finally:
        store.close()
