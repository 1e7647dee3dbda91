"""Crash safety under `kill -9` (issue 15): acknowledged writes survive, nothing is applied twice.

One round: `servers` real `kaeru serve` processes (over HTTP, or over stdio — one pipe each, as
every agent spawns its own) on one vault — a SQLite file or a PostgreSQL database. Several writer
threads send `note` calls, each with a unique `request_id`, and record which were ACKNOWLEDGED (an
answer received, state `applied`). After a randomly drawn number of acknowledged writes, one server
process gets SIGKILL in the middle of the traffic; writers on the other servers keep writing. Then
the killed server is started again and, through it:

* every acknowledged `request_id`'s node is present, exactly once, with the acknowledged id;
* a write sent but never answered (in flight at the kill) is present once or absent, never twice;
* re-sending every call with the same arguments answers `replayed: true` with the same node id when
  the write is present, and applies it afresh (`replayed: false`) when it is absent;
* a text search finds exactly the stored notes (the full-text index agrees with the nodes);
* after every server is gone, the SQLite file passes `PRAGMA integrity_check` and
  `PRAGMA foreign_key_check` (opened directly with apsw).

`python -m bench.crash --rounds N` is the long mode (its figures go in docs/reliability.md, section
"Crash safety"); `tests/wire/test_crash.py` runs a few rounds of the same harness on both backends.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tests.wire.support import free_port, initialize_request, stop, subprocess_env, wait_until

LOOPBACK = "127.0.0.1"
STARTUP_SECONDS = 60.0
CALL_SECONDS = 60.0
INITIATIVE = "crash"
TAG = "crash-run"


class Unanswered(Exception):
    """The call was sent but its answer never came: the server's connection or pipe went away."""


class Endpoint(Protocol):
    proc: subprocess.Popen[bytes]

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]: ...


def _envelope(message: dict[str, Any], tool: str) -> dict[str, Any]:
    if "result" not in message:
        raise AssertionError(f"{tool}: JSON-RPC error {message}")
    envelope = message["result"].get("structuredContent")
    if not isinstance(envelope, dict):
        raise AssertionError(f"{tool}: no structured content in {message}")
    return envelope


# --- servers over HTTP ----------------------------------------------------------------------------


class HttpEndpoint:
    """`kaeru serve --http` (stateless): one POST per call, any number of threads at once."""

    def __init__(self, env: Mapping[str, str], log_dir: Path):
        self.port = free_port()
        self.log = log_dir / f"crash-http-{self.port}.log"
        with self.log.open("wb") as sink:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kaeru", "serve", "--http", "--host", LOOPBACK, "--port", str(self.port)],
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        self.url = f"http://{LOOPBACK}:{self.port}/mcp"
        self._ids = iter(range(1, 1 << 62))
        self._lock = threading.Lock()
        wait_until(self._healthy, STARTUP_SECONDS, f"GET /health on port {self.port}")

    def _healthy(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"kaeru serve --http exited with {self.proc.returncode}:\n{self.log.read_text()}")
        try:
            with urllib.request.urlopen(f"http://{LOOPBACK}:{self.port}/health", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            request_id = next(self._ids)
        payload = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": args},
        }
        request = urllib.request.Request(
            self.url,
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=CALL_SECONDS) as response:
                body = response.read()
        except urllib.error.HTTPError as error:
            raise AssertionError(f"{tool}: HTTP {error.code}: {error.read()!r}") from error
        except (OSError, http.client.HTTPException) as error:  # refused, reset, closed mid-answer
            raise Unanswered(repr(error)) from error
        return _envelope(json.loads(body), tool)

    def close(self) -> None:
        stop(self.proc)


# --- servers over stdio ---------------------------------------------------------------------------


class StdioEndpoint:
    """`kaeru serve` over one stdin/stdout pipe, as an agent runs it; calls from several threads are
    multiplexed by JSON-RPC id (the server answers them one after another)."""

    def __init__(self, env: Mapping[str, str], log_dir: Path):
        self.log = log_dir / f"crash-stdio-{time.monotonic_ns()}.log"
        self._err = self.log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kaeru", "serve"],
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
        )
        self._lock = threading.Lock()
        self._next = 0
        self._waiting: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._closed = False
        self._reader = threading.Thread(target=self._read, name="crash-stdio-reader", daemon=True)
        self._reader.start()
        message = self._request("initialize", initialize_request()["params"], STARTUP_SECONDS)
        assert "result" in message, message
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            with self._lock:
                waiter = self._waiting.pop(message.get("id", -1), None)
            if waiter is not None:
                waiter[1].append(message)
                waiter[0].set()
        with self._lock:  # end of output: the process is gone, nothing pending will be answered
            self._closed = True
            pending = list(self._waiting.values())
            self._waiting.clear()
        for event, _ in pending:
            event.set()

    def _request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        event = threading.Event()
        box: list[dict[str, Any]] = []
        with self._lock:
            if self._closed:
                raise Unanswered("the server's output is closed")
            self._next += 1
            ident = self._next
            self._waiting[ident] = (event, box)
            try:
                self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
            except OSError as error:  # broken pipe: the process is gone
                self._waiting.pop(ident, None)
                raise Unanswered(repr(error)) from error
        if not event.wait(timeout):
            raise AssertionError(f"{method}: no answer within {timeout:.0f}s")
        if not box:
            raise Unanswered("the server exited before answering")
        return box[0]

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return _envelope(self._request("tools/call", {"name": tool, "arguments": args}, CALL_SECONDS), tool)

    def close(self) -> None:
        if self.proc.poll() is None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()  # end of input: a clean exit
                self.proc.wait(30)
            except (OSError, subprocess.TimeoutExpired):
                pass
        stop(self.proc)
        self._reader.join(10)
        self._err.close()


@contextmanager
def endpoint(transport: str, env: Mapping[str, str], log_dir: Path) -> Iterator[Endpoint]:
    """One server process over `transport`, always stopped (or reaped, if it was killed)."""
    server: HttpEndpoint | StdioEndpoint = (
        HttpEndpoint(env, log_dir) if transport == "http" else StdioEndpoint(env, log_dir)
    )
    try:
        yield server
    finally:
        server.close()


# --- one round ------------------------------------------------------------------------------------


@dataclass
class Round:
    """What one round saw. Every list is a finding; a clean round has them all empty."""

    acknowledged: dict[str, str] = field(default_factory=dict)  # request_id → node id
    unanswered: set[str] = field(default_factory=set)  # sent, no answer (in flight at the kill)
    unanswered_present: int = 0
    kills: int = 0
    writes_after_kill: int = 0  # acknowledged by the surviving servers after the kill
    lost: list[str] = field(default_factory=list)  # acknowledged, missing (or under another id)
    duplicates: list[str] = field(default_factory=list)  # request_ids whose note is stored twice
    strays: list[str] = field(default_factory=list)  # stored notes no writer sent
    replay_failures: list[str] = field(default_factory=list)
    index_mismatches: list[str] = field(default_factory=list)  # stored notes a text search misses (or extra)
    problems: list[str] = field(default_factory=list)  # answers other than `applied`
    integrity: str | None = None  # SQLite: PRAGMA integrity_check + foreign_key_check; None on PostgreSQL

    @property
    def clean(self) -> bool:
        findings = (self.lost, self.duplicates, self.strays, self.replay_failures, self.index_mismatches, self.problems)
        return not any(findings) and self.integrity in (None, "ok")


def note_args(request_id: str) -> dict[str, Any]:
    return {
        "initiative": INITIATIVE,
        "text": f"crash probe {request_id}: the ledger entry written while a server may die",
        "tags": [TAG],
        "request_id": request_id,
    }


def _request_id_of(body: str) -> str:
    return body.removeprefix("crash probe ").split(":", 1)[0]


def run_round(
    env: Mapping[str, str],
    log_dir: Path,
    *,
    seed: int,
    servers: int = 1,
    writers: int = 6,
    transport: str = "http",
    kill_after: tuple[int, int] = (10, 60),
    writes_after_kill: int = 8,
    sqlite_file: Path | None = None,
    label: str = "r",
) -> Round:
    """One round: start `servers`, write from `writers` threads, SIGKILL one server after a random
    number (within `kill_after`) of acknowledged writes, let the survivors write
    `writes_after_kill` more each, restart the killed server and check the vault."""
    rng = random.Random(seed)
    victim = rng.randrange(servers)
    threshold = rng.randint(*kill_after)
    result = Round()
    lock = threading.Lock()
    progress = threading.Condition(lock)
    killing = threading.Event()  # set just before the SIGKILL is sent
    killed = threading.Event()  # set once the killed process is reaped
    failures: list[BaseException] = []

    with ExitStack() as stack:
        fleet = [stack.enter_context(endpoint(transport, env, log_dir)) for _ in range(servers)]

        def writer(index: int) -> None:
            home = index % servers
            server = fleet[home]
            after = 0
            n = 0
            try:
                while True:
                    if killed.is_set():
                        if home == victim:
                            return
                        if after >= writes_after_kill:
                            return
                    request_id = f"{label}-w{index}-n{n}"
                    n += 1
                    was_killed = killed.is_set()
                    try:
                        envelope = server.call("note", note_args(request_id))
                    except Unanswered:
                        with lock:
                            result.unanswered.add(request_id)
                        if home != victim or not killing.is_set():
                            raise  # only the killed server may leave a call unanswered
                        return
                    with progress:
                        if envelope["state"] == "applied" and envelope["replayed"] is False:
                            result.acknowledged[request_id] = envelope["data"]["primary"]["id"]
                            if was_killed:
                                result.writes_after_kill += 1
                                after += 1
                            progress.notify_all()
                        else:
                            result.problems.append(f"{request_id}: {json.dumps(envelope)[:400]}")
                            return
            except BaseException as error:
                with lock:
                    failures.append(error)
                    progress.notify_all()

        threads = [threading.Thread(target=writer, args=(i,), name=f"crash-writer-{i}") for i in range(writers)]
        for thread in threads:
            thread.start()
        with progress:
            ok = progress.wait_for(
                lambda: len(result.acknowledged) >= threshold or bool(failures) or bool(result.problems),
                timeout=120,
            )
        if ok and not failures and not result.problems:
            killing.set()
            os.kill(fleet[victim].proc.pid, signal.SIGKILL)
            fleet[victim].proc.wait(30)
            result.kills += 1
            killed.set()
        else:
            killing.set()
            killed.set()  # let the writers stop
            for server in fleet:
                if server.proc.poll() is None:
                    os.kill(server.proc.pid, signal.SIGKILL)
        for thread in threads:
            thread.join(180)
        if any(t.is_alive() for t in threads):
            raise AssertionError("a writer hung")
        if failures:
            raise AssertionError(f"a writer failed: {failures[0]!r}") from failures[0]
        if not ok:
            raise AssertionError(f"only {len(result.acknowledged)} of {threshold} writes acknowledged")

        # Restart the killed server (the survivors still run) and check the vault through it.
        with endpoint(transport, env, log_dir) as restarted:
            check(restarted, result)

    if sqlite_file is not None:
        result.integrity = integrity(sqlite_file)
    return result


def check(server: Endpoint, result: Round) -> None:
    stored: dict[str, list[str]] = {}
    args: dict[str, Any] = {"initiatives": [INITIATIVE], "filters": {"tags": [TAG]}, "limit": 50}
    while True:
        page = server.call("search", args)
        assert page["state"] == "ok", page
        for hit in page["data"]["hits"]:
            stored.setdefault(_request_id_of(hit["body"]), []).append(hit["id"])
        if not page.get("continuation"):
            break
        args = page["continuation"]["next_arguments"]
    # The full-text index agrees with the nodes: a text search finds every stored note, no other.
    indexed: set[str] = set()
    args = {"initiatives": [INITIATIVE], "text": "ledger entry written", "match": "all", "limit": 50}
    while True:
        page = server.call("search", args)
        assert page["state"] == "ok", page
        indexed.update(hit["id"] for hit in page["data"]["hits"])
        if not page.get("continuation"):
            break
        args = page["continuation"]["next_arguments"]
    listed = {node for ids in stored.values() for node in ids}
    result.index_mismatches = sorted(indexed ^ listed)
    sent = set(result.acknowledged) | result.unanswered
    result.strays = sorted(set(stored) - sent)
    result.duplicates = sorted(rid for rid, ids in stored.items() if len(ids) > 1)
    result.lost = sorted(rid for rid, node in result.acknowledged.items() if node not in stored.get(rid, []))
    result.unanswered_present = sum(1 for rid in result.unanswered if rid in stored)
    # Re-send every call, acknowledged or not, with the same arguments.
    for rid in sorted(sent):
        expected = result.acknowledged.get(rid) or (stored[rid][0] if rid in stored else None)
        envelope = server.call("note", note_args(rid))
        state, replayed = envelope["state"], envelope.get("replayed")
        node = (envelope.get("data") or {}).get("primary") or {}
        if expected is None:
            if state != "applied" or replayed is not False:
                result.replay_failures.append(f"{rid} (absent): {state} replayed={replayed}")
        elif state != "applied" or replayed is not True or node.get("id") != expected:
            result.replay_failures.append(f"{rid}: {state} replayed={replayed} id={node.get('id')} != {expected}")


def integrity(path: Path) -> str:
    """`PRAGMA integrity_check` and `PRAGMA foreign_key_check` on the vault file: "ok" or the findings."""
    import apsw

    conn = apsw.Connection(str(path))
    try:
        checks = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
        foreign = [repr(row) for row in conn.execute("PRAGMA foreign_key_check")]
    finally:
        conn.close()
    findings = [c for c in checks if c != "ok"] + foreign
    return "ok" if not findings else "; ".join(findings[:10])


# --- the long mode --------------------------------------------------------------------------------


@dataclass
class Totals:
    rounds: int = 0
    kills: int = 0
    acknowledged: int = 0
    writes_after_kill: int = 0
    unanswered: int = 0
    unanswered_present: int = 0
    lost: int = 0
    duplicates: int = 0
    strays: int = 0
    replay_failures: int = 0
    index_mismatches: int = 0
    problems: int = 0
    integrity_checks: int = 0
    integrity_failures: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, one: Round) -> None:
        self.rounds += 1
        self.kills += one.kills
        self.acknowledged += len(one.acknowledged)
        self.writes_after_kill += one.writes_after_kill
        self.unanswered += len(one.unanswered)
        self.unanswered_present += one.unanswered_present
        self.lost += len(one.lost)
        self.duplicates += len(one.duplicates)
        self.strays += len(one.strays)
        self.replay_failures += len(one.replay_failures)
        self.index_mismatches += len(one.index_mismatches)
        self.problems += len(one.problems)
        if one.integrity is not None:
            self.integrity_checks += 1
            self.integrity_failures += one.integrity != "ok"
        findings = (*one.lost, *one.duplicates, *one.strays, *one.replay_failures, *one.index_mismatches, *one.problems)
        for finding in findings:
            if len(self.examples) < 10:
                self.examples.append(finding)
        if one.integrity not in (None, "ok") and len(self.examples) < 10:
            self.examples.append(f"integrity: {one.integrity}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20, help="rounds per backend, scenario and transport")
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--transport", choices=("http", "stdio", "both"), default="both")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--writers", type=int, default=6)
    parser.add_argument("--json", action="store_true", help="print the totals as JSON")
    ns = parser.parse_args(argv)

    from tests.backends import drop_vault, new_vault, postgres_admin_url

    backends = ["sqlite", "postgres"] if ns.backend == "both" else [ns.backend]
    if "postgres" in backends and not postgres_admin_url():
        print("PostgreSQL not configured (KAERU_TEST_DATABASE_URL): sqlite only", file=sys.stderr)
        backends.remove("postgres")
    transports = ["http", "stdio"] if ns.transport == "both" else [ns.transport]
    scenarios = {"one server": 1, "one of three": 3}
    report: dict[str, dict[str, Any]] = {}
    grand = Totals()
    rng = random.Random(ns.seed)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kaeru-crash-") as tmp:
        for backend in backends:
            for transport in transports:
                for scenario, servers in scenarios.items():
                    totals = Totals()
                    for n in range(ns.rounds):
                        round_dir = Path(tmp) / f"{backend}-{transport}-{servers}-{n}"
                        round_dir.mkdir()
                        vault = new_vault(backend, round_dir)
                        try:
                            one = run_round(
                                subprocess_env(vault.env()),
                                round_dir,
                                seed=rng.randrange(1 << 30),
                                servers=servers,
                                writers=ns.writers,
                                transport=transport,
                                sqlite_file=vault.vault_dir / "vault.sqlite3" if backend == "sqlite" else None,
                                label=f"r{n}",
                            )
                        finally:
                            drop_vault(vault)
                        totals.add(one)
                        grand.add(one)
                    key = f"{backend} / {transport} / {scenario}"
                    report[key] = totals.__dict__
                    print(_line(key, totals), file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started
    if ns.json:
        print(json.dumps({"by_case": report, "total": grand.__dict__, "seconds": round(elapsed, 1)}, indent=2))
    else:
        print(_line("total", grand))
        print(f"{elapsed:.0f} s")
        for example in grand.examples:
            print("  finding:", example)
    clean = not (
        grand.lost
        or grand.duplicates
        or grand.strays
        or grand.replay_failures
        or grand.index_mismatches
        or grand.problems
    )
    return 0 if clean and not grand.integrity_failures else 1


def _line(key: str, t: Totals) -> str:
    return (
        f"{key}: rounds {t.rounds}, kills {t.kills}, acknowledged writes {t.acknowledged} "
        f"({t.writes_after_kill} by survivors after the kill), in flight at the kill {t.unanswered} "
        f"({t.unanswered_present} stored), writes lost {t.lost}, duplicates {t.duplicates}, strays {t.strays}, "
        f"replay failures {t.replay_failures}, text-index mismatches {t.index_mismatches}, other answers {t.problems}, "
        f"integrity failures {t.integrity_failures} of {t.integrity_checks} checks"
    )


if __name__ == "__main__":
    sys.exit(main())
