"""`archive` takes `request_id` as every mutating tool does (SPEC 2.1, 3.2; decision 467): the first
call with a key runs and its answer is kept; the same call again is answered that answer with
`replayed: true` and does nothing; the key with other arguments is `request_id_reused`. Before, the
schema refused the argument, so a client that keys every write could not retry an archive safely."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault

Run = Callable[[str, dict[str, Any]], dict[str, Any]]


@pytest.fixture
def exports(tmp_path: Path) -> Path:
    return tmp_path / "exports"


@pytest.fixture
def source(vault: VaultSpec, exports: Path) -> Iterator[Run]:
    """The test's vault, holding two notes, exporting under `exports`."""
    store = open_store(vault.settings(export_root=exports))
    run = build_server(Service(store, vault.settings(export_root=exports))).registry.run
    run("note", {"initiative": "alpha", "text": "the heron waits by the pond"})
    run("note", {"initiative": "beta", "text": "frogs sing after the rain"})
    yield run
    store.close()


@pytest.fixture
def other(vault: VaultSpec, tmp_path: Path, exports: Path) -> Iterator[tuple[Store, Run]]:
    """A second, empty vault of the test's backend, importing from `exports`."""
    spec = new_vault(vault.backend, tmp_path)
    settings = spec.settings(export_root=exports)
    store = open_store(settings)
    yield store, build_server(Service(store, settings)).registry.run
    store.close()
    drop_vault(spec)


def _imports(store: Store) -> int:
    with store.read() as session:
        return len([a for a in session.export_audit(None) if a.operation == "import"])


def test_an_export_with_a_key_replays_and_writes_nothing_again(source: Run, exports: Path) -> None:
    call = {"action": "export", "format": "amg", "path": "x.amg", "request_id": "r1"}
    first = source("archive", call)
    assert first["state"] == "applied" and first["replayed"] is False, first
    assert first["request_id"] == "r1"
    (exports / "x.amg").unlink()

    again = source("archive", call)
    assert again["state"] == "applied" and again["replayed"] is True, again
    assert again["request_id"] == "r1"
    assert again["data"]["artifacts"] == first["data"]["artifacts"]
    assert not (exports / "x.amg").exists(), "a replay writes no file"


def test_an_import_with_a_key_replays_its_counts(source: Run, other: tuple[Store, Run]) -> None:
    store, run = other
    assert source("archive", {"action": "export", "path": "a.amg"})["state"] == "applied"
    call = {"action": "import", "path": "a.amg", "request_id": "in-1"}
    first = run("archive", call)
    assert first["state"] == "applied" and first["replayed"] is False, first
    assert any(c["field"] == "imported.node_revisions" and c["after"] > 0 for c in first["data"]["changes"])
    recorded = _imports(store)

    again = run("archive", call)
    assert again["replayed"] is True, again
    assert (again["state"], again["data"], again["request_id"]) == (first["state"], first["data"], "in-1")
    assert _imports(store) == recorded, "a replay imports nothing and records no import"


def test_a_key_given_other_arguments_is_refused(source: Run, exports: Path) -> None:
    assert source("archive", {"action": "export", "path": "x.amg", "request_id": "r1"})["state"] == "applied"
    reused = source("archive", {"action": "export", "path": "y.amg", "request_id": "r1"})
    assert reused["state"] == "rejected", reused
    (issue,) = reused["issues"]
    assert (issue["code"], issue["field"]) == ("request_id_reused", "request_id")
    assert reused["request_id"] == "r1"
    assert not (exports / "y.amg").exists(), "a refused call writes nothing"


def test_a_refused_call_keeps_no_answer_for_its_key(source: Run, exports: Path) -> None:
    outside = source("archive", {"action": "export", "path": "../outside.amg", "request_id": "r2"})
    assert outside["state"] == "rejected" and outside["issues"][0]["code"] == "path_not_allowed", outside
    inside = source("archive", {"action": "export", "path": "x.amg", "request_id": "r2"})
    assert inside["state"] == "applied" and inside["replayed"] is False, inside
    assert (exports / "x.amg").exists()


def test_without_a_key_every_call_runs(source: Run, other: tuple[Store, Run], exports: Path) -> None:
    store, run = other
    call = {"action": "export", "path": "x.amg"}
    assert source("archive", call)["replayed"] is False
    (exports / "x.amg").unlink()
    again = source("archive", call)
    assert again["state"] == "applied" and again["replayed"] is False and again["request_id"] is None
    assert (exports / "x.amg").exists(), "the same export without a key writes the file again"

    assert run("archive", {"action": "import", "path": "x.amg"})["state"] == "applied"
    recorded = _imports(store)
    second = run("archive", {"action": "import", "path": "x.amg"})
    assert second["state"] == "unchanged" and second["replayed"] is False, second
    assert _imports(store) == recorded
