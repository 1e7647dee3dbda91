"""The amg round trip after initiative lifecycles: rename, merge, delete, forget and slot take /
handoff / release, alone and in random sequences (hypothesis), on both backends.

After every sequence: export → import into an empty vault → export is byte-identical, the import
creates no initiative nobody can see in the original (no phantom from a merged or deleted one), and
`initiatives`, `read` (now and as of every step), `search` and `trail history` answer the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaeru.api.requests import parse
from kaeru.domain.timefmt import fmt
from kaeru.export import archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault
from tests.service.support import Clock

Run = Callable[[str, dict[str, Any]], dict[str, Any]]
WORDS = ("ferry", "harbour", "lantern", "orchard", "quarry", "meadow", "glacier", "tunnel")


@dataclass
class World:
    """A vault driven through the tools, with what the test knows it holds."""

    run: Run
    clock: Clock
    live: list[str] = field(default_factory=list)
    nodes: dict[str, str] = field(default_factory=dict)  # id → an initiative it was written in
    moments: list[str] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)  # names of initiatives merged away or deleted
    fresh: int = 0

    def ok(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        answer = self.run(tool, args)
        assert answer["state"] != "rejected", (tool, args, answer)
        self.moments.append(fmt(self.clock.now))
        self.clock.tick()
        return answer

    def new_name(self) -> str:
        self.fresh += 1
        return f"i{self.fresh}"

    def note(self, initiative: str, slot: str | None = None) -> str:
        text = f"the {WORDS[len(self.nodes) % len(WORDS)]} note number {len(self.nodes)}"
        args: dict[str, Any] = {"initiative": initiative, "text": text}
        if slot:
            args["options"] = {"slot": slot}
        node = str(self.ok("note", args)["data"]["primary"]["id"])
        self.nodes[node] = initiative
        if initiative not in self.live:
            self.live.append(initiative)
        return node

    def members(self, initiative: str) -> list[str]:
        hits = self.run("search", {"initiatives": [initiative], "text": "note", "limit": 50})
        return [h["id"] for h in hits["data"]["hits"]]

    def rename(self, subject: str, target: str | None = None) -> None:
        target = target or self.new_name()
        self.ok("initiative", {"initiative": subject, "action": "rename", "to": target})
        self.live[self.live.index(subject)] = target

    def merge(self, subject: str, target: str) -> None:
        self.ok("initiative", {"initiative": subject, "action": "merge", "to": target})
        self.live.remove(subject)
        self.ended.append(subject)

    def delete(self, subject: str) -> None:
        self.ok("initiative", {"initiative": subject, "action": "delete"})
        self.live.remove(subject)
        self.ended.append(subject)

    def forget(self, initiative: str, node: str) -> None:
        self.ok("forget", {"initiative": initiative, "node": node, "reason": "test"})

    def take(self, initiative: str, node: str, slot: str = "handoff") -> None:
        self.ok("slot", {"initiative": initiative, "slot": slot, "node": node})

    def release(self, initiative: str, slot: str = "handoff") -> None:
        self.ok("slot", {"initiative": initiative, "slot": slot})


@contextmanager
def world(backend: str, tmp_path: Path) -> Iterator[tuple[World, VaultSpec, Service]]:
    spec = new_vault(backend, tmp_path)
    store = open_store(spec.settings())
    clock = Clock()
    service = Service(store, spec.settings(), clock=clock)
    try:
        yield World(build_server(service).registry.run, clock), spec, service
    finally:
        store.close()
        drop_vault(spec)


def _answers(run: Run, w: World) -> dict[str, Any]:
    """What a user sees: initiatives, reads (now and as of every step), searches, trails."""
    out: dict[str, Any] = {"initiatives": run("initiatives", {})}
    listed = [i["name"] for i in out["initiatives"]["data"]["initiatives"]]
    for name in listed:
        out[f"search {name}"] = run("search", {"initiatives": [name], "text": "note", "limit": 50})
        out[f"slot {name}"] = run("current_state", {"initiative": name, "slot": "handoff"})
    scope = listed[0] if listed else "nowhere"
    for node in sorted(w.nodes):
        out[f"read {node}"] = run("read", {"initiative": scope, "node": node})
        out[f"trail {node}"] = run("trail", {"initiative": scope, "node": node, "kind": "history"})
        for moment in w.moments:
            out[f"read {node} at {moment}"] = run("read", {"initiative": scope, "node": node, "at": moment})
    for moment in w.moments:
        for name in listed:
            key = f"slot {name} at {moment}"
            out[key] = run("current_state", {"initiative": name, "slot": "handoff", "as_of": moment})
    return out


def assert_round_trip(w: World, spec: VaultSpec, service: Service, tmp_path: Path) -> None:
    root = tmp_path / "exports"
    first_settings = replace(spec.settings(), export_root=root)
    archive.export(service.store, first_settings, parse("archive", {"action": "export", "path": "one.amg"}))
    other = new_vault(spec.backend, tmp_path)
    store = open_store(other.settings())
    try:
        other_settings = replace(other.settings(), export_root=root)
        archive.import_(store, other_settings, parse("archive", {"action": "import", "path": "one.amg"}))
        again = archive.import_(store, other_settings, parse("archive", {"action": "import", "path": "one.amg"}))
        assert again.state == "unchanged", "importing the same archive twice changes nothing"
        archive.export(store, other_settings, parse("archive", {"action": "export", "path": "two.amg"}))
        copy = Service(store, other.settings(), clock=w.clock)
        assert json.dumps(_answers(build_server(copy).registry.run, w), sort_keys=True) == json.dumps(
            _answers(w.run, w), sort_keys=True
        )
    finally:
        store.close()
        drop_vault(other)
    one, two = (root / "one.amg").read_bytes(), (root / "two.amg").read_bytes()
    assert one == two
    header = json.loads(one.split(b"\n", 1)[0])
    assert header["initiatives"] == sorted(w.live), "no phantom initiative in the archive's header"


# --- one operation at a time ------------------------------------------------------------------------


def test_round_trip_after_rename(backend: str, tmp_path: Path) -> None:
    with world(backend, tmp_path) as (w, spec, service):
        w.note("alpha")
        w.rename("alpha")
        w.note(w.live[0])
        w.rename(w.live[0])
        assert_round_trip(w, spec, service, tmp_path)


def test_round_trip_after_merge_has_no_phantom(backend: str, tmp_path: Path) -> None:
    with world(backend, tmp_path) as (w, spec, service):
        first = w.note("alpha", slot="handoff")
        w.note("beta")
        w.merge("alpha", "beta")
        assert_round_trip(w, spec, service, tmp_path)
        root = tmp_path / "exports"
        archive.export(
            service.store,
            replace(spec.settings(), export_root=root),
            parse("archive", {"action": "export", "path": "m", "format": "markdown"}),
        )
        readme = (root / "m" / "README.md").read_text()
        assert "alpha" not in readme and "#" + "1" not in readme.replace("# ", "")
        trail = w.run("trail", {"initiative": "beta", "node": first, "kind": "history"})
        assert trail["data"]["entries"][0]["node"]["initiatives"] == ["alpha"], "history keeps the old membership"


def test_round_trip_after_delete(backend: str, tmp_path: Path) -> None:
    with world(backend, tmp_path) as (w, spec, service):
        only = w.note("alpha")
        w.note("beta")
        shared = w.note("beta")
        w.ok("initiative", {"initiative": "alpha", "action": "attach", "node": shared})
        w.take("alpha", shared)
        w.delete("alpha")
        assert_round_trip(w, spec, service, tmp_path)
        before = w.run("read", {"initiative": "beta", "node": only, "at": w.moments[0]})
        assert before["data"]["hits"][0]["initiatives"] == ["alpha"]
        assert before["data"]["hits"][0]["metadata_is_current"] is True


def test_round_trip_after_forget_and_reuse_of_a_deleted_name(backend: str, tmp_path: Path) -> None:
    with world(backend, tmp_path) as (w, spec, service):
        gone = w.note("alpha")
        w.note("alpha")
        w.forget("alpha", gone)
        w.delete("alpha")
        w.note("alpha")  # a new initiative under the deleted one's name
        w.forget("alpha", w.note("alpha"))
        assert_round_trip(w, spec, service, tmp_path)


def test_round_trip_after_slot_take_handoff_release(backend: str, tmp_path: Path) -> None:
    with world(backend, tmp_path) as (w, spec, service):
        a = w.note("beta")  # beta first: its internal number is lower than alpha's
        w.take("beta", a, "entrypoint")
        first = w.note("alpha", slot="handoff")
        second = w.note("alpha")
        w.take("alpha", second)
        w.take("alpha", first)
        w.release("alpha")
        w.take("alpha", second)
        w.merge("alpha", "beta")
        assert_round_trip(w, spec, service, tmp_path)


# --- random sequences -----------------------------------------------------------------------------

STEP = st.tuples(
    st.sampled_from(
        ["note", "note", "rename", "merge", "delete", "forget", "take", "release", "attach", "revise", "reuse"]
    ),
    st.integers(0, 5),
    st.integers(0, 5),
)


def _apply(w: World, step: tuple[str, int, int]) -> None:
    op, i, j = step
    if op == "reuse" and w.ended:  # a new initiative under an ended one's name
        name = w.ended[i % len(w.ended)]
        if name not in w.live:  # taken by a rename: a write to a merged name is refused (decision 333)
            fresh = w.new_name()
            w.note(fresh)
            w.rename(fresh, name)
        return
    if not w.live or op in ("note", "reuse"):
        w.note(w.live[i % len(w.live)] if w.live and i % 3 else w.new_name(), slot="handoff" if j % 4 == 0 else None)
        return
    subject = w.live[i % len(w.live)]
    others = [x for x in w.live if x != subject]
    members = w.members(subject)
    if op == "rename":
        w.rename(subject)
    elif op == "merge" and others:
        w.merge(subject, others[j % len(others)])
    elif op == "delete":
        w.delete(subject)
    elif op == "forget" and members:
        w.forget(subject, members[j % len(members)])
    elif op == "take" and members:
        w.take(subject, members[j % len(members)])
    elif op == "release" and members:
        w.release(subject)
    elif op == "revise" and members:
        node = members[j % len(members)]
        w.ok("revise", {"initiative": subject, "node": node, "patch": {"description": f"revised at step {j}"}})
    elif op == "attach" and others:
        theirs = w.members(others[j % len(others)])
        if theirs:
            w.ok("initiative", {"initiative": subject, "action": "attach", "node": theirs[0]})


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=2, max_size=12))
def test_round_trip_after_any_lifecycle(backend: str, tmp_path_factory: pytest.TempPathFactory, steps: Any) -> None:
    tmp_path = tmp_path_factory.mktemp("lifecycle")
    with world(backend, tmp_path) as (w, spec, service):
        for step in steps:
            _apply(w, step)
        assert_round_trip(w, spec, service, tmp_path)


# --- a vault merged before initiative histories were kept ---------------------------------------------


def _forget_histories(spec: VaultSpec, *more: str) -> None:
    """Put the vault back as it was before the initiative-history migration (009 / PostgreSQL 004)
    (tests/service/test_old_vault_history.py reads a vault the old code wrote), then run `more`."""
    statements = (
        "DROP TABLE initiative_names",
        "DROP TABLE initiative_ends",
        "DELETE FROM schema_migrations WHERE name = 'initiative_history'",
        *more,
    )
    if spec.backend == "sqlite":
        import apsw

        from tests.storage.shapes import sqlite_before_migration_10

        # 009 runs again, so 010 (which came after it) is undone first and runs again after it.
        sqlite_before_migration_10(spec.settings().sqlite_path)
        conn = apsw.Connection(str(spec.settings().sqlite_path))
        for sql in statements:
            conn.execute(sql)
        conn.close()
    else:
        import psycopg

        from tests.storage.shapes import postgres_before_migration_11

        assert spec.database_url is not None
        # 004 reads every revision from `node_revisions`: 011 (which came after it) is undone first.
        postgres_before_migration_11(spec.database_url)
        with psycopg.connect(spec.database_url, autocommit=True) as pg:
            for sql in statements:
                pg.execute(sql)


def test_a_vault_merged_before_the_migration_exports_without_phantoms(backend: str, tmp_path: Path) -> None:
    spec = new_vault(backend, tmp_path)
    clock = Clock()
    try:
        store = open_store(spec.settings())
        w = World(build_server(Service(store, spec.settings(), clock=clock)).registry.run, clock)
        kept = w.note("alpha", slot="handoff")
        moved = w.note("beta", slot="handoff")  # beta has the highest internal number
        w.merge("beta", "alpha")
        store.close()
        _forget_histories(spec)

        store = open_store(spec.settings())  # the migration runs again, on the old data
        service = Service(store, spec.settings(), clock=clock)
        w.run = build_server(service).registry.run
        w.note("delta")  # must not get the merged initiative's number
        before = w.run("read", {"initiative": "alpha", "node": moved, "at": w.moments[1]})["data"]["hits"][0]
        # the merge's audit row gives beta's name and end back
        assert before["initiatives"] == ["beta"] and before["metadata_is_current"] is True
        old = w.run("read", {"initiative": "alpha", "node": kept, "at": w.moments[1]})["data"]["hits"][0]
        assert old["initiatives"] == ["alpha"] and old["metadata_is_current"] is True
        assert [i["name"] for i in w.run("initiatives", {})["data"]["initiatives"]] == ["delta", "alpha"]
        assert_round_trip(w, spec, service, tmp_path)
        store.close()
    finally:
        drop_vault(spec)


def test_an_export_of_the_merge_target_alone_brings_no_phantom(backend: str, tmp_path: Path) -> None:
    with world(backend, tmp_path) as (w, spec, service):
        moved = w.note("alpha", slot="handoff")
        w.note("beta")
        w.note("gamma")
        w.merge("alpha", "beta")
        root = tmp_path / "exports"
        archive.export(
            service.store,
            replace(spec.settings(), export_root=root),
            parse("archive", {"action": "export", "path": "b.amg", "initiatives": ["beta"]}),
        )
        other = new_vault(backend, tmp_path)
        store = open_store(other.settings())
        try:
            archive.import_(
                store,
                replace(other.settings(), export_root=root),
                parse("archive", {"action": "import", "path": "b.amg"}),
            )
            run = build_server(Service(store, other.settings(), clock=w.clock)).registry.run
            assert [i["name"] for i in run("initiatives", {})["data"]["initiatives"]] == ["beta"]
            then = run("read", {"initiative": "beta", "node": moved, "at": w.moments[0]})["data"]["hits"][0]
            assert then["initiatives"] == ["alpha"] and then["metadata_is_current"] is True
        finally:
            store.close()
            drop_vault(other)


@pytest.mark.parametrize("audit", ["kept", "lost"])
def test_an_initiative_named_only_by_slot_revisions_ends_in_the_migration(
    backend: str, tmp_path: Path, audit: str
) -> None:
    """An initiative that held a slot (a node of another initiative) and was deleted before the
    migration has no node revision: the migration still ends it — by its audit (its name), or, when
    the audit holds nothing, as `#<id>` at its last slot revision — so its slot revisions export as
    an ended initiative's and import again, rather than as a live `#<id>` dropped on import."""
    spec = new_vault(backend, tmp_path)
    clock = Clock()
    try:
        store = open_store(spec.settings())
        w = World(build_server(Service(store, spec.settings(), clock=clock)).registry.run, clock)
        held = w.note("beta")
        w.take("alpha", held)
        w.live.append("alpha")
        w.release("alpha")
        w.delete("alpha")
        store.close()
        _forget_histories(spec, *(["DELETE FROM audit"] if audit == "lost" else []))

        store = open_store(spec.settings())
        service = Service(store, spec.settings(), clock=clock)
        w.run = build_server(service).registry.run
        with store.read() as session:
            ended = [(e.name, e.ended_at) for e in session.ended_initiatives()]
        if audit == "kept":
            assert ended == [("alpha", w.moments[3])]
        else:
            assert len(ended) == 1 and ended[0][0].startswith("#") and ended[0][1] == w.moments[2]
        root = tmp_path / "exports"
        archive.export(
            store, replace(spec.settings(), export_root=root), parse("archive", {"action": "export", "path": "s.amg"})
        )
        slots = [json.loads(line) for line in (root / "s.amg").read_text().splitlines() if '"kind":"slot"' in line]
        assert len(slots) == 2 and all(r["initiative_ended_at"] == ended[0][1] for r in slots)
        other = new_vault(backend, tmp_path)
        other_store = open_store(other.settings())
        try:
            archive.import_(
                other_store,
                replace(other.settings(), export_root=root),
                parse("archive", {"action": "import", "path": "s.amg"}),
            )
            archive.export(
                other_store,
                replace(other.settings(), export_root=root),
                parse("archive", {"action": "export", "path": "t.amg"}),
            )
        finally:
            other_store.close()
            drop_vault(other)
        assert (root / "s.amg").read_bytes() == (root / "t.amg").read_bytes()
        assert_round_trip(w, spec, service, tmp_path)
        store.close()
    finally:
        drop_vault(spec)
