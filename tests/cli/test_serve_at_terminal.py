"""`kaeru serve` started by a person at a terminal (decision 190): stdio is the MCP protocol, so it
sat silent, waiting for a client, with nothing saying so. It now says what it is waiting for and
what to run instead — only when its input is a terminal, never in a client's pipe — and Ctrl-C
stops it cleanly (exit 0, the vault closed).

The server at a terminal is started anew: the subject is the terminal's own job, the one its Ctrl-C
reaches. Forked, the launcher would be that job, forwarding the signal to a server in a session of
its own with no controlling terminal (it passes so too, but tests the forwarding). In a client's
pipe the server is forked from the worker's server zygote."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.zygote_client import count_served_cpu, server_argv
from tests.wire.support import KAERU_SERVE, subprocess_env

# A terminal as POSIX has it: on Windows these modules do not exist, and the file is skipped.
fcntl = pytest.importorskip("fcntl")
pty = pytest.importorskip("pty")
termios = pytest.importorskip("termios")


def _read_until(fd: int, marker: bytes, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:  # the terminal's other end closed
                break
    return seen


def _controlling_terminal() -> None:
    """In the child: a session of its own whose terminal is the pty, as a shell's job has."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_at_a_terminal_it_says_what_it_waits_for_and_ctrl_c_stops_it(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kaeru", "serve"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=subprocess_env({"KAERU_VAULT": str(tmp_path / "vault")}),
        preexec_fn=_controlling_terminal,
    )
    os.close(slave)
    try:
        said = _read_until(master, b"kaeru ui", 60)
        assert b"waiting for an agent's client" in said and b"kaeru setup claude-code" in said, said
        # A request typed at the terminal is answered: the server is serving, its stop signals set.
        request = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        os.write(master, json.dumps(request).encode() + b"\n")
        assert b'"id":1' in _read_until(master, b'"result"', 60)
        os.write(master, b"\x03")  # Ctrl-C, as the terminal sends it
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert not (tmp_path / "vault" / "vault.sqlite3-wal").exists()


def test_in_a_clients_pipe_it_says_nothing(tmp_path: Path) -> None:
    env = subprocess_env({"KAERU_VAULT": str(tmp_path / "vault")})
    done = subprocess.run(server_argv(KAERU_SERVE, env), input="", env=env, capture_output=True, text=True, timeout=60)
    count_served_cpu()
    assert done.returncode == 0 and done.stderr == "" and done.stdout == ""
