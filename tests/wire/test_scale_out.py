"""Scale-out: several servers over one vault, many concurrent clients, a bounded mixed workload.

PostgreSQL: three `kaeru serve --http` processes over one database. SQLite: three stdio server
processes over one vault file. Eight client workers spread over them write with `request_id`,
retry the same `request_id` on a different server, race compare-and-set revisions and search.
Afterwards: no errors except the expected conflicts, every `request_id` applied exactly once, no
lost write, and every server sees every write.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.backends import VaultSpec
from tests.wire.support import http_server, stdio_params, structured, subprocess_env

WORKERS = 8
NOTES_PER_WORKER = 12
CAS_ATTEMPTS = 4
SERVERS = 3


@asynccontextmanager
async def _servers(vault: VaultSpec, log_dir: Path) -> AsyncIterator[list[Client]]:
    env = subprocess_env(vault.env())
    async with AsyncExitStack() as stack:
        clients: list[Client] = []
        for _ in range(SERVERS):
            if vault.backend == "postgres":
                server = stack.enter_context(http_server(env, log_dir))
                clients.append(await stack.enter_async_context(Client(server.url)))
            else:
                clients.append(await stack.enter_async_context(Client(stdio_params(env))))
        yield clients


async def _call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return structured(await client.call_tool(tool, args))


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.timeout(300)
async def test_many_servers_one_vault_no_lost_or_doubled_write(vault: VaultSpec, tmp_path: Path) -> None:
    async with _servers(vault, tmp_path) as clients:
        seed = await _call(
            clients[0], "note", {"initiative": "scale", "text": "shared counter 0", "request_id": "seed"}
        )
        counter = seed["data"]["primary"]["id"]
        applied: dict[str, str] = {}
        replays: list[tuple[str, str, bool]] = []
        cas = {"applied": 0, "conflicts": 0}
        unexpected: list[dict[str, Any]] = []

        async def worker(index: int) -> None:
            rng = random.Random(index)
            home, other = clients[index % SERVERS], clients[(index + 1) % SERVERS]
            for n in range(NOTES_PER_WORKER):
                key = f"w{index}-n{n}"
                args = {
                    "initiative": "scale",
                    "text": f"scale note {key} token{index}x{n}",
                    "tags": ["scale-run"],
                    "request_id": key,
                }
                first = await _call(home, "note", args)
                again = await _call(other, "note", args)
                if first["state"] != "applied" or again["state"] != "applied":
                    unexpected.extend([first, again])
                    continue
                applied[key] = first["data"]["primary"]["id"]
                replays.append((first["data"]["primary"]["id"], again["data"]["primary"]["id"], again["replayed"]))
                if rng.random() < 0.5:
                    found = await _call(
                        clients[rng.randrange(SERVERS)], "search", {"initiatives": ["scale"], "text": key}
                    )
                    if found["state"] != "ok":
                        unexpected.append(found)
            for attempt in range(CAS_ATTEMPTS):
                read = await _call(home, "read", {"initiative": "scale", "node": counter})
                revision = read["data"]["hits"][0]["revision"]
                result = await _call(
                    home,
                    "revise",
                    {
                        "initiative": "scale",
                        "node": counter,
                        "expected_revision": revision,
                        "patch": {"body": f"shared counter bumped by w{index} attempt {attempt}"},
                    },
                )
                if result["state"] == "applied":
                    cas["applied"] += 1
                elif result["issues"] and result["issues"][0]["code"] == "revision_conflict":
                    assert result["issues"][0]["retryable"] is True
                    cas["conflicts"] += 1
                else:
                    unexpected.append(result)

        async with anyio.create_task_group() as group:
            for index in range(WORKERS):
                group.start_soon(worker, index)

        assert unexpected == [], unexpected[:3]
        assert len(applied) == WORKERS * NOTES_PER_WORKER
        assert all(a == b and replayed for a, b, replayed in replays), "a retry on another server is a replay"
        assert len(set(applied.values())) == len(applied), "every request_id created exactly one node"
        for client in clients:
            seen: set[str] = set()
            args: dict[str, Any] = {"initiatives": ["scale"], "filters": {"tags": ["scale-run"]}, "limit": 50}
            while True:
                page = await _call(client, "search", args)
                seen.update(h["id"] for h in page["data"]["hits"])
                if not page.get("continuation"):
                    break
                args = page["continuation"]["next_arguments"]
            assert seen == set(applied.values()), "every server sees every write"
        history = await _call(clients[2], "trail", {"initiative": "scale", "node": counter, "kind": "history"})
        revisions = [e for e in history["data"]["entries"] if e["kind"] == "revision"]
        assert len(revisions) == 1 + cas["applied"], "every applied compare-and-set is one revision, none lost"
        assert cas["applied"] >= 1 and cas["applied"] + cas["conflicts"] == WORKERS * CAS_ATTEMPTS
