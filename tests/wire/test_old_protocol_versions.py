"""Clients of older MCP protocol versions, spoken to in raw JSON-RPC over stdio (no SDK).

A client that asks for 2024-11-05 or 2025-03-26 knows nothing of `structuredContent` (2025-06-18)
and shows its model the text blocks only. The server must agree to the version asked, list the
tools, and answer every call with a text block that carries what the next call needs: the written
node's id, what a search found, why an input was refused (naming the field). A version the server
does not know gets one it supports, and works the same.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from kaeru.mcp.pinned import LISTING

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

TOOLS = sorted(tool["name"] for tool in json.loads(LISTING.read_text()))
UUID = re.compile(r"\bid=([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b")


class RawClient:
    """`kaeru serve` over stdio, one JSON-RPC request and its answer at a time."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self.proc = proc
        self.next_id = 1

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the server exited ({self.proc.poll()}) without answering {method}"
        answer: dict[str, Any] = json.loads(line)
        assert answer.get("id") == self.next_id and "error" not in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    def call(self, tool: str, arguments: dict[str, Any], **params: Any) -> tuple[bool, str]:
        """A `tools/call` as an old client reads it: (isError, the text of its text blocks)."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments, **params})
        texts = [block["text"] for block in result["content"] if block["type"] == "text"]
        assert texts, result
        return bool(result.get("isError", False)), "\n".join(texts)


@contextmanager
def _client(env: dict[str, str], log: Path, version: str) -> Iterator[tuple[RawClient, dict[str, Any]]]:
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kaeru", "serve"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=sink,
        )
        try:
            client = RawClient(proc)
            init = client.request(
                "initialize",
                {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "old-client", "version": "0.1"},
                },
            )
            client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            yield client, init
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            code = proc.wait(60)
    assert code == 0, log.read_text()


def _session(client: RawClient, initiative: str) -> None:
    """List the tools, write, find and read back by the text alone, and be refused with the field."""
    tools = client.request("tools/list")["tools"]
    assert sorted(tool["name"] for tool in tools) == TOOLS
    assert all(tool["inputSchema"]["type"] == "object" and tool["description"] for tool in tools)

    refused, text = client.call("note", {"initiative": initiative, "text": "The nightly backup runs at 02:00 zqold"})
    assert not refused and "applied" in text, text
    found = UUID.search(text)
    assert found, f"no id in the text an old client shows its model: {text}"
    node = found.group(1)

    refused, text = client.call("search", {"initiatives": [initiative], "text": "zqold"})
    assert not refused and node in text and "nightly backup" in text, text
    # With a progress token the call goes the server's SDK path instead of its fast path: the same.
    refused, text = client.call(
        "search", {"initiatives": [initiative], "text": "zqold"}, _meta={"progressToken": "old-1"}
    )
    assert not refused and node in text and "nightly backup" in text, text
    refused, text = client.call("read", {"initiative": initiative, "node": node})
    assert not refused and "The nightly backup runs at 02:00 zqold" in text, text
    refused, text = client.call("context", {"initiative": initiative})
    assert not refused and "nightly backup" in text, text

    refused, text = client.call("note", {"initiative": initiative, "text": 42})
    assert refused and "rejected" in text and "[text]" in text, text

    assert [p["name"] for p in client.request("prompts/list")["prompts"]] == ["resume", "decide", "hypothesis"]
    assert "kaeru://initiatives" in {r["uri"] for r in client.request("resources/list")["resources"]}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_an_older_client_gets_its_version_and_usable_text(
    server_env: dict[str, str], tmp_path: Path, version: str
) -> None:
    with _client(server_env, tmp_path / "serve.log", version) as (client, init):
        assert init["protocolVersion"] == version
        assert init["serverInfo"]["name"] == "kaeru-memory" and "tools" in init["capabilities"]
        _session(client, "old-clients")


def test_an_unknown_version_gets_one_the_server_supports(server_env: dict[str, str], tmp_path: Path) -> None:
    with _client(server_env, tmp_path / "serve.log", "2023-01-01") as (client, init):
        assert init["protocolVersion"] in HANDSHAKE_PROTOCOL_VERSIONS
        _session(client, "unknown-version")
