"""`meanings.toml` against the tools' schemas: a meaning is offered only where its `to` is in the
enum, so a `to` no schema has (a typo, a renamed value) silently dropped the hint it was written
for; and the edge types listed with their meanings are the contract's."""

from __future__ import annotations

from typing import Any

from kaeru.api.request_names import Meanings
from kaeru.api.schemas import input_for
from kaeru.domain.model import EdgeType
from kaeru.service.requests import REQUESTS


def _enums(node: Any, into: dict[str, set[str]], name: str = "") -> dict[str, set[str]]:
    """Every enum of every tool's input, by the name of the field it is (a list's items by the list's)."""
    if isinstance(node, dict):
        if isinstance(node.get("enum"), list) and name:
            into.setdefault(name, set()).update(str(v) for v in node["enum"])
        for key, value in node.items():
            if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
                for field, spec in value.items():
                    _enums(spec, into, field)
            else:
                _enums(value, into, name)
    elif isinstance(node, list):
        for item in node:
            _enums(item, into, name)
    return into


def test_every_meaning_names_a_value_of_its_fields_enum() -> None:
    enums: dict[str, set[str]] = {}
    for operation in REQUESTS:
        _enums(input_for(operation), enums)
    meanings = Meanings.load()
    wrong = [
        (field, sent, entry["to"])
        for field, table in meanings.values.items()
        for sent, entry in table.items()
        if "to" in entry and entry["to"] not in enums.get(field, set())
    ]
    assert not wrong, wrong
    assert all(("to" in e) != ("tool" in e) and e.get("why") for t in meanings.values.values() for e in t.values())
    tools = {e["tool"] for t in meanings.values.values() for e in t.values() if "tool" in e}
    assert tools <= set(REQUESTS), tools - set(REQUESTS)


def test_the_edge_meanings_are_the_edge_types() -> None:
    assert list(Meanings.load().edges) == [t.value for t in EdgeType]
