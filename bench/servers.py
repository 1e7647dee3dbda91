"""`kaeru serve --http` started for a benchmark: on a free loopback port, ready once `/health` answers."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from typing import IO


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (bind port 0, read it back)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def spawn_http(env: dict[str, str], log: IO[bytes]) -> tuple[subprocess.Popen[bytes], int]:
    """`kaeru serve --http` on a free port, its output to `log`; not waited for (`wait_ready`)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kaeru", "serve", "--http", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return proc, port


def wait_ready(proc: subprocess.Popen[bytes], port: int, why: Callable[[], str], timeout: float = 60) -> None:
    """Until the server's `/health` answers; `RuntimeError` with `why()` if it exits or times out."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"kaeru serve --http on port {port} did not start: {why()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return
        except OSError:
            time.sleep(0.1)
