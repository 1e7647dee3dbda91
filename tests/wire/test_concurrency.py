"""Races users run into: retries that arrive together, two agents editing one node, several server
processes on one vault, and paging while someone else writes.

Contenders are released together by a barrier (a `threading.Barrier`, or a file whose appearance
releases worker processes), never by sleeping and hoping.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from kaeru.api import envelope as env
from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.wire.support import (
    call_ok,
    collect,
    http_server,
    release_barrier,
    spawn,
    stdio_params,
    stop,
    structured,
    subprocess_env,
    wait_until,
    worker_command,
)

pytestmark = [pytest.mark.slow]

CONTENDERS = 20


@pytest.fixture
def service_on(vault: VaultSpec) -> Iterator[Service]:
    """An in-process service on the test's vault (also migrates it before any subprocess runs)."""
    store = open_store(vault.settings())
    try:
        yield Service(store, vault.settings())
    finally:
        store.close()


def _count(service: Service, initiative: str, text: str) -> tuple[int, list[str]]:
    found = service.search(
        parse("search", {"initiatives": [initiative], "text": text, "limit": 50, "filters": {"current": "all"}})
    )
    return found.total, [hit.node.id for hit in found.hits]


def _assert_replayed_once(envelopes: list[dict[str, Any]]) -> str:
    """Every response is the same applied note; exactly one executed, the others replayed it."""
    assert len(envelopes) == CONTENDERS
    rejected = [e for e in envelopes if e["state"] == "rejected"]
    assert not rejected, rejected[:3]
    primaries = {e["data"]["primary"]["id"] for e in envelopes}
    assert len(primaries) == 1, primaries
    assert all(e["state"] == "applied" for e in envelopes)
    replayed = [e["replayed"] for e in envelopes]
    assert replayed.count(True) == CONTENDERS - 1, replayed
    assert replayed.count(False) == 1
    revisions = {e["data"]["primary"]["revision"] for e in envelopes}
    assert len(revisions) == 1, revisions
    return primaries.pop()


@pytest.mark.timeout(120)
def test_replay_concurrent_threads_apply_once(vault: VaultSpec, service_on: Service) -> None:
    args = {
        "initiative": "replay-threads",
        "text": "deploy freeze starts friday zq7threads",
        "request_id": "rq-threads",
    }
    barrier = threading.Barrier(CONTENDERS, timeout=60)
    envelopes: list[dict[str, Any]] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def contender() -> None:
        store = None
        try:
            settings = vault.settings()
            store = open_store(settings)
            service = Service(store, settings)
            barrier.wait()
            try:
                outcome, replayed = service.note(parse("note", dict(args)))
                envelope = env.mutation_envelope("note", outcome, replayed=replayed, request_id=args["request_id"])
            except KaeruError as error:
                envelope = env.rejected_envelope("note", env.MUTATION_KIND, error, args["request_id"])
            with lock:
                envelopes.append(envelope)
        except BaseException as exc:
            with lock:
                failures.append(exc)
            barrier.abort()
        finally:
            if store is not None:
                store.close()

    threads = [threading.Thread(target=contender, name=f"contender-{i}") for i in range(CONTENDERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert not any(t.is_alive() for t in threads), "a contender hung"
    assert not failures, failures
    node_id = _assert_replayed_once(envelopes)
    assert _count(service_on, "replay-threads", "zq7threads") == (1, [node_id])


@pytest.mark.timeout(180)
def test_replay_concurrent_processes_apply_once(vault: VaultSpec, service_on: Service, tmp_path: Path) -> None:
    args = {"initiative": "replay-procs", "text": "rotate the signing keys zq7procs", "request_id": "rq-procs"}
    ready, go = tmp_path / "ready", tmp_path / "go"
    ready.mkdir()
    envp = subprocess_env(vault.env())
    procs, logs = [], []
    try:
        for i in range(CONTENDERS):
            log = tmp_path / f"worker-{i}.log"
            command = worker_command(
                "worker", "--operation", "note", "--args", json.dumps(args), "--ready", str(ready), "--go", str(go)
            )
            procs.append(spawn([*command, "--name", f"w{i}"], envp, log))
            logs.append(log)
        release_barrier(ready, CONTENDERS, go, procs)
        envelopes = collect(procs, logs, timeout=90)
    finally:
        for proc in procs:
            stop(proc)
    node_id = _assert_replayed_once(envelopes)
    assert _count(service_on, "replay-procs", "zq7procs") == (1, [node_id])


@pytest.mark.timeout(120)
def test_compare_and_set_has_one_winner_across_processes(vault: VaultSpec, service_on: Service, tmp_path: Path) -> None:
    outcome, _ = service_on.note(parse("note", {"initiative": "cas", "text": "the release owner is undecided"}))
    assert outcome.primary is not None
    node_id, revision = outcome.primary.id, outcome.primary.revision
    bodies = ["the release owner is Ana", "the release owner is Bo"]
    ready, go = tmp_path / "ready", tmp_path / "go"
    ready.mkdir()
    envp = subprocess_env(vault.env())
    procs, logs = [], []
    try:
        for i, body in enumerate(bodies):
            call = {"initiative": "cas", "node": node_id, "patch": {"body": body}, "expected_revision": revision}
            log = tmp_path / f"cas-{i}.log"
            command = worker_command(
                "worker", "--operation", "revise", "--args", json.dumps(call), "--ready", str(ready), "--go", str(go)
            )
            procs.append(spawn([*command, "--name", f"w{i}"], envp, log))
            logs.append(log)
        release_barrier(ready, len(bodies), go, procs)
        envelopes = collect(procs, logs, timeout=60)
    finally:
        for proc in procs:
            stop(proc)

    states = sorted(e["state"] for e in envelopes)
    assert states == ["applied", "rejected"], envelopes
    [winner] = [e for e in envelopes if e["state"] == "applied"]
    [loser] = [e for e in envelopes if e["state"] == "rejected"]
    [issue] = loser["issues"]
    assert issue["code"] == "revision_conflict"
    assert issue["retryable"] is True
    won_revision = winner["data"]["primary"]["revision"]
    assert won_revision in issue["message"], "the conflict names the current revision"
    assert loser["data"]["primary"] is None

    winning_body = bodies[envelopes.index(winner)]
    current = service_on.read(parse("read", {"initiative": "cas", "node": node_id}))
    [view] = current.hits
    assert (view.node.revision, view.node.body) == (won_revision, winning_body)


SERVERS = 4
NOTES_EACH = 50


@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_several_stdio_servers_share_one_sqlite_vault(sqlite_vault: VaultSpec) -> None:
    from mcp import Client

    envp = subprocess_env(sqlite_vault.env())
    all_connected = anyio.Event()
    connected = 0
    written: dict[str, str] = {}  # unique token → id
    problems: list[Any] = []
    finished = anyio.Event()
    done = 0

    def text_of(server: int, item: int) -> tuple[str, str]:
        token = f"zq7s{server}n{item}"
        return token, f"parallel capture from session {server}, item {item}: {token}"

    async def note(client: Any, server: int, item: int) -> None:
        token, text = text_of(server, item)
        result = await client.call_tool("note", {"initiative": "shared-file", "text": text})
        envelope = structured(result)
        if result.is_error or envelope["state"] != "applied":
            problems.append(envelope)
        else:
            written[token] = envelope["data"]["primary"]["id"]

    async def session(server: int) -> None:
        nonlocal connected, done
        async with Client(stdio_params(envp)) as client:
            connected += 1
            if connected == SERVERS:
                all_connected.set()
            await all_connected.wait()
            async with anyio.create_task_group() as tg:
                for item in range(NOTES_EACH):
                    tg.start_soon(note, client, server, item)
            done += 1
            if done == SERVERS:
                finished.set()
            # Stay connected until every session is done, so all servers overlap throughout.
            await finished.wait()

    with anyio.fail_after(150):
        async with anyio.create_task_group() as tg:
            for server in range(SERVERS):
                tg.start_soon(session, server)

    assert not problems, problems[:3]
    assert len(written) == SERVERS * NOTES_EACH
    assert len(set(written.values())) == SERVERS * NOTES_EACH

    # A fresh server (a new session) sees every write: nothing was lost.
    with anyio.fail_after(120):
        async with Client(stdio_params(envp)) as client:
            for server in range(SERVERS):
                for item in range(NOTES_EACH):
                    token, text = text_of(server, item)
                    found = await call_ok(client, "search", {"initiatives": ["shared-file"], "text": token})
                    hits = [(hit["id"], hit["body"]) for hit in found["data"]["hits"]]
                    assert hits == [(written[token], text)], (token, hits)
            every = await call_ok(
                client, "search", {"initiatives": ["shared-file"], "text": "parallel capture", "match": "all"}
            )
            assert every["data"]["total"] == SERVERS * NOTES_EACH


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_several_stateless_http_servers_share_one_vault(vault: VaultSpec, tmp_path: Path) -> None:
    from mcp import Client

    envp = subprocess_env(vault.env())
    written: dict[int, str] = {}
    problems: list[Any] = []

    async def note(client: Any, item: int) -> None:
        result = await client.call_tool("note", {"initiative": "team", "text": f"team capture zq7h{item}"})
        envelope = structured(result)
        if result.is_error or envelope["state"] != "applied":
            problems.append(envelope)
        else:
            written[item] = envelope["data"]["primary"]["id"]

    with (
        http_server(envp, tmp_path) as first,
        http_server(envp, tmp_path) as second,
        anyio.fail_after(90),
    ):
        async with Client(first.url) as one, Client(second.url) as two:
            async with anyio.create_task_group() as tg:
                for item in range(60):
                    tg.start_soon(note, one if item % 2 else two, item)
            assert not problems, problems[:3]
            assert len(set(written.values())) == 60
            # Each server sees what the other wrote.
            for client in (one, two):
                every = await call_ok(
                    client, "search", {"initiatives": ["team"], "text": "team capture", "match": "all"}
                )
                assert every["data"]["total"] == 60
            for item, node_id in written.items():
                reader = two if item % 2 else one
                found = await call_ok(reader, "search", {"initiatives": ["team"], "text": f"zq7h{item}"})
                assert [hit["id"] for hit in found["data"]["hits"]] == [node_id]


SEEDED = 500
PAGE = 7


@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_paging_is_stable_while_another_process_writes(
    vault: VaultSpec, service_on: Service, tmp_path: Path
) -> None:
    from mcp import Client

    initiative, marker = "paging", "zq7page ledger entry"
    seeded = set()
    for i in range(SEEDED):
        outcome, _ = service_on.note(parse("note", {"initiative": initiative, "text": f"{marker} number {i}"}))
        assert outcome.primary is not None
        seeded.add(outcome.primary.id)
    assert len(seeded) == SEEDED

    envp = subprocess_env(vault.env())
    inserter_ready, inserter_stop = tmp_path / "inserter-ready", tmp_path / "inserter-stop"
    log = tmp_path / "inserter.log"
    inserter = spawn(
        worker_command(
            "inserter",
            "--initiative",
            initiative,
            "--text",
            marker,
            "--ready",
            str(inserter_ready),
            "--stop",
            str(inserter_stop),
            "--max",
            "3000",
        ),
        envp,
        log,
    )
    try:
        wait_until(inserter_ready.exists, 60, "the inserter's first write")
        seen: list[str] = []
        pages = 0
        with anyio.fail_after(150):
            async with Client(stdio_params(envp)) as client:
                arguments: dict[str, Any] = {"initiatives": [initiative], "text": "zq7page", "limit": PAGE}
                first_total = None
                while True:
                    page = await call_ok(client, "search", arguments)
                    pages += 1
                    assert pages <= 3 * SEEDED // PAGE, "paging does not end"
                    seen.extend(hit["id"] for hit in page["data"]["hits"])
                    if first_total is None:
                        first_total = page["data"]["total"]
                        # Make sure the other process really writes between our pages.
                        deadline = anyio.current_time() + 60
                        while True:
                            fresh = await call_ok(
                                client, "search", {"initiatives": [initiative], "text": "zq7page", "limit": 1}
                            )
                            if fresh["data"]["total"] > first_total:
                                break
                            assert anyio.current_time() < deadline, "the inserter made no progress"
                            await anyio.sleep(0.02)
                    continuation = page.get("continuation")
                    if not continuation:
                        break
                    arguments = continuation["next_arguments"]
    finally:
        inserter_stop.touch()
        try:
            out, _ = inserter.communicate(timeout=60)
        finally:
            stop(inserter)
    assert inserter.returncode == 0, log.read_text()
    report = json.loads(out)
    assert report["applied"] > 0 and not report["rejected"], report

    duplicates = {i for i in seen if seen.count(i) > 1}
    assert not duplicates, f"{len(duplicates)} ids returned twice"
    skipped = seeded - set(seen)
    assert not skipped, f"{len(skipped)} of the original {SEEDED} never returned"
    assert first_total is not None and first_total >= SEEDED
    after = service_on.search(parse("search", {"initiatives": [initiative], "text": "zq7page", "limit": 1}))
    assert after.total > first_total, "the concurrent inserts are visible to a new search"
