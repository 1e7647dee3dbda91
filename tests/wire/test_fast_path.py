"""The `tools/call` fast path (decision 63) changes nothing a client receives.

The main tests start two servers (`support.py serve`) on twin copies of one fresh vault with the
same pinned clock and entropy — so they make the same ids and timestamps — one with the fast path
and one with it removed, send both the same raw JSON-RPC lines one at a time, and require every
answer to be the same JSON-RPC response, byte for byte. Each server reports on exit how many calls
the fast path answered, so the tests also know it answered exactly the calls it should (and not,
say, none at all, which would make the comparison vacuous).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.runner import ServerRunner
from mcp_types import PROTOCOL_VERSION_META_KEY
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from kaeru.mcp.adapter import Output, result
from kaeru.mcp.fastpath import MODERN_WIRE_VERSIONS, WIRE_VERSIONS, FastToolCalls, wire_result
from kaeru.mcp.server import KaeruServer, build_server, middleware
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import new_vault
from tests.wire.support import http_server, initialize_request, raw_post, stop, subprocess_env, worker_command

MISSING_NODE = "00000000-0000-7000-8000-000000000000"
INITIATIVE = "shore"


# --- the wire dict against the SDK's own serialisation (no subprocess) ----------------------------


def _envelopes(kaeru: KaeruServer) -> list[dict[str, Any]]:
    registry = kaeru.registry
    note = registry.run("note", {"initiative": INITIATIVE, "text": "a grey heron stands in the reeds, ü ✓ \u2028"})
    registry.run("note", {"initiative": INITIATIVE, "text": "the heron took a fish at dawn", "tags": ["birds"]})
    return [
        note,
        registry.run("search", {"initiatives": [INITIATIVE], "text": "heron"}),
        registry.run("read", {"initiative": INITIATIVE, "node": note["data"]["primary"]["id"], "neighbours": True}),
        registry.run("note", {"initiative": INITIATIVE}),
        registry.run("read", {"initiative": INITIATIVE, "node": MISSING_NODE}),
    ]


@pytest.mark.parametrize("output", [Output(), Output(text="json"), Output(structured=False)], ids=repr)
@pytest.mark.parametrize("version", sorted(WIRE_VERSIONS | MODERN_WIRE_VERSIONS))
def test_the_wire_dict_is_the_sdks_serialisation_at_every_listed_version(
    service: Service, version: str, output: Output
) -> None:
    kaeru = build_server(service)
    envelopes = _envelopes(kaeru)
    assert {e["state"] for e in envelopes} == {"applied", "ok", "rejected"}
    # The SDK's own pipeline step: the handler's model shaped for the wire at this version (the
    # 2026 era adds `resultType` and stamps the server's identity).
    runner = ServerRunner(kaeru.server, Connection.from_envelope(version, None, {}), None)
    modern = version in MODERN_WIRE_VERSIONS
    for envelope in envelopes:
        sdk = runner._serialize("tools/call", version, result(envelope, output))
        ours = wire_result(envelope, output, kaeru.server.server_info_stamp if modern else None)
        assert ("structuredContent" in ours) is output.structured
        assert ("resultType" in ours) is modern
        assert ours == sdk
        assert json.dumps(ours) == json.dumps(sdk), "the same keys in the same order, so the same bytes"


def test_the_listed_versions_are_the_sdks_own_by_era() -> None:
    assert WIRE_VERSIONS.issubset(HANDSHAKE_PROTOCOL_VERSIONS)
    assert WIRE_VERSIONS.isdisjoint(MODERN_PROTOCOL_VERSIONS)
    assert MODERN_WIRE_VERSIONS.issubset(MODERN_PROTOCOL_VERSIONS)


def test_the_fast_path_is_innermost_so_spans_still_wrap_it(service: Service) -> None:
    fast = FastToolCalls(build_server(service).registry)
    sdk_default = Server("probe").middleware
    assert [type(m).__name__ for m in sdk_default] == ["OpenTelemetryMiddleware"]
    assert middleware(sdk_default, fast, tracing=True) == [*sdk_default, fast]
    assert middleware(sdk_default, fast, tracing=False) == [fast]
    kaeru = build_server(service)
    assert isinstance(kaeru.server.middleware[-1], FastToolCalls)


# --- real servers, with and without the fast path -------------------------------------------------


def _twin_envs(tmp_path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Environments for two copies of one freshly created SQLite vault (same secret, same rows)."""
    spec = new_vault("sqlite", tmp_path)
    open_store(spec.settings()).close()
    twin = tmp_path / "twin-vault"
    shutil.copytree(spec.vault_dir, twin)
    return subprocess_env(spec.env()), subprocess_env({"KAERU_VAULT": str(twin)})


def _serve_args(report: Path, *, sdk_only: bool = False, fast_versions: str | None = None) -> tuple[str, ...]:
    args = ["serve", "--report", str(report)]
    if sdk_only:
        args.append("--sdk-only")
    if fast_versions is not None:
        args += ["--fast-versions", fast_versions]
    return tuple(worker_command(*args))


class StdioServer:
    """A `support.py serve` subprocess spoken to in raw JSON-RPC lines, one exchange at a time."""

    def __init__(self, serve: tuple[str, ...], env: dict[str, str], log: Path):
        self._log = log.open("wb")
        self.proc = subprocess.Popen(
            list(serve), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> bytes:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the server exited ({self.proc.poll()}) without answering"
        return line

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(60)
        self._log.close()
        return code


@dataclass
class Pair:
    """The same exchanges with a server that has the fast path and one that has not."""

    fast: StdioServer
    sdk: StdioServer

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send `message` to both; require the same answer line from both; return it parsed."""
        self.fast.send(message)
        self.sdk.send(message)
        fast, sdk = self.fast.answer(), self.sdk.answer()
        assert json.loads(fast) == json.loads(sdk), message
        assert fast == sdk, message
        parsed: dict[str, Any] = json.loads(fast)
        return parsed

    def notify(self, message: dict[str, Any]) -> None:
        self.fast.send(message)
        self.sdk.send(message)


@contextmanager
def _stdio_pair(tmp_path: Path, fast_versions: str | None = None) -> Iterator[tuple[Pair, dict[str, int | None]]]:
    """Two servers on twin vaults; after the block, the count of calls each one's fast path answered."""
    fast_env, sdk_env = _twin_envs(tmp_path)
    reports = {"fast": tmp_path / "fast.json", "sdk": tmp_path / "sdk.json"}
    pair = Pair(
        StdioServer(_serve_args(reports["fast"], fast_versions=fast_versions), fast_env, tmp_path / "fast.log"),
        StdioServer(_serve_args(reports["sdk"], sdk_only=True), sdk_env, tmp_path / "sdk.log"),
    )
    answered: dict[str, int | None] = {}
    try:
        yield pair, answered
    finally:
        codes = (pair.fast.close(), pair.sdk.close())
    assert codes == (0, 0), (tmp_path / "fast.log").read_text() + (tmp_path / "sdk.log").read_text()
    for side, report in reports.items():
        answered[side] = json.loads(report.read_text())["answered"]


def _call(request_id: int | None, params: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": "tools/call", "params": params, **extra}
    if request_id is not None:
        message["id"] = request_id
    return message


def _tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _initialize(pair: Pair, version: str) -> None:
    init = initialize_request(1)
    init["params"]["protocolVersion"] = version
    answer = pair.request(init)
    assert answer["result"]["protocolVersion"] == version
    pair.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _envelope(answer: dict[str, Any]) -> dict[str, Any]:
    envelope: dict[str, Any] = answer["result"]["structuredContent"]
    return envelope


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("version", sorted(WIRE_VERSIONS))
def test_stdio_answers_are_identical_with_and_without_the_fast_path(tmp_path: Path, version: str) -> None:
    with _stdio_pair(tmp_path) as (pair, answered):
        _initialize(pair, version)
        first = {"initiative": INITIATIVE, "text": "a grey heron stands in the reeds", "request_id": "shore-1"}
        # Calls the fast path answers: writes, a search with hits, rejections, a replay, a read.
        fast_calls = 0
        note = pair.request(_call(2, _tool("note", first)))
        assert _envelope(note)["state"] == "applied"
        for i, text in enumerate(["the heron took a fish at dawn", "heron nests counted: twelve"]):
            assert _envelope(pair.request(_call(3 + i, _tool("note", {"initiative": INITIATIVE, "text": text}))))[
                "state"
            ] == ("applied")
        search = _envelope(pair.request(_call(5, _tool("search", {"initiatives": [INITIATIVE], "text": "heron"}))))
        assert search["data"]["total"] == 3 and len(search["data"]["hits"]) == 3
        bad = pair.request(_call(6, _tool("note", {"initiative": INITIATIVE})))
        assert bad["result"]["isError"] is True and _envelope(bad)["state"] == "rejected"
        missing = _envelope(pair.request(_call(7, _tool("read", {"initiative": INITIATIVE, "node": MISSING_NODE}))))
        assert missing["state"] == "rejected"
        assert _envelope(pair.request(_call(8, _tool("note", first))))["replayed"] is True
        node = _envelope(note)["data"]["primary"]["id"]
        read = pair.request(_call(9, _tool("read", {"initiative": INITIATIVE, "node": node, "neighbours": True})))
        assert _envelope(read)["state"] == "ok"
        fast_calls += 8

        # Calls the SDK answers as before.
        unknown = pair.request(_call(20, _tool("no_such_tool", {})))
        assert unknown["result"]["isError"] is True
        progress = pair.request(
            _call(
                21, {**_tool("search", {"initiatives": [INITIATIVE], "text": "heron"}), "_meta": {"progressToken": 1}}
            )
        )
        assert _envelope(progress)["data"]["total"] == 3
        assert _envelope(pair.request(_call(22, {"name": "note", "arguments": None})))["state"] == "rejected"
        pair.request(_call(23, {**_tool("search", {"initiatives": [INITIATIVE], "text": "heron"}), "extra": 1}))
        assert "error" in pair.request(_call(24, {"name": 5, "arguments": {}}))
        assert "error" in pair.request(_call(25, None))
        pair.request({"jsonrpc": "2.0", "id": 26, "method": "ping"})
        pair.request({"jsonrpc": "2.0", "id": 27, "method": "tools/list"})
        # A tools/call sent as a notification is dropped by the SDK, so it must write nothing here either.
        pair.notify(_call(None, _tool("note", {"initiative": INITIATIVE, "text": "a bittern booms"})))
        after = _envelope(pair.request(_call(28, _tool("search", {"initiatives": [INITIATIVE], "text": "bittern"}))))
        assert after["data"]["total"] == 0
        fast_calls += 1
    assert answered == {"fast": fast_calls, "sdk": None}


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_call_before_initialize_gets_the_sdks_answer(tmp_path: Path) -> None:
    search = _tool("search", {"initiatives": [INITIATIVE], "text": "heron"})
    with _stdio_pair(tmp_path) as (pair, answered):
        early = pair.request(_call(1, search))
        assert early["error"]["code"] == -32602
        init = initialize_request(2)
        assert "result" in pair.request(init)
        # Between `initialize` and `notifications/initialized` the SDK already serves requests.
        pair.request(_call(3, search))
        pair.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})
        pair.request(_call(4, search))
    assert answered == {"fast": 2, "sdk": None}


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_an_unlisted_protocol_version_gets_the_sdks_answer(tmp_path: Path) -> None:
    version = "2025-06-18"
    others = ",".join(sorted(WIRE_VERSIONS - {version}))
    with _stdio_pair(tmp_path, fast_versions=others) as (pair, answered):
        _initialize(pair, version)
        pair.request(_call(2, _tool("note", {"initiative": INITIATIVE, "text": "a heron", "request_id": "u-1"})))
        pair.request(_call(3, _tool("search", {"initiatives": [INITIATIVE], "text": "heron"})))
        pair.request(_call(4, _tool("note", {"initiative": INITIATIVE})))
    assert answered == {"fast": 0, "sdk": None}


MODERN = sorted(MODERN_WIRE_VERSIONS)[-1]
#: A 2026-era request's envelope, as the SDK's own client sends it.
ENVELOPE = {
    PROTOCOL_VERSION_META_KEY: MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "kaeru-wire-tests", "version": "1"},
}


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_2026_envelope_era_answers_are_identical_with_and_without_the_fast_path(tmp_path: Path) -> None:
    """No handshake: each call carries its envelope. Plain calls are answered by the fast path (the
    SDK's client speaks this era: decision 162); an envelope with anything more, or one the SDK's
    check refuses, gets the SDK's own answer — the same bytes either way."""
    search = _tool("search", {"initiatives": [INITIATIVE], "text": "heron"})
    with _stdio_pair(tmp_path) as (pair, answered):
        note = {"initiative": INITIATIVE, "text": "a heron", "request_id": "m-1"}
        applied = pair.request(_call(1, {**_tool("note", note), "_meta": ENVELOPE}))
        assert applied["result"]["resultType"] == "complete", applied
        assert _envelope(applied)["state"] == "applied"
        assert _envelope(pair.request(_call(2, {**search, "_meta": ENVELOPE})))["data"]["total"] == 1
        without_info = {k: v for k, v in ENVELOPE.items() if not k.endswith("clientInfo")}
        assert _envelope(pair.request(_call(3, {**search, "_meta": without_info})))["data"]["total"] == 1
        bad = pair.request(_call(4, {**_tool("note", {"initiative": INITIATIVE}), "_meta": ENVELOPE}))
        assert bad["result"]["isError"] is True
        assert _envelope(pair.request(_call(5, {**_tool("note", note), "_meta": ENVELOPE})))["replayed"] is True
        fast_calls = 5

        # The SDK's: a progress token, a malformed client info, an unknown tool, no envelope at all.
        pair.request(_call(10, {**search, "_meta": {**ENVELOPE, "progressToken": 1}}))
        pair.request(_call(11, {**search, "_meta": {**ENVELOPE, "io.modelcontextprotocol/clientInfo": "me"}}))
        pair.request(_call(12, {**_tool("no_such_tool", {}), "_meta": ENVELOPE}))
        pair.request(_call(13, {**search, "_meta": {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": 5}}))
    assert answered == {"fast": fast_calls, "sdk": None}


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_http_answers_are_identical_with_and_without_the_fast_path(tmp_path: Path) -> None:
    fast_env, sdk_env = _twin_envs(tmp_path)
    reports = {"fast": tmp_path / "fast.json", "sdk": tmp_path / "sdk.json"}
    search = _tool("search", {"initiatives": [INITIATIVE], "text": "heron"})
    fast_calls = 0
    with (
        http_server(fast_env, tmp_path, _serve_args(reports["fast"])) as fast,
        http_server(sdk_env, tmp_path, _serve_args(reports["sdk"], sdk_only=True)) as sdk,
    ):

        def both(message: dict[str, Any], version: str | None) -> dict[str, Any] | None:
            headers = {} if version is None else {"MCP-Protocol-Version": version}
            fast_answer, sdk_answer = raw_post(fast.url, message, headers), raw_post(sdk.url, message, headers)
            assert fast_answer == sdk_answer, message
            status, body = fast_answer
            assert status in (200, 202), body
            parsed: dict[str, Any] | None = json.loads(body) if body else None
            return parsed

        # Stateless HTTP: every POST is its own connection, born initialised, at the header's version.
        for n, version in enumerate([None, *sorted(WIRE_VERSIONS)]):
            base = 10 * n
            note = {"initiative": INITIATIVE, "text": f"heron sighting {n}", "request_id": f"h-{n}"}
            answer = both(_call(base + 1, _tool("note", note)), version)
            assert answer is not None and _envelope(answer)["state"] == "applied"
            answer = both(_call(base + 2, search), version)
            assert answer is not None and _envelope(answer)["data"]["total"] == n + 1
            answer = both(_call(base + 3, _tool("note", {"initiative": INITIATIVE})), version)
            assert answer is not None and answer["result"]["isError"] is True
            both(_call(base + 4, _tool("read", {"initiative": INITIATIVE, "node": MISSING_NODE})), version)
            both(_call(base + 5, _tool("note", note)), version)  # a replay
            fast_calls += 5
            both(_call(base + 6, _tool("no_such_tool", {})), version)
            both(_call(base + 7, {**search, "_meta": {"progressToken": 1}}), version)
            both(_call(None, _tool("note", {"initiative": INITIATIVE, "text": "a bittern booms"})), version)
        answer = both(_call(99, _tool("search", {"initiatives": [INITIATIVE], "text": "bittern"})), None)
        assert answer is not None and _envelope(answer)["data"]["total"] == 0
        fast_calls += 1

        def modern(message: dict[str, Any]) -> dict[str, Any] | None:
            """The same exchange as the SDK's 2026-era client sends it: the envelope in `_meta`, the
            method and tool named in headers too."""
            headers = {
                "MCP-Protocol-Version": MODERN,
                "Mcp-Method": "tools/call",
                "Mcp-Name": message["params"]["name"],
            }
            fast_answer, sdk_answer = raw_post(fast.url, message, headers), raw_post(sdk.url, message, headers)
            assert fast_answer == sdk_answer, message
            parsed: dict[str, Any] | None = json.loads(fast_answer[1]) if fast_answer[1] else None
            return parsed

        note = {"initiative": INITIATIVE, "text": "a heron at the weir", "request_id": "h-modern"}
        answer = modern(_call(100, {**_tool("note", note), "_meta": ENVELOPE}))
        assert answer is not None and answer["result"]["resultType"] == "complete"
        answer = modern(_call(101, {**search, "_meta": ENVELOPE}))
        assert answer is not None and _envelope(answer)["data"]["total"] == len(WIRE_VERSIONS) + 2
        modern(_call(102, {**_tool("note", note), "_meta": ENVELOPE}))  # a replay
        fast_calls += 3
        modern(_call(103, {**search, "_meta": {**ENVELOPE, "progressToken": 7}}))
        for server in (fast, sdk):
            stop(server.proc)  # so each writes its report before the block ends
    answered = {side: json.loads(report.read_text())["answered"] for side, report in reports.items()}
    assert answered == {"fast": fast_calls, "sdk": None}
