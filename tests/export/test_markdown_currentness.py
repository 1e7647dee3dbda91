"""A markdown export says which pages are no longer current, as a read does: a superseded decision's
page has `currentness: superseded` and `superseded_by` (its successor's page) in its front matter,
and INDEX.md marks its line; a current page's front matter is as before. A person reading the folder
saw the superseded decision as any other (`status: null`, nothing else). `import-from kaeru-md`
still reads the export: the keys added break nothing, and the successor supersedes it again.
Both backends."""

from __future__ import annotations

import re
from pathlib import Path

from kaeru.config import Settings
from kaeru.export.importers import apply, notes
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec
from tests.importers.test_importers import graph


def _front(page: Path) -> str:
    return page.read_text().split("\n---\n", 1)[0]


def test_a_superseded_page_says_so_and_imports_back(service: Service, vault: VaultSpec, tmp_path: Path) -> None:
    run = build_server(service).registry.run
    old = run("note", {"initiative": "src", "kind": "decision", "name": "Cache TTL", "text": "The TTL is 60 s."})
    new = run(
        "evolve",
        {
            "initiative": "src",
            "mode": "supersede",
            "source": {"id": old["data"]["primary"]["id"]},
            "new_body": "The TTL is 300 s.",
        },
    )
    assert new["state"] == "applied", new
    old_id, new_id = old["data"]["primary"]["id"], new["data"]["primary"]["id"]
    exporting = Service(service.store, Settings.from_env({**vault.env(), "KAERU_EXPORT_ROOT": str(tmp_path)}))
    exported = build_server(exporting).registry.run(
        "archive", {"action": "export", "format": "markdown", "initiatives": ["src"], "path": "export"}
    )
    assert exported["state"] == "applied", exported

    folder = tmp_path / "export"
    by_id = {re.search(r'^id: "(.+)"$', p.read_text(), re.MULTILINE).group(1): p for p in folder.glob("*/*/*.md")}  # type: ignore[union-attr]
    old_page, new_page = by_id[old_id], by_id[new_id]
    assert 'currentness: "superseded"' in _front(old_page)
    assert f'superseded_by: ["[[{new_page.stem}]]"]' in _front(old_page)
    assert "currentness" not in _front(new_page) and "superseded_by" not in _front(new_page)
    index = (folder / "INDEX.md").read_text()
    assert f"- [[{old_page.stem}]] (superseded by [[{new_page.stem}]])\n" in index
    assert f"- [[{new_page.stem}]]\n" in index

    report = apply(service, "copy", notes.read_kaeru(folder)).to_json()
    assert report["created"] == 2, report
    copied = graph(service, "copy")
    assert (new_id, old_id, "supersedes") in copied.edges, copied.edges
