"""What a re-import keeps (a review of the re-import, session 52): a relation the source names twice,
far apart, keeps both labels; a link a person made on an imported edge stays theirs; a note whose
type is kept (superseded in kaeru) keeps its type's tier; a partly read source removes no link; a task finished in kaeru
stays finished. Both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kaeru.domain.model import NodeType, default_tier
from kaeru.export.importers import apply, memory_jsonl, notes
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec
from tests.cli.support import kaeru
from tests.importers.test_importers import graph
from tests.importers.test_reimport import imported_node


def _jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _entity(name: str) -> dict[str, Any]:
    return {"type": "entity", "name": name, "entityType": "person", "observations": [f"{name} is here"]}


def _relation(src: str, dst: str, relation: str) -> dict[str, Any]:
    return {"type": "relation", "from": src, "to": dst, "relationType": relation}


def test_a_relation_said_twice_far_apart_keeps_both_labels_and_imports_unchanged_again(
    service: Service, tmp_path: Path
) -> None:
    """The memory server appends relations as they are said: `knows` first, `mentors` many lines
    later. Links are written in chunks (here of 4): each chunk gave the edge its own labels, so it
    ended labelled `mentors` only and was revised on every import."""
    people = [_entity(f"E{i}") for i in range(8)]
    between = [_relation(f"E{i}", f"E{i + 1}", "works with") for i in range(2, 7)]
    source = _jsonl(
        tmp_path / "memory.jsonl", [*people, _relation("E0", "E1", "knows"), *between, _relation("E0", "E1", "mentors")]
    )
    with source.open() as lines:
        first = apply(service, "mem", memory_jsonl.read(lines), chunk=1)
    assert graph(service, "mem").labels[("E0", "E1", "refers_to")] == ["knows", "mentors"]
    assert (first.edges_added, first.edges_revised) == (6, 0)
    with source.open() as lines:
        again = apply(service, "mem", memory_jsonl.read(lines), chunk=1)
    assert (again.changes, again.edges_unchanged) == (0, 6), again.to_json()


def test_a_persons_link_on_an_imported_edge_is_theirs_and_stays_when_the_source_drops_it(
    service: Service, tmp_path: Path
) -> None:
    """A person links what the import already linked, at the import's weight (0.5, `link`'s
    default): that answered `unchanged` and left the import's mark, so the next re-import whose
    source had dropped the link removed the person's link."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "A.md").write_text("# A\n\nSee [[B]].\n")
    (folder / "B.md").write_text("# B\n\nbee\n")
    assert apply(service, "md", notes.read_markdown(folder)).edges_added == 1
    run = build_server(service).registry.run
    link = {"initiative": "md", "from": "A", "to": "B", "edge_type": "refers_to", "weight": 0.5}
    linked = run("link", link)
    assert linked["state"] == "applied", linked
    assert run("link", link)["state"] == "unchanged"  # linked again: nothing to change

    (folder / "A.md").write_text("# A\n\nNo link now.\n")
    report = apply(service, "md", notes.read_markdown(folder))
    assert report.edges_removed == 0
    assert graph(service, "md").edges == {("A", "B", "refers_to")}


def test_a_note_whose_type_is_kept_keeps_its_types_tier(service: Service, tmp_path: Path) -> None:
    """`type: decision` → `type: reference` on a node someone superseded in kaeru: the node stays an
    episode (a revision keeps its type) and so stays in an episode's tier; it was moved to the
    reference's."""
    folder = tmp_path / "notes"
    folder.mkdir()
    page = folder / "Beta.md"
    page.write_text("---\ntype: decision\n---\n# Beta\n\nWe chose it.\n")
    apply(service, "md", notes.read_markdown(folder))
    run = build_server(service).registry.run
    assert run("note", {"initiative": "md", "name": "Beta v2", "text": "We chose another."})["state"] == "applied"
    link = {"initiative": "md", "from": "Beta v2", "to": "Beta", "edge_type": "supersedes", "weight": 1.0}
    assert run("link", link)["state"] == "applied"
    page.write_text("---\ntype: reference\n---\n# Beta\n\nA reference now.\n")
    report = apply(service, "md", notes.read_markdown(folder))
    assert "type_kept" in [i.code for i in report.issues]
    beta = imported_node(service, "md", "Beta")
    assert (beta.node_type, beta.tier) == (NodeType.EPISODE, default_tier(NodeType.EPISODE))
    assert beta.body == "A reference now."


def test_a_source_read_only_in_part_removes_no_link(vault: VaultSpec, tmp_path: Path) -> None:
    """A memory.jsonl cut short (a copy stopped mid-line) loses the relation on its last line: the
    re-import took that for the source dropping it and removed the edge."""
    records = [_entity("Alice"), _entity("Bob"), _entity("Carol"), _relation("Alice", "Bob", "knows")]
    source = _jsonl(tmp_path / "memory.jsonl", [*records, _relation("Bob", "Carol", "knows")])
    assert kaeru(vault, "import-from", "memory-jsonl", str(source), "-i", "mem").code == 0
    whole = source.read_text()
    source.write_text(whole[: whole.rindex("knows")])  # the last line, cut

    run = kaeru(vault, "import-from", "memory-jsonl", str(source), "-i", "mem", as_json=True)
    assert run.code == 0, run.stderr
    report = run.json()
    assert (report["edges_removed"], report["changes"]) == (0, 0), report
    assert report["edges_removal_skipped"] is True
    assert "line_skipped" in {i["code"] for i in report["issues"]}
    said = kaeru(vault, "import-from", "memory-jsonl", str(source), "-i", "mem")
    assert "were not removed" in said.stdout, said.stdout
    # Read whole again, the source that no longer says a link has it removed.
    _jsonl(source, records)
    again = kaeru(vault, "import-from", "memory-jsonl", str(source), "-i", "mem", as_json=True).json()
    assert (again["edges_removed"], again["edges_removal_skipped"]) == (1, False), again


def _task_page(status_tag: str, body: str, front: str = "") -> str:
    return (
        f"---\nid: 0192f0a1-0000-7000-8000-000000000011\ntype: task\ntier: operational\nlayer: warm\n{front}"
        f"tags: [kind:task, {status_tag}]\n---\n# Open task\n\n{body}\n"
    )


def test_a_task_finished_in_kaeru_stays_finished_when_its_source_changes(vault: VaultSpec, tmp_path: Path) -> None:
    """The source (an original-kaeru export) still says `status:open`; a person finished the task in
    kaeru. The source's text changing reopened it, `done_at` and all. A status the source changes
    is taken, and a task it opens loses `done_at`."""
    folder = tmp_path / "kmd"
    page = folder / "operational" / "task" / "t1.md"
    page.parent.mkdir(parents=True)
    page.write_text(_task_page("status:open", "Something to do."))
    assert kaeru(vault, "import-from", "kaeru-md", str(folder), "-i", "heron").code == 0
    done = kaeru(
        vault, "call", "task_update", json.dumps({"initiative": "heron", "task": "Open task", "status": "done"})
    )
    assert done.code == 0, done.stderr

    def task() -> dict[str, Any]:
        run = kaeru(vault, "read", "Open task", "-i", "heron", as_json=True)
        assert run.code == 0, run.stderr
        hit: dict[str, Any] = run.json()["data"]["hits"][0]
        return hit

    page.write_text(_task_page("status:open", "Something to do, edited twice."))
    report = kaeru(vault, "import-from", "kaeru-md", str(folder), "-i", "heron", as_json=True).json()
    assert report["revised"] == 1, report
    now = task()
    assert (now["status"], now["body"]) == ("done", "Something to do, edited twice."), now
    assert "done_at" in now["properties"] and "status:open" not in now["tags"], now

    # The source moves it: taken, and an open task has no `done_at`.
    page.write_text(_task_page("status:in-progress", "Something to do, edited twice."))
    assert kaeru(vault, "import-from", "kaeru-md", str(folder), "-i", "heron").code == 0
    moved = task()
    assert moved["status"] == "in-progress" and "done_at" not in moved["properties"], moved
    assert [t for t in moved["tags"] if t.startswith("status:")] == ["status:in-progress"], moved
