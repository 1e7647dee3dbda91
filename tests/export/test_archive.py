"""Archives: amg is lossless (export → import → export is byte-identical), imports are idempotent,
markdown is deterministic, paths stay inside the export root, and vaults copy across backends."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.export import archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault


def _populate(service: Service) -> None:
    run = build_server(service).registry.run
    a = run("note", {"initiative": "alpha", "text": "the vault uses WAL", "tags": ["storage"]})["data"]["primary"]["id"]
    b = run(
        "note",
        {
            "initiative": "alpha",
            "text": "stdio servers share one file",
            "link_to": a,
            "edge_type": "causal",
            "weight": 0.9,
            "options": {"slot": "handoff"},
        },
    )["data"]["primary"]["id"]
    run(
        "claim",
        {
            "initiative": "alpha",
            "text": "WAL scales to 8 writers",
            "evidence": {"method": "soak test"},
            "initial_status": "supported",
        },
    )
    run("evolve", {"initiative": "alpha", "mode": "supersede", "source": a, "new_body": "the vault uses WAL2"})
    run("revise", {"initiative": "alpha", "node": b, "patch": {"description": "why one file works"}})
    run("note", {"initiative": "beta", "text": "an unrelated project note"})
    gone = run("note", {"initiative": "beta", "text": "to be forgotten"})["data"]["primary"]["id"]
    run("forget", {"initiative": "beta", "node": gone, "reason": "test"})
    run("initiative", {"initiative": "alpha", "action": "set_board", "columns": [{"key": "open"}, {"key": "done"}]})


def _settings(vault: VaultSpec, root: Path) -> Any:
    return replace(vault.settings(), export_root=root)


def test_amg_round_trip_is_byte_identical(service: Service, vault: VaultSpec, tmp_path: Path) -> None:
    _populate(service)
    root = tmp_path / "exports"
    first = archive.export(
        service.store, _settings(vault, root), parse("archive", {"action": "export", "path": "one.amg"})
    )
    other = new_vault(vault.backend, tmp_path)
    store = open_store(other.settings())
    try:
        imported = archive.import_(
            store, _settings(other, root), parse("archive", {"action": "import", "path": "one.amg"})
        )
        assert imported.state == "applied"
        again = archive.import_(
            store, _settings(other, root), parse("archive", {"action": "import", "path": "one.amg"})
        )
        assert again.state == "unchanged", "importing the same archive twice changes nothing"
        second = archive.export(
            store, _settings(other, root), parse("archive", {"action": "export", "path": "two.amg"})
        )
    finally:
        store.close()
        drop_vault(other)
    assert (root / "one.amg").read_bytes() == (root / "two.amg").read_bytes()
    assert first.artifacts[0]["sha256"] == second.artifacts[0]["sha256"]
    assert first.artifacts[0]["nodes"] >= 7 and first.artifacts[0]["edges"] >= 3


def test_an_imported_vault_answers_like_the_original(service: Service, vault: VaultSpec, tmp_path: Path) -> None:
    _populate(service)
    root = tmp_path / "exports"
    archive.export(service.store, _settings(vault, root), parse("archive", {"action": "export", "path": "v.amg.gz"}))
    other = new_vault(vault.backend, tmp_path)
    store = open_store(other.settings())
    try:
        archive.import_(store, _settings(other, root), parse("archive", {"action": "import", "path": "v.amg.gz"}))
        copy = Service(store, other.settings())
        for args in (
            {"initiatives": ["alpha"], "text": "vault WAL"},
            {"initiatives": ["alpha", "beta"], "text": "note"},
        ):
            assert [h.node.id for h in copy.search(parse("search", args)).hits] == [
                h.node.id for h in service.search(parse("search", args)).hits
            ]
        state = build_server(copy).registry.run("current_state", {"initiative": "alpha", "slot": "handoff"})
        assert state["data"]["status"] == "current"
    finally:
        store.close()
        drop_vault(other)


def test_markdown_export_is_deterministic_and_keeps_weights(service: Service, vault: VaultSpec, tmp_path: Path) -> None:
    _populate(service)
    root = tmp_path / "exports"
    archive.export(
        service.store,
        _settings(vault, root),
        parse("archive", {"action": "export", "path": "md1", "format": "markdown"}),
    )
    archive.export(
        service.store,
        _settings(vault, root),
        parse("archive", {"action": "export", "path": "md2", "format": "markdown"}),
    )
    files1 = {p.relative_to(root / "md1"): p.read_bytes() for p in (root / "md1").rglob("*.md")}
    files2 = {p.relative_to(root / "md2"): p.read_bytes() for p in (root / "md2").rglob("*.md")}
    assert files1 == files2
    assert {Path("README.md"), Path("INDEX.md"), Path("LOG.md")} <= set(files1)
    pages = "\n".join(v.decode() for k, v in files1.items() if k.parts[0] in ("operational", "archival"))
    assert "causal (0.9) → [[" in pages and "supersedes (1) → [[" in pages
    assert "to be forgotten" not in pages


def test_a_markdown_export_into_a_used_folder_replaces_its_pages_and_keeps_the_rest(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    """Exporting again into a folder: each page is replaced by the new one, a file of the user's
    there is left alone, and the hidden folder the pages were written to first is gone (decision
    166)."""
    _populate(service)
    root = tmp_path / "exports"
    folder = root / "notes"
    (folder / "operational").mkdir(parents=True)
    (folder / "mine.txt").write_text("my own file")
    (folder / "README.md").write_text("an old export's readme")
    (folder / "operational" / "old-page.md").write_text("a page of an older export")
    archive.export(
        service.store,
        _settings(vault, root),
        parse("archive", {"action": "export", "path": "notes", "format": "markdown"}),
    )
    assert (folder / "mine.txt").read_text() == "my own file"
    assert (folder / "operational" / "old-page.md").read_text() == "a page of an older export"
    assert (folder / "README.md").read_text() != "an old export's readme"
    assert {"INDEX.md", "LOG.md"} <= {p.name for p in folder.iterdir()}
    assert not [p for p in folder.rglob("*") if p.name.startswith(".")]


def test_export_paths_stay_inside_the_root(service: Service, vault: VaultSpec, tmp_path: Path) -> None:
    from kaeru.errors import PathNotAllowed

    for path in ("../escape.amg", "/etc/kaeru.amg", "a/../../b.amg"):
        with pytest.raises(PathNotAllowed):
            archive.export(
                service.store,
                _settings(vault, tmp_path / "exports"),
                parse("archive", {"action": "export", "path": path}),
            )


def test_an_export_blocked_by_what_is_in_the_root_names_it(service: Service, vault: VaultSpec, tmp_path: Path) -> None:
    settings = _settings(vault, tmp_path / "exports")

    def refused(path: str, fmt: str) -> str:
        with pytest.raises(KaeruError) as caught:
            archive.export(service.store, settings, parse("archive", {"action": "export", "path": path, "format": fmt}))
        assert caught.value.code == "invalid_argument" and caught.value.field == "path"
        return caught.value.message

    archive.export(service.store, settings, parse("archive", {"action": "export", "path": "x.amg"}))
    archive.export(service.store, settings, parse("archive", {"action": "export", "path": "md", "format": "markdown"}))
    assert "'x.amg' is a file, so it cannot hold" in refused("x.amg/inner.amg", "amg")
    assert "'x.amg' is a file, so it cannot hold" in refused("x.amg/deeper/inner.amg", "amg")
    assert "'x.amg' is a file, and a markdown export writes a folder there" in refused("x.amg", "markdown")
    assert "it is a folder, and an amg export writes one file" in refused("md", "amg")


def test_copy_to_the_other_backend_and_back(service: Service, vault: VaultSpec, tmp_path: Path) -> None:
    from tests.backends import postgres_admin_url

    if not postgres_admin_url():
        pytest.skip("copying across backends needs PostgreSQL (KAERU_TEST_DATABASE_URL)")
    _populate(service)
    other_backend = "postgres" if vault.backend == "sqlite" else "sqlite"
    middle, back = new_vault(other_backend, tmp_path), new_vault(vault.backend, tmp_path)
    stores = [open_store(middle.settings()), open_store(back.settings())]
    try:
        digest_one = archive.copy(service.store, stores[0]).digest
        digest_two = archive.copy(stores[0], stores[1]).digest
        assert digest_one == digest_two == archive.content_digest(service.store)[1]
    finally:
        for store in stores:
            store.close()
        drop_vault(middle)
        drop_vault(back)


def test_an_archive_holding_a_lone_surrogate_is_refused_whole(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    """An archive line whose JSON escapes half a surrogate pair cannot be stored as text: the
    import is refused as `invalid_argument` naming the line and the field, and writes nothing."""
    _populate(service)
    root = tmp_path / "exports"
    archive.export(service.store, _settings(vault, root), parse("archive", {"action": "export", "path": "good.amg"}))
    lines = (root / "good.amg").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"kind": "node"' in line or '"kind":"node"' in line)
    lines[at] = lines[at].replace("the vault uses WAL", "the vault uses \\ud800", 1)
    assert "\\ud800" in lines[at], "the test needs a node line holding that text"
    (root / "bad.amg").write_text("\n".join(lines) + "\n")
    other = new_vault(vault.backend, tmp_path)
    store = open_store(other.settings())
    try:
        with pytest.raises(Exception) as refused:
            archive.import_(store, _settings(other, root), parse("archive", {"action": "import", "path": "bad.amg"}))
        assert getattr(refused.value, "code", None) == "invalid_argument"
        assert f"line {at + 1}" in str(refused.value) and "U+D800" in str(refused.value)
        with store.read() as session:
            assert session.all_initiatives() == []
    finally:
        store.close()
        drop_vault(other)


def test_a_file_that_is_no_amg_archive_is_refused_naming_why(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    """An empty file, another format's header, or a record of an unknown kind: `invalid_argument` on
    `path` saying what is wrong, and nothing written."""
    root = tmp_path / "exports"
    archive.export(service.store, _settings(vault, root), parse("archive", {"action": "export", "path": "good.amg"}))
    header = (root / "good.amg").read_text().splitlines()[0]
    (root / "empty.amg").write_text("")
    (root / "other.amg").write_text('{"format": "not-amg", "version": 2}\n')
    (root / "odd.amg").write_text(header + '\n{"kind": "spaceship", "id": "x"}\n')
    cases = {"empty.amg": "empty archive", "other.amg": "not an amg", "odd.amg": "line 2: unknown record kind"}
    settings = _settings(vault, root)
    for path, why in cases.items():
        with pytest.raises(KaeruError) as refused:
            archive.import_(service.store, settings, parse("archive", {"action": "import", "path": path}))
        assert (refused.value.code, refused.value.field) == ("invalid_argument", "path")
        assert "not a readable amg archive" in refused.value.message and why in refused.value.message, path
    with service.store.read() as session:
        assert session.all_initiatives() == []


def test_markdown_export_never_holds_the_vault_whole(sqlite_vault: VaultSpec, tmp_path: Path) -> None:
    """A markdown export holds only what orders and links its pages, never the records' text
    (decision 127): 120 notes of ~30 KB (3.6 MB of text) are exported while Python's allocations
    stay under a third of that, and every page is whole. Rendered from the archive held whole, the
    peak was twice the text. (SQLite: its export reads one row at a time; PostgreSQL's export
    cursor fetches 500 rows at a time, a window this test's vault would fit in.)"""
    import tracemalloc

    store = open_store(sqlite_vault.settings())
    try:
        service = Service(store, sqlite_vault.settings())
        bodies = {}
        for i in range(120):
            body = f"page {i} " + " ".join(f"w{i}x{j}" for j in range(4000))
            outcome, _ = service.note(parse("note", {"initiative": "big", "name": f"Big note {i}", "text": body}))
            assert outcome.primary is not None
            bodies[f"Big note {i}"] = body
        root = tmp_path / "exports"
        settings = _settings(sqlite_vault, root)
        # A first export imports what exporting needs: the measured one allocates only what it holds.
        archive.export(store, settings, parse("archive", {"action": "export", "path": "w", "format": "markdown"}))
        tracemalloc.start()
        try:
            archive.export(store, settings, parse("archive", {"action": "export", "path": "md", "format": "markdown"}))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        store.close()
    text = sum(map(len, bodies.values()))
    assert peak < text / 3, (peak, text)
    found = [p.read_text() for p in (root / "md").rglob("big-note-*.md")]
    pages = {page.split("\n# ", 1)[1].split("\n", 1)[0]: page for page in found}
    assert len(pages) == 120
    assert all(body in pages[name] for name, body in bodies.items())


def test_markdown_pages_are_named_in_the_script_of_their_nodes(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    """A page's file name kept only ASCII letters and digits: `Größenänderung` became `gr-en-nderung`
    and a Russian or Japanese name nothing but the id's end (decision 287)."""
    for name, text in (
        ("Größenänderung der Datenbank", "geprüft"),
        ("Починили баг", "на стенде"),
        ("東京でデプロイ", "完了"),
        ("CON", "a name Windows keeps for a device"),
        ("release_notes: v1.2", "an ASCII name as before"),
    ):
        service.note(parse("note", {"initiative": "scripts", "text": text, "name": name}))
    root = tmp_path / "exports"
    archive.export(
        service.store,
        _settings(vault, root),
        parse("archive", {"action": "export", "path": "md", "format": "markdown"}),
    )
    pages = {p.stem for p in (root / "md").rglob("*.md")} - {"README", "INDEX", "LOG"}
    assert pages == {"größenänderung-der-datenbank", "починили-баг", "東京でデプロイ", "con-page", "release-notes-v1-2"}
    index = (root / "md" / "INDEX.md").read_text(encoding="utf-8")
    assert all(f"[[{page}]]" in index for page in pages)
