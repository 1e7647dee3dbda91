"""An unknown or new initiative name reads the vault's initiative names once a call.

A write to a new initiative read every initiative twice and every live one's name history once more,
and a search naming six unknown initiatives read them all for each name: in a vault of ten thousand
initiatives a new initiative's first note took forty times as long as a note to an existing one, and
anything that makes many initiatives (an importer) slowed down with each one it made. The answers
stay the same: where a former name went, and the names a misspelt one may mean. Now neither is read
whole: the names alone, once a call, and of the history what concerns each name asked about
(`test_new_names_read_narrow.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.storage.sqlite.store import SqliteStore
from tests.backends import VaultSpec

#: What reads every initiative's record, the live names, and every initiative's name history.
EVERY_INITIATIVE = "properties FROM initiatives ORDER BY name"
NAMES = "SELECT name FROM initiatives"
NAME_HISTORY = "FROM initiative_names WHERE 1 "
#: What a name asked about reads: the live initiatives that held it, the initiatives that took others
#: in by a merge, the ended initiatives of that name.
OF_A_NAME = ("FROM initiative_names n JOIN", "WHERE properties LIKE ?", "FROM initiative_ends WHERE name = ?")


def seed(service: Service) -> None:
    """Initiatives whose names went elsewhere, and some to misspell."""
    for name in ("webshop", "payments", "billing", "spike", "camera", "audit", "camera-audit", "camera-audit-quasar"):
        service.note(parse("note", {"initiative": name, "text": f"about {name}"}))
    service.initiative(parse("initiative", {"initiative": "webshop", "action": "rename", "to": "storefront"}))
    service.initiative(parse("initiative", {"initiative": "payments", "action": "merge", "to": "billing"}))
    service.initiative(parse("initiative", {"initiative": "spike", "action": "delete"}))


def test_a_search_naming_several_unknown_initiatives_says_of_each_where_it_went(service: Service) -> None:
    """One search names a renamed, a merged, a deleted, a misspelt and an unknown initiative: each
    warning says what became of that name, as when it is named alone."""
    seed(service)
    names = ["storefront", "webshop", "payments", "spike", "camera-audit-quaasr", "nothing-like-it"]
    found = service.search(parse("search", {"initiatives": names, "text": "about"}))
    said = {i.field: i.message for i in found.issues if i.code == "unknown_initiative"}
    assert sorted(said) == [f"initiatives[{i}]" for i in range(1, 6)]
    assert said["initiatives[4]"] == (
        "no initiative named 'camera-audit-quaasr'; did you mean 'camera-audit-quasar', 'camera-audit', 'camera'?"
    )
    assert said["initiatives[5]"] == "no initiative named 'nothing-like-it'"
    for name, went in [
        ("webshop", "renamed to 'storefront'"),
        ("payments", "merged into 'billing'"),
        ("spike", "deleted"),
    ]:
        with pytest.raises(KaeruError) as alone:
            service.context(parse("context", {"initiative": name}))
        assert said[f"initiatives[{names.index(name)}]"] == str(alone.value), "as when named alone"
        assert went in str(alone.value)


@contextmanager
def statements(store: SqliteStore) -> Iterator[list[str]]:
    """The SQL the store's connections run meanwhile."""
    issued: list[str] = []

    def trace(_cursor: Any, sql: str, _bindings: Any) -> bool:
        issued.append(sql)
        return True

    for conn in store._all:
        conn.exec_trace = trace
    try:
        yield issued
    finally:
        for conn in store._all:
            conn.exec_trace = None


def reads(store: SqliteStore, call: Callable[[], object]) -> tuple[int, ...]:
    """How many times `call` read every initiative's record, the names of every initiative, the
    whole name history, and each read of one name's fate."""
    with statements(store) as issued:
        try:
            call()
        except KaeruError:
            pass
    return tuple(sum(what in s for s in issued) for what in (EVERY_INITIATIVE, NAMES, NAME_HISTORY, *OF_A_NAME))


def test_unknown_and_new_names_read_the_names_once(sqlite_vault: VaultSpec) -> None:
    """A new initiative's note, a refused write, a `context` and a search of six unknown names
    each read the initiatives' names once, no initiative's record and no whole name history; what
    became of a name is read once for each name asked about (a search asks of five at most)."""
    settings = sqlite_vault.settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    try:
        seed(service)
        service.search(parse("search", {"initiatives": ["billing"], "text": "about"}))  # its reader opened
        note = parse("note", {"initiative": "camera-audit-qusar", "text": "x"})
        task = parse("task_update", {"initiative": "webshp", "task": {"id": "0" * 36}, "status": "done"})
        context = parse("context", {"initiative": "camera-audit-quaasr"})
        unknown = ["billing", "webshop", "payments", "spike", "camera-audit-quaasr", "zzz-a", "zzz-b"]
        search = parse("search", {"initiatives": unknown, "text": "x"})
        calls = {
            "new initiative": lambda: service.note(note),
            "refused write": lambda: service.task_update(task),
            "context": lambda: service.context(context),
            "search": lambda: service.search(search),
        }
        once = (0, 1, 0, 1, 1, 1)
        assert {what: reads(store, call) for what, call in calls.items()} == {
            "new initiative": once,
            "refused write": once,
            "context": once,
            "search": (0, 1, 0, 5, 5, 5),  # webshop, payments, spike, camera-audit-quaasr, zzz-a
        }
    finally:
        store.close()
