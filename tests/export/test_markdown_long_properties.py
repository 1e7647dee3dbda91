"""A markdown export tells its own pages from a person's files by their front matter and `# name`
line (decision 166); a page's `properties:` line (what says which rules apply and what a node is)
can be megabytes — a `url` that is a `data:` URL. Such a line pushed the `# name` past the part of
the file that was read, so the page of a node forgotten since was not told as the export's own and
stayed beside the live ones (review of session 54). Both backends."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from kaeru.api.requests import parse
from kaeru.export import archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec


def _export(service: Service, vault: VaultSpec, root: Path) -> list[str]:
    """The issues' messages of a markdown export of initiative `t` into `root/md`."""
    args: dict[str, Any] = {"action": "export", "path": "md", "format": "markdown", "initiatives": ["t"]}
    done = archive.export(service.store, replace(vault.settings(), export_root=root), parse("archive", args))
    assert done.state == "applied", done
    return [i.message for i in done.issues if i.code == "pages_removed"]


def test_a_page_with_a_long_properties_line_goes_when_its_node_is_forgotten(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    run = build_server(service).registry.run
    for name, size in (("small", 100), ("big", 70_000), ("huge", 3_000_000), ("kept", 70_000)):
        url = "data:text/plain;base64," + "A" * size
        done = run("note", {"initiative": "t", "kind": "reference", "name": name, "text": "a clip", "url": url})
        assert done["state"] == "applied", done
    root = tmp_path / "exports"
    assert _export(service, vault, root) == []
    folder = root / "md"
    pages = {p.stem: p for p in folder.glob("*/*/*.md")}
    assert set(pages) == {"small", "big", "huge", "kept"}
    assert len(pages["huge"].read_text()) > 3_000_000
    # The person's own file beside them, holding a line as long: not the export's, so it stays.
    mine = pages["kept"].parent / "mine.md"
    mine.write_text(pages["kept"].read_text().replace("# kept", "# my own clip"))

    for name in ("small", "big", "huge"):
        assert run("forget", {"initiative": "t", "node": name, "reason": "gone"})["state"] == "applied"
    [said] = _export(service, vault, root)
    assert "removed 3 page(s)" in said, said
    assert sorted(p.name for p in folder.glob("*/*/*.md")) == ["kept.md", "mine.md"]
