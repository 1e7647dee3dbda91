"""The worker's side of the zygotes (`tests/cli/zygote.py`): each pytest worker starts, on first use,
one for its `python -m kaeru` runs (`forked`) and one for its servers, which it starts through the
launcher (`server_argv`) and which also forks its CLI runs of `serve` and `ui`."""

from __future__ import annotations

import atexit
import json
import os
import selectors
import shutil
import signal
import site
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.cli.zygote import HEADER, SERVED_CPU

#: Set to 1, every CLI run and server of the suite is started anew, as a user starts it (the zygote
#: unused).
SPAWN = "KAERU_TEST_CLI_SPAWN"
TIMEOUT_S = 90
#: How long a killed run's pipes are read before giving up on them.
KILL_GRACE_S = 5.0
ROOT = Path(__file__).resolve().parents[2]
#: Run as `python -I -S launcher.py SOCKET -- ARGS`: it hands itself over to the zygote (its fds,
#: environment and working directory) and stands for the forked server until it ends.
LAUNCHER = Path(__file__).resolve().with_name("launcher.py")


def _starts_interpreter(name: str) -> bool:
    """Whether the variable `name` changes how the interpreter starts: its flags and paths
    (`PYTHON*`), the locale that picks the standard streams' and file names' encoding (`LANG`,
    `LC_*`), and the home that places the user's site-packages when those are enabled. `TZ` does
    not: a child calls `time.tzset()`, as a fresh interpreter reads it."""
    return name.startswith(("PYTHON", "LC_")) or name == "LANG" or (name == "HOME" and bool(site.ENABLE_USER_SITE))


def base_env() -> dict[str, str]:
    """This environment without any `KAERU_*` variable: what every run starts from."""
    return {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}


def forkable(env: Mapping[str, str]) -> bool:
    """Whether a run in `env` can be forked from this worker's zygotes: the variables read when the
    interpreter starts are those each zygote started with (this environment's, before one did)."""
    mine = [z.env for z in _ZYGOTES.values() if z.owner == os.getpid()]
    for started in mine or [base_env()]:
        keys = {k for k in (*env, *started) if _starts_interpreter(k)}
        if any(env.get(k) != started.get(k) for k in keys):
            return False
    return True


def serves(args: Sequence[str]) -> bool:
    """Whether `kaeru ARGS` runs a server (`serve`, `ui`): forked from the server zygote."""
    command = next((a for a in args if not a.startswith("-")), None)
    return command in ("serve", "ui")


@dataclass
class Zygote:
    process: subprocess.Popen[bytes]
    folder: str
    path: str
    env: dict[str, str]
    owner: int
    #: The launched children's CPU already counted in this worker's tests (`count_served_cpu`).
    counted: float = 0.0


#: This worker's zygotes: for CLI runs (False), for servers (True).
_ZYGOTES: dict[bool, Zygote] = {}


def _zygote(serve: bool = False) -> Zygote:
    """This worker's zygote for CLI runs or for servers, started on first use, stopped when the
    worker exits."""
    zygote = _ZYGOTES.get(serve)
    if zygote is not None and zygote.owner == os.getpid() and zygote.process.poll() is None:
        return zygote
    zygote = _ZYGOTES[serve] = launch(serve=serve)
    atexit.register(stop, zygote)
    return zygote


def launch(preexec_fn: Callable[[], object] | None = None, *, serve: bool = False) -> Zygote:
    """A new zygote (for servers with `serve`), started as this worker starts a `python`
    (`preexec_fn` run before it starts)."""
    folder = tempfile.mkdtemp(prefix="kaeru-zygote-")
    if len(folder) > 90:  # a Unix socket's path holds 107 bytes
        shutil.rmtree(folder)
        folder = tempfile.mkdtemp(prefix="kaeru-zygote-", dir="/tmp")
    path = os.path.join(folder, "socket")
    env = base_env()
    with open(os.path.join(folder, "log"), "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.cli.zygote", path, *(["serve"] if serve else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=env,
            cwd=ROOT,
            preexec_fn=preexec_fn,
        )
    assert process.stdout is not None
    ready = process.stdout.readline()
    process.stdout.close()
    if ready != b"ready\n":
        process.kill()
        process.wait()
        raise RuntimeError(f"the CLI zygote did not start: {Path(folder, 'log').read_text(errors='replace')}")
    return Zygote(process, folder, path, env, os.getpid())


def stop(zygote: Zygote) -> None:
    if zygote.owner != os.getpid():
        return
    if zygote.process.stdin is not None:
        zygote.process.stdin.close()  # end of file: it kills what still runs and exits
    try:
        zygote.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        zygote.process.kill()
        zygote.process.wait()
    shutil.rmtree(zygote.folder, ignore_errors=True)


def server_argv(
    command: Sequence[str], env: Mapping[str, str], *, spawn: bool = False, zygote: Zygote | None = None
) -> list[str]:
    """How to start the server `command` in `env`: a `python -m kaeru ARGS` through the launcher,
    forked from `zygote` (this worker's server zygote by default); or `command` itself, started
    anew, when `spawn` asks so (a test that needs a fresh interpreter, the server's own pid, its
    start-up), with KAERU_TEST_CLI_SPAWN=1, when `env` changes how the interpreter starts, or when
    it is not `python -m kaeru` (an installed entry point, a prefix such as `setpriv`, a script)."""
    count_served_cpu()
    if (
        spawn
        or os.environ.get(SPAWN) == "1"
        or list(command[:3]) != [sys.executable, "-m", "kaeru"]
        or not forkable(env)
    ):
        return list(command)
    return launcher_argv(command[3:], zygote)


def launcher_argv(args: Sequence[str], zygote: Zygote | None = None) -> list[str]:
    """The launcher's command line for `python -m kaeru ARGS` forked from `zygote` (this worker's
    server zygote by default), whatever KAERU_TEST_CLI_SPAWN says."""
    zygote = zygote or _zygote(serve=True)
    return [sys.executable, "-I", "-S", str(LAUNCHER), zygote.path, "--", *args]


def count_served_cpu(zygote: Zygote | None = None) -> None:
    """Count, in the running test, the CPU of the servers the zygote reaped since the last count
    (their launchers are what this worker waits for; a server's own CPU the zygote reports)."""
    zygote = zygote or _ZYGOTES.get(True)
    if zygote is None or zygote.owner != os.getpid():
        return
    try:
        total = float(Path(zygote.folder, SERVED_CPU).read_text(encoding="ascii"))
    except (OSError, ValueError):  # none reaped yet
        return
    from tests import cost  # here, not at the top: the zygote itself runs without pytest

    cost.count_child_cpu(total - zygote.counted)
    zygote.counted = total


def forked(args: list[str], env: Mapping[str, str], stdin: bytes | None) -> tuple[int, bytes, bytes]:
    """`python -m kaeru ARGS` in `env` and this working directory, forked from the zygote: its exit
    code (minus the signal that ended it), stdout and stderr, with `subprocess.run`'s stdin (`stdin`
    on a pipe, or this process's own when None) and timeout (the child killed, TimeoutExpired)."""
    in_r, in_w = os.pipe() if stdin is not None else (0, -1)
    try:
        conn, out_r, err_r = start(args, env, in_r)
    except BaseException:
        if in_w >= 0:
            os.close(in_w)
        raise
    finally:
        if stdin is not None:
            os.close(in_r)
    return collect(conn, out_r, err_r, in_w=in_w, data=stdin or b"", args=args)


def start(
    args: list[str], env: Mapping[str, str], stdin_fd: int, zygote: Zygote | None = None
) -> tuple[socket.socket, int, int]:
    """Fork `python -m kaeru ARGS` reading `stdin_fd` from `zygote` (this worker's by default, for
    servers when ARGS run one): the connection its pid and status come on, and the read ends of its
    stdout and stderr."""
    zygote = zygote or _zygote(serves(args))
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(zygote.path)
        body = json.dumps({"argv": args, "env": dict(env), "cwd": os.getcwd()}).encode()
        socket.send_fds(conn, [HEADER.pack(len(body))], [stdin_fd, out_w, err_w])
        conn.sendall(body)
    except BaseException:
        conn.close()
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    return conn, out_r, err_r


def pid_of(conn: socket.socket) -> int:
    """The pid of the child `start` started (read off `conn` before `collect` reads the rest)."""
    line = b""
    while not line.endswith(b"\n"):
        byte = conn.recv(1)
        if not byte:
            raise RuntimeError("the CLI zygote did not start the run")
        line += byte
    pid: int = json.loads(line)["pid"]
    return pid


def _kill(pid: int | None) -> None:
    if pid is not None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:  # it ended meanwhile
            pass


def collect(
    conn: socket.socket,
    out_r: int,
    err_r: int,
    *,
    in_w: int = -1,
    data: bytes = b"",
    args: list[str],
    pid: int | None = None,
) -> tuple[int, bytes, bytes]:
    """Feed `data` to the child on `in_w`, read its output to end of file and its status off `conn`
    (status, stdout, stderr); all of them closed."""
    selector = selectors.DefaultSelector()
    output: dict[int, bytearray] = {out_r: bytearray(), err_r: bytearray()}
    for fd in output:
        selector.register(fd, selectors.EVENT_READ)
    selector.register(conn, selectors.EVENT_READ)
    if in_w >= 0:
        os.set_blocking(in_w, False)
        selector.register(in_w, selectors.EVENT_WRITE)
    replies = bytearray()
    status: int | None = None
    cpu = 0.0
    deadline = time.monotonic() + TIMEOUT_S
    timed_out = False
    try:
        while selector.get_map():
            remaining = deadline - time.monotonic()
            ready = selector.select(remaining) if remaining > 0 else []
            if not ready:
                if timed_out:  # killed, yet something (a grandchild?) holds its pipes: stop reading
                    break
                timed_out = True
                if status is None:
                    _kill(pid)
                deadline = time.monotonic() + KILL_GRACE_S
                continue
            for key, _ in ready:
                if key.fd == in_w:
                    try:
                        data = data[os.write(in_w, data[:65536]) :]
                    except BrokenPipeError:  # the child is not reading it: as `subprocess.run` does
                        data = b""
                    if not data:
                        selector.unregister(in_w)
                        os.close(in_w)
                elif key.fd in output:
                    chunk = os.read(key.fd, 65536)
                    output[key.fd] += chunk
                    if not chunk:
                        selector.unregister(key.fd)
                else:
                    chunk = conn.recv(4096)
                    replies += chunk
                    if not chunk:
                        selector.unregister(conn)
                    *lines, rest = bytes(replies).split(b"\n")
                    replies = bytearray(rest)
                    for line in lines:
                        reply = json.loads(line)
                        pid = reply.get("pid", pid)
                        status = reply.get("status", status)
                        cpu = reply.get("cpu", cpu)
                    if timed_out and status is None:
                        _kill(pid)
    finally:
        selector.close()
        conn.close()
        for fd in (out_r, err_r):
            os.close(fd)
        if in_w >= 0 and data:
            os.close(in_w)
    if timed_out:
        raise subprocess.TimeoutExpired(["kaeru", *args], TIMEOUT_S, bytes(output[out_r]), bytes(output[err_r]))
    if status is None:
        raise RuntimeError(f"the CLI zygote lost the run of kaeru {args}")
    from tests import cost  # here, not at the top: the zygote itself runs without pytest

    cost.count_child_cpu(cpu)  # the worker never waits for it: its CPU is not in `os.times()`
    return status, bytes(output[out_r]), bytes(output[err_r])
