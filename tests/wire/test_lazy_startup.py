"""`kaeru serve` answers `initialize` before the service layer, the schemas and the validators exist
(decision 16.O1): they are built at the first `tools/list` or call, and then answer exactly as when
built up front."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.wire.support import initialize_request

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "src" / "kaeru" / "mcp" / "tools.json"


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _call(request_id: int, tool: str, arguments: dict[str, Any]) -> bytes:
    return _line(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    )


def test_the_serve_path_imports_no_service_layer_schemas_or_validators() -> None:
    """What `kaeru serve` imports before it answers `initialize`."""
    probe = (
        "import sys, kaeru.cli.app, kaeru.mcp.server, kaeru.mcp.transports, kaeru.storage.sqlite.store\n"
        "heavy = ('kaeru.service', 'kaeru.api.envelope', 'kaeru.api.schemas', 'kaeru.mcp.tools', 'jsonschema',"
        " 'jsonschema_rs')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_opening_a_vault_loads_sqlite_vec_without_importing_numpy(tmp_path: Path) -> None:
    """`kaeru serve` opens the vault before `initialize`; sqlite-vec's functions are loaded into each
    connection from its extension file, not through its Python package, whose `__init__` imports
    numpy and the `sqlite3` module (~13 MB resident in every server, decision 95). A name asked
    about in a new vault (nothing to compare it with) does not load rapidfuzz (decision 96)."""
    probe = (
        "import sys\n"
        "from kaeru.config import Settings\n"
        "from kaeru.domain.similar import suggest\n"
        "from kaeru.storage.factory import open_store\n"
        "from kaeru.storage.sqlite import vectors\n"
        f"store = open_store(Settings.from_env({{'KAERU_VAULT': {str(tmp_path / 'vault')!r}}}))\n"
        "assert suggest('kaeru-core', []) == []\n"
        "print(sorted(m for m in ('numpy', 'sqlite3', 'sqlite_vec', 'rapidfuzz') if m in sys.modules))\n"
        "if vectors.native_available():\n"
        "    with store.read() as session:\n"
        "        print(session._db.one('SELECT vec_version()', ()))\n"
        "store.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "[]"
    if len(lines) > 1:  # sqlite-vec installed: its own functions, loaded from its file
        assert lines[1].startswith("('v0."), lines[1]


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_serve_answers_initialize_tools_list_and_calls_when_everything_is_lazy(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    lines = [
        _line(initialize_request(1)),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
        _call(3, "note", {"initiative": "lazy", "text": "built on first use", "kind": "observation"}),
        _call(4, "search", {"initiatives": ["lazy"], "text": "built"}),
        _call(5, "search", {"initiatives": ["lazy"], "text": "built", "limit": "ten"}),  # refused by the schema
    ]
    with (tmp_path / "stderr.log").open("wb") as err:
        proc = subprocess.run(
            [sys.executable, "-m", "kaeru", "serve"],
            input=b"".join(lines),
            stdout=subprocess.PIPE,
            stderr=err,
            env=server_env,
            timeout=90,
            check=False,
        )
    assert proc.returncode == 0, (tmp_path / "stderr.log").read_text()
    answers = {a["id"]: a for a in (json.loads(raw) for raw in proc.stdout.splitlines() if raw.strip())}
    assert sorted(answers) == [1, 2, 3, 4, 5]

    init = answers[1]["result"]
    assert init["serverInfo"]["name"] == "kaeru-memory"
    assert init["instructions"].startswith("kaeru is your persistent memory of record")
    assert "tools" in init["capabilities"]

    listed = answers[2]["result"]["tools"]
    assert json.loads(json.dumps(listed, sort_keys=True)) == json.loads(SNAPSHOT.read_text())

    noted = answers[3]["result"]
    assert noted["isError"] is False and noted["structuredContent"]["state"] == "applied"
    found = answers[4]["result"]["structuredContent"]
    assert found["state"] == "ok"
    assert [hit["id"] for hit in found["data"]["hits"]] == [noted["structuredContent"]["data"]["primary"]["id"]]
    refused = answers[5]["result"]
    assert refused["isError"] is True
    issue = refused["structuredContent"]["issues"][0]
    assert issue["code"] == "invalid_argument" and issue["field"] == "limit"


def test_a_lazy_server_lists_its_tools_before_the_service_exists_and_builds_it_once(
    service: Service, store: Store
) -> None:
    """The first `tools/list` is answered from the pinned listing while the service is still being
    built (decision 16.O3): here the service cannot be built until the listing is back."""
    opened: list[Service] = []
    listed = threading.Event()

    def open_service() -> Service:
        assert listed.wait(60), "tools/list waited for the service"
        opened.append(service)
        return service

    lazy = build_server(store=store, open_service=open_service)
    assert not lazy.registry.loaded and opened == []
    assert lazy.server.create_initialization_options().instructions  # what `initialize` answers
    assert opened == []
    settled: list[bool] = []
    lazy.registry.settle = lambda: settled.append(True)

    listing = [t.model_dump(mode="json", by_alias=True) for t in lazy.registry.list_tools()]
    listed.set()
    lazy.registry.wait_loaded(60)
    assert opened == [service] and settled == [True] and lazy.registry.loaded
    eager = build_server(service)
    assert listing == [t.model_dump(mode="json", by_alias=True) for t in eager.registry.list_tools()]
    assert lazy.service is service and lazy.store is store
    assert [t.model_dump(mode="json", by_alias=True) for t in lazy.registry.list_tools()] == listing
    assert opened == [service] and settled == [True]  # once


def test_a_call_while_the_tools_are_being_built_waits_for_them_and_they_are_built_once(
    service: Service, store: Store
) -> None:
    opened: list[Service] = []
    release = threading.Event()

    def open_service() -> Service:
        assert release.wait(60)
        opened.append(service)
        return service

    lazy = build_server(store=store, open_service=open_service)
    lazy.registry.list_tools()  # starts the building
    answers: list[dict[str, Any]] = []
    caller = threading.Thread(target=lambda: answers.append(lazy.registry.run("initiatives", {})))
    caller.start()
    release.set()
    caller.join(60)
    assert answers and answers[0]["state"] == "ok"
    assert opened == [service]


def test_without_structured_output_the_pinned_listing_drops_the_output_schemas(service: Service, store: Store) -> None:
    from kaeru.mcp.adapter import Output

    lazy = build_server(
        store=store, open_service=lambda: service, settings=dataclasses.replace(service.rt.settings, structured=False)
    )
    pinned = lazy.registry.list_tools()
    lazy.registry.wait_loaded(60)
    assert lazy.registry.output == Output(structured=False)
    assert all(tool.output_schema is None for tool in pinned)
    assert [t.model_dump(by_alias=True) for t in pinned] == [
        t.model_dump(by_alias=True) for t in lazy.registry.list_tools()
    ]


def test_calling_one_tool_first_builds_that_tool_only(service: Service, store: Store) -> None:
    """The first call builds its own tool's schema and validator, not every tool's (decision 16.S1):
    `tools/list` is answered from the pinned listing before and after the building."""
    lazy = build_server(store=store, open_service=lambda: service)
    first = [t.model_dump(mode="json", by_alias=True) for t in lazy.registry.list_tools()]
    lazy.registry.wait_loaded(60)
    assert lazy.registry.loaded and lazy.registry.built_tools() == set()
    found = lazy.registry.run("search", {"initiatives": ["per-tool"], "text": "anything"})
    assert found["state"] == "ok"
    assert lazy.registry.built_tools() == {"search"}
    refused = lazy.registry.run("note", {"initiative": "per-tool"})  # refused by note's own schema
    assert refused["state"] == "rejected" and refused["issues"][0]["code"] == "invalid_argument"
    assert lazy.registry.built_tools() == {"search", "note"}
    again = [t.model_dump(mode="json", by_alias=True) for t in lazy.registry.list_tools()]
    assert again == first and lazy.registry.built_tools() == {"search", "note"}
    # A registry over a service builds its listing from the specs: every tool, the pinned answer.
    eager = build_server(service).registry
    assert eager.built_tools() == set()
    assert [t.model_dump(mode="json", by_alias=True) for t in eager.list_tools()] == first
    assert eager.built_tools() == set(eager.specs)


def test_the_first_search_after_a_lazy_start_loads_its_own_use_case_only(server_env: dict[str, str]) -> None:
    """What the service loader and a first `search` import and build, in a fresh interpreter as
    `kaeru serve` runs them (decision 16.S1): not the other use cases, the secret scanner, the
    archive code, the other tools' schemas or the other request models' pydantic schemas."""
    probe = (
        "import sys\n"
        "from kaeru.cli.common import open_service\n"
        "from kaeru.config import Settings\n"
        "from kaeru.mcp.server import build_server\n"
        "from kaeru.storage.factory import open_store\n"
        "settings = Settings.from_env()\n"
        "store = open_store(settings)\n"
        "kaeru = build_server(store=store, open_service=lambda: open_service(settings, store), settings=settings)\n"
        "kaeru.registry.list_tools()\n"
        "kaeru.registry.wait_loaded(60)\n"
        "answer = kaeru.registry.run('search', {'initiatives': ['probe'], 'text': 'anything'})\n"
        "from kaeru.service.requests import REQUESTS\n"
        "heavy = ('kaeru.service.capture', 'kaeru.service.context', 'kaeru.service.recall', 'kaeru.service.reflect',"
        " 'kaeru.service.evolve', 'kaeru.domain.secrets', 'kaeru.export.archive', 'kaeru.api.working',"
        " 'kaeru.service.requests.reads', 'kaeru.service.requests.writes')\n"
        "print(answer['state'])\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "print(sorted(kaeru.registry.built_tools()))\n"
        "print(sorted(name for name, model in REQUESTS.items() if model.__pydantic_complete__))\n"
        "store.close()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=server_env, check=True, timeout=60
    )
    assert out.stdout.splitlines() == ["ok", "[]", "['search']", "[]"], out.stderr


def test_the_tools_are_built_once_initialize_is_answered(service: Service, store: Store) -> None:
    """On stdio, `notifications/initialized` starts the building (decision 16.S1): the first call
    or `tools/list` finds the tools built or half-way, not `initialize` itself."""
    import asyncio
    import os

    from kaeru.mcp.pipes import PipeReadStream, PipeWriteStream

    lazy = build_server(store=store, open_service=lambda: service)
    sink = os.open(os.devnull, os.O_WRONLY)

    async def scenario() -> list[str]:
        reader = asyncio.StreamReader()
        reader.feed_data(
            _line(initialize_request(1)) + _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        reader.feed_eof()
        stream = PipeReadStream(reader, lazy.registry, PipeWriteStream(sink))
        seen = []
        for _ in range(2):
            message = await stream.receive()
            assert not isinstance(message, Exception)
            seen.append(getattr(message.message, "method", ""))
            if len(seen) == 1:
                lazy.registry.wait_loaded(60)
                assert not lazy.registry.loaded  # `initialize` itself starts nothing
        return seen

    try:
        assert asyncio.run(scenario()) == ["initialize", "notifications/initialized"]
        lazy.registry.wait_loaded(60)
        assert lazy.registry.loaded and lazy.service is service
    finally:
        os.close(sink)


def test_a_tools_declared_input_schema_is_looked_up_without_listing_the_tools(service: Service, store: Store) -> None:
    """A 2026-07-28 HTTP `tools/call` has its `Mcp-Param-*` headers checked against the called tool's
    declared `inputSchema`; the server hands the SDK that schema by name, so the SDK does not run
    the whole `tools/list` for every call (decision 161). What it hands over is exactly what
    `tools/list` declares — from the pinned listing in `kaeru serve`'s lazy registry, without
    loading anything, and from the specs in one built over a service — and nothing for a name
    that is no tool."""
    pinned = json.loads(SNAPSHOT.read_text())
    lazy = build_server(store=store, open_service=lambda: service)
    lookup = lazy.server.get_tool_input_schema
    assert lookup is not None
    for tool in pinned:
        assert lookup(tool["name"]) == tool["inputSchema"], tool["name"]
    assert lookup("no_such_tool") is None
    assert not lazy.registry.loaded  # looked up in the pinned listing: nothing was loaded or built

    eager = build_server(service)
    lookup = eager.server.get_tool_input_schema
    assert lookup is not None
    listed = [t.model_dump(mode="json", by_alias=True) for t in eager.registry.list_tools()]
    assert [t["name"] for t in listed] == [t["name"] for t in pinned]
    for tool in listed:
        assert lookup(tool["name"]) == tool["inputSchema"], tool["name"]
    assert lookup("no_such_tool") is None


def test_with_the_semantic_channel_on_the_model_is_loaded_after_the_first_listing_without_a_call(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    """The first write or `recall` embeds a text; with the model loaded only then, that first call
    waited seconds for it (decision 235). After `initialize` and the first `tools/list`, and no tool
    call, the server loads it on its own (torch's library appears among the process's mappings)."""
    from kaeru.semantic import available
    from tests.wire.support import stop, wait_until

    if not available():
        pytest.skip("the [semantic] extra is not installed")
    if not Path("/proc/self/maps").exists():
        pytest.skip("reads the process's mappings from /proc")
    with (tmp_path / "stderr.log").open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kaeru", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            env={**server_env, "KAERU_SEMANTIC": "1"},
        )
    maps = Path(f"/proc/{proc.pid}/maps")
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(
            _line(initialize_request(1)) + _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        proc.stdin.write(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}))
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert [a["id"] for a in answers] == [1, 2] and answers[1]["result"]["tools"]
        wait_until(lambda: "libtorch" in maps.read_text(), 240, "the semantic model loaded without a call")
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        stop(proc)
