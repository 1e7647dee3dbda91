"""Importers (issue 19): the official memory server's JSONL, Markdown notes, the original kaeru's
Markdown export — written through the tools' write path, screened, idempotent. Both backends."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from kaeru.config import Settings
from kaeru.errors import KaeruError, SecretDetected
from kaeru.export.importers import apply, memory_jsonl, notes
from kaeru.export.importers.core import MARK
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec
from tests.cli.support import kaeru

DATA = Path(__file__).resolve().parents[1] / "data" / "importers"
#: A correctly shaped fake GitHub token, which the guard finds (rule github_pat).
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@dataclass
class Graph:
    """What an initiative holds, by import key: nodes (name, body, type, tags, layer) and live edges."""

    nodes: dict[str, dict[str, object]]
    edges: set[tuple[str, str, str]]
    labels: dict[tuple[str, str, str], list[str]]


def graph(service: Service, initiative: str) -> Graph:
    with service.store.read() as session:
        found = session.initiative_by_name(initiative)
        assert found is not None
        members = session.nodes_by_ids(session.member_ids(found.id))
        key = {n.id: n.properties[MARK]["key"] for n in members.values() if MARK in n.properties}
        nodes = {
            key[n.id]: {
                "name": n.name,
                "body": n.body,
                "type": n.node_type.value,
                "tags": list(n.tags),
                "layer": n.layer.value,
            }
            for n in members.values()
            if n.id in key
        }
        edges = {
            (key[e.src], key[e.dst], e.edge_type.value)
            for e in session.live_edges(list(key))
            if e.src in key and e.dst in key
        }
        labels = {
            (key[e.src], key[e.dst], e.edge_type.value): e.properties.get("relations", [])
            for e in session.live_edges(list(key))
            if e.src in key and e.dst in key
        }
    return Graph(nodes, edges, labels)


def import_jsonl(service: Service, path: Path, initiative: str = "heron") -> dict[str, object]:
    with path.open() as lines:
        return apply(service, initiative, memory_jsonl.read(lines)).to_json()


def test_memory_jsonl_entities_become_nodes_and_relations_typed_edges(service: Service) -> None:
    report = import_jsonl(service, DATA / "memory.jsonl")
    assert (report["created"], report["edges_added"]) == (4, 3)
    assert any(i["code"] == "link_skipped" and "Nobody" in i["message"] for i in report["issues"])  # type: ignore[union-attr]
    g = graph(service, "heron")
    john = g.nodes["John_Smith"]
    assert (
        john["type"] == "entity"
        and john["body"] == "Speaks fluent Spanish\nGraduated in 2019\nPrefers morning meetings"
    )
    assert "type:person" in john["tags"]  # type: ignore[operator]
    assert g.nodes["Billing team"]["body"] == "Billing team"
    assert g.edges == {
        ("John_Smith", "Anthropic", "refers_to"),
        ("John_Smith", "Project Heron", "refers_to"),
        ("Project Heron", "Billing team", "part_of"),
    }
    assert g.labels[("John_Smith", "Project Heron", "refers_to")] == ["leads", "works_on"]
    assert g.labels[("John_Smith", "Anthropic", "refers_to")] == ["works_at"]
    # What was imported reads like anything else, through the tools.
    hits = build_server(service).registry.run("search", {"initiatives": ["heron"], "text": "Spanish"})
    assert [hit["name"] for hit in hits["data"]["hits"]] == ["John_Smith"]


def test_a_second_import_changes_nothing_and_a_changed_source_revises(service: Service, tmp_path: Path) -> None:
    first = import_jsonl(service, DATA / "memory.jsonl")
    before = graph(service, "heron")
    again = import_jsonl(service, DATA / "memory.jsonl")
    assert again["changes"] == 0 and again["unchanged"] == 4 and again["edges_unchanged"] == 3
    assert graph(service, "heron") == before and first["changes"] == 7
    # A person's later edit survives a re-import of the same source.
    run = build_server(service).registry.run
    run("revise", {"initiative": "heron", "node": "Anthropic", "patch": {"body": "Builds Claude; based in SF"}})
    import_jsonl(service, DATA / "memory.jsonl")
    assert graph(service, "heron").nodes["Anthropic"]["body"] == "Builds Claude; based in SF"
    # The source changing revises the node (its history keeps the old text) and adds the new edge.
    changed = tmp_path / "memory.jsonl"
    lines = (DATA / "memory.jsonl").read_text().splitlines()
    lines[0] = json.dumps(
        {"type": "entity", "name": "John_Smith", "entityType": "person", "observations": ["Moved to Lisbon"]}
    )
    lines.append(json.dumps({"type": "relation", "from": "Anthropic", "to": "Billing team", "relationType": "causes"}))
    changed.write_text("\n".join(lines) + "\n")
    third = import_jsonl(service, changed)
    assert (third["created"], third["revised"], third["edges_added"]) == (0, 1, 1)
    after = graph(service, "heron")
    assert after.nodes["John_Smith"]["body"] == "Moved to Lisbon"
    assert ("Anthropic", "Billing team", "causal") in after.edges
    trail = run("trail", {"initiative": "heron", "node": "John_Smith"})
    assert trail["state"] == "ok"
    assert "Speaks fluent Spanish" in json.dumps(trail["data"])


def test_a_secret_refuses_the_whole_import_and_redact_redacts(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    source = tmp_path / "memory.jsonl"
    lines = (DATA / "memory.jsonl").read_text().splitlines()
    lines.append(
        json.dumps({"type": "entity", "name": "CI", "entityType": "tool", "observations": [f"token {SECRET}"]})
    )
    source.write_text("\n".join(lines) + "\n")
    with pytest.raises(SecretDetected) as refused:
        import_jsonl(service, source)
    assert "line 10" in refused.value.message and SECRET not in refused.value.message
    with service.store.read() as session:
        assert session.initiative_by_name("heron") is None
    redacting = Service(service.store, Settings.from_env({**vault.env(), "KAERU_SECRET_POLICY": "redact"}))
    report = import_jsonl(redacting, source)
    assert report["created"] == 5
    body = graph(service, "heron").nodes["CI"]["body"]
    assert SECRET not in str(body) and "token" in str(body)
    assert any(i["code"] == "secret_detected" for i in report["issues"])  # type: ignore[union-attr]


def test_markdown_notes_links_become_edges(service: Service) -> None:
    report = apply(service, "notes", notes.read_markdown(DATA / "notes")).to_json()
    g = graph(service, "notes")
    assert set(g.nodes) == {"Welcome", "Heron migration", "people/Ana", "Billing", "Diagram"}
    assert g.nodes["Welcome"]["name"] == "Welcome" and not str(g.nodes["Welcome"]["body"]).startswith("# Welcome")
    assert {"start", "meta", "kind:concept"} <= set(g.nodes["Welcome"]["tags"])  # type: ignore[arg-type]
    assert g.nodes["Heron migration"]["type"] == "episode" and "kind:decision" in g.nodes["Heron migration"]["tags"]  # type: ignore[operator]
    assert {"project", "billing"} <= set(g.nodes["Heron migration"]["tags"])  # type: ignore[arg-type]
    assert g.edges == {
        ("Welcome", "Heron migration", "refers_to"),
        ("Welcome", "people/Ana", "refers_to"),
        ("Welcome", "Diagram", "refers_to"),
        ("Heron migration", "people/Ana", "refers_to"),
        ("people/Ana", "Heron migration", "refers_to"),
        ("people/Ana", "Billing", "part_of"),
        ("people/Ana", "Welcome", "refers_to"),
        ("Billing", "people/Ana", "refers_to"),
    }
    assert g.labels[("people/Ana", "Welcome", "refers_to")] == ["mentors"]
    assert any(i["code"] == "links_unresolved" and "Someday" in i["message"] for i in report["issues"])  # type: ignore[union-attr]
    again = apply(service, "notes", notes.read_markdown(DATA / "notes")).to_json()
    assert again["changes"] == 0


def test_a_thousand_note_folder_round_trips_its_links(service: Service, tmp_path: Path) -> None:
    folder = tmp_path / "vault"
    expected: set[tuple[str, str, str]] = set()
    for i in range(1000):
        sub = folder / f"d{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        targets = sorted({(i * 7 + 1) % 1000, (i * 13 + 5) % 1000} - {i})
        links = " and ".join(f"[[n{t}]]" for t in targets)
        (sub / f"n{i}.md").write_text(f"---\ntags: [generated]\n---\nNote {i} relates to {links}.\n")
        expected |= {(f"d{i % 10}/n{i}", f"d{t % 10}/n{t}", "refers_to") for t in targets}
    first = apply(service, "big", notes.read_markdown(folder), chunk=250).to_json()
    assert first["created"] == 1000 and first["edges_added"] == len(expected)
    assert graph(service, "big").edges == expected
    again = apply(service, "big", notes.read_markdown(folder), chunk=250).to_json()
    assert again["changes"] == 0 and again["edges_unchanged"] == len(expected)


def test_kaeru_markdown_export_keeps_types_layers_and_typed_links(service: Service) -> None:
    report = apply(service, "heron", notes.read_kaeru(DATA / "kaeru-md")).to_json()
    assert report["created"] == 3 and report["issues"][0]["code"] == "new_initiative"  # type: ignore[index]
    g = graph(service, "heron")
    a, b, c = "01JBX7Q2M3N4P5R6S7T8V9W0XA", "01JBX7Q2M3N4P5R6S7T8V9W0XB", "01JBX7Q2M3N4P5R6S7T8V9W0XC"
    assert (g.nodes[a]["name"], g.nodes[a]["type"], g.nodes[a]["layer"]) == ("Chose PostgreSQL", "episode", "hot")
    assert g.nodes[a]["body"] == "We chose PostgreSQL for billing: the reports need window functions."
    assert (g.nodes[c]["type"], g.nodes[c]["layer"]) == ("reference", "cold")
    assert {"kind:decision", "billing"} <= set(g.nodes[a]["tags"])  # type: ignore[arg-type]
    assert g.edges == {(a, b, "derived_from"), (a, c, "refers_to"), (b, c, "refers_to")}
    assert apply(service, "heron", notes.read_kaeru(DATA / "kaeru-md")).changes == 0


def test_this_servers_markdown_export_imports_back(service: Service, vault: VaultSpec, tmp_path: Path) -> None:
    import_jsonl(service, DATA / "memory.jsonl")
    exporting = Service(service.store, Settings.from_env({**vault.env(), "KAERU_EXPORT_ROOT": str(tmp_path)}))
    exported = build_server(exporting).registry.run(
        "archive", {"action": "export", "format": "markdown", "initiatives": ["heron"], "path": "export"}
    )
    assert exported["state"] == "applied", exported
    out = tmp_path / "export"
    report = apply(service, "copy", notes.read_kaeru(out)).to_json()
    assert report["created"] == 4 and report["edges_added"] == 3
    names = {n["name"] for n in graph(service, "copy").nodes.values()}
    assert names == {"John_Smith", "Anthropic", "Project Heron", "Billing team"}


def test_cli_import_from_reports_counts_and_zero_changes_the_second_time(vault: VaultSpec) -> None:
    first = kaeru(
        vault, "import-from", "memory-jsonl", str(DATA / "memory.jsonl"), "--initiative", "heron", as_json=True
    )
    assert first.code == 0, first.stderr
    assert (first.json()["created"], first.json()["edges_added"]) == (4, 3)
    # `-i`, as every other command names its initiative (decision 280's review).
    second = kaeru(vault, "import-from", "memory-jsonl", str(DATA / "memory.jsonl"), "-i", "heron", as_json=True)
    assert second.json()["changes"] == 0
    human = kaeru(vault, "import-from", "markdown", str(DATA / "notes"), "--initiative", "notes")
    assert human.code == 0 and "5 created" in human.stdout
    wrong = kaeru(vault, "import-from", "markdown", str(DATA / "memory.jsonl"), "--initiative", "notes")
    assert wrong.code == 2


def test_the_import_bench_runs_small(tmp_path: Path) -> None:
    from bench import importers as bench

    rows = bench.main(["--entities", "40", "--backend", "sqlite", "--workdir", str(tmp_path)])
    assert rows[0]["first"] == {"created": 40, "edges_added": 40, "changes": 80}
    assert rows[0]["second_changes"] == 0


def test_an_empty_source_writes_nothing(service: Service, tmp_path: Path) -> None:
    empty = tmp_path / "memory.jsonl"
    empty.write_text("\n")
    assert import_jsonl(service, empty)["changes"] == 0
    with service.store.read() as session:
        assert session.initiative_by_name("heron") is None


def test_lines_that_are_not_memory_records_are_skipped_and_named(service: Service, tmp_path: Path) -> None:
    """A line that is not JSON, or JSON that is neither an entity nor a relation, is skipped with
    `line_skipped` naming its line; the rest is imported."""
    source = tmp_path / "memory.jsonl"
    lines = [
        json.dumps({"type": "entity", "name": "Heron", "observations": ["waits by the pond"]}),
        "{not json",
        json.dumps({"type": "note", "text": "neither kind"}),
    ]
    source.write_text("\n".join(lines) + "\n")
    report = import_jsonl(service, source)
    assert report["created"] == 1
    skipped = [i["message"] for i in report["issues"] if i["code"] == "line_skipped"]  # type: ignore[union-attr]
    assert len(skipped) == 2
    assert skipped[0].startswith("line 2: not JSON") and skipped[1] == "line 3: neither an entity nor a relation"


def test_a_name_tag_or_label_the_write_path_refuses_refuses_the_whole_import(service: Service, tmp_path: Path) -> None:
    """The write path's limits hold for imports: a control character in a name that no cleaning
    makes a name (a bell; a line break or a length is cleaned), in a tag, a NUL in a
    relation's label each refuse the import as `invalid_argument`, every one named, and nothing is
    written."""
    source = tmp_path / "memory.jsonl"
    lines = [
        json.dumps({"type": "entity", "name": "ring\x07ring", "observations": ["a bell in a name"]}),
        json.dumps({"type": "entity", "name": "Heron", "entityType": "bird\x07", "observations": ["a bell"]}),
        json.dumps({"type": "relation", "from": "Heron", "to": "Heron", "relationType": "sees\x00itself"}),
    ]
    source.write_text("\n".join(lines) + "\n")
    with pytest.raises(KaeruError) as refused:
        import_jsonl(service, source)
    assert (refused.value.code, refused.value.field) == ("invalid_argument", "path")
    message = refused.value.message
    assert "3 field(s) refused" in message, message
    assert "line 1: name" in message and "line 2: tags[0]" in message and "line 3: relation" in message
    with service.store.read() as session:
        assert session.initiative_by_name("heron") is None


def test_tasks_and_claims_of_this_servers_markdown_export_import_onto_the_board(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    """Decision 298: an exported task keeps its column (the target board's first when it has no
    such column, its closing one for `done`), a claim its status; the source's board page does not
    replace the target's board."""
    run = build_server(service).registry.run
    run("initiative", {"initiative": "src", "action": "set_board", "columns": [{"key": "todo"}, {"key": "done"}]})
    run("task", {"initiative": "src", "text": "write the exporter", "name": "exporter"})
    run("task", {"initiative": "src", "text": "write the importer", "name": "importer", "status": "done"})
    run("claim", {"initiative": "src", "text": "the frog jumps higher in rain", "initial_status": "refuted"})
    exporting = Service(service.store, Settings.from_env({**vault.env(), "KAERU_EXPORT_ROOT": str(tmp_path)}))
    exported = build_server(exporting).registry.run(
        "archive", {"action": "export", "format": "markdown", "initiatives": ["src"], "path": "export"}
    )
    assert exported["state"] == "applied", exported
    target = [{"key": "backlog"}, {"key": "todo"}, {"key": "shipped"}]
    assert run("initiative", {"initiative": "dst", "action": "set_board", "columns": target})["state"] == "applied"
    apply(service, "dst", notes.read_kaeru(tmp_path / "export"))

    def status(name: str) -> str | None:
        return run("read", {"initiative": "dst", "node": name})["data"]["hits"][0]["status"]

    assert status("exporter") == "todo" and status("importer") == "shipped"
    claims = run("search", {"initiatives": ["dst"], "filters": {"types": ["hypothesis"]}})["data"]["hits"]
    assert [h["status"] for h in claims] == ["refuted"]
    sections = run("context", {"initiative": "dst"})["data"]["sections"]
    tasks = next(s for s in sections if s["name"] == "tasks")
    assert [c["key"] for c in tasks["columns"]] == ["backlog", "todo", "shipped"]
    assert [i["name"] for i in tasks["items"]] == ["exporter"]
    assert run("task_update", {"initiative": "dst", "task": "exporter", "status": "shipped"})["state"] == "applied"
