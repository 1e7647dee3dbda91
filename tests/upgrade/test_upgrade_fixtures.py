"""Upgrades lose nothing (issue 15): every schema version has a fixture written by the code of that
version (tests/data/upgrade/<backend>-v<NNN>, made by scripts/make_upgrade_fixture.py); the current
code opens a copy, migrates it forward, and answers the recorded `read`/`search`/`trail` calls as the
old code did, with every node revision and edge revision of the old code's archive present. Each
archive also imports into a new vault on both backends. A committed migration is never edited.

What an upgrade may change in an answer (decision 15.U2): fields the newer code added (a recorded
answer is compared on the keys it has), the order of search hits (ranking is not stored), search
hits the newer code adds as successors of a superseded match (flagged by an issue), and, before
initiative histories (SQLite 009, PostgreSQL 004), the initiative names in `trail` history, which
the old code gave as they are now and the new code gives as they were then. After importing a
version-1 archive, a revision in an ended initiative it names only `#<n>` may say its names are not
exact (decision 15.U3).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.export import archive, vault_io
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from kaeru.storage.migrate import load_migrations
from tests.backends import BACKENDS, VaultSpec
from tests.upgrade.old_vaults import fixture_database

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "upgrade"
MANIFEST = Path(__file__).parent / "migrations.sha256"
#: From these schema versions on, `trail` history names each initiative as it was named then.
NAMED_AS_THEN = {"sqlite": 9, "postgres": 4}
#: The moment the recorded calls are answered at (the workload ends on 2026-05-01).
LATER = datetime(2026, 5, 2, 9, 0, tzinfo=UTC)
#: The fields of an archive record that an upgrade or an import must keep, per kind, and its key.
KEPT = {
    "node": (
        ("id", "rev_no"),
        ("revision", "node_type", "tier", "name", "body", "description", "tags", "properties", "status"),
    ),
    "edge": (("src", "dst", "edge_type", "rev_no"), ("weight", "properties", "retracted")),
}
KEPT_TIMES = ("created_at", "recorded_at")


def schema_versions(backend: str) -> list[int]:
    return [m.version for m in load_migrations(f"kaeru.storage.{backend}.migrations")]


def fixtures(backend: str) -> list[Path]:
    """`<backend>-v<NNN>` per version, and `<backend>-v<NNN>-<commit>` for an earlier text of a
    migration that was edited before the never-edit rule (decision 15.U5), or for a commit that
    recorded a migration under a number it no longer has (decision 470)."""
    return sorted(DATA.glob(f"{backend}-v[0-9][0-9][0-9]*"))


def fixture_id(path: Path) -> str:
    return path.name


#: Vaults the current code cannot open, found by these tests (to be fixed by a new migration).
#: (`sqlite-v010-330390c`, which kept `node_revisions` where the code reads `past_revisions`, was one
#: until SQLite migration 012.)
BROKEN: dict[str, str] = {}
EVERY = [
    pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=BROKEN[p.name])) if p.name in BROKEN else p
    for b in BACKENDS
    for p in fixtures(b)
]
ARCHIVES = [p for b in BACKENDS for p in fixtures(b) if (p / "vault.amg").exists()]


def answers(fixture: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(gzip.decompress((fixture / "answers.json.gz").read_bytes()))
    return loaded


# ------------------------------------------------------------------------------------------------
# The "from now on" rules: a fixture per schema version, and committed migrations never edited.
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_schema_version_has_a_fixture_written_by_its_code(backend: str) -> None:
    for version in schema_versions(backend):
        fixture = DATA / f"{backend}-v{version:03d}"
        assert (fixture / "answers.json.gz").exists(), (
            f"{backend} schema {version:03d} has no upgrade fixture: commit the migration, then run "
            f"`python scripts/make_upgrade_fixture.py {backend} {version}`"
            + (" inside pg_virtualenv (see docs/reliability.md, Upgrades)" if backend == "postgres" else "")
            + f" and commit {fixture.relative_to(ROOT)}"
        )
        recorded = answers(fixture)
        assert (recorded["backend"], recorded["schema"]) == (backend, version)
        assert recorded["commit"][:7] in (fixture / "README.md").read_text()
        vault = "vault.sqlite3.gz" if backend == "sqlite" else "postgres.sql"
        assert (fixture / vault).exists(), f"{fixture.name} has no {vault}"
        assert (fixture / "vault.amg").exists() == recorded["archive"]
    for fixture in fixtures(backend):
        assert answers(fixture)["schema"] in schema_versions(backend), f"{fixture.name}: no such schema version"


def _migration_files() -> dict[str, str]:
    return {
        str(path.relative_to(ROOT)): hashlib.sha256(path.read_bytes()).hexdigest()
        for backend in BACKENDS
        for path in sorted((ROOT / "src" / "kaeru" / "storage" / backend / "migrations").glob("[0-9]*.*"))
        if path.suffix in (".sql", ".py")
    }


def test_committed_migrations_are_never_edited() -> None:
    pinned = dict(reversed(line.split(maxsplit=1)) for line in MANIFEST.read_text().splitlines() if line.strip())
    now = _migration_files()
    for path, digest in pinned.items():
        assert path in now, f"{path} was committed and is gone: a migration is never removed"
        assert now[path] == digest, (
            f"{path} changed after it was committed: vaults that ran it will never run it again, so "
            "restore it and add a new migration instead"
        )
    new = sorted(set(now) - set(pinned))
    assert not new, (
        f"new migration(s) {new}: pin them with `sha256sum src/kaeru/storage/*/migrations/[0-9]*.{{sql,py}} "
        "> tests/upgrade/migrations.sha256` once committed (from then on they are never edited: add a new "
        "migration instead), and write their upgrade fixtures (scripts/make_upgrade_fixture.py)"
    )


# ------------------------------------------------------------------------------------------------
# Opening the old vault with the current code.
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def old_vault(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[VaultSpec, Store]]:
    """A copy of the fixture's vault (never the committed file), opened by the current code: the
    pending migrations run here."""
    fixture: Path = request.param
    backend = answers(fixture)["backend"]
    vault_dir = tmp_path / "vault"
    vault_dir.mkdir()
    if backend == "sqlite":
        (vault_dir / "vault.sqlite3").write_bytes(gzip.decompress((fixture / "vault.sqlite3.gz").read_bytes()))
        spec = VaultSpec("sqlite", vault_dir)
        store = open_store(spec.settings())
        try:
            yield spec, store
        finally:
            store.close()
        return
    with fixture_database(fixture) as url:
        spec = VaultSpec("postgres", vault_dir, url)
        store = open_store(spec.settings())
        try:
            yield spec, store
        finally:
            store.close()


def _applied(spec: VaultSpec) -> list[tuple[int, str]]:
    """The vault's records, by number and name: a number alone does not say which migration ran
    (a record of a former numbering, decision 470)."""
    sql = "SELECT version, name FROM schema_migrations ORDER BY version"
    if spec.backend == "sqlite":
        import apsw

        db = apsw.Connection(str(spec.settings().sqlite_path))
        try:
            return [(int(row[0]), str(row[1])) for row in db.execute(sql)]
        finally:
            db.close()
    import psycopg

    assert spec.database_url is not None
    with psycopg.connect(spec.database_url) as pg:
        return [(int(row[0]), str(row[1])) for row in pg.execute(sql)]


# ------------------------------------------------------------------------------------------------
# Comparing answers.
# ------------------------------------------------------------------------------------------------


def _history(answer: dict[str, Any], names: bool, inexact: set[tuple[str, str]]) -> dict[str, Any]:
    """`trail` history without the initiative names of its entries (unless `names`), and without
    `metadata_is_current` for the revisions in `inexact` (see the module doc)."""
    answer = json.loads(json.dumps(answer))
    for entry in answer.get("data", {}).get("entries", []):
        node = entry.get("node", {})
        if (node.get("id"), node.get("revision")) in inexact:
            node.pop("metadata_is_current", None)
        if not names:
            node.pop("initiatives", None)
            entry["changes"] = [c for c in entry.get("changes", []) if c.get("field") != "initiatives"]
    return answer


def _search(old: dict[str, Any], new: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both search answers with their hits in id order, and `new` without the hits (and their
    issues) that a newer code adds as successors of a superseded match and `old` lacks."""
    old, new = json.loads(json.dumps(old)), json.loads(json.dumps(new))
    had = {h["id"] for h in old["data"]["hits"]}

    def added(issue: dict[str, Any]) -> str | None:
        words = issue["message"].split()
        if issue["code"] == "reached_through_supersession" and words[1] not in had:
            return str(words[1])
        return None

    extra = {added(i) for i in new["issues"]} - {None}
    new["issues"] = [i for i in new["issues"] if added(i) is None]
    new["data"]["hits"] = [h for h in new["data"]["hits"] if h["id"] not in extra]
    new["data"]["total"] -= len(extra)
    for answer in (old, new):
        answer["data"]["hits"].sort(key=lambda h: h["id"])
    return old, new


def _differences(old: Any, new: Any, path: str = "") -> list[str]:
    """Where `new` differs from `old` on what `old` has (keys only `new` has are newer fields)."""
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key, value in old.items():
            if key not in new:
                found.append(f"{path}/{key}: gone")
            else:
                found += _differences(value, new[key], f"{path}/{key}")
        return found
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [f"{path}: {len(old)} items, now {len(new)}: {json.dumps(old)[:300]} -> {json.dumps(new)[:300]}"]
        return [d for i, (a, b) in enumerate(zip(old, new, strict=True)) for d in _differences(a, b, f"{path}[{i}]")]
    return [] if old == new else [f"{path}: {json.dumps(old)[:200]} -> {json.dumps(new)[:200]}"]


def assert_same_answers(
    store: Store, spec: VaultSpec, recorded: dict[str, Any], inexact: set[tuple[str, str]] | None = None
) -> None:
    run = build_server(Service(store, spec.settings(), clock=lambda: LATER)).registry.run
    named_as_then = recorded["schema"] >= NAMED_AS_THEN[recorded["backend"]]
    problems = []
    for call in recorded["calls"]:
        old, new = call["answer"], run(call["tool"], call["args"])
        if old["state"] == "rejected" and [i["code"] for i in old["issues"]] == ["internal"]:
            # the old code failed (PostgreSQL schema 1's search): no answer to keep, but none to fail now
            if new["state"] == "rejected":
                problems.append(f"{call['tool']} {json.dumps(call['args'])}: still fails: {new['issues']}")
            continue
        if call["tool"] == "search":
            old, new = _search(old, new)
        elif call["tool"] == "trail" and call["args"]["kind"] == "history":
            old, new = (_history(a, named_as_then, inexact or set()) for a in (old, new))
        problems += [f"{call['tool']} {json.dumps(call['args'])}: {d}" for d in _differences(old, new)]
    assert not problems, "\n".join(problems[:40])


# ------------------------------------------------------------------------------------------------
# Every node revision and edge revision of an archive, present.
# ------------------------------------------------------------------------------------------------


def _records(lines: list[str]) -> dict[tuple[str, tuple[Any, ...]], dict[str, Any]]:
    found = {}
    for line in lines:
        record = json.loads(line)
        if record.get("kind") in KEPT:
            key, fields = KEPT[record["kind"]]
            found[(record["kind"], tuple(record[k] for k in key))] = {
                k: record[k] for k in (*fields, *KEPT_TIMES) if k in record
            }
    return found


def assert_archive_present(store: Store, amg: Path) -> None:
    old = _records(amg.read_text().splitlines())
    new = _records(vault_io.read_archive(store).lines())
    assert {kind for kind, _ in old} == set(KEPT), "the fixture's archive has nodes and edges"
    missing = [key for key in old if key not in new]
    assert not missing, f"{len(missing)} of {len(old)} records gone, e.g. {missing[:5]}"
    changed = [f"{key}: {old[key]} -> {new[key]}" for key in old if old[key] != new[key]]
    assert not changed, "\n".join(changed[:10])


# ------------------------------------------------------------------------------------------------
# The tests.
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("old_vault", EVERY, ids=fixture_id, indirect=True)
def test_the_old_codes_vault_migrates_and_answers_the_same(
    old_vault: tuple[VaultSpec, Store], request: pytest.FixtureRequest
) -> None:
    spec, store = old_vault
    fixture: Path = request.node.callspec.params["old_vault"]
    recorded = answers(fixture)
    shipped = [(m.version, m.name) for m in load_migrations(f"kaeru.storage.{spec.backend}.migrations")]
    assert _applied(spec) == shipped, "opening the old vault migrated it forward"
    assert_same_answers(store, spec, recorded)
    if recorded["archive"]:
        assert_archive_present(store, fixture / "vault.amg")


def _unnamed_revisions(amg: Path) -> set[tuple[str, str]]:
    """The node revisions a version-1 archive places in an ended initiative it names only `#<n>`:
    imported, they cannot name it, and say so (`metadata_is_current: false`)."""
    lines = amg.read_text().splitlines()
    if json.loads(lines[0])["version"] != 1:
        return set()
    records = [json.loads(line) for line in lines[1:]]
    return {
        (r["id"], r["revision"])
        for r in records
        if r["kind"] == "node" and any(name.startswith("#") for name in r["initiatives"])
    }


@pytest.mark.parametrize("fixture", ARCHIVES, ids=fixture_id)
def test_the_old_codes_archive_imports_with_the_same_answers(fixture: Path, vault: VaultSpec, tmp_path: Path) -> None:
    root = tmp_path / "exports"
    root.mkdir()
    shutil.copy(fixture / "vault.amg", root / "vault.amg")
    store = open_store(vault.settings())
    try:
        outcome = archive.import_(
            store,
            replace(vault.settings(), export_root=root),
            parse("archive", {"action": "import", "path": "vault.amg"}),
        )
        assert outcome.state == "applied", outcome
        assert_archive_present(store, fixture / "vault.amg")
        assert_same_answers(store, vault, answers(fixture), _unnamed_revisions(fixture / "vault.amg"))
    finally:
        store.close()


# ------------------------------------------------------------------------------------------------
# Both texts of SQLite migration 010 end in the same schema (migration 012, decision 16.D1).
# ------------------------------------------------------------------------------------------------


def _sqlite_schema(fixture: Path, tmp_path: Path) -> list[tuple[str, str, str]]:
    """The schema of the fixture's vault once the current code has migrated a copy of it."""
    import apsw

    vault_dir = tmp_path / fixture.name
    vault_dir.mkdir()
    (vault_dir / "vault.sqlite3").write_bytes(gzip.decompress((fixture / "vault.sqlite3.gz").read_bytes()))
    spec = VaultSpec("sqlite", vault_dir)
    open_store(spec.settings()).close()
    db = apsw.Connection(str(spec.settings().sqlite_path))
    try:
        return [
            (str(kind), str(name), str(sql))
            for kind, name, sql in db.execute("SELECT type, name, sql FROM sqlite_schema ORDER BY type, name")
        ]
    finally:
        db.close()


def test_a_vault_that_ran_the_first_text_of_sqlite_010_ends_as_one_that_ran_the_landed_text(tmp_path: Path) -> None:
    first = _sqlite_schema(DATA / "sqlite-v010-330390c", tmp_path)
    landed = _sqlite_schema(DATA / "sqlite-v010", tmp_path)
    assert "past_revisions" in {name for _, name, _ in first}
    assert "node_revisions" not in {name for _, name, _ in first}
    assert first == landed
