"""A vault written by kaeru before initiative histories were kept (issue 13, defects 2 and 3): the
migration (SQLite 009, PostgreSQL 004) rebuilds each initiative's names and each merged-away or
deleted initiative's name and end from the audit, so both backends name the past as it was.

The vault is tests/data/old_vault (see its README): written by the old code, on SQLite and on
PostgreSQL. On SQLite the old code handed the merged-away `gamma`'s id out again to `epsilon`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.export import archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from kaeru.storage.migrate import load_migrations
from tests.backends import VaultSpec, drop_vault, new_vault
from tests.export.test_lifecycle_round_trip import World, assert_round_trip
from tests.service.support import Clock

DATA = Path(__file__).parent.parent / "data" / "old_vault"
#: The last migration the old code had applied.
OLD_SCHEMA = {"sqlite": 8, "postgres": 3}


def _load_old(spec: VaultSpec) -> None:
    """Put the old code's vault where `spec` points, at the old schema, with no migration since."""
    if spec.backend == "sqlite":
        path = spec.settings().sqlite_path
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / "vault.sqlite3", path)
        return
    import psycopg

    assert spec.database_url is not None
    with psycopg.connect(spec.database_url, autocommit=True) as pg:
        pg.execute("DROP SCHEMA public CASCADE")  # the test database comes migrated: start empty
        pg.execute("CREATE SCHEMA public")
        pg.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at TEXT NOT NULL DEFAULT 'old')"
        )
        for migration in load_migrations("kaeru.storage.postgres.migrations"):
            if migration.version <= OLD_SCHEMA["postgres"]:
                pg.execute(migration.sql.encode())
                pg.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (migration.version, migration.name)
                )
        pg.execute((DATA / "postgres.sql").read_bytes())


@pytest.fixture
def old(backend: str, tmp_path: Path) -> Iterator[tuple[VaultSpec, Store, dict[str, Any]]]:
    spec = new_vault(backend, tmp_path)
    try:
        _load_old(spec)
        store = open_store(spec.settings())  # the pending migrations run here
        try:
            yield spec, store, json.loads((DATA / f"{backend}.json").read_text())
        finally:
            store.close()
    finally:
        drop_vault(spec)


def _hit(run: Any, node: str, at: str | None = None) -> tuple[list[str], bool]:
    args: dict[str, Any] = {"initiative": "alpha", "node": node}
    if at is not None:
        args["at"] = at
    answer = run("read", args)
    assert answer["state"] == "ok", answer
    hit = answer["data"]["hits"][0]
    return hit["initiatives"], hit["metadata_is_current"]


def test_the_names_before_the_migration_come_back_from_the_audit(old: tuple[VaultSpec, Store, Any]) -> None:
    spec, store, meta = old
    run = build_server(Service(store, spec.settings(), clock=Clock())).registry.run
    nodes, moments = meta["nodes"], meta["moments"]
    assert [i["name"] for i in run("initiatives", {})["data"]["initiatives"]] == ["zeta", "alpha"]
    # renamed before the migration: the old name then, exactly
    assert _hit(run, nodes["ferry"], moments["before"]) == (["proj"], True)
    assert _hit(run, nodes["ferry"], moments["renamed"]) == (["alpha"], True)
    # merged away and deleted before the migration: their real names (on SQLite gamma's id was
    # handed out again to epsilon, which once showed here)
    assert _hit(run, nodes["lighthouse"], moments["before"]) == (["gamma"], True)
    assert _hit(run, nodes["lighthouse"], moments["after"]) == (["alpha"], True)
    assert _hit(run, nodes["quarry"], moments["before"]) == (["delta"], True)
    # the initiative that got the reused id, before and after its own rename
    assert _hit(run, nodes["meadow"], moments["epsilon"]) == (["epsilon"], True)
    assert _hit(run, nodes["meadow"]) == (["zeta"], True)
    trail = run("trail", {"initiative": "alpha", "node": nodes["lighthouse"], "kind": "history"})
    assert [e["node"]["initiatives"] for e in trail["data"]["entries"]][:1] == [["gamma"]]
    # a node forgotten in gamma keeps gamma's id, which on SQLite epsilon got again
    trail = run("trail", {"initiative": "alpha", "node": nodes["lantern"], "kind": "history"})
    assert [e["node"]["initiatives"] for e in trail["data"]["entries"]] == [["gamma"], ["gamma"]]

    with store.read() as session:
        ended = sorted((e.name, e.created_at, e.ended_at) for e in session.ended_initiatives())
        live = {i.name: i.id for i in session.all_initiatives()}
        history = session.name_history([live["alpha"], live["zeta"]])
        ended_ids = {e.id for e in session.ended_initiatives()}
    assert ended == [
        ("delta", "2026-05-01T09:00:30.000000Z", "2026-05-01T09:02:10.000000Z"),
        ("gamma", "2026-05-01T09:00:10.000000Z", "2026-05-01T09:02:00.000000Z"),
        ("theta", "2026-05-01T09:01:00.000000Z", "2026-05-01T09:02:20.000000Z"),
    ]
    assert len(ended_ids) == 3 and not ended_ids & set(live.values()), "each id names one initiative"
    assert [(s.name, s.valid_from, s.valid_to) for s in history[live["alpha"]]] == [
        ("proj", "2026-05-01T09:00:00.000000Z", "2026-05-01T09:01:30.000000Z"),
        ("alpha", "2026-05-01T09:01:30.000000Z", None),
    ]
    assert [(s.name, s.valid_from, s.valid_to) for s in history[live["zeta"]]] == [
        ("epsilon", "2026-05-01T09:02:30.000000Z", "2026-05-01T09:03:00.000000Z"),
        ("zeta", "2026-05-01T09:03:00.000000Z", None),
    ]
    # a new initiative gets none of the old ids
    run("note", {"initiative": "omega", "text": "the orchard is pruned in march"})
    with store.read() as session:
        omega = session.initiative_by_name("omega")
    assert omega is not None and omega.id not in ended_ids | set(live.values())


def test_a_migrated_old_vault_round_trips(old: tuple[VaultSpec, Store, Any], tmp_path: Path) -> None:
    spec, store, meta = old
    clock = Clock()
    service = Service(store, spec.settings(), clock=clock)
    w = World(build_server(service).registry.run, clock)
    w.live = ["alpha", "zeta"]
    w.nodes = dict.fromkeys(meta["nodes"].values(), "alpha")
    w.moments = sorted(meta["moments"].values())
    assert_round_trip(w, spec, service, tmp_path)


def test_the_old_codes_v1_archive_of_the_same_vault_adds_nothing(
    old: tuple[VaultSpec, Store, Any], tmp_path: Path
) -> None:
    """The old code's export of this vault (version 1: ended initiatives are `#<n>`, ended at their
    last revision or slot revision) imported into its migrated copy brings no nameless duplicate of
    an ended initiative: every revision naming one is already there."""
    spec, store, _ = old
    root = tmp_path / "exports"
    root.mkdir()
    shutil.copy(DATA / f"{spec.backend}.amg", root / "v1.amg")
    with store.read() as session:
        before = sorted((e.name, e.ended_at) for e in session.ended_initiatives())
    archive.import_(
        store, replace(spec.settings(), export_root=root), parse("archive", {"action": "import", "path": "v1.amg"})
    )
    with store.read() as session:
        assert sorted((e.name, e.ended_at) for e in session.ended_initiatives()) == before
        assert sorted(i.name for i in session.all_initiatives()) == ["alpha", "zeta"]


def test_the_old_codes_v1_archive_imports_with_its_renames(backend: str, tmp_path: Path) -> None:
    """The old code's export (version 1) carries no name histories, but its audit records hold the
    renames: imported into a new vault, a read before a rename names the old name, exactly."""
    spec = new_vault(backend, tmp_path)
    root = tmp_path / "exports"
    root.mkdir()
    shutil.copy(DATA / f"{backend}.amg", root / "v1.amg")
    meta = json.loads((DATA / f"{backend}.json").read_text())
    store = open_store(spec.settings())
    try:
        archive.import_(
            store, replace(spec.settings(), export_root=root), parse("archive", {"action": "import", "path": "v1.amg"})
        )
        run = build_server(Service(store, spec.settings(), clock=Clock())).registry.run
        nodes, moments = meta["nodes"], meta["moments"]
        assert _hit(run, nodes["ferry"], moments["before"]) == (["proj"], True)
        assert _hit(run, nodes["ferry"], moments["renamed"]) == (["alpha"], True)
        assert _hit(run, nodes["meadow"], moments["epsilon"]) == (["epsilon"], True)
        assert _hit(run, nodes["meadow"]) == (["zeta"], True)
    finally:
        store.close()
        drop_vault(spec)
