"""An import takes what the write path takes, and says what it did with a source's oddities.

A node's 64 tags of its own are the most `note` takes, besides the kind tag the server adds: such a
note, exported as Markdown, imports back, as does an Obsidian page of 64 tags (both were refused
"too many tags": the kind tag the reader adds was counted as the page's). 65 of the page's own are
refused, naming the page and the limit. A kaeru Markdown folder holding one `id` twice keeps the
last page read and says so. With the semantic channel on, what an import writes gets its vectors
(nothing is left for `kaeru reindex`). Both backends."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaeru.config import Settings
from kaeru.errors import KaeruError
from kaeru.export.importers import apply, notes
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.importers.test_importers import graph
from tests.semantic.test_vector_index import WordEmbedder

DATA = Path(__file__).resolve().parents[1] / "data" / "importers"
TAGS = [f"t{i}" for i in range(64)]


def _page(folder: Path, name: str, tags: list[str], body: str = "the heron waits by the pond") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f"---\ntags: [{', '.join(tags)}]\n---\n# {name[:-3]}\n\n{body}\n")


def test_a_note_of_64_tags_exported_as_markdown_imports_back(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    run = build_server(service).registry.run
    written = run("note", {"initiative": "src", "text": "a much tagged note", "tags": TAGS})
    assert written["state"] == "applied", written
    exporting = Service(service.store, Settings.from_env({**vault.env(), "KAERU_EXPORT_ROOT": str(tmp_path)}))
    exported = build_server(exporting).registry.run(
        "archive", {"action": "export", "format": "markdown", "initiatives": ["src"], "path": "export"}
    )
    assert exported["state"] == "applied", exported

    report = apply(service, "copy", notes.read_kaeru(tmp_path / "export")).to_json()
    assert report["created"] == 1
    [copied] = graph(service, "copy").nodes.values()
    tags = copied["tags"]
    assert isinstance(tags, list) and set(TAGS) <= set(tags)


def test_a_page_of_64_tags_imports_and_one_of_65_is_refused_naming_it(service: Service, tmp_path: Path) -> None:
    _page(tmp_path / "fits", "tagged.md", TAGS)
    assert apply(service, "fits", notes.read_markdown(tmp_path / "fits")).to_json()["created"] == 1

    _page(tmp_path / "over", "overtagged.md", [*TAGS, "t64"])
    with pytest.raises(KaeruError) as refused:
        apply(service, "over", notes.read_markdown(tmp_path / "over"))
    assert (refused.value.code, refused.value.field) == ("invalid_argument", "path")
    assert "overtagged.md: tags: at most 64 tags (65 given)" in refused.value.message, refused.value.message
    with service.store.read() as session:
        assert session.initiative_by_name("over") is None


def test_an_id_twice_in_a_kaeru_folder_keeps_the_last_page_and_says_so(service: Service, tmp_path: Path) -> None:
    folder = tmp_path / "kaeru-md"
    source = DATA / "kaeru-md" / "operational" / "episode" / "chose-postgresql.md"
    folder.mkdir()
    (folder / "a-first.md").write_text(source.read_text())
    (folder / "b-second.md").write_text(source.read_text().replace("We chose PostgreSQL", "We chose SQLite"))

    report = apply(service, "twice", notes.read_kaeru(folder)).to_json()
    assert report["created"] == 1
    [said] = [i for i in report["issues"] if i["code"] == "duplicate_key"]  # type: ignore[union-attr]
    assert said["message"].startswith("b-second.md: '01JBX7Q2M3N4P5R6S7T8V9W0XA' appears twice")
    [kept] = graph(service, "twice").nodes.values()
    assert "We chose SQLite" in str(kept["body"])


def test_an_import_with_the_semantic_channel_on_embeds_what_it_writes(store: Store, vault: VaultSpec) -> None:
    semantic = Service(store, vault.settings(), embedder=WordEmbedder())
    report = apply(semantic, "heron", notes.read_kaeru(DATA / "kaeru-md")).to_json()
    assert report["created"] == 3
    assert semantic.reindex() == 0, "every node the import wrote has its vector"
