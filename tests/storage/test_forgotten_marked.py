"""`forgotten_marked`: the keys of an initiative's forgotten nodes an import of one format wrote,
read from their current rows (a re-import finds them without reading every past revision of the
initiative). Both backends."""

from __future__ import annotations

import json
from pathlib import Path

from kaeru.export.importers import apply, memory_jsonl
from kaeru.export.importers.reimport import MARK
from kaeru.mcp.server import build_server
from kaeru.service import Service


def test_the_forgotten_imported_nodes_of_one_initiative_and_format(service: Service, tmp_path: Path) -> None:
    source = tmp_path / "memory.jsonl"
    names = ["Alice", "Bob", "Carol"]
    source.write_text("".join(json.dumps({"type": "entity", "name": n, "observations": [n]}) + "\n" for n in names))
    for initiative in ("mem", "other"):
        with source.open() as lines:
            apply(service, initiative, memory_jsonl.read(lines))
    run = build_server(service).registry.run
    for initiative, name in (("mem", "Bob"), ("mem", "Carol"), ("other", "Alice")):
        node = {"initiative": initiative, "name": name}
        assert run("forget", {"initiative": initiative, "node": node, "reason": "test"})["state"] == "applied"
    run("note", {"initiative": "mem", "text": "A note of no import, forgotten.", "name": "plain"})
    assert run("forget", {"initiative": "mem", "node": "plain", "reason": "test"})["state"] == "applied"

    with service.store.read() as session:
        mem = session.initiative_by_name("mem")
        assert mem is not None
        found = session.forgotten_marked(mem.id, MARK, "memory-jsonl")
        assert sorted(found) == ["Bob", "Carol"]
        assert all(session.get_node(node_id).retracted for node_id in found.values())  # type: ignore[union-attr]
        assert session.forgotten_marked(mem.id, MARK, "markdown") == {}
