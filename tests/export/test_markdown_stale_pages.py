"""A markdown export into a folder an earlier export wrote removes that export's pages of nodes it
no longer writes there — forgotten since, outside the initiatives exported now, or no longer under
a name with the id's tail — and says which; every other file stays (decision 166). A forgotten node's
page stayed beside the live ones, silently: a forgotten secret or wrong fact lived on in the copy."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from kaeru.api.requests import parse
from kaeru.export import archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.service.outcomes import MutationOutcome
from tests.backends import VaultSpec


def _export(service: Service, vault: VaultSpec, root: Path, *initiatives: str) -> MutationOutcome:
    args: dict[str, Any] = {"action": "export", "path": "notes", "format": "markdown"}
    if initiatives:
        args["initiatives"] = list(initiatives)
    return archive.export(service.store, replace(vault.settings(), export_root=root), parse("archive", args))


def _pages(folder: Path) -> dict[str, str]:
    """The export's pages by path (`<tier>/<type>/<name>.md`), the person's files left out."""
    return {
        p.relative_to(folder).as_posix(): p.read_text()
        for p in folder.glob("*/*/*.md")
        if not p.relative_to(folder).parts[0].startswith(".")
    }


def _of(pages: dict[str, str], node_id: str) -> list[str]:
    return sorted(rel for rel, text in pages.items() if f'id: "{node_id}"\n' in text)


def _removed(outcome: MutationOutcome) -> list[str]:
    return [i.message for i in outcome.issues if i.code == "pages_removed"]


def test_a_forgotten_nodes_page_goes_and_the_persons_files_stay(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    run = build_server(service).registry.run
    secret = run("note", {"initiative": "alpha", "text": "the override is the password", "name": "override"})
    secret_id = secret["data"]["primary"]["id"]
    kept = run("note", {"initiative": "alpha", "text": "deploys go through the queue", "name": "deploys"})
    kept_id = kept["data"]["primary"]["id"]
    root = tmp_path / "exports"
    folder = root / "notes"
    assert _removed(_export(service, vault, root)) == []
    first = _pages(folder)
    [secret_page] = _of(first, secret_id)
    [kept_page] = _of(first, kept_id)

    # The person's own files beside the pages: a note, a copy of a page under another name, a page
    # moved to a folder of theirs, a page in a hidden folder (Obsidian's), and an edit of a live page.
    pages = folder / Path(secret_page).parent
    (pages / "mine.md").write_text("my own note\n")
    shutil.copy(folder / secret_page, pages / "override copy.md")
    (folder / "keep").mkdir()
    shutil.copy(folder / secret_page, folder / "keep" / "override.md")
    (folder / ".obsidian" / "x").mkdir(parents=True)
    shutil.copy(folder / secret_page, folder / ".obsidian" / "x" / "override.md")
    (folder / kept_page).write_text((folder / kept_page).read_text() + "\nmy edit\n")

    run("forget", {"initiative": "alpha", "node": secret_id, "reason": "a secret"})
    again = _export(service, vault, root)
    [said] = _removed(again)
    assert secret_page in said and again.state == "applied"
    assert not (folder / secret_page).exists()
    assert "the override is the password" not in (folder / "INDEX.md").read_text() + "".join(
        t for rel, t in _pages(folder).items() if rel != f"{Path(secret_page).parent}/override copy.md"
    )
    for mine in ("mine.md", "override copy.md"):
        assert (pages / mine).exists()
    assert (folder / "keep" / "override.md").exists() and (folder / ".obsidian" / "x" / "override.md").exists()
    assert "my edit" not in (folder / kept_page).read_text()  # a live node's page is replaced, as before

    # Nothing left to remove: nothing removed, nothing said.
    assert _removed(_export(service, vault, root)) == []
    assert (pages / "mine.md").exists()


def test_a_renamed_nodes_old_page_goes_and_a_taken_name_is_passed_on(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    """Two nodes of one name: the second's page has the id's tail in its name. Renamed, a node's
    page moves; once the first is forgotten the second's page takes the plain name. Each time one
    page per node is left, under its current name."""
    run = build_server(service).registry.run
    one = run("note", {"initiative": "alpha", "text": "first of the name", "name": "release plan"})["data"]
    two = run("note", {"initiative": "alpha", "text": "second of the name", "name": "release plan"})["data"]
    one_id, two_id = one["primary"]["id"], two["primary"]["id"]
    root = tmp_path / "exports"
    folder = root / "notes"
    _export(service, vault, root)
    [two_before] = _of(_pages(folder), two_id)
    assert Path(two_before).stem != "release-plan"

    run("forget", {"initiative": "alpha", "node": one_id, "reason": "replaced"})
    said = _removed(_export(service, vault, root))
    assert _of(_pages(folder), one_id) == []
    assert [Path(p).name for p in _of(_pages(folder), two_id)] == ["release-plan.md"]
    assert len(said) == 1 and two_before in said[0]

    # Renamed, its new page is written and the old one stays: a person's copy of a page, retitled and
    # named after its new title, looks just the same, and is theirs (review of decision 477).
    run("revise", {"initiative": "alpha", "node": two_id, "patch": {"name": "launch plan"}})
    said = _removed(_export(service, vault, root))
    assert sorted(Path(p).name for p in _of(_pages(folder), two_id)) == ["launch-plan.md", "release-plan.md"]
    assert said == []


def test_a_persons_retitled_copy_of_a_page_stays(service: Service, vault: VaultSpec, tmp_path: Path) -> None:
    run = build_server(service).registry.run
    heron = run("note", {"initiative": "alpha", "text": "the heron waded", "name": "heron"})["data"]["primary"]["id"]
    root = tmp_path / "exports"
    folder = root / "notes"
    _export(service, vault, root)
    [page] = _of(_pages(folder), heron)
    copy = (folder / page).with_name("my-heron-notes.md")
    copy.write_text((folder / page).read_text().replace("# heron", "# My heron notes"))
    assert _removed(_export(service, vault, root)) == []
    assert copy.exists() and (folder / page).exists()


def test_an_export_of_fewer_initiatives_keeps_only_their_pages(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    """The folder holds one export (its README and INDEX are that export's): exported again for one
    initiative, the other initiative's pages go, and come back with the next whole export."""
    run = build_server(service).registry.run
    alpha = run("note", {"initiative": "alpha", "text": "alpha's note"})["data"]["primary"]["id"]
    beta = run("note", {"initiative": "beta", "text": "beta's note"})["data"]["primary"]["id"]
    root = tmp_path / "exports"
    folder = root / "notes"
    _export(service, vault, root)
    [beta_page] = _of(_pages(folder), beta)

    said = _removed(_export(service, vault, root, "alpha"))
    assert len(said) == 1 and beta_page in said[0]
    assert _of(_pages(folder), beta) == [] and len(_of(_pages(folder), alpha)) == 1

    assert _removed(_export(service, vault, root)) == []
    assert _of(_pages(folder), beta) == [beta_page]
