"""Every tool through the official TypeScript MCP SDK, the client Claude Code, Claude Desktop, Cursor
and VS Code are built on.

The client is `tests/data/ts-client/client.mjs`: `@modelcontextprotocol/sdk` and what it imports,
bundled into one file that `node` runs with no `node_modules` (the folder's README says which
versions and how to rebuild it). Its `Client.listTools` compiles every tool's output schema with
AJV and `Client.callTool` validates each result's `structuredContent` against it, so a schema AJV
cannot compile or an answer it does not accept is an error for those clients on every call. The
script calls every tool once with a realistic input (each call's ids come from the calls before it),
plus two invalid ones, and reports each call as the SDK returned it.

Runs, all against real `kaeru serve` processes on one SQLite vault (the wire format does not depend
on the backend; the Python-SDK wire tests run on both): stdio; stdio with `KAERU_STRUCTURED=off`
(the setting for Claude Code, whose model reads the text: ids are then read from the text, as a
model would); stdio with the client's own AJV handed to the SDK as its documentation shows
(`KAERU_CLIENT_AJV=strict`: strict, and checking each schema against the meta-schema its
`$schema` names, which a plain AJV knows only for draft-07); streamable HTTP from the server's own
account without a token; the same server once the vault holds a token, with it, and without it
(refused). The client starts its stdio servers through the launcher of the worker's server zygote
(decision 432), as the HTTP server is started.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from kaeru.mcp.pinned import LISTING
from tests.backends import VaultSpec, drop_vault, new_vault
from tests.cli.support import kaeru
from tests.cli.zygote_client import count_served_cpu, server_argv
from tests.wire.support import KAERU_SERVE, http_server, subprocess_env

BUNDLE = Path(__file__).resolve().parents[1] / "data" / "ts-client" / "client.mjs"
NODE = shutil.which("node")
#: The oldest Node.js the SDK supports (its package.json `engines`), and the bundle's esbuild target.
MIN_NODE = 18
#: A guard against a hung child, never a timing assertion.
HANG_SECONDS = 120

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        NODE is None,
        reason="no `node` on PATH: the TypeScript-SDK client tests need Node.js "
        "(scripts/test.sh installs Debian's nodejs when run as root)",
    ),
]

TOOLS = sorted(tool["name"] for tool in json.loads(LISTING.read_text()))
#: The runs whose every tool call is reported (the refused one never gets past `initialize`).
FULL_RUNS = ["stdio", "stdio_text_only", "stdio_strict_ajv", "http", "http_token"]
#: The run whose client validates with its own AJV (`new Ajv({validateFormats: true})`, ajv-formats).
STRICT_AJV = "stdio_strict_ajv"
INVALID = {"invalid_note": "text", "invalid_search": "limit"}
TOKEN_NAME = "ts-agent"
UUID = re.compile(r"\bid=([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b")


def _start(env: Mapping[str, str], mode: str, initiative: str, *target: str) -> subprocess.Popen[str]:
    assert NODE is not None
    return subprocess.Popen(
        [NODE, str(BUNDLE), mode, initiative, *target],
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _report(proc: subprocess.Popen[str]) -> dict[str, Any]:
    try:
        out, err = proc.communicate(timeout=HANG_SECONDS)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert out.strip(), f"the client wrote no report (exit {proc.returncode}):\n{err}"
    report: dict[str, Any] = json.loads(out)
    report["exit"] = proc.returncode
    report["stderr"] = err
    return report


def _node_major() -> int:
    assert NODE is not None
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    return int(version.lstrip("v").split(".")[0])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, dict[str, Any]], VaultSpec]]:
    if _node_major() < MIN_NODE:
        pytest.skip(f"node {_node_major()} is older than the SDK's minimum, {MIN_NODE}")
    tmp = tmp_path_factory.mktemp("ts-client")
    vault = new_vault("sqlite", tmp)
    env = subprocess_env(vault.env())
    text_env = {**env, "KAERU_STRUCTURED": "off"}
    strict_env = {**env, "KAERU_CLIENT_AJV": "strict"}
    reports: dict[str, dict[str, Any]] = {}
    # The stdio runs go alongside the HTTP ones (each run writes its own initiative).
    stdio = _start(env, "stdio", "ts-stdio", *server_argv(KAERU_SERVE, env))
    text_only = _start(text_env, "stdio", "ts-text-only", *server_argv(KAERU_SERVE, text_env))
    strict = _start(strict_env, "stdio", "ts-strict-ajv", *server_argv(KAERU_SERVE, strict_env))
    try:
        with http_server(env, tmp) as server:
            reports["http"] = _report(_start(env, "http", "ts-http", server.url))
            added = kaeru(vault, "token", "add", TOKEN_NAME, as_json=True)
            assert added.code == 0, added.stderr
            token = added.json()["token"]
            reports["http_token"] = _report(
                _start({**env, "KAERU_CLIENT_TOKEN": token}, "http", "ts-token", server.url)
            )
            reports["http_refused"] = _report(_start(env, "http", "ts-refused", server.url))
        reports["stdio"] = _report(stdio)
        reports["stdio_text_only"] = _report(text_only)
        reports[STRICT_AJV] = _report(strict)
        count_served_cpu()
        yield reports, vault
    finally:
        for proc in (stdio, text_only, strict):  # only when the HTTP runs failed first
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        drop_vault(vault)


def _calls(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {call["step"]: call for call in report["calls"]}


def _full(runs: tuple[dict[str, dict[str, Any]], VaultSpec], name: str) -> dict[str, Any]:
    report = runs[0][name]
    assert report["fatal"] is None and report["exit"] == 0, f"{name}: {report['fatal']}\n{report['stderr']}"
    return report


def _structured(run: str) -> bool:
    return run != "stdio_text_only"


@pytest.mark.parametrize("run", FULL_RUNS)
def test_the_sdk_lists_every_tool_and_every_tool_is_called(
    runs: tuple[dict[str, dict[str, Any]], VaultSpec], run: str
) -> None:
    report = _full(runs, run)
    assert report["bundled"].get("@modelcontextprotocol/sdk"), report["bundled"]
    assert report["protocolVersion"], "the SDK told the transport the negotiated protocol version"
    assert report["server"]["name"] == "kaeru-memory"
    assert report["validator"] == ("strict" if run == STRICT_AJV else "default")
    assert sorted(report["tools"]) == TOOLS
    assert report["uncalled"] == [], "a tool the client script does not call yet: add it to source/client.mjs"
    # Every output schema was compiled by the SDK's AJV in `listTools` (it throws otherwise).
    assert sorted(report["outputSchemas"]) == (TOOLS if _structured(run) else [])


@pytest.mark.parametrize("run", FULL_RUNS)
def test_every_call_passes_the_sdks_validation(runs: tuple[dict[str, dict[str, Any]], VaultSpec], run: str) -> None:
    report = _full(runs, run)
    refused = {step: call["error"] for step, call in _calls(report).items() if call["error"] is not None}
    assert refused == {}, "the TypeScript SDK refused these results"
    for step, call in _calls(report).items():
        assert call["text"], f"{step}: no text block"
        if step in INVALID:
            continue
        assert call["isError"] is False, f"{step}: {call['text']}"
        if _structured(run):
            envelope = call["structuredContent"]
            assert envelope["state"] in ("ok", "applied", "unchanged"), f"{step}: {envelope}"
            assert envelope["operation"] == call["tool"]
        else:
            assert call["structuredContent"] is None, step


@pytest.mark.parametrize("run", FULL_RUNS)
def test_an_invalid_input_is_a_rejected_envelope_naming_the_field(
    runs: tuple[dict[str, dict[str, Any]], VaultSpec], run: str
) -> None:
    calls = _calls(_full(runs, run))
    for step, field in INVALID.items():
        call = calls[step]
        assert call["error"] is None, f"{step}: a protocol error, not an envelope: {call['error']}"
        assert call["isError"] is True
        assert f"[{field}]" in call["text"] and "rejected" in call["text"], call["text"]
        if _structured(run):
            envelope = call["structuredContent"]
            assert envelope["state"] == "rejected"
            assert [(i["code"], i["field"]) for i in envelope["issues"]] == [("invalid_argument", field)]


@pytest.mark.parametrize("run", FULL_RUNS)
def test_what_one_call_writes_the_next_reads_back(runs: tuple[dict[str, dict[str, Any]], VaultSpec], run: str) -> None:
    report = _full(runs, run)
    calls = _calls(report)
    initiative = calls["note"]["arguments"]["initiative"]
    noted = UUID.search(calls["note"]["text"])
    assert noted, calls["note"]["text"]
    node = noted.group(1)
    # What the model reads (the text block) carries what it needs for the next call.
    assert node in calls["search"]["text"] and "zqtsone" in calls["search"]["text"]
    assert "zqtsone" in calls["read"]["text"]
    assert node in calls["read_after_revise"]["text"] and "zqtstwo" in calls["read_after_revise"]["text"]
    assert node in calls["search_after_revise"]["text"] and node in calls["search_with_progress"]["text"]
    # The archive the last write call exported, on disk under the vault's export root.
    archive = runs[1].vault_dir / "exports" / f"{initiative}.amg"
    assert "zqtstwo" in archive.read_text(), archive
    if not _structured(run):
        return
    envelope = {step: call["structuredContent"] for step, call in calls.items()}
    assert envelope["note"]["data"]["primary"]["id"] == node
    assert envelope["note_replayed"]["replayed"] is True
    assert envelope["note_replayed"]["data"]["primary"]["id"] == node
    assert [i["name"] for i in envelope["initiatives"]["data"]["initiatives"]] == [initiative]
    assert [hit["id"] for hit in envelope["search"]["data"]["hits"]] == [node]
    assert envelope["read"]["data"]["hits"][0]["id"] == node
    revised = envelope["revise"]["data"]["primary"]
    assert revised["id"] == node and revised["revision"] != envelope["read"]["data"]["hits"][0]["revision"]
    assert envelope["read_after_revise"]["data"]["hits"][0]["revision"] == revised["revision"]
    for step in ("search_after_revise", "search_with_progress"):
        assert [hit["id"] for hit in envelope[step]["data"]["hits"]] == [node], step
    assert node in {hit["id"] for hit in envelope["recall"]["data"]["hits"]}
    assert envelope["current_state"]["data"]["current"]["id"] == node
    assert envelope["task_update"]["data"]["changes"] == [{"field": "status", "before": "open", "after": "done"}]
    assert envelope["forget"]["data"]["changes"][0]["after"] == "retracted"
    renamed = envelope["initiative"]["data"]["changes"]
    assert renamed == [{"field": "initiative", "before": f"{initiative}-draft", "after": f"{initiative}-renamed"}]
    assert Path(envelope["archive"]["data"]["artifacts"][0]["path"]) == archive


def test_a_vault_token_names_the_actor_and_a_client_without_one_is_refused(
    runs: tuple[dict[str, dict[str, Any]], VaultSpec],
) -> None:
    def actors(run: str) -> set[str]:
        history = _calls(_full(runs, run))["trail"]["structuredContent"]["data"]["entries"]
        revisions = [entry for entry in history if entry["kind"] == "revision"]
        assert [entry["action"] for entry in revisions] == ["created", "revised"]
        return {entry["actor"] for entry in revisions}

    assert actors("http_token") == {TOKEN_NAME}
    assert actors("http") == {"agent"}  # the server's own actor (KAERU_ACTOR unset)
    refused = runs[0]["http_refused"]
    assert refused["exit"] == 2 and refused["calls"] == [], refused
    assert "unauthorized" in (refused["fatal"] or ""), refused["fatal"]


@pytest.mark.parametrize("run", FULL_RUNS)
def test_prompts_and_resources_pass_the_sdks_checks_too(
    runs: tuple[dict[str, dict[str, Any]], VaultSpec], run: str
) -> None:
    extras = _full(runs, run)["extras"]
    assert {name: extra["ok"] for name, extra in extras.items()} == dict.fromkeys(
        ["ping", "prompts", "prompt_resume", "resources", "resource_templates", "read_initiatives"], True
    ), extras
    assert extras["prompts"]["value"] == ["resume", "decide", "hypothesis"]
    assert "kaeru://node/{id}" in extras["resource_templates"]["value"]
