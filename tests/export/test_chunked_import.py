"""Archive import in bounded chunks (decision 15.P2): each chunk of records is its own write
transaction, so an import stopped part way leaves whole chunks behind, and running it again
completes it, writing only what is missing — the vault ends as a clean import leaves it. Both
backends; archives read as streams, never held whole (decision 15.P3)."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench import archives

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.export import archive, vault_io
from kaeru.export.vault_io import Screened
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault

NODES = 240
CHUNK = 50


class Stopped(Exception):
    """The import's process dying part way (the records stop coming)."""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "exports"
    path.mkdir()
    archives.write(path / "big.amg", NODES, initiative="bulk")
    return path


@pytest.fixture
def vaults(backend: str, tmp_path: Path, root: Path) -> Iterator[list[tuple[Store, Settings]]]:
    """Two empty vaults of the test's backend."""
    specs: list[VaultSpec] = []
    opened: list[tuple[Store, Settings]] = []
    for _ in range(2):
        spec = new_vault(backend, tmp_path)
        specs.append(spec)
        settings = spec.settings(export_root=root)
        opened.append((open_store(settings), settings))
    yield opened
    for (store, _), spec in zip(opened, specs, strict=True):
        store.close()
        drop_vault(spec)


def _count_nodes(store: Store) -> int:
    with store.read() as session:
        return sum(1 for _ in session.export_revisions(None))


def _import_audits(store: Store) -> list[Any]:
    with store.read() as session:
        return [a for a in session.export_audit(None) if a.operation == "import"]


def test_an_import_stopped_part_way_completes_when_run_again(
    vaults: list[tuple[Store, Settings]], root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vault_io, "CHUNK", CHUNK)
    (store, settings), (clean, clean_settings) = vaults
    path = root / "big.amg"

    def dying(records: Iterator[Screened]) -> Iterator[Screened]:
        for n, item in enumerate(records):
            if n == 130:  # in the third chunk: two whole chunks are in
                raise Stopped
            yield item

    with pytest.raises(Stopped):
        vault_io.write_records(store, dying(archive.screened(path, "reject")))
    # The chunks before the stop are committed; the one it interrupted is not.
    assert _count_nodes(store) == 2 * CHUNK - 1  # the first chunk also held the initiative record
    assert _import_audits(store) == []

    again = archive.import_(store, settings, parse("archive", {"action": "import", "path": "big.amg"}))
    assert again.state == "applied"
    written = {c.field: c.after for c in again.changes}
    assert written["imported.node_revisions"] == NODES - (2 * CHUNK - 1)
    assert written["imported.skipped"] == 2 * CHUNK - 1
    assert written["imported.edge_revisions"] == (NODES - 1) // 10
    assert _count_nodes(store) == NODES
    assert len(_import_audits(store)) == 1  # the run that completed it records the import

    # The vault holds exactly what a clean import of the same archive gives.
    assert (
        archive.import_(clean, clean_settings, parse("archive", {"action": "import", "path": "big.amg"})).state
        == "applied"
    )
    assert archive.content_digest(store) == archive.content_digest(clean)

    # Once complete, another run changes nothing and records nothing.
    replay = archive.import_(store, settings, parse("archive", {"action": "import", "path": "big.amg"}))
    assert replay.state == "unchanged"
    assert archive.content_digest(store) == archive.content_digest(clean)
    assert len(_import_audits(store)) == 1


def test_export_streams_the_same_bytes_a_whole_archive_gives(
    vaults: list[tuple[Store, Settings]], root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vault_io, "CHUNK", CHUNK)
    (store, settings), _ = vaults
    assert (
        archive.import_(store, settings, parse("archive", {"action": "import", "path": "big.amg"})).state == "applied"
    )
    whole = "\n".join(vault_io.read_archive(store).lines()) + "\n"
    for name in ("out.amg", "out.amg.gz"):
        done = archive.export(store, settings, parse("archive", {"action": "export", "path": name}))
        raw = (root / name).read_bytes()
        text = gzip.decompress(raw) if name.endswith(".gz") else raw
        assert text.decode() == whole
        if name.endswith(".gz"):
            # zlib's own gzip framing at level 9, mtime 0: the bytes the whole-archive export wrote, on
            # every Python (`gzip.compress` writes the OS byte as 255 from 3.13, zlib writes 3).
            assert raw == zlib.compress(whole.encode(), 9, wbits=31)
        assert done.artifacts[0]["nodes"] == NODES
        assert done.artifacts[0]["edges"] == (NODES - 1) // 10
    # The streamed archive imports as the synthetic one did: export → import → export is stable.
    assert (root / "out.amg").read_text() == whole


def test_a_line_separator_inside_a_text_survives_the_round_trip(
    vaults: list[tuple[Store, Settings]], root: Path
) -> None:
    """The archive is split into lines at `\\n` only: a text holding U+2028 or U+0085 (written raw,
    JSON does not escape them) is one record, not two broken ones."""
    from kaeru.mcp.server import build_server
    from kaeru.service import Service

    (store, settings), (other, other_settings) = vaults
    run = build_server(Service(store, settings)).registry.run
    text = "the heron\u2028waits\x85by the pond"
    assert run("note", {"initiative": "pond", "text": text})["state"] == "applied"
    assert archive.export(store, settings, parse("archive", {"action": "export", "path": "sep.amg"})).state == "applied"
    assert (
        archive.import_(other, other_settings, parse("archive", {"action": "import", "path": "sep.amg"})).state
        == "applied"
    )
    assert archive.content_digest(other) == archive.content_digest(store)
