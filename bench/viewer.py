"""The web viewer's pages at scale: `python -m bench.viewer --vault DIR [--database-url URL] [--initiative NAME]`.

Starts `kaeru ui` on the vault as a person does (a subprocess, its printed sign-in link followed
once for the session cookie), then asks every read-only view of one initiative `--rounds` times in
turn and prints each page's wall time (p50 / p95 / max, ms) and size. The first round is reported
apart: it reads copies and page caches a fresh process does not have yet.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from bench.servers import free_port


def views(initiative: str, query: str) -> list[tuple[str, str]]:
    """(label, path) of each read-only view of `initiative`."""
    i = urllib.parse.quote(initiative)
    q = urllib.parse.quote_plus(query)
    return [
        ("initiatives", "/ui/"),
        ("graph", f"/ui/graph?i={i}"),
        ("board", f"/ui/board?i={i}"),
        ("timeline", f"/ui/timeline?i={i}"),
        ("reviews", f"/ui/reviews?i={i}"),
        ("rules", f"/ui/rules?i={i}"),
        ("search", f"/ui/search?i={i}&q={q}"),
        ("recall", f"/ui/recall?i={i}&q={q}"),
    ]


def _sign_in(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[urllib.request.OpenerDirector, str]:
    """An opener holding the session cookie, and the viewer's base address, from `kaeru ui`'s lines."""
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"kaeru ui ended before printing its sign-in link (exit {proc.poll()})")
        if "login?token=" in line:
            link = line.split(": ", 1)[1].strip()
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
            opener.open(link, timeout=60).read()
            return opener, link.split("/ui/", 1)[0]
    raise RuntimeError("kaeru ui printed no sign-in link in time")


def measure(vault: Path, initiative: str, query: str, rounds: int, database_url: str | None = None) -> dict[str, Any]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}
    env["KAERU_VAULT"] = str(vault)
    if database_url:
        env["KAERU_DATABASE_URL"] = database_url
    proc = subprocess.Popen(
        [sys.executable, "-m", "kaeru", "ui", "--port", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        opener, base = _sign_in(proc)
        pages = views(initiative, query)
        first: dict[str, float] = {}
        times: dict[str, list[float]] = {label: [] for label, _ in pages}
        sizes: dict[str, int] = {}
        for round_no in range(rounds + 1):
            for label, path in pages:
                t0 = time.perf_counter()
                with opener.open(base + path, timeout=120) as answer:  # HTTPError past a 2xx
                    body = answer.read()
                ms = (time.perf_counter() - t0) * 1000
                sizes[label] = len(body)
                if round_no == 0:
                    first[label] = ms
                else:
                    times[label].append(ms)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    out = {}
    for label, samples in times.items():
        ordered = sorted(samples)
        out[label] = {
            "first": round(first[label], 1),
            "p50": round(statistics.median(ordered), 1),
            "p95": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1),
            "max": round(ordered[-1], 1),
            "bytes": sizes[label],
        }
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="python -m bench.viewer", description=__doc__.split("\n")[0])
    p.add_argument("--vault", type=Path, required=True, help="a SQLite vault directory (e.g. a bench.build one)")
    p.add_argument("--database-url", default=None, help="a PostgreSQL vault instead (--vault then only holds tokens)")
    p.add_argument("--initiative", default="kaeru-core")
    p.add_argument("--query", default="cache eviction", help="the words the search and recall views ask")
    p.add_argument("--rounds", type=int, default=10)
    a = p.parse_args(argv)
    results = measure(a.vault, a.initiative, a.query, a.rounds, a.database_url)
    print(f"{'view':12s} {'first':>8s} {'p50':>8s} {'p95':>8s} {'max':>8s} {'bytes':>8s}   (ms, over HTTP)")
    for label, row in results.items():
        print(
            f"{label:12s} {row['first']:8.1f} {row['p50']:8.1f} {row['p95']:8.1f} {row['max']:8.1f} {row['bytes']:8d}"
        )
    return results


if __name__ == "__main__":
    main()
