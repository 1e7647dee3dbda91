"""What the suite itself costs: CPU a test, in its own process and in the processes it waited for.

The test command must stay within its time on a 2-core machine, where the suite is bound by CPU,
not by waiting: every `kaeru` run and server a test starts is a Python start-up. This plugin makes
that cost a measurement (decision 416):

    KAERU_TEST_COST_DIR=/tmp/cost scripts/test.sh -p tests.cost   # the test command, measured
    python -m tests.cost /tmp/cost                                 # the table, costliest first

Each worker appends one JSON line a test to `<dir>/cost-<pid>.jsonl`: `self` (CPU of the test's
process), `kids` (CPU of the subprocesses it waited for, and of the CLI runs the suite forks from
its zygote, which reports theirs; a process nobody waits for or reports — e.g. a race test's
racers, forked by multiprocessing's fork server — is not counted) and `wall`, all in seconds. The
controller also writes `server.json` with the CPU the local PostgreSQL server (the test command's
throwaway cluster) spent during the run, when it can read it (same machine and account); that
server is shared by all tests, so it has no per-test figure.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import pytest

_started: dict[str, tuple[os.times_result, float]] = {}
_sink: list[TextIO] = []
_server: dict[str, float] = {}
#: CPU of processes a test started but did not wait for (forked by a zygote that reaps them),
#: reported by whoever learns it (`count_child_cpu`), added to the test's `kids`.
_unwaited = [0.0]


def count_child_cpu(seconds: float) -> None:
    """Count `seconds` of a child process this process did not wait for in the running test."""
    _unwaited[0] += seconds


def _dir() -> Path | None:
    where = os.environ.get("KAERU_TEST_COST_DIR")
    return Path(where) if where else None


def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    _started[item.nodeid] = (os.times(), time.perf_counter())


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    where = _dir()
    begun = _started.pop(nodeid, None)
    if where is None or begun is None:
        return
    before, wall = begun
    after = os.times()
    unwaited, _unwaited[0] = _unwaited[0], 0.0
    if not _sink:
        where.mkdir(parents=True, exist_ok=True)
        _sink.append((where / f"cost-{os.getpid()}.jsonl").open("a", encoding="utf-8"))
    row = {
        "test": nodeid,
        "self": after.user + after.system - before.user - before.system,
        "kids": after.children_user + after.children_system - before.children_user - before.children_system + unwaited,
        "wall": time.perf_counter() - wall,
    }
    _sink[0].write(json.dumps(row) + "\n")
    _sink[0].flush()


def _server_cpu() -> float | None:
    """CPU seconds the local PostgreSQL server has spent (its postmaster and every backend that has
    exited), or None when there is none this process can read."""
    url = os.environ.get("KAERU_TEST_DATABASE_URL")
    if not url:
        return None
    try:
        import psycopg

        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            row = conn.execute("SELECT current_setting('data_directory')").fetchone()
        pid = int((Path(str(row[0] if row else "")) / "postmaster.pid").read_text().split()[0])
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    except Exception:  # no server, another machine or account, no /proc: no figure
        return None
    return ticks / os.sysconf("SC_CLK_TCK")


def _controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if _dir() is not None and _controller(session.config) and (cpu := _server_cpu()) is not None:
        _server["start"] = cpu


def pytest_sessionfinish(session: pytest.Session) -> None:
    where = _dir()
    if where is None or not _controller(session.config) or "start" not in _server:
        return
    if (cpu := _server_cpu()) is not None:
        where.mkdir(parents=True, exist_ok=True)
        (where / "server.json").write_text(json.dumps({"postgres_cpu": cpu - _server["start"]}), encoding="utf-8")


def summary(where: Path, top: int = 40) -> str:
    """The table `python -m tests.cost DIR` prints: per test file, CPU (own and waited-for
    subprocesses') and wall, costliest first, then the totals."""
    per: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for path in sorted(where.glob("cost-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row: dict[str, Any] = json.loads(line)
            cell = per[str(row["test"]).split("::")[0]]
            cell[0] += row["self"]
            cell[1] += row["kids"]
            cell[2] += row["wall"]
            cell[3] += 1
    ranked = sorted(per.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
    lines = [f"{'cpu s':>8} {'own':>7} {'kids':>7} {'wall s':>8} {'tests':>5}  file"]
    for name, (own, kids, wall, n) in ranked[:top]:
        lines.append(f"{own + kids:8.1f} {own:7.1f} {kids:7.1f} {wall:8.1f} {int(n):5d}  {name}")
    own, kids, wall, n = (sum(c[i] for c in per.values()) for i in range(4))
    lines.append(f"{own + kids:8.1f} {own:7.1f} {kids:7.1f} {wall:8.1f} {int(n):5d}  all {len(per)} files")
    server = where / "server.json"
    if server.is_file():
        lines.append(f"PostgreSQL server: {json.loads(server.read_text())['postgres_cpu']:.1f} s CPU")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m tests.cost DIR")
    print(summary(Path(sys.argv[1])))
