"""An edge's own names are shown where edges are: a relation imported from another memory
("Bob manages Alice", "Alice dislikes Bob") became a `refers_to` edge keeping its name in the
edge's properties, which no read showed — an agent could not tell the two apart."""

from __future__ import annotations

import json
from pathlib import Path

from tests.backends import VaultSpec
from tests.cli.support import kaeru

MEMORY = [
    {"type": "entity", "name": "Alice", "entityType": "person", "observations": ["engineer"]},
    {"type": "entity", "name": "Bob", "entityType": "person", "observations": ["team lead"]},
    {"type": "relation", "from": "Bob", "to": "Alice", "relationType": "manages"},
    {"type": "relation", "from": "Alice", "to": "Bob", "relationType": "dislikes"},
]


def test_an_imported_relations_name_is_in_read_and_trail(vault: VaultSpec, tmp_path: Path) -> None:
    source = tmp_path / "memory.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in MEMORY))
    assert kaeru(vault, "import-from", "memory-jsonl", str(source), "-i", "p").code == 0
    read = kaeru(
        vault, "call", "read", json.dumps({"initiative": "p", "node": "Alice", "neighbours": True}), as_json=True
    )
    edges = json.loads(read.stdout)["data"]["edges"]
    names = {name: e["from"] for e in edges for name in e.get("properties", {}).get("relations", [])}
    alice = json.loads(read.stdout)["data"]["hits"][0]["id"]
    assert set(names) == {"manages", "dislikes"} and names["dislikes"] == alice and names["manages"] != alice
    trail = kaeru(
        vault, "call", "trail", json.dumps({"initiative": "p", "node": "Alice", "kind": "neighbours"}), as_json=True
    )
    labels = sorted(
        n for e in json.loads(trail.stdout)["data"]["entries"] for n in e["edge"]["properties"]["relations"]
    )
    assert labels == ["dislikes", "manages"]
    text = kaeru(vault, "call", "read", json.dumps({"initiative": "p", "node": "Alice", "neighbours": True}))
    assert "-refers_to (manages) 0.5->" in text.stdout and "-refers_to (dislikes) 0.5->" in text.stdout
