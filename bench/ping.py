"""Ping latency over stdio while a long archive import runs. A script, not a test.

Spawns `kaeru serve` on a fresh vault, writes a synthetic archive of `--nodes` node revisions
(`bench.archives`), sends the `archive import` call and then a `ping` every `--interval` ms until
the import answers; each ping's latency is from writing its line to reading its answer. Prints the
pings' p50/p95/max, how many were answered before the import, and the import's own time.

    PYTHONPATH=src python -m bench.ping [--nodes 100000] [--backend sqlite|postgres]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench import archives
from bench.stats import percentile
from bench.vaults import new_vault


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def run(nodes: int, backend: str, interval: float) -> dict[str, Any]:
    vault = new_vault(backend, "ping", None, keep=False)
    root = Path(tempfile.mkdtemp(prefix="kaeru-bench-ping-"))
    try:
        archives.write(root / "big.amg", nodes)
        env = {**_base_env(), **vault.env(), "KAERU_EXPORT_ROOT": str(root)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "kaeru", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout
        sent: dict[int, float] = {}
        answered: dict[int, float] = {}
        order: list[int] = []
        done = threading.Event()

        def read() -> None:
            for raw in stdout:
                message = json.loads(raw)
                now = time.perf_counter()
                if "id" in message:
                    answered[message["id"]] = now
                    order.append(message["id"])
                    if message["id"] == 2:
                        done.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "ping-bench", "version": "0"},
        }
        stdin.write(_line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        stdin.write(_line({"jsonrpc": "2.0", "id": 0, "method": "tools/list"}))
        stdin.flush()
        while 0 not in answered:
            time.sleep(0.01)
        call = {"name": "archive", "arguments": {"action": "import", "path": "big.amg"}}
        started = time.perf_counter()
        stdin.write(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
        stdin.flush()
        next_id = 100
        while not done.wait(interval):
            sent[next_id] = time.perf_counter()
            stdin.write(_line({"jsonrpc": "2.0", "id": next_id, "method": "ping"}))
            stdin.flush()
            next_id += 1
        import_seconds = answered[2] - started
        time.sleep(0.2)
        stdin.close()
        proc.wait(timeout=120)
        before = order[: order.index(2)]
        latencies = sorted((answered[i] - sent[i]) * 1000 for i in sent if i in answered)
        return {
            "backend": backend,
            "nodes": nodes,
            "import_s": round(import_seconds, 2),
            "pings": len(sent),
            "answered_before_import": sum(1 for i in before if i >= 100),
            "p50_ms": round(percentile(latencies, 50), 2) if latencies else None,
            "p95_ms": round(percentile(latencies, 95), 2) if latencies else None,
            "max_ms": round(latencies[-1], 2) if latencies else None,
        }
    finally:
        vault.drop()
        for path in root.glob("*"):
            path.unlink()
        root.rmdir()


def _base_env() -> dict[str, str]:
    import os

    return dict(os.environ)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--interval", type=float, default=50.0, help="ms between pings")
    ns = parser.parse_args(argv)
    print(json.dumps(run(ns.nodes, ns.backend, ns.interval / 1000)))


if __name__ == "__main__":
    main()
