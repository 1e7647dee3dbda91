"""Every page of a markdown export has a name of its own, across the whole export, as the file
systems people use compare names: a wiki link names a page by its name alone.

A node renamed `dup-<tail>` (the last 8 hex digits of another node's id) met the name that other
node's page took when it was the second `dup`: both pages went to one file, the later over the
other (the export said 3 nodes, the folder held 2 pages, INDEX.md listed one link twice) — or, in
another type's folder, two files of one name a link could not tell apart. Names that NTFS or APFS
hold as one file (`οδος`, `οδοσ`: one when case-folded) were written as two, and `com¹` — a device
name on Windows — as a page. Both backends."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from pathlib import Path

import pytest

from kaeru.api.requests import parse
from kaeru.export import archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec


def _export(service: Service, vault: VaultSpec, root: Path) -> Path:
    args = {"action": "export", "path": "notes", "format": "markdown"}
    done = archive.export(service.store, replace(vault.settings(), export_root=root), parse("archive", args))
    assert done.state == "applied"
    return root / "notes"


def _pages(folder: Path) -> dict[str, str]:
    """The node id of each page, by its path."""
    found = {}
    for page in folder.glob("*/*/*.md"):
        match = re.search(r'^id: "([^"]+)"$', page.read_text(), re.MULTILINE)
        assert match is not None, page
        found[page.relative_to(folder).as_posix()] = match.group(1)
    return found


def _file_system_name(path: str) -> str:
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", Path(path).stem).casefold())


@pytest.mark.parametrize("kind", ["observation", "decision"], ids=["same-folder", "other-folder"])
def test_a_node_named_like_another_pages_tailed_name_keeps_its_own_page(
    service: Service, vault: VaultSpec, tmp_path: Path, kind: str
) -> None:
    run = build_server(service).registry.run

    def note(name: str, text: str, of: str = "observation") -> str:
        done = run("note", {"initiative": "t", "kind": of, "name": name, "text": text})
        assert done["state"] == "applied", done
        return str(done["data"]["primary"]["id"])

    first = note("placeholder", "C: written first, renamed later", kind)
    note("dup", "A: the first dup")
    second = note("dup", "B: the second dup")
    tail = second.replace("-", "")[-8:]
    renamed = run("revise", {"initiative": "t", "node": {"id": first}, "patch": {"name": f"dup-{tail}"}})
    assert renamed["state"] == "applied", renamed

    folder = _export(service, vault, tmp_path / "exports")
    pages = _pages(folder)
    assert len(pages) == 3 and len(set(pages.values())) == 3, pages
    stems = [_file_system_name(rel) for rel in pages]
    assert len(set(stems)) == 3, stems
    links = re.findall(r"^- \[\[([^\]]+)\]\]", (folder / "INDEX.md").read_text(), re.MULTILINE)
    assert sorted(links) == sorted(Path(rel).stem for rel in pages)


def test_names_one_file_on_windows_or_macos_get_pages_of_their_own(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    run = build_server(service).registry.run
    names = ["Οδος", "Οδοσ", "com¹", "LPT²", "Index"]
    ids = {}
    for name in names:
        done = run("note", {"initiative": "t", "name": name, "text": f"a note named {name}"})
        assert done["state"] == "applied", done
        ids[name] = done["data"]["primary"]["id"]

    folder = _export(service, vault, tmp_path / "exports")
    pages = _pages(folder)
    assert sorted(pages.values()) == sorted(ids.values())
    stems = [_file_system_name(rel) for rel in pages] + ["readme", "index", "log"]
    assert len(set(stems)) == len(stems), stems
    reserved = {f"{port}{digit}" for port in ("com", "lpt") for digit in "0123456789¹²³"}
    assert not reserved & set(stems), stems


def test_an_earlier_exports_page_under_a_name_now_taken_otherwise_is_removed(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    """Exported before `log` was kept for the export's own LOG.md, and before names were compared
    case-folded, a node named `Log` had the page `log.md` and `Οδοσ` (after `Οδος`) `οδοσ.md`; now
    each takes the name with its id's tail. The earlier pages, of nodes still exported, stayed:
    two pages of one id, which `import-from kaeru-md` refused as duplicates."""
    run = build_server(service).registry.run
    for name in ("Log", "Οδος", "Οδοσ"):
        done = run("note", {"initiative": "t", "name": name, "text": f"a note named {name}"})
        assert done["state"] == "applied", done
    root = tmp_path / "exports"
    folder = _export(service, vault, root)
    pages = _pages(folder)
    # The pages as the earlier version named them, beside the ones this version wrote.
    # (Not `οδοσ.md` where it is one file with `οδος.md`: an earlier export wrote one page there.)
    for rel in pages:
        stem, earlier = Path(rel).stem, (folder / rel).with_name(Path(rel).stem.rsplit("-", 1)[0] + ".md")
        if stem.startswith(("log-", "οδοσ-")) and not earlier.exists():
            earlier.write_bytes((folder / rel).read_bytes())
    assert len(_pages(folder)) > len(pages)

    _export(service, vault, root)
    assert _pages(folder) == pages
