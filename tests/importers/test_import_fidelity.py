"""What an import says is what the source said (session 38's probe of `kaeru import-from`): a
relation is never a verdict and points the way it was said, a duplicated entity keeps every
observation, odd names are cleaned not refused, a wrong file is refused, every skipped relation is
named, the counts are true. Both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaeru.errors import InvalidArgument
from kaeru.export.importers import apply, core, memory_jsonl, notes
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec
from tests.cli.support import kaeru
from tests.importers.test_importers import DATA, graph, import_jsonl

SERVER = DATA / "server-memory"


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records))
    return path


def entity(name: str, *observations: str, kind: str = "thing") -> dict[str, object]:
    return {"type": "entity", "name": name, "entityType": kind, "observations": list(observations)}


def relation(src: str, dst: str, name: str) -> dict[str, object]:
    return {"type": "relation", "from": src, "to": dst, "relationType": name}


def codes(report: dict[str, object]) -> list[str]:
    return [i["code"] for i in report["issues"]]  # type: ignore[attr-defined]


def messages(report: dict[str, object], code: str) -> list[str]:
    return [i["message"] for i in report["issues"] if i["code"] == code]  # type: ignore[attr-defined]


def test_a_relation_is_never_a_verdict_and_an_inverse_name_turns_the_edge_round(
    service: Service, tmp_path: Path
) -> None:
    """`Kubernetes replaces Nomad` is a fact about two systems: Nomad stays current and searchable.
    `Release blocked_by Audit` is `Audit blocks Release`; `after`/`follows` point like `precedes`."""
    source = write_jsonl(
        tmp_path / "memory.jsonl",
        [
            entity("Nomad cluster", "Runs the legacy batch jobs in region eu-west", "Owned by team Atlas"),
            entity("Kubernetes cluster", "Runs new services in region eu-west"),
            entity("Release 2.0", "Ships billing v2"),
            entity("Security audit", "External pentest of billing"),
            entity("Rumour", "Billing v2 is late"),
            relation("Kubernetes cluster", "Nomad cluster", "replaces"),
            relation("Security audit", "Rumour", "refutes"),
            relation("Release 2.0", "Rumour", "contradicts"),
            relation("Security audit", "Release 2.0", "supports"),
            relation("Kubernetes cluster", "Rumour", "supersedes"),
            relation("Release 2.0", "Security audit", "blocked_by"),
            relation("Release 2.0", "Kubernetes cluster", "after"),
            relation("Nomad cluster", "Security audit", "follows"),
            relation("Kubernetes cluster", "Nomad cluster", "precedes"),
        ],
    )
    import_jsonl(service, source, "infra")
    g = graph(service, "infra")
    assert g.edges == {
        ("Kubernetes cluster", "Nomad cluster", "refers_to"),
        ("Security audit", "Rumour", "refers_to"),
        ("Release 2.0", "Rumour", "refers_to"),
        ("Security audit", "Release 2.0", "refers_to"),
        ("Kubernetes cluster", "Rumour", "refers_to"),
        ("Security audit", "Release 2.0", "blocks"),
        ("Kubernetes cluster", "Release 2.0", "temporal"),
        ("Security audit", "Nomad cluster", "temporal"),
        ("Kubernetes cluster", "Nomad cluster", "temporal"),
    }
    assert g.labels[("Kubernetes cluster", "Nomad cluster", "refers_to")] == ["replaces"]
    assert g.labels[("Security audit", "Release 2.0", "blocks")] == ["blocked_by"]
    run = build_server(service).registry.run
    found = run("search", {"initiatives": ["infra"], "text": "legacy batch jobs"})
    assert [hit["name"] for hit in found["data"]["hits"]] == ["Nomad cluster"], found
    for name in ("Nomad cluster", "Rumour"):
        hit = run("read", {"initiative": "infra", "node": name})["data"]["hits"][0]
        assert hit["currentness"] == "current", (name, hit)


def test_a_basic_memory_relation_in_markdown_turns_round_too(service: Service, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "Release.md").write_text("Release notes.\n\n- blocked_by [[Audit]]\n- replaces [[Old release]]\n")
    (folder / "Audit.md").write_text("The audit.\n")
    (folder / "Old release.md").write_text("The old release.\n")
    apply(service, "notes", notes.read_markdown(folder))
    assert graph(service, "notes").edges == {("Audit", "Release", "blocks"), ("Release", "Old release", "refers_to")}


def test_a_duplicated_entity_of_the_server_keeps_every_observation(service: Service) -> None:
    """The server kept both `Acme Corp` copies and added the later observation to the first: one
    node holds all three observations in file order, both types as tags, the first as the type."""
    report = import_jsonl(service, SERVER / "duplicate.jsonl", "crm")
    assert (report["items"], report["created"]) == (1, 1)
    [merged] = messages(report, "duplicate_key")
    assert "'Acme Corp'" in merged and "merged" in merged and "line 2" in merged
    node = graph(service, "crm").nodes["Acme Corp"]
    assert node["body"] == "Headquartered in Zurich\nSigned the renewal in June\nFounded in 1999"
    assert {"type:organization", "type:company"} <= set(node["tags"])  # type: ignore[arg-type]
    run = build_server(service).registry.run
    for word in ("Zurich", "renewal", "1999"):
        hits = run("search", {"initiatives": ["crm"], "text": word})["data"]["hits"]
        assert [h["name"] for h in hits] == ["Acme Corp"], word
    assert import_jsonl(service, SERVER / "duplicate.jsonl", "crm")["changes"] == 0


def test_imported_nodes_are_read_once_an_import_not_once_a_chunk(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading every imported node for each chunk made an import's time grow with the square of
    its size. The reads are counted (the real reader runs); the re-import in chunks of 2 finds
    every node written by earlier chunks."""
    source = write_jsonl(
        tmp_path / "memory.jsonl",
        [entity(f"Fact {i}", f"observation {i}") for i in range(7)]
        + [relation(f"Fact {i}", f"Fact {i + 1}", "causes") for i in range(6)],
    )
    calls: list[str] = []
    real = core._imported

    def counted(ctx: core.WriteContext, fmt: str) -> dict[str, core.Node]:
        calls.append(fmt)
        return real(ctx, fmt)

    monkeypatch.setattr(core, "_imported", counted)
    with source.open() as lines:
        first = apply(service, "facts", memory_jsonl.read(lines), chunk=2).to_json()
    assert (first["created"], first["edges_added"], len(calls)) == (7, 6, 1)
    changed = source.read_text().replace("observation 5", "observation five")
    source.write_text(changed)
    with source.open() as lines:
        again = apply(service, "facts", memory_jsonl.read(lines), chunk=2).to_json()
    assert (again["created"], again["revised"], again["unchanged"], again["changes"]) == (0, 1, 6, 1)
    assert len(calls) == 2


def test_a_name_with_a_line_break_a_tab_or_too_long_is_cleaned_and_said(service: Service, tmp_path: Path) -> None:
    long_name = "Meeting notes: " + "discussion of the quarterly roadmap and hiring plan " * 5
    source = write_jsonl(
        tmp_path / "memory.jsonl",
        [
            entity("Entity 0", "fact 0"),
            entity("Line one\nLine two", "odd name"),
            entity("Column\tName", "odd name"),
            entity(long_name, "odd name"),
            relation("Entity 0", "Line one\nLine two", "knows"),
        ],
    )
    report = import_jsonl(service, source, "names")
    assert report["created"] == 4 and report["edges_added"] == 1
    cleaned = messages(report, "name_cleaned")
    assert len(cleaned) == 3 and "'Line one Line two'" in cleaned[0] and "line 2" in cleaned[0]
    names = {n["name"] for n in graph(service, "names").nodes.values()}
    cut = " ".join(long_name.split())[:200].rstrip()
    assert names == {"Entity 0", "Line one Line two", "Column Name", cut}
    assert graph(service, "names").edges == {("Entity 0", "Line one\nLine two", "refers_to")}
    assert import_jsonl(service, source, "names")["changes"] == 0


def test_a_file_with_no_memory_record_is_refused_and_a_read_graph_answer_is_read(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# A project\n\nSome words.\n\n- a list\n")
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    for wrong in (readme, binary):
        with pytest.raises(InvalidArgument) as refused, wrong.open(errors="replace") as lines:
            memory_jsonl.read(lines)
        assert "no line is a memory-jsonl record: is this the right file?" in refused.value.message
    cli = kaeru(vault, "import-from", "memory-jsonl", str(readme), "-i", "p", as_json=True)
    assert cli.code == 2 and "is this the right file" in cli.stdout
    # The server's read_graph answer as an agent saves it: pretty-printed, or one record a line.
    graph_answer = {
        "entities": [
            {"name": "Alice", "entityType": "person", "observations": ["engineer at Acme"]},
            {"name": "Acme", "entityType": "org", "observations": ["a company"]},
        ],
        "relations": [{"from": "Alice", "to": "Acme", "relationType": "works_at"}],
    }
    pretty = tmp_path / "graph.json"
    pretty.write_text(json.dumps(graph_answer, indent=2))
    by_line = tmp_path / "graph-lines.json"
    by_line.write_text(
        '{\n  "entities": [\n'
        + ",\n".join(json.dumps(e) for e in graph_answer["entities"])
        + '\n  ],\n  "relations": [\n'
        + json.dumps(graph_answer["relations"][0])
        + "\n  ]\n}\n"
    )
    for initiative, dump in (("p", pretty), ("q", by_line)):
        report = import_jsonl(service, dump, initiative)
        assert (report["created"], report["edges_added"]) == (2, 1)
        assert "read_graph_file" in codes(report) and "line_skipped" not in codes(report), report
    empty = tmp_path / "empty"
    empty.mkdir()
    for reader in (notes.read_markdown, notes.read_kaeru):
        with pytest.raises(InvalidArgument) as refused_folder:
            reader(empty)
        assert "right folder" in refused_folder.value.message or "kaeru Markdown export" in refused_folder.value.message


def test_a_relation_from_an_entity_to_itself_is_named(service: Service, tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "memory.jsonl",
        [
            entity("kaeru", "a memory server"),
            entity("Acme", "a company"),
            relation("kaeru", "kaeru", "mirrors"),
            relation("kaeru", "Acme", "built_by"),
        ],
    )
    report = import_jsonl(service, source, "p")
    assert report["edges_added"] == 1
    assert messages(report, "link_skipped") == ["line 3: a relation from 'kaeru' to itself is not kept"]


def test_the_counts_are_true(service: Service, tmp_path: Path) -> None:
    """`items` counts distinct entities; a new name for a relation already imported revises that
    edge (it gets the label), it adds none."""
    records = [
        entity("Alice", "engineer", kind="person"),
        entity("Alice", "likes tea", kind="person"),
        entity("Acme", "a company", kind="org"),
        relation("Alice", "Acme", "works_at"),
    ]
    first = import_jsonl(service, write_jsonl(tmp_path / "one.jsonl", records), "p")
    assert (first["items"], first["created"], first["edges_added"]) == (2, 2, 1)
    records[-1] = relation("Alice", "Acme", "employed_by")
    second = import_jsonl(service, write_jsonl(tmp_path / "two.jsonl", records), "p")
    assert (second["items"], second["unchanged"], second["edges_added"], second["edges_revised"]) == (2, 2, 0, 1)
    assert second["changes"] == 1
    g = graph(service, "p")
    assert g.edges == {("Alice", "Acme", "refers_to")}
    assert g.labels[("Alice", "Acme", "refers_to")] == ["employed_by"]  # the source's current label (decision 487)


def test_a_note_with_a_byte_order_mark_keeps_its_front_matter(service: Service, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "contract.md").write_bytes(
        b"\xef\xbb\xbf---\ntitle: Vendor contract\ntags: [legal, acme]\n---\nRenewal is due in June.\n"
    )
    apply(service, "n", notes.read_markdown(folder))
    node = graph(service, "n").nodes["contract"]
    assert (node["name"], node["body"]) == ("Vendor contract", "Renewal is due in June.")
    assert {"legal", "acme"} <= set(node["tags"])  # type: ignore[arg-type]


def test_kaerus_own_export_read_as_markdown_is_refused_with_the_format_to_use(vault: VaultSpec) -> None:
    done = kaeru(vault, "import-from", "markdown", str(DATA / "kaeru-md"), "-i", "p")
    assert done.code == 2 and "kaeru-md" in done.stderr, done.stderr
    assert kaeru(vault, "import-from", "kaeru-md", str(DATA / "kaeru-md"), "-i", "p").code == 0
    helped = kaeru(vault, "import-from", "--help")
    assert "every observation" in helped.stdout and "turned round" in helped.stdout
