"""A fork server for the suite's `python -m kaeru` processes: per pytest worker, one that has already
imported the CLI, forking a child per CLI run, and one that has imported the MCP server as well,
forking a child per `kaeru serve` (started through `tests/cli/launcher.py`, or a CLI run of `serve`
or `ui`), instead of starting Python anew.

Almost all of a CLI run's cost is the interpreter starting and importing kaeru's stack (click,
pydantic models, the service, both stores), not the command; a server's, importing the MCP SDK
(whose protocol models are built when imported) and the HTTP stack. Each run is still its own
process: the child gets the request's stdin, stdout and stderr as its fds 0/1/2, its environment
(`os.environ`, and so the C environment and the time zone), its working directory and `sys.argv`,
the signal dispositions the zygote had when it started (those of a fresh interpreter), and it runs
`kaeru/__main__.py` as `python -m kaeru` does, then ends by the interpreter's own exit (SystemExit's
code, atexit handlers, thread joins, stdio flushed).

Nothing of kaeru reads the environment, the working directory or the terminal when imported (each
reads them when a command runs), so a child forked after the imports sees only its own. What does
read the environment at start-up is the interpreter itself (`PYTHON*`, the locale): a run whose
environment differs there is not sent here (`tests/cli/zygote_client.py`).

Protocol, on a Unix stream socket: the client sends a 4-byte length with the three fds
(`socket.send_fds`), then that many bytes of JSON `{"argv", "env", "cwd"}` (from the launcher also
`"launched": true` and `"session"`, how the launcher leads: "session", "group" or ""); the zygote
answers one JSON line `{"pid"}` when the child started and one `{"status", "cpu"}` when it was reaped
(`status` as `subprocess` reports it: the exit code, or minus the signal that ended it). Meanwhile
each byte the client sends is a signal for the child (SIGTERM, SIGINT or SIGHUP: the launcher
forwards what it gets), and the client's end of the connection kills the child (SIGKILL): a child
never outlives whoever asked for it, a launcher killed or a worker interrupted. The CPU of launched
children, whose status only their launcher reads, is added up in the file `served-cpu` beside the
socket (`zygote_client.count_served_cpu`). Usage: `python -m tests.cli.zygote SOCKETPATH [serve]`
(`serve`: a server zygote, which imports the servers' modules too); it writes `ready` on stdout once
it serves, and ends when its stdin reaches end of file (the worker that started it is gone),
killing the children still running.
"""

from __future__ import annotations

import gc
import importlib
import io
import json
import os
import runpy
import selectors
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any

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
#: What `kaeru serve` imports besides, on stdio and over HTTP, on both backends, through initialize,
#: tools/list and calls (the same survey): a server zygote's (`serve` on its command line). Not the
#: CLI runs' zygote: a child's exit tears down every module it holds, and a CLI run would pay for
#: the SDK's. numpy (the PostgreSQL store's text cache) starts OpenBLAS threads, which are not
#: Python's: OpenBLAS stops them before a fork and starts them again in the child (its own
#: `pthread_atfork` handlers), so a child computes as a fresh process does.
SERVE_PRELOAD = (
    *(f"kaeru.mcp.{name}" for name in ("server", "transports", "pipes", "bearer", "connections", "gate", "ui")),
    *("kaeru.service.read", "mcp.server.stdio", "uvicorn", "uvicorn.loops.auto", "uvicorn.loops.asyncio"),
    *("starlette.applications", "anyio._core._streams", "anyio._core._sockets", "numpy"),
)
#: The signals whose handling a child gets back as the zygote found it at start (a fresh
#: interpreter's: SIGINT raises KeyboardInterrupt, SIGPIPE ignored, the others as inherited).
RESTORED = (signal.SIGINT, signal.SIGCHLD, signal.SIGTERM, signal.SIGPIPE, signal.SIGHUP, signal.SIGXFSZ)
#: The signals a client may send its child through the connection (what a launcher forwards).
FORWARDED = frozenset({signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
HEADER = struct.Struct("!I")
#: The file, beside the socket, holding the CPU seconds of the launched children reaped so far.
SERVED_CPU = "served-cpu"


@dataclass
class Request:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    fds: list[int]
    #: Started by the launcher: its CPU is added up in `SERVED_CPU`.
    launched: bool = False
    #: How the child stands, as the launcher does: "session" (it leads a session of its own, as a
    #: process started with `start_new_session`), "group" (a process group) or "" (the zygote's).
    session: str = ""


@dataclass
class Child:
    conn: socket.socket | None  # None once its client went away
    launched: bool


def preload(serve: bool) -> None:
    """Import the CLI with every command registered, and what the commands (and with `serve`, the
    servers) import when they run."""
    from kaeru.cli import app

    app._register()
    for name in (*PRELOAD, *(SERVE_PRELOAD if serve else ())):
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
        while len(body) < size:  # exactly the request: what follows it is the client's signals
            chunk = conn.recv(size - len(body))
            if not chunk:
                raise OSError("incomplete request")
            body += chunk
        document = json.loads(body)
        return Request(
            list(document["argv"]),
            dict(document["env"]),
            str(document["cwd"]),
            fds,
            bool(document.get("launched", False)),
            str(document.get("session", "")),
        )
    except BaseException:
        for fd in fds:  # held here, the client would never see its pipes' end
            os.close(fd)
        raise


def _send(conn: socket.socket, document: dict[str, Any]) -> None:
    try:
        conn.sendall(json.dumps(document).encode() + b"\n")
    except OSError:  # the client went away (it timed out and killed the child): nobody to tell
        pass


def _tally(folder: str, total: float) -> None:
    """`total` into `SERVED_CPU`, replaced whole (a reader never sees half a number)."""
    part = os.path.join(folder, SERVED_CPU + ".part")
    with open(part, "w", encoding="ascii") as sink:
        sink.write(repr(total))
    os.replace(part, os.path.join(folder, SERVED_CPU))


def serve(path: str) -> tuple[Request, dict[signal.Signals, Any]] | None:
    """Serve until the parent goes away (None); in a forked child, return its request and the
    signal handlers to restore."""
    initial = {signum: signal.getsignal(signum) for signum in RESTORED}
    folder = os.path.dirname(path)
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
    running: dict[int, Child] = {}
    served_cpu = 0.0
    print("ready", flush=True)
    while True:
        for key, _ in selector.select():
            if key.data == "parent":
                if not os.read(sys.stdin.fileno(), 4096):
                    for pid in running:
                        os.kill(pid, signal.SIGKILL)
                    for pid in running:  # reaped here: no zombie left to whoever adopts it
                        os.waitpid(pid, 0)
                    listener.close()
                    # Its worker may exit without running atexit (where `stop` removes the folder).
                    shutil.rmtree(folder, ignore_errors=True)
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
                    child = running.pop(pid, None)
                    if child is None:
                        continue
                    cpu = usage.ru_utime + usage.ru_stime
                    if child.launched:  # before its launcher hears of the end, and so exits
                        served_cpu += cpu
                        _tally(folder, served_cpu)
                    if child.conn is not None:
                        selector.unregister(child.conn)
                        _send(child.conn, {"status": os.waitstatus_to_exitcode(status), "cpu": cpu})
                        child.conn.close()
            elif isinstance(key.data, int):  # a running child's client: signals for it, or its end
                child = running.get(key.data)
                if child is None or child.conn is None or key.fileobj is not child.conn:
                    continue  # reaped earlier in this same turn: its connection is closed
                try:
                    sent = child.conn.recv(64)
                except OSError:
                    sent = b""
                if not sent:  # still running (not reaped yet: the pid is still its own)
                    selector.unregister(child.conn)
                    child.conn.close()
                    child.conn = None
                    os.kill(key.data, signal.SIGKILL)
                for signum in sent:
                    if signum in FORWARDED:
                        os.kill(key.data, signum)
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
                    for other in (*(c.conn for c in running.values() if c.conn is not None), conn):
                        other.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    return request, initial
                for fd in request.fds:
                    os.close(fd)
                running[pid] = Child(conn, request.launched)
                selector.register(conn, selectors.EVENT_READ, pid)
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
    if request.session == "session":
        os.setsid()
    elif request.session == "group":
        os.setpgid(0, 0)
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


def main(path: str, servers: bool) -> None:
    preload(servers)
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


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] == ["serve"])
