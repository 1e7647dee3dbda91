"""A damaged archive — one field of one record missing, null or of the wrong type — is refused whole
before anything is written, naming its line and field (`invalid_argument`), however late in the
archive the damage is: it was an `internal` fault, and past the first chunk a `rejected` import
that had already written the chunks before it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench import archives

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.errors import InvalidArgument
from kaeru.export import archive, vault_io
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from tests.backends import drop_vault, new_vault

NODES = 60
CHUNK = 10


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "exports"
    path.mkdir()
    archives.write(path / "good.amg", NODES, initiative="bulk")
    audit = {
        "kind": "audit",
        "at": "2026-01-02T03:04:05.000000Z",
        "operation": "note",
        "actor": "someone",
        "request_id": "r-1",
        "affected": [],
        "changes": [{"field": "name", "before": None, "after": "n"}],
        "initiative": "bulk",
    }
    lines = (path / "good.amg").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["counts"]["audit"] += 1  # the header counts what the archive holds (`export.tally`)
    lines = [json.dumps(header), *lines[1:], json.dumps(audit)]
    (path / "good.amg").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def empty(backend: str, tmp_path: Path, root: Path) -> Iterator[tuple[Store, Settings]]:
    spec = new_vault(backend, tmp_path)
    settings = spec.settings(export_root=root)
    store = open_store(settings)
    yield store, settings
    store.close()
    drop_vault(spec)


def _damaged(root: Path, kind: str, field: str, value: Any, *, last: bool = True) -> tuple[str, int]:
    """`good.amg` with `field` of the last (or first) record of `kind` set to `value` (`...`: removed);
    the damaged file's name and the line it changed."""
    lines = (root / "good.amg").read_text(encoding="utf-8").splitlines()
    numbers = [i for i, line in enumerate(lines) if i and json.loads(line)["kind"] == kind]
    at = numbers[-1] if last else numbers[0]
    record = json.loads(lines[at])
    if value is ...:
        del record[field]
    else:
        record[field] = value
    lines[at] = json.dumps(record)
    name = f"{kind}-{field}.amg"
    (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return name, at + 1


DAMAGES = [
    ("node", "node_type", "bogus", "must be one of"),
    ("node", "id", None, "must be a string"),
    ("node", "created_at", None, "must be a timestamp"),
    ("node", "recorded_at", "yesterday", "must be a timestamp"),
    ("node", "recorded_at", "2026-13-45T09:00:00.000000Z", "must be a timestamp"),
    ("node", "tags", 12345, "must be a list of strings"),
    ("node", "rev_no", ..., "is missing"),
    ("node", "properties", [1, 2], "must be an object"),
    ("edge", "edge_type", "likes", "must be one of"),
    ("edge", "weight", "heavy", "must be a number"),
    ("audit", "operation", None, "must be a string"),
    ("audit", "changes", "all of them", "must be a list of objects"),
    ("initiative", "created_at", None, "must be a timestamp"),
]


@pytest.mark.parametrize(
    ("kind", "field", "value", "says"), DAMAGES, ids=[f"{k}.{f}-{i}" for i, (k, f, _, _) in enumerate(DAMAGES)]
)
def test_a_damaged_record_refuses_the_import_before_anything_is_written(
    empty: tuple[Store, Settings],
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    field: str,
    value: Any,
    says: str,
) -> None:
    monkeypatch.setattr(vault_io, "CHUNK", CHUNK)  # the damage is chunks past the first
    store, settings = empty
    name, line = _damaged(root, kind, field, value)
    with pytest.raises(InvalidArgument) as refused:
        archive.import_(store, settings, parse("archive", {"action": "import", "path": name}))
    assert refused.value.field == "path"
    assert f"line {line} {field}: {says}" in refused.value.message
    assert "nothing of it was written" in refused.value.message
    with store.read() as session:
        assert session.all_initiatives() == []
        assert sum(1 for _ in session.export_revisions(None)) == 0
    # The archive as it was still imports whole.
    done = archive.import_(store, settings, parse("archive", {"action": "import", "path": "good.amg"}))
    assert done.state == "applied"
    assert {c.field: c.after for c in done.changes}["imported.node_revisions"] == NODES


def test_what_a_record_may_leave_out_or_null_still_imports(
    empty: tuple[Store, Settings], root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fields the format lets be null or absent (a node's body, status, request id and actor;
    an audit record's request id) do not refuse an archive."""
    monkeypatch.setattr(vault_io, "CHUNK", CHUNK)
    store, settings = empty
    lines = (root / "good.amg").read_text(encoding="utf-8").splitlines()
    out = [lines[0]]
    for line in lines[1:]:
        record = json.loads(line)
        if record["kind"] == "node":
            record.update(body=None, status=None, request_id=None)
            record.pop("actor", None)
        elif record["kind"] == "audit":
            record["request_id"] = None
        out.append(json.dumps(record))
    (root / "lean.amg").write_text("\n".join(out) + "\n", encoding="utf-8")
    done = archive.import_(store, settings, parse("archive", {"action": "import", "path": "lean.amg"}))
    assert done.state == "applied"
    assert {c.field: c.after for c in done.changes}["imported.node_revisions"] == NODES
