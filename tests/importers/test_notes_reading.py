"""What `kaeru import-from markdown|kaeru-md` reads from a folder, as a user of Obsidian or of the
original kaeru wrote it: a task's status kept only in its tags, a link to a name several notes
answer to, files that are no note or not UTF-8, `[[…]]` written as code, embedded attachments, and
quoted tags (a probe of the importers, session 52)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kaeru.export.importers import notes
from tests.backends import VaultSpec
from tests.cli.support import kaeru


def _write(folder: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
    return folder


def _page(uid: str, node_type: str, tags: str, name: str, body: str) -> str:
    return f"---\nid: {uid}\ntype: {node_type}\ntier: operational\nlayer: warm\ntags: {tags}\n---\n# {name}\n\n{body}\n"


def _read(vault: VaultSpec, name: str, initiative: str) -> dict[str, Any]:
    run = kaeru(vault, "read", name, "-i", initiative, as_json=True)
    assert run.code == 0, run.stderr
    hit: dict[str, Any] = run.json()["data"]["hits"][0]
    return hit


def _import(vault: VaultSpec, fmt: str, folder: Path, initiative: str) -> dict[str, Any]:
    run = kaeru(vault, "import-from", fmt, str(folder), "-i", initiative, as_json=True)
    assert run.code == 0, run.stderr
    report: dict[str, Any] = run.json()
    return report


def test_the_original_kaerus_status_tags_are_the_imported_status(vault: VaultSpec, tmp_path: Path) -> None:
    """The original kaeru keeps a task's and a claim's status only in a `status:` tag: a done task
    was imported open, tagged both `status:done` and `status:open`; a supported claim open."""
    prefix = "0192f0a1-0000-7000-8000-00000000000"
    folder = _write(
        tmp_path / "kmd",
        {
            "operational/task/migrate.md": _page(
                f"{prefix}1", "task", "[kind:task, status:done, due:2025-10-01]", "Migrate billing DB", "To PG 16."
            ),
            "operational/task/review.md": _page(
                f"{prefix}2", "task", "[kind:task, status:in-progress]", "Review the schema", "Column by column."
            ),
            "operational/hypothesis/window.md": _page(
                f"{prefix}3", "hypothesis", "[status:supported]", "Window functions are faster", "Than self-joins."
            ),
            # A status no claim can hold: read as before (open), the tag kept as it was.
            "operational/hypothesis/odd.md": _page(
                f"{prefix}4", "hypothesis", "[status:maybe]", "Indexes always help", "Not always."
            ),
        },
    )
    report = _import(vault, "kaeru-md", folder, "heron")
    assert report["created"] == 4, report

    def status_tags(hit: dict[str, Any]) -> list[str]:
        return [t for t in hit["tags"] if t.startswith("status:")]

    done = _read(vault, "Migrate billing DB", "heron")
    assert (done["status"], status_tags(done)) == ("done", ["status:done"]), done
    assert "due:2025-10-01" in done["tags"]
    moving = _read(vault, "Review the schema", "heron")
    assert (moving["status"], status_tags(moving)) == ("in-progress", ["status:in-progress"]), moving
    claim = _read(vault, "Window functions are faster", "heron")
    assert (claim["status"], status_tags(claim)) == ("supported", ["status:supported"]), claim
    odd = _read(vault, "Indexes always help", "heron")
    assert odd["status"] == "open" and "status:maybe" in odd["tags"], odd
    # Read again, the folder changes nothing.
    assert _import(vault, "kaeru-md", folder, "heron")["changes"] == 0


def test_a_link_names_the_notes_path_then_its_file_name_nearest_the_root_then_its_title(
    vault: VaultSpec, tmp_path: Path
) -> None:
    """Obsidian's order: `[[Meeting Notes]]` is the root `Meeting Notes.md`, not `Archive/Meeting
    Notes.md` (first by sorted path); `[[zeta]]` is `zeta.md`, not `a.md` titled `zeta`; an
    explicit path still reaches the archived note. A name two notes share at one depth is linked to
    the first by path, as before (decision 327), and now said."""
    folder = _write(
        tmp_path / "vault",
        {
            "Archive/Meeting Notes.md": "Last year's notes.\n",
            "Meeting Notes.md": "This week's notes.\n",
            "a.md": "---\ntitle: zeta\n---\nA note titled zeta.\n",
            "zeta.md": "The real zeta.\n",
            "hub.md": "See [[Meeting Notes]], [[zeta]], [[Archive/Meeting Notes]] and [[Alice]].\n",
            "people/Alice.md": "Alice of people.\n",
            "team/Alice.md": "Alice of the team.\n",
        },
    )
    report = _import(vault, "markdown", folder, "notes")
    assert report["edges_added"] == 4, report
    linked = {n["body"] for n in _neighbours(vault, "hub", "notes")}
    assert linked == {"This week's notes.", "The real zeta.", "Last year's notes.", "Alice of people."}, linked
    (ambiguous,) = [i for i in report["issues"] if i["code"] == "links_ambiguous"]
    assert "[[Alice]] → people/Alice.md, not team/Alice" in ambiguous["message"], ambiguous


def _neighbours(vault: VaultSpec, name: str, initiative: str) -> list[dict[str, Any]]:
    """The nodes `name` links to, read back through the service."""
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    store = open_store(vault.settings())
    try:
        service = Service(store, vault.settings())
        with service.store.read() as session:
            found = session.initiative_by_name(initiative)
            assert found is not None
            members = session.nodes_by_ids(session.member_ids(found.id))
            (hub,) = [n for n in members.values() if n.name == name]
            return [
                {"name": members[e.dst].name, "body": members[e.dst].body}
                for e in session.live_edges([hub.id])
                if e.src == hub.id
            ]
    finally:
        store.close()


def test_a_path_that_is_no_readable_note_is_left_out_and_said(vault: VaultSpec, tmp_path: Path) -> None:
    """A broken symbolic link `*.md` and a folder named `folder.md` ended the import with a
    traceback (exit 1); bytes that are not UTF-8 became U+FFFD without a word."""
    folder = _write(
        tmp_path / "notes",
        {
            "real.md": "A real note.\n",
            "folder.md/inside.md": "A note in a folder named like a note.\n",
            "latin.md": b"# Latin\n\nCaf\xe9 au lait.\n",
        },
    )
    os.symlink(tmp_path / "nowhere.md", folder / "dangling.md")
    report = _import(vault, "markdown", folder, "notes")
    assert report["created"] == 3, report  # real, inside, latin
    issues = {(i["code"], i["message"].split(":", 1)[0]) for i in report["issues"]}
    assert {
        ("file_skipped", "dangling.md"),
        ("file_skipped", "folder.md"),
        ("not_utf8", "latin.md"),
    } <= issues, report["issues"]
    latin = _read(vault, "Latin", "notes")
    assert latin["body"] == "Caf\N{REPLACEMENT CHARACTER} au lait.", latin


def test_code_embedded_attachments_and_quoted_tags_read_as_written(tmp_path: Path) -> None:
    """`[[…]]` inside code was a link (or a missing one); `![[diagram.png]]` a missing link; the
    tag `"a,b"` two tags `"a` and `b"`, quotes and all."""
    folder = _write(
        tmp_path / "notes",
        {
            "Target.md": "The target.\n",
            "Other.md": "Another note.\n",
            "Code.md": (
                "---\n"
                'tags: [my tag, "C++", café, "#hash", "a,b", \'x, y\']\n'
                "---\n"
                "Write `[[Target]]` to link; ``a ` [[Nowhere]]`` too.\n"
                "![[diagram.png]] and ![[Other]] and [[Target]].\n"
                "```markdown\n"
                "- blocks [[Fenced]]\n"
                "```\n"
                "~~~~\n"
                "[[Tilde]]\n"
                "~~~\n"
                "[[Still fenced]]\n"
                "~~~~\n"
            ),
        },
    )
    batch = notes.read_markdown(folder)
    assert {(link.src, link.dst) for link in batch.links} == {("Code", "Other"), ("Code", "Target")}
    assert not batch.skipped, batch.skipped
    (code,) = [i for i in batch.items if i.key == "Code"]
    assert code.tags == ["kind:concept", "my tag", "C++", "café", "hash", "a,b", "x, y"]


def test_a_kaeru_pages_archival_tier_is_kept(vault: VaultSpec, tmp_path: Path) -> None:
    """`tier: archival` on a summary (a type either tier holds) was read back operational, its type's
    default; a tier kaeru has no such name for still is."""
    prefix = "0192f0a1-0000-7000-8000-00000000001"
    folder = _write(
        tmp_path / "kmd",
        {
            "archival/summary/billing.md": _page(f"{prefix}1", "summary", "[]", "Billing summary", "On PG.").replace(
                "tier: operational", "tier: archival"
            ),
            "operational/summary/queue.md": _page(f"{prefix}2", "summary", "[]", "Queue summary", "On Redis."),
            "x/concept/odd.md": _page(f"{prefix}3", "concept", "[]", "Odd tier", "Who knows.").replace(
                "tier: operational", "tier: glacial"
            ),
        },
    )
    assert _import(vault, "kaeru-md", folder, "heron")["created"] == 3
    assert _read(vault, "Billing summary", "heron")["tier"] == "archival"
    assert _read(vault, "Queue summary", "heron")["tier"] == "operational"
    assert _read(vault, "Odd tier", "heron")["tier"] == "operational"
    assert _import(vault, "kaeru-md", folder, "heron")["changes"] == 0


#: The digest an import before session 52 stored for `_page(OPEN_TASK…)`: the reader then kept
#: `status:open` among the tags and set no `status` property.
EARLIER_DIGEST = "81d973b3e44a3fca4df0f99b0b7dc001aee0dadbb54925f847eb07727110d3b8"


def test_an_open_task_an_earlier_import_wrote_imports_unchanged(vault: VaultSpec, tmp_path: Path) -> None:
    """Reading the status from the tags gave every `status:open` page a new digest: a re-import of an
    unchanged export revised each open task and claim once. `open` is what the import sets without
    a status, so the page's digest is the one an earlier import stored; the node stays open, with one
    status tag."""
    page = "---\nid: 0192f0a1-0000-7000-8000-000000000011\ntype: task\ntier: operational\nlayer: warm\n"
    page += "initiatives: [heron]\ntags: [kind:task, status:open]\n---\n# Open task\n\nSomething to do.\n"
    folder = _write(tmp_path / "kmd", {"operational/task/t1.md": page})
    [item] = notes.read_kaeru(folder).items
    assert item.digest() == EARLIER_DIGEST
    assert _import(vault, "kaeru-md", folder, "heron")["created"] == 1
    task = _read(vault, "Open task", "heron")
    assert (task["status"], [t for t in task["tags"] if t.startswith("status:")]) == ("open", ["status:open"]), task
    assert _import(vault, "kaeru-md", folder, "heron")["changes"] == 0
