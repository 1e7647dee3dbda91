"""The compact text of a result against what it carries (issue 18 targets, in characters).

A ten-hit `search`, `recall` or `timeline` page: text ≤ 2 × the bodies' characters + 120 per hit;
`context` on a 50-node initiative: ≤ 2 × the bodies' characters + 120 per item. And `KAERU_TEXT=json`
gives the envelope itself.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from kaeru.config import Settings
from kaeru.mcp.adapter import Output, result
from kaeru.mcp.render import compact
from kaeru.mcp.server import build_server
from kaeru.service import Service

WORDS = [
    "the ingest worker retries after a lock timeout",
    "the cache is warmed at start",
    "the index is rebuilt nightly",
    "a client reads the ledger twice",
    "the migration keeps both columns until the next release",
]


def _body(i: int) -> str:
    return f"Note {i}: {WORDS[i % len(WORDS)]}; seen on host {i % 7} during run {i}."


def _seed(run: Any, count: int) -> None:
    kinds = ("observation", "decision", "rule", "idea", "jot")
    for i in range(count):
        args = {"initiative": "ledger", "kind": kinds[i % len(kinds)], "text": _body(i)}
        if i % 3 == 0:
            args["tags"] = ["ops"]
        assert run("note", args)["state"] == "applied"


def _nodes(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    data = envelope["data"]
    if "sections" in data:
        return [item for section in data["sections"] for item in section["items"]]
    hits: list[dict[str, Any]] = data["hits"]
    return hits


def _within(envelope: dict[str, Any]) -> tuple[int, int]:
    nodes = _nodes(envelope)
    bodies = sum(len(n["body"] or "") for n in nodes)
    return len(compact(envelope)), 2 * bodies + 120 * len(nodes)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("search", {"initiatives": ["ledger"], "text": "host", "limit": 10}),
        ("recall", {"initiatives": ["ledger"], "query": "what happened on host 3", "limit": 10}),
        ("timeline", {"initiatives": ["ledger"], "limit": 10}),
    ],
)
def test_a_ten_hit_page_is_compact(service: Service, tool: str, args: dict[str, Any]) -> None:
    run = build_server(service).registry.run
    _seed(run, 30)
    envelope = run(tool, args)
    assert envelope["state"] == "ok" and len(_nodes(envelope)) == 10
    size, target = _within(envelope)
    assert size <= target, compact(envelope)
    # Still every handle and the exact next call.
    text = compact(envelope)
    assert all(f"id={n['id']} rev={n['revision']}" in text for n in _nodes(envelope))
    if envelope["continuation"]:
        assert f"next: {tool} {json.dumps(envelope['continuation']['next_arguments'], separators=(',', ':'))}" in text


def test_context_of_fifty_nodes_is_compact(service: Service) -> None:
    run = build_server(service).registry.run
    _seed(run, 50)
    envelope = run("context", {"initiative": "ledger"})
    assert len(_nodes(envelope)) >= 10
    size, target = _within(envelope)
    assert size <= target, compact(envelope)


def test_json_text_is_the_envelope_and_structured_can_be_dropped(service: Service) -> None:
    run = build_server(service).registry.run
    envelope = run("note", {"initiative": "ledger", "text": "a plain note"})
    as_json = result(envelope, Output(text="json"))
    assert json.loads(as_json.content[0].text) == envelope and as_json.structured_content == envelope
    bare = result(envelope, Output(structured=False))
    assert bare.structured_content is None and bare.content[0].text == compact(envelope)


def test_the_settings_choose_the_output(service: Service) -> None:
    settings = Settings.from_env({"KAERU_VAULT": "/nonexistent", "KAERU_TEXT": "json", "KAERU_STRUCTURED": "off"})
    assert (settings.text, settings.structured) == ("json", False)
    assert Settings.from_env({"KAERU_VAULT": "/nonexistent"}).text == "compact"
    with pytest.raises(ValueError, match="KAERU_TEXT"):
        Settings.from_env({"KAERU_VAULT": "/nonexistent", "KAERU_TEXT": "yaml"})
    registry = build_server(service, settings=settings).registry
    assert registry.output == Output(text="json", structured=False)
    assert all(tool.output_schema is None for tool in registry.list_tools())


def test_a_node_is_one_unindented_line_then_indented_text(service: Service) -> None:
    """Descriptions and bodies of several lines stay indented under their node's handle line."""
    run = build_server(service).registry.run
    note = run("note", {"initiative": "ledger", "text": "- first\n- second", "name": "steps"})
    node = note["data"]["primary"]
    run("revise", {"initiative": "ledger", "node": node["id"], "patch": {"description": "one\n- two"}})
    text = compact(run("read", {"initiative": "ledger", "node": node["id"]}))
    lines = text.splitlines()
    assert re.match(r"- steps · observation · \d{4}-\d\d-\d\d \d\d:\d\d · id=", lines[1]), lines[1]
    assert all(line.startswith("  ") for line in lines[2:]), text


def test_a_context_that_leaves_work_out_names_the_search_that_lists_it(service: Service) -> None:
    """ "omitted: tasks 30 (limit)" told a model that open work was missing, not how to see it: the text
    names the `search` that lists the whole section, and that search finds every open task."""
    run = build_server(service).registry.run
    for i in range(60):
        assert run("task", {"initiative": "ledger", "text": f"reconcile batch {i}"})["state"] == "applied"
    run("task", {"initiative": "ledger", "text": "closed batch", "status": "done"})
    text = compact(run("context", {"initiative": "ledger"}))
    lines = {line.split(":", 1)[0]: line for line in text.splitlines() if line.startswith("all ")}
    assert set(lines) == {"all tasks"}, text
    tasks = json.loads(lines["all tasks"].split(" search ", 1)[1])
    assert tasks == {"initiatives": ["ledger"], "filters": {"types": ["task"], "statuses": ["open", "in-progress"]}}
    assert run("search", {**tasks, "limit": 50})["data"]["total"] == 60
