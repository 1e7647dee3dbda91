"""The reads tell Claude Code how long an answer to keep in the conversation, over a real stdio server.

Claude Code writes a tool result of more than 50,000 characters to a file and shows the model a
short preview of it, unless the tool's `tools/list` entry declares `_meta["anthropic/maxResultSizeChars"]`
(at most 500,000); other clients ignore a `_meta` key they do not know. A `context` of the default
size was such an answer: the model was shown a file name where the briefing should have been. What
the agent relies on: every read's entry as sent on the wire declares the ceiling — with
`KAERU_STRUCTURED=off` too, whose text alone can pass the default — the mutations declare nothing,
and an answer a read gives within its bounds (a `read` of its largest `budget_chars`) is longer than
the default and within the declared figure. The wire's bytes are also what `docs/tools.md` and the
README count the definitions by (`scripts/gen_tools_doc.py`, `served_bytes`).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.tools import register_tools
from kaeru.service import Service
from tests.wire.stdio_lines import Piped
from tests.wire.support import initialize_request

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]
KEY = "anthropic/maxResultSizeChars"
#: Claude Code's default: a result past it goes to a file.
DEFAULT_CHARS = 50_000
READS = {"initiatives", "context", "recall", "timeline", "reflect", "search", "read", "trail", "current_state"}


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_tools_doc", ROOT / "scripts" / "gen_tools_doc.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _listed(env: dict[str, str], log: Path) -> tuple[bytes, list[dict[str, Any]]]:
    """The raw `tools/list` answer line of a stdio `kaeru serve` in `env`, and its tools."""
    server = Piped(env, log)
    try:
        server.send(json.dumps(initialize_request()).encode())
        assert server.receive()["id"] == 1
        server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        server.send(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}')
        assert server.proc.stdout is not None
        line = server.proc.stdout.readline().rstrip(b"\n")
    finally:
        assert server.close() == 0, log.read_text()
    answer = json.loads(line)
    assert answer["id"] == 2, answer
    tools: list[dict[str, Any]] = answer["result"]["tools"]
    return line, tools


@pytest.mark.parametrize("structured", ["on", "off"])
def test_every_read_declares_the_ceiling_on_the_wire(
    server_env: dict[str, str], tmp_path: Path, structured: str
) -> None:
    _, tools = _listed({**server_env, "KAERU_STRUCTURED": structured}, tmp_path / "serve.log")
    declared = {tool["name"]: (tool.get("_meta") or {}).get(KEY) for tool in tools}
    assert {name for name, chars in declared.items() if chars is not None} == READS
    assert {declared[name] for name in READS} == {500_000}
    assert ("outputSchema" in tools[0]) == (structured == "on")


def test_the_definitions_are_counted_as_the_wire_carries_them(server_env: dict[str, str], tmp_path: Path) -> None:
    """The answer is compact JSON in UTF-8, so each entry's `served_bytes` is its share of the line;
    and the figures the generator writes are those of the entries served."""
    line, tools = _listed(server_env, tmp_path / "serve.log")
    gen = _generator()
    assert json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":")).encode() == line
    assert gen.definition_bytes(tools) == gen.definition_bytes(gen.tools_listing())
    assert gen.readme_figure(tools, (ROOT / "README.md").read_text()) == (ROOT / "README.md").read_text()


def test_a_read_within_its_bounds_passes_the_default_and_not_the_declared_figure(service: Service) -> None:
    registry = ToolRegistry(service)
    register_tools(registry)
    words = " ".join(f"word{i % 977}" for i in range(20_000))  # some 170,000 characters
    noted = registry.run("note", {"initiative": "specs", "text": words, "name": "long-spec"})
    node = noted["data"]["primary"]["id"]
    answer = registry.run("read", {"initiative": "specs", "node": node, "budget_chars": 64000})
    assert answer["state"] == "ok", answer["issues"]
    chars = len(json.dumps(answer, ensure_ascii=False, separators=(",", ":")))
    listed = {tool.name: tool.meta for tool in registry.list_tools()}
    assert DEFAULT_CHARS < chars <= (listed["read"] or {})[KEY]
