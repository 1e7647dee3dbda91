"""A link event in a node's history names who added or removed the link (decision 476 left it
open): two people share a vault, each acting under their own token's name, and `trail
kind=history` — its JSON, the compact text an agent or `kaeru call` reads — names each one's link
changes as it names their revisions. Each edge revision keeps who made it, so the actor survives
an export and an import even without the audit records; an older archive's edge records name none,
and its audit records name them instead; an archive with neither still renders its links, their
actor said to be unknown. Both backends."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kaeru.mcp.render import compact
from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault
from tests.schema_checked import checked_calls

P = "shared"
ANN = grants.Principal("ann")
BEN = grants.Principal("ben")

Run = Callable[..., dict[str, Any]]


def _as(principal: grants.Principal, run: Run, tool: str, **args: Any) -> dict[str, Any]:
    with grants.acting(principal):
        answer = run(tool, initiative=P, **args)
    assert answer["state"] == "applied", answer
    return answer


def _links_by_two(run: Run) -> dict[str, str]:
    """Notes A, B and C (ann's); then ann links A → B, ben links C → A, ben removes A → B (with a
    request id), ann reweights C → A and removes it, and ben links A → B again."""
    ids = {name: _as(ANN, run, "note", name=name, text=f"note {name}")["data"]["primary"]["id"] for name in "ABC"}

    def link(who: grants.Principal, action: str, src: str, dst: str, **more: Any) -> None:
        _as(
            who,
            run,
            "link",
            action=action,
            edge_type="refers_to",
            **{"from": {"id": ids[src]}, "to": {"id": ids[dst]}},
            **more,
        )

    link(ANN, "add", "A", "B", weight=0.6)
    link(BEN, "add", "C", "A", weight=0.5)
    link(BEN, "remove", "A", "B", request_id="ben-unlinks-1")
    link(ANN, "reweight", "C", "A", weight=0.9)
    link(ANN, "remove", "C", "A")
    link(BEN, "add", "A", "B", weight=0.7)
    return ids


#: A's link events, in its history's order: (action, direction, actor).
EXPECTED = [
    ("added", "out", "ann"),
    ("added", "in", "ben"),
    ("removed", "out", "ben"),
    ("reweighted", "in", "ann"),
    ("removed", "in", "ann"),
    ("added", "out", "ben"),
]


def _events(entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(e["action"], e["direction"], e.get("actor")) for e in entries if e["kind"] == "edge"]


def _history(run: Run, node_id: str, limit: int = 50) -> list[dict[str, Any]]:
    """Every entry of the node's history, page by page (`limit` a page), each page schema-checked."""
    entries: list[dict[str, Any]] = []
    args: dict[str, Any] = {"initiative": P, "node": {"id": node_id}, "kind": "history", "limit": limit}
    while True:
        page = run("trail", **args)
        entries += page["data"]["entries"]
        if page["continuation"] is None:
            return entries
        args = page["continuation"]["next_arguments"]


def test_each_link_event_names_who_added_or_removed_it(service: Service) -> None:
    run = checked_calls(service)  # every answer asserted on is checked against both output schemas
    ids = _links_by_two(run)
    whole = _history(run, ids["A"])
    assert _events(whole) == EXPECTED
    # Revisions name their actor as before; a link event carries its write's request id as one does.
    assert [e["actor"] for e in whole if e["kind"] == "revision"] == ["ann"]
    removed_by_ben = next(e for e in whole if e["kind"] == "edge" and e["action"] == "removed")
    assert removed_by_ben["request_id"] == "ben-unlinks-1"
    # The other end's history names the same people for the same links.
    assert _events(_history(run, ids["B"])) == [
        ("added", "in", "ann"),
        ("removed", "in", "ben"),
        ("added", "in", "ben"),
    ]
    # A page at a time (an edge's next revision on a later page) names them alike.
    assert _events(_history(run, ids["A"], limit=1)) == EXPECTED
    # The compact text (what an agent and `kaeru call trail` read) says who on each link line.
    text = compact(run("trail", initiative=P, node={"id": ids["A"]}, kind="history"))
    lines = [line for line in text.splitlines() if line.startswith("* ") and " edge " in line]
    assert [line.rsplit(" by ", 1)[-1].split()[0] for line in lines] == [actor for _, _, actor in EXPECTED]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "exports"
    path.mkdir()
    return path


def _imported_history(backend: str, tmp_path: Path, root: Path, name: str, node_id: str) -> list[dict[str, Any]]:
    """A's history in a fresh vault of `backend` that imported the archive `name`."""
    spec: VaultSpec = new_vault(backend, tmp_path)
    settings = spec.settings(export_root=root)
    store = open_store(settings)
    try:
        run = checked_calls(Service(store, settings))
        imported = run("archive", action="import", path=name)
        assert imported["state"] == "applied", imported["issues"]
        entries = _history(run, node_id)
        text = compact(run("trail", initiative=P, node={"id": node_id}, kind="history"))
        return [*entries, {"kind": "text", "text": text}]
    finally:
        store.close()
        drop_vault(spec)


def _read_lines(path: Path) -> list[str]:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode().splitlines()


def _exported(backend: str, tmp_path: Path, root: Path) -> dict[str, str]:
    """The notes' ids of `_links_by_two`, written in a vault of `backend` exported whole to `all.amg`."""
    written = new_vault(backend, tmp_path)
    settings = written.settings(export_root=root)
    store = open_store(settings)
    try:
        run = checked_calls(Service(store, settings))
        ids = _links_by_two(run)
        exported = build_server(Service(store, settings)).registry.run(
            "archive", {"action": "export", "path": "all.amg"}
        )
        assert exported["state"] == "applied", exported["issues"]
        return ids
    finally:
        store.close()
        drop_vault(written)


def _cut(root: Path, name: str, *, audit: bool, edge_actors: bool) -> str:
    """`all.amg` written again as `name`: without its audit records unless `audit`, its edge records
    without who made them (as an older kaeru wrote them) unless `edge_actors`."""
    head, *lines = _read_lines(root / "all.amg")
    header = json.loads(head)
    kept: list[str] = []
    for line in lines:
        record = json.loads(line)
        if record["kind"] == "audit" and not audit:
            continue
        if record["kind"] == "edge" and not edge_actors:
            record.pop("actor", None)
            record.pop("request_id", None)
            line = json.dumps(record)
        kept.append(line)
    if not audit:
        header["counts"]["audit"] = 0
    (root / name).write_text("\n".join([json.dumps(header), *kept]) + "\n")
    return name


def test_an_imported_vault_keeps_who_linked_even_without_the_audit_records(
    backend: str, tmp_path: Path, root: Path
) -> None:
    ids = _exported(backend, tmp_path, root)
    *entries, _ = _imported_history(backend, tmp_path, root, "all.amg", ids["A"])
    assert _events(entries) == EXPECTED
    # Each edge revision keeps who made it: an archive without the audit records (a scoped export
    # leaves out other initiatives' records; one cut by hand) still names them, request id too.
    name = _cut(root, "no-audit.amg", audit=False, edge_actors=True)
    *entries, text = _imported_history(backend, tmp_path, root, name, ids["A"])
    assert _events(entries) == EXPECTED
    removed_by_ben = next(e for e in entries if e["kind"] == "edge" and e["action"] == "removed")
    assert removed_by_ben["request_id"] == "ben-unlinks-1"
    lines = [line for line in text["text"].splitlines() if line.startswith("* ") and " edge " in line]
    assert [line.rsplit(" by ", 1)[-1].split()[0] for line in lines] == [actor for _, _, actor in EXPECTED]


def test_an_older_archive_names_link_actors_from_its_audit_records_or_says_unknown(
    backend: str, tmp_path: Path, root: Path
) -> None:
    ids = _exported(backend, tmp_path, root)
    # An older kaeru's archive: its edge records name no actor, its audit records do.
    name = _cut(root, "older.amg", audit=True, edge_actors=False)
    *entries, _ = _imported_history(backend, tmp_path, root, name, ids["A"])
    assert _events(entries) == EXPECTED
    # Neither (another program's archive, or one cut by hand): the links still render, actor unknown.
    name = _cut(root, "neither.amg", audit=False, edge_actors=False)
    *entries, text = _imported_history(backend, tmp_path, root, name, ids["A"])
    assert _events(entries) == [(action, direction, None) for action, direction, _ in EXPECTED]
    link_lines = [line for line in text["text"].splitlines() if line.startswith("* ") and " edge " in line]
    assert len(link_lines) == len(EXPECTED) and all(line.endswith("actor unknown") for line in link_lines), link_lines
