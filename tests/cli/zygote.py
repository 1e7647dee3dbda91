"""A fork server for the suite's `python -m kaeru` runs: one process per pytest worker that has already
imported the CLI, forking a child per run instead of starting Python anew.

Almost all of a CLI run's cost is the interpreter starting and importing kaeru's stack (click,
pydantic models, the service, both stores), not the command. Each run is still its own process: the
child gets the request's stdin, stdout and stderr as its fds 0/1/2, its environment (`os.environ`,
and so the C environment and the time zone), its working directory and `sys.argv`, the signal
dispositions the zygote had when it started (those of a fresh interpreter), and it runs
`kaeru/__main__.py` as `python -m kaeru` does, then ends by the interpreter's own exit (SystemExit's
code, atexit handlers, thread joins, stdio flushed).

Nothing of kaeru reads the environment, the working directory or the terminal when imported (each
reads them when a command runs), so a child forked after the imports sees only its own. What does
read the environment at start-up is the interpreter itself (`PYTHON*`, the locale): a run whose
environment differs there is not sent here (`tests/cli/support.py`).

Protocol, on a Unix stream socket: the client sends a 4-byte length with the three fds
(`socket.send_fds`), then that many bytes of JSON `{"argv", "env", "cwd"}`; the zygote answers one
JSON line `{"pid"}` when the child started and one `{"status", "cpu"}` when it was reaped (`status` as
`subprocess` reports it: the exit code, or minus the signal that ended it). Usage:
`python -m tests.cli.zygote SOCKETPATH`; it writes `ready` on stdout once it serves, and ends when its
stdin reaches end of file (the worker that started it is gone), killing the children still running.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import io
import json
import os
import runpy
import selectors
import shutil
import signal
import site
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Set to 1, every CLI run of the suite is started anew, as a user starts it (the zygote unused).
SPAWN = "KAERU_TEST_CLI_SPAWN"
TIMEOUT_S = 90
#: How long a killed run's pipes are read before giving up on them.
KILL_GRACE_S = 5.0
ROOT = Path(__file__).resolve().parents[2]

#: What every CLI run imports beyond the command modules (found with `-X importtime` on the commands
#: the suite runs, on both backends): imported once here, not once per run.
PRELOAD = (
    *(f"kaeru.service.{name}" for name in ("audit", "capture", "context", "doctor", "former_names", "hygiene")),
    *(f"kaeru.service.{name}" for name in ("lifecycle", "recall.use_case", "search", "views")),
    *(f"kaeru.service.requests.{name}" for name in ("contract", "writes")),
    *(f"kaeru.mcp.tools.{name}" for name in ("admin", "archive", "capture", "evolve", "history", "read")),
    *(f"kaeru.mcp.tools.{name}" for name in ("revise", "working")),
    *(f"kaeru.storage.{name}" for name in ("factory", "migrate", "sqlite.store", "sqlite.health", "sqlite.place")),
    *(f"kaeru.storage.{name}" for name in ("sqlite.migrations", "postgres.store", "postgres.migrations")),
    *(f"kaeru.{name}" for name in ("api.requests", "api.schemas", "api.envelope", "api.working", "semantic")),
    *(f"kaeru.{name}" for name in ("mcp.adapter", "mcp.addresses", "mcp.render", "domain.similar")),
    *(f"kaeru.export.{name}" for name in ("archive", "markdown", "verify", "vault_io")),
    *("jsonschema", "jsonschema_rs", "pydantic.type_adapter", "difflib", "resource", "encodings.idna", "stringprep"),
    *("rich.console", "rich.table", "rich.progress", "rich.live", "rich._emoji_codes", "click._textwrap"),
)
#: The signals whose handling a child gets back as the zygote found it at start (a fresh
#: interpreter's: SIGINT raises KeyboardInterrupt, SIGPIPE ignored, the others as inherited).
RESTORED = (signal.SIGINT, signal.SIGCHLD, signal.SIGTERM, signal.SIGPIPE, signal.SIGHUP, signal.SIGXFSZ)
HEADER = struct.Struct("!I")


@dataclass
class Request:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    fds: list[int]


def preload() -> None:
    """Import the CLI with every command registered, and what the commands import when they run."""
    from kaeru.cli import app

    app._register()
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional driver not installed: the child imports (and fails) alike
            pass


def _receive(conn: socket.socket) -> Request:
    head, fds, _, _ = socket.recv_fds(conn, HEADER.size, 3)
    if len(head) < HEADER.size or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        raise OSError("incomplete request")
    try:
        (size,) = HEADER.unpack(head)
        body = bytearray()
        while len(body) < size:
            chunk = conn.recv(size - len(body))
            if not chunk:
                raise OSError("incomplete request")
            body += chunk
        document = json.loads(body)
        return Request(list(document["argv"]), dict(document["env"]), str(document["cwd"]), fds)
    except BaseException:
        for fd in fds:  # held here, the client would never see its pipes' end
            os.close(fd)
        raise


def _send(conn: socket.socket, document: dict[str, Any]) -> None:
    try:
        conn.sendall(json.dumps(document).encode() + b"\n")
    except OSError:  # the client went away (it timed out and killed the child): nobody to tell
        pass


def serve(path: str) -> tuple[Request, dict[signal.Signals, Any]] | None:
    """Serve until the parent goes away (None); in a forked child, return its request and the
    signal handlers to restore."""
    initial = {signum: signal.getsignal(signum) for signum in RESTORED}
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a Python handler, so the wakeup fd is written
    signal.set_wakeup_fd(wake_w)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_r, selectors.EVENT_READ, "reap")
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "parent")
    running: dict[int, socket.socket] = {}
    print("ready", flush=True)
    while True:
        for key, _ in selector.select():
            if key.data == "parent":
                if not os.read(sys.stdin.fileno(), 4096):
                    for pid in running:
                        os.kill(pid, signal.SIGKILL)
                    listener.close()
                    # Its worker may exit without running atexit (where `stop` removes the folder).
                    shutil.rmtree(os.path.dirname(path), ignore_errors=True)
                    return None
            elif key.data == "reap":
                while True:
                    try:
                        os.read(wake_r, 4096)
                    except BlockingIOError:
                        break
                while running:
                    pid, status, usage = os.wait4(-1, os.WNOHANG)
                    if pid == 0:
                        break
                    conn = running.pop(pid, None)
                    if conn is not None:
                        cpu = usage.ru_utime + usage.ru_stime
                        _send(conn, {"status": os.waitstatus_to_exitcode(status), "cpu": cpu})
                        conn.close()
            else:
                conn, _ = listener.accept()
                try:
                    conn.settimeout(30)
                    request = _receive(conn)
                    conn.settimeout(None)
                except (OSError, ValueError, KeyError):
                    conn.close()
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    # Nothing of the server survives in the child: the listening socket, the wakeup
                    # pipe, the selector, every client's connection (this one's too).
                    signal.set_wakeup_fd(-1)
                    selector.close()
                    listener.close()
                    for other in (*running.values(), conn):
                        other.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    return request, initial
                for fd in request.fds:
                    os.close(fd)
                running[pid] = conn
                _send(conn, {"pid": pid})


def _stdio(fd: int, mode: str, previous: Any) -> io.TextIOWrapper:
    """A standard stream on `fd` as the interpreter makes one at start (CPython's `create_stdio`):
    same encoding and errors, newlines passed through untranslated, line-buffered when it is a
    terminal (stderr always), and unbuffered output under PYTHONUNBUFFERED (which `forkable`
    makes the same as the run's)."""
    raw = mode == "w" and bool(os.environ.get("PYTHONUNBUFFERED"))  # still the zygote's environment here
    binary = open(fd, mode + "b", buffering=0 if raw else -1, closefd=False)  # noqa: SIM115 - never closed
    line = fd == 2 or (fd == 1 and os.isatty(fd))
    return io.TextIOWrapper(
        binary, encoding=previous.encoding, errors=previous.errors, newline="\n", line_buffering=line, write_through=raw
    )


def become(request: Request, initial: dict[signal.Signals, Any]) -> None:
    """Turn this forked child into `python -m kaeru ARGV` as the request's process would have been."""
    for target, fd in enumerate(request.fds):
        os.dup2(fd, target)
    for fd in request.fds:
        os.close(fd)
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        stream = _stdio(fd, mode, getattr(sys, f"__{name}__"))
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    for signum, handler in initial.items():
        signal.signal(signum, handler)
    os.environ.clear()
    os.environ.update(request.env)
    time.tzset()
    tempfile.tempdir = None  # a cache of TMPDIR (and friends), unset in a fresh interpreter
    os.chdir(request.cwd)
    sys.path[0] = os.getcwd()  # `python -m` puts the working directory first
    rich = sys.modules.get("rich")
    if rich is not None:  # the one import-time read of the working directory (for its tracebacks)
        setattr(rich, "_IMPORT_CWD", os.path.abspath(os.getcwd()))  # noqa: B010 - a private name
    sys.argv = ["-m", *request.argv]  # runpy puts the module's path first, as `python -m` does
    runpy.run_module("kaeru", run_name="__main__", alter_sys=True)


def main(path: str) -> None:
    preload()
    if threading.active_count() != 1:
        raise SystemExit("zygote: the preloaded imports started a thread; a fork would lose it")
    # The imported objects moved out of the collector's reach: a child's first collection would
    # otherwise write to every one of them, copying the zygote's whole heap into the child.
    gc.collect()
    gc.freeze()
    served = serve(path)
    if served is not None:
        # Any exception, SystemExit included, leaves through the interpreter's own exit.
        become(*served)


# The client side, in each pytest worker.


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
    """Whether a run in `env` can be forked from this worker's zygote: the variables read when the
    interpreter starts are those the zygote started with."""
    started = _ZYGOTE.env if _ZYGOTE is not None and _ZYGOTE.owner == os.getpid() else base_env()
    keys = {k for k in (*env, *started) if _starts_interpreter(k)}
    return all(env.get(k) == started.get(k) for k in keys)


@dataclass
class Zygote:
    process: subprocess.Popen[bytes]
    folder: str
    path: str
    env: dict[str, str]
    owner: int


_ZYGOTE: Zygote | None = None


def _zygote() -> Zygote:
    """This worker's zygote, started on first use, stopped when the worker exits."""
    global _ZYGOTE
    if _ZYGOTE is not None and _ZYGOTE.owner == os.getpid() and _ZYGOTE.process.poll() is None:
        return _ZYGOTE
    _ZYGOTE = launch()
    atexit.register(stop, _ZYGOTE)
    return _ZYGOTE


def launch(preexec_fn: Callable[[], object] | None = None) -> Zygote:
    """A new zygote, started as this worker starts a `python` (`preexec_fn` run before it starts)."""
    folder = tempfile.mkdtemp(prefix="kaeru-zygote-")
    if len(folder) > 90:  # a Unix socket's path holds 107 bytes
        shutil.rmtree(folder)
        folder = tempfile.mkdtemp(prefix="kaeru-zygote-", dir="/tmp")
    path = os.path.join(folder, "socket")
    env = base_env()
    with open(os.path.join(folder, "log"), "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.cli.zygote", path],
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
    """Fork `python -m kaeru ARGS` reading `stdin_fd` from `zygote` (this worker's by default): the
    connection its pid and status come on, and the read ends of its stdout and stderr."""
    zygote = zygote or _zygote()
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


if __name__ == "__main__":
    main(sys.argv[1])
