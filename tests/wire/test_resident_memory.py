"""The memory `kaeru serve` holds. An agent client starts one stdio server per session and a laptop
keeps them all day, so what a server holds beyond the Python MCP SDK's own floor is paid per
session (issue 16; decisions 95–96). Linux only: read from `/proc/<pid>/status`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.wire.support import initialize_request, subprocess_env

ROOT = Path(__file__).resolve().parents[2]
#: How much more `kaeru serve` may hold resident (VmRSS) than the bare SDK server with one tool,
#: each as its first tool call is answered. Measured: ~16 MiB (kaeru's modules, apsw, jsonschema-rs,
#: PyStemmer and the open vault); 30 MiB while opening a vault imported numpy through sqlite-vec's
#: package (decision 95) and a first name lookup rapidfuzz (decision 96).
ABOVE_BARE_LIMIT_MIB = 24

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")


def _resident_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _resident_after_first_call(command: list[str], env: dict[str, str], call: dict[str, Any]) -> float:
    """Start a stdio server, initialize it, make one tool call; its VmRSS (MiB) once answered."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        messages = [
            initialize_request(1),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
        ]
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            assert line, f"{command} exited before answering"
            answer = json.loads(line)
            if answer.get("id") == 2:
                assert not answer["result"].get("isError"), answer
                return _resident_mib(proc.pid)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_serve_holds_little_more_than_a_bare_sdk_server(tmp_path: Path) -> None:
    env = subprocess_env({"KAERU_VAULT": str(tmp_path / "vault")})
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    bare = _resident_after_first_call(
        [sys.executable, "-m", "bench.startup", "bare"], env, {"name": "echo", "arguments": {"text": "hi"}}
    )
    kaeru = _resident_after_first_call(
        [sys.executable, "-m", "kaeru", "serve"],
        env,
        {"name": "search", "arguments": {"initiatives": ["first-session"], "text": "anything"}},
    )
    assert kaeru - bare <= ABOVE_BARE_LIMIT_MIB, f"kaeru serve {kaeru:.1f} MiB, the bare SDK server {bare:.1f} MiB"
