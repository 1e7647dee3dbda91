"""The memory a server process holds, read from `/proc/<pid>/status` (Linux). A benchmark helper.

`VmRSS` is what the process has resident now, `VmHWM` the most it ever had (its peak); `RssAnon`
is the part of `VmRSS` that is its own (heap, Python objects, SQLite's page cache), `RssFile` the
part mapped from files (the interpreter, shared libraries: shared with every other process that
maps them, and dropped first when memory is short). Figures in MiB.

`server_pid` finds the process that serves, not a wrapper: the harnesses spawn the server's own
executable (`node …/index.js`, `kaeru serve`, `python -m …`), and where a launcher (`npx`, a shell)
has one child, it is followed down to the process that has none.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

FIELDS = ("VmRSS", "VmHWM", "RssAnon", "RssFile")


def status(pid: int) -> dict[str, float]:
    """`FIELDS` of process `pid`, in MiB."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in FIELDS:
            out[key] = int(value.split()[0]) / 1024  # kB
    return out


def children(parent: int | None = None) -> set[int]:
    """The processes whose parent is `parent` (this process by default)."""
    parent = os.getpid() if parent is None else parent
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            found.add(int(entry))
    return found


def server_pid(before: set[int]) -> int:
    """The server this process spawned since `before` (its children then) was taken: the new child,
    or, if that child is a launcher with one child of its own, the process at the end of that chain."""
    new = children() - before
    if len(new) != 1:
        raise RuntimeError(f"expected one new server process, found {sorted(new)}")
    pid = new.pop()
    while len(below := children(pid)) == 1:
        pid = below.pop()
    return pid


def executable(pid: int) -> str:
    """The name of the program process `pid` runs (`python3.11`, `node`)."""
    return Path(os.readlink(f"/proc/{pid}/exe")).name


def cpu_ticks(pid: int) -> int:
    """User + system CPU time of process `pid` (all its threads), in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_idle(pid: int, quiet: float = 0.3, limit: float = 15.0) -> None:
    """Return once process `pid` has used no CPU for `quiet` seconds (work it started in the
    background — kaeru builds its tools after `initialize` — is done), or after `limit` seconds."""
    last, since = cpu_ticks(pid), time.monotonic()
    end = since + limit
    while time.monotonic() < end:
        time.sleep(0.02)
        now = cpu_ticks(pid)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
