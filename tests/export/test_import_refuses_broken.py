"""An archive holding what kaeru never writes and would misread is refused by the import's first
pass, naming the line and field, with nothing written: a node's (edge's) revision numbers that do
not rise in file order, a weight outside 0–1 or not a number (NaN), an id no call can name, an
`audit_event` node, a live node in no initiative, a node whose type or tier changes. Before, most
were written; revisions 1, 5, 2 and a NaN weight failed in the write pass after earlier chunks were
committed, answered `rejected` (retryable "changed concurrently") or `internal`, the same on every
retry. A refusal that still comes after committed chunks is `partial` with the committed counts.
What kaeru does write, however unusual, still imports. Decision 463."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from bench import archives

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.errors import InvalidArgument
from kaeru.export import archive, vault_io
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault

NODES = 60
CHUNK = 10
Lines = list[dict[str, Any]]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "exports"
    path.mkdir()
    archives.write(path / "good.amg", NODES, initiative="bulk")
    return path


@pytest.fixture
def empty(
    backend: str, tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Store, Settings]]:
    monkeypatch.setattr(vault_io, "CHUNK", CHUNK)  # the damage is chunks past the first
    spec = new_vault(backend, tmp_path)
    settings = spec.settings(export_root=root)
    store = open_store(settings)
    yield store, settings
    store.close()
    drop_vault(spec)


def _records(root: Path) -> tuple[dict[str, Any], Lines]:
    lines = (root / "good.amg").read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]


def _write(root: Path, name: str, header: dict[str, Any], records: Lines) -> None:
    """The archive, its header counting what it holds (NaN written as Python's `json` writes it)."""
    counts = header["counts"]
    counts["node_revisions"] = sum(1 for r in records if r["kind"] == "node")
    counts["edge_revisions"] = sum(1 for r in records if r["kind"] == "edge")
    text = "\n".join(json.dumps(r, sort_keys=True) for r in [header, *records]) + "\n"
    (root / name).write_text(text, encoding="utf-8")


def _late(records: Lines, kind: str) -> int:
    """The index of a record of `kind` chunks past the first."""
    return [i for i, r in enumerate(records) if r["kind"] == kind][-3]


def _revisions(records: Lines, *changes: dict[str, Any]) -> int:
    """A late node given further revisions (each `changes` applied to a copy), right after it."""
    at = _late(records, "node")
    node = records[at]
    records[at + 1 : at + 1] = [{**node, **change} for change in changes]
    return at + 2 + len(changes)  # the line of the last one (the header is line 1)


def _falling(records: Lines) -> tuple[int, str]:
    return _revisions(records, {"rev_no": 5, "revision": "5-aaaaaaaaaaaa"}, {"rev_no": 2, "revision": "2-a"}), "rev_no"


def _repeated(records: Lines) -> tuple[int, str]:
    return _revisions(records, {}), "rev_no"


def _retyped(records: Lines) -> tuple[int, str]:
    return _revisions(records, {"rev_no": 2, "revision": "2-a", "node_type": "task", "status": "todo"}), "node_type"


def _settled(records: Lines) -> tuple[int, str]:
    return _revisions(records, {"rev_no": 2, "revision": "2-a", "tier": "archival"}), "tier"


def _changed(kind: str, field: str, value: Any) -> Callable[[Lines], tuple[int, str]]:
    def change(records: Lines) -> tuple[int, str]:
        at = _late(records, kind)
        records[at][field] = value
        return at + 2, field

    return change


def _edge_again(records: Lines) -> tuple[int, str]:
    at = _late(records, "edge")
    records.insert(at + 1, dict(records[at]))
    return at + 3, "rev_no"


BROKEN: dict[str, tuple[Callable[[Lines], tuple[int, str]], str]] = {
    "revisions-1-5-2": (_falling, "revision 2 of node"),
    "revision-repeated": (_repeated, "comes again"),
    "edge-revision-repeated": (_edge_again, "comes again"),
    "type-changes": (_retyped, "a node keeps its type"),
    "tier-changes": (_settled, "a node keeps its tier"),
    "weight-nan": (_changed("edge", "weight", float("nan")), "must be a number from 0 to 1"),
    "weight-7.5": (_changed("edge", "weight", 7.5), "must be a number from 0 to 1"),
    "id-not-a-uuid": (_changed("node", "id", "not-a-uuid"), "must be a node id"),
    "audit-event-node": (_changed("node", "node_type", "audit_event"), "must not be audit_event"),
    "live-in-no-initiative": (_changed("node", "initiatives", []), "must name an initiative"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_an_archive_breaking_the_model_is_refused_before_anything_is_written(
    empty: tuple[Store, Settings], root: Path, case: str
) -> None:
    store, settings = empty
    header, records = _records(root)
    damage, says = BROKEN[case]
    line, field = damage(records)
    _write(root, "broken.amg", header, records)

    with pytest.raises(InvalidArgument) as refused:
        archive.import_(store, settings, parse("archive", {"action": "import", "path": "broken.amg"}))
    message = refused.value.message
    assert refused.value.field == "path" and "nothing of it was written" in message, message
    assert f"line {line} {field}: " in message and says in message, message
    with store.read() as session:
        assert session.all_initiatives() == [] and sum(1 for _ in session.export_revisions(None)) == 0


def test_a_refusal_after_committed_chunks_is_partial_with_what_was_committed(
    empty: tuple[Store, Settings], root: Path
) -> None:
    """The archive checked by the first pass is replaced before the second reads it (another export
    to the same path finished in between) by one the vault refuses half way: what is in the vault
    is said, `partial`, never `rejected` — which says nothing was applied."""
    store, settings = empty
    request = parse("archive", {"action": "import", "path": "good.amg"})
    checked = archive.read_for_import(settings, request)
    header, records = _records(root)
    line, _ = _falling(records)
    _write(root, "good.amg", header, records)

    outcome = archive.import_(store, settings, request, read=checked)
    assert outcome.state == "partial", outcome
    [step] = outcome.failed_steps
    assert step.code == "revision_conflict" and step.step.startswith("records from line "), step
    assert f"line {line}" in step.message, step
    written = {c.field: c.after for c in outcome.changes}
    with store.read() as session:
        held = sum(1 for _ in session.export_revisions(None))
    assert 0 < held == written["imported.node_revisions"] < NODES


@pytest.fixture
def runs(vault: VaultSpec, tmp_path: Path) -> Iterator[tuple[Callable[..., dict[str, Any]], ...]]:
    """The test's vault and a fresh one of its backend, sharing an export root."""
    other = new_vault(vault.backend, tmp_path)
    stores = [open_store(spec.settings(export_root=tmp_path / "exports")) for spec in (vault, other)]
    try:
        yield tuple(
            build_server(Service(store, spec.settings(export_root=tmp_path / "exports"))).registry.run
            for store, spec in zip(stores, (vault, other), strict=True)
        )
    finally:
        for store in stores:
            store.close()
        drop_vault(other)


def test_what_kaeru_writes_however_unusual_still_imports(runs: tuple[Callable[..., dict[str, Any]], ...]) -> None:
    """A note dated ahead (`created_at` after `recorded_at`), a node forgotten with its deleted
    initiative (a revision in no initiative), a slot held by another initiative's node (an export of
    one initiative holds no such holder): each round-trips."""
    run, fresh = runs
    run("note", {"initiative": "alpha", "text": "the launch is planned", "occurred_at": "2099-01-01T00:00:00Z"})
    holder = run("note", {"initiative": "beta", "text": "the heron in beta"})["data"]["primary"]["id"]
    assert run("slot", {"initiative": "alpha", "slot": "handoff", "node": holder})["state"] == "applied"
    run("note", {"initiative": "gamma", "text": "a scratch note"})
    assert run("initiative", {"initiative": "gamma", "action": "delete"})["state"] == "applied"
    assert run("archive", {"action": "export", "path": "alpha.amg", "initiatives": ["alpha"]})["state"] == "applied"
    assert run("archive", {"action": "export", "path": "all.amg"})["state"] == "applied"

    for name in ("alpha.amg", "all.amg"):
        done = fresh("archive", {"action": "import", "path": name})
        assert done["state"] == "applied", done
