"""A re-import after the source changed, or after a person changed kaeru (the import probe, session 52).

A memory.jsonl saved with a byte-order mark imports its first entity; bytes that are not UTF-8 are
named by line. A re-import makes a node what the source now says — its kind tag and importer-set
properties too — and keeps what a person added (a reminder); another node type is a new node. A
link the source no longer has is removed, a person's link never; a relation's label is the source's
current one. A node a person forgot stays forgotten. Both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kaeru.domain.model import EdgeType, NodeType
from kaeru.export.importers import apply, memory_jsonl, notes
from kaeru.export.importers.core import MARK
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec
from tests.cli.support import kaeru
from tests.importers.test_importers import graph


def _jsonl(path: Path, records: list[dict[str, Any]], prefix: bytes = b"") -> Path:
    path.write_bytes(prefix + "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode() + b"\n")
    return path


def imported_node(service: Service, initiative: str, key: str) -> Any:
    """The live node an import made of `key` in `initiative` (None: none)."""
    with service.store.read() as session:
        found = session.initiative_by_name(initiative)
        assert found is not None
        for node in session.nodes_by_ids(session.member_ids(found.id)).values():
            if node.properties.get(MARK, {}).get("key") == key:
                return node
    return None


ALICE = {"type": "entity", "name": "Alice", "entityType": "person", "observations": ["Works at Acme"]}
BOB = {"type": "entity", "name": "Bob Müller", "entityType": "person", "observations": ["Lives in Zürich"]}


def test_a_memory_file_with_a_byte_order_mark_imports_its_first_record(vault: VaultSpec, tmp_path: Path) -> None:
    relation = {"type": "relation", "from": "Alice", "to": "Bob Müller", "relationType": "knows"}
    bom = _jsonl(tmp_path / "bom.jsonl", [ALICE, BOB, relation], prefix=b"\xef\xbb\xbf")
    run = kaeru(vault, "import-from", "memory-jsonl", str(bom), "-i", "mem", as_json=True)
    assert run.code == 0, run.stderr
    report = run.json()
    assert (report["created"], report["edges_added"]) == (2, 1), report
    assert not [i for i in report["issues"] if i["code"] == "line_skipped"], report["issues"]


def test_bytes_not_utf8_are_read_on_and_their_lines_named(vault: VaultSpec, tmp_path: Path) -> None:
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(
        json.dumps(ALICE).encode() + b"\n" + b'{"type": "entity", "name": "Caf\xe9", "observations": ["ok"]}\n'
    )
    run = kaeru(vault, "import-from", "memory-jsonl", str(latin), "-i", "latin", as_json=True)
    assert run.code == 0, run.stderr
    assert run.json()["created"] == 2  # read on: the rest of the line is the memory's
    [said] = [i for i in run.json()["issues"] if i["code"] == "not_utf8"]
    assert "line 2" in said["message"] and "line 1" not in said["message"], said


def test_a_reimport_makes_a_changed_note_what_the_source_says_and_keeps_what_a_person_added(
    service: Service, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    page = folder / "Beta.md"
    page.write_text("---\ntype: decision\ntags: [infra]\n---\n# Beta\n\nWe chose the queue.\n")
    (folder / "Gamma.md").write_text("---\ntype: strategy\n---\n# Gamma\n\nA plan.\n")
    assert apply(service, "md", notes.read_markdown(folder)).created == 2
    # A person sets a reminder on the decision in kaeru (a property the source never had).
    run = build_server(service).registry.run
    remind = {"after": "2030-01-01", "window_days": 7}
    revised = run("revise", {"initiative": "md", "node": "Beta", "patch": {"reminder": remind}})
    assert revised["state"] == "applied", revised["issues"]

    # Same node type (an episode): the kind changes, the source's gone tag goes, the person's property stays.
    page.write_text("---\ntype: observation\ntags: [ops]\n---\n# Beta\n\nWe saw the queue fill.\n")
    (folder / "Gamma.md").write_text("---\ntype: concept\n---\n# Gamma\n\nA plan, now a concept.\n")
    report = apply(service, "md", notes.read_markdown(folder))
    assert report.revised == 2
    beta = imported_node(service, "md", "Beta")
    assert "kind:observation" in beta.tags and "kind:decision" not in beta.tags, beta.tags
    assert "ops" in beta.tags and "infra" not in beta.tags, beta.tags
    assert beta.properties["reminder"] == remind
    # The importer's property follows the source: `note_type: strategy` is no longer what it says.
    assert "note_type" not in imported_node(service, "md", "Gamma").properties

    # Another node type: a new node of it, superseding the old (`test_reimport_retype`), and said.
    page.write_text("---\ntype: note\n---\n# Beta\n\nThe queue, as a note.\n")
    report = apply(service, "md", notes.read_markdown(folder))
    beta = imported_node(service, "md", "Beta")
    assert (report.revised, beta.node_type, beta.body) == (1, NodeType.CONCEPT, "The queue, as a note.")
    assert "kind:concept" in beta.tags and "kind:observation" not in beta.tags, beta.tags
    assert [i.code for i in report.issues if i.code in ("type_kept", "type_changed")] == ["type_changed"]
    assert beta.properties["note_type"] == "note" and beta.properties["reminder"] == remind
    assert apply(service, "md", notes.read_markdown(folder)).changes == 0


def test_a_link_the_source_no_longer_has_is_removed_and_a_persons_link_stays(service: Service, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "Project Alpha.md").write_text("# Project Alpha\n\nThe project.\n")
    (folder / "Jane Doe.md").write_text("# Jane Doe\n\nA person.\n")
    beta = folder / "Beta.md"
    beta.write_text("# Beta\n\n- depends_on [[Jane Doe]]\n")
    first = apply(service, "md", notes.read_markdown(folder))
    assert first.edges_added == 1
    # A person links Beta to Project Alpha in kaeru, and Jane Doe to Beta.
    run = build_server(service).registry.run
    for src, dst, edge_type in (("Beta", "Project Alpha", "refers_to"), ("Jane Doe", "Beta", "causal")):
        link = {"initiative": "md", "from": src, "to": dst, "edge_type": edge_type, "weight": 0.9}
        assert run("link", link)["state"] == "applied"

    beta.write_text("# Beta\n\nSee [[Project Alpha]].\n")
    report = apply(service, "md", notes.read_markdown(folder)).to_json()
    assert graph(service, "md").edges == {("Beta", "Project Alpha", "refers_to"), ("Jane Doe", "Beta", "causal")}
    assert (report["edges_removed"], report["edges_unchanged"], report["changes"]) == (1, 1, 2), report
    # The source saying the person's link too leaves it theirs: kept when the source drops it again.
    beta.write_text("# Beta\n\nNo links now.\n")
    report = apply(service, "md", notes.read_markdown(folder)).to_json()
    assert graph(service, "md").edges == {("Beta", "Project Alpha", "refers_to"), ("Jane Doe", "Beta", "causal")}
    with service.store.read() as session:
        assert {e.weight for e in session.live_edges([imported_node(service, "md", "Beta").id])} == {0.9}
    assert apply(service, "md", notes.read_markdown(folder)).changes == 0


def test_a_relations_label_is_the_sources_current_one(service: Service, tmp_path: Path) -> None:
    source = tmp_path / "memory.jsonl"
    lives = {"type": "relation", "from": "Alice", "to": "Bob Müller", "relationType": "lives in"}
    with _jsonl(source, [ALICE, BOB, lives]).open() as lines:
        apply(service, "mem", memory_jsonl.read(lines))
    with _jsonl(source, [ALICE, BOB, {**lives, "relationType": "visited"}]).open() as lines:
        report = apply(service, "mem", memory_jsonl.read(lines))
    assert report.edges_revised == 1
    assert graph(service, "mem").labels == {("Alice", "Bob Müller", "refers_to"): ["visited"]}
    # Another edge type: the old edge is removed, the new one added.
    with _jsonl(source, [ALICE, BOB, {**lives, "relationType": "part_of"}]).open() as lines:
        report = apply(service, "mem", memory_jsonl.read(lines)).to_json()
    assert graph(service, "mem").edges == {("Alice", "Bob Müller", EdgeType.PART_OF.value)}
    assert (report["edges_added"], report["edges_removed"]) == (1, 1)


def test_a_forgotten_item_stays_forgotten_on_a_reimport(vault: VaultSpec, tmp_path: Path) -> None:
    knows = {"type": "relation", "from": "Alice", "to": "Bob Müller", "relationType": "knows"}
    source = _jsonl(tmp_path / "memory.jsonl", [ALICE, BOB, knows])
    assert kaeru(vault, "import-from", "memory-jsonl", str(source), "-i", "mem").code == 0
    forget = {"initiative": "mem", "node": {"initiative": "mem", "name": "Bob Müller"}, "reason": "not ours"}
    assert kaeru(vault, "call", "forget", json.dumps(forget)).code == 0

    again = kaeru(vault, "import-from", "memory-jsonl", str(source), "-i", "mem", as_json=True)
    assert again.code == 0, again.stderr
    report = again.json()
    assert (report["created"], report["changes"]) == (0, 0), report
    assert report["forgotten"] == 1
    codes = {i["code"]: i["message"] for i in report["issues"]}
    assert "Bob Müller" in codes["forgotten_kept"] and "forgotten" in codes["link_skipped"], codes
    # Changed in the source: still forgotten.
    _jsonl(source, [ALICE, {**BOB, "observations": ["Moved to Basel"]}, knows])
    changed = kaeru(vault, "import-from", "memory-jsonl", str(source), "-i", "mem", as_json=True).json()
    assert (changed["created"], changed["revised"], changed.get("forgotten")) == (0, 0, 1), changed
    human = kaeru(vault, "import-from", "memory-jsonl", str(source), "-i", "mem")
    assert "1 kept forgotten" in human.stdout and "forgotten_kept" in human.stderr
