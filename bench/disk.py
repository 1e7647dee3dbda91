"""What a day of short memories costs on disk (SQLite): `python -m bench.disk`.

Two parts, each on a fresh vault:

1. **Over stdio, like an agent.** A `kaeru serve` subprocess gets `--notes` short memories
   (~150 characters, one `note` call each, with a request id), one after the other. The database and
   its `-wal` are measured every `--every` notes while it runs, then the client closes stdin and the
   same files are measured after the server exits: whether a `-wal` (or `-shm`) remains, and the
   bytes per node.
2. **Pages per note.** Another server on another vault gets `--warmup` notes and exits; a second one
   then writes `--sample` more while this process holds a read snapshot open on the file, so no
   checkpoint can copy or restart the log: every page each note's transaction wrote stays in the WAL.
   Its frames are counted and attributed to b-trees (tables, indexes, full-text segments) through
   `dbstat`: pages per note, by b-tree.

Prints a table and writes the figures as JSON (`--out`). Targets (issue #16): ≤ 8 MB with the WAL after
5,000 short memories, no `-wal` after a clean exit, pages per note halved (26.5 at the issue's start).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import struct
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw

from bench.corpus import CorpusBuilder
from bench.measure import RawStdioClient
from kaeru.storage.sqlite.store import CHECKPOINT_PAUSE

MB = 1024 * 1024
WAL_HEADER = 32
FRAME_HEADER = 24
#: How long the client stays quiet before measuring the idle vault: two checkpoint pauses and a margin.
IDLE_WAIT = 2 * CHECKPOINT_PAUSE + 1.5


class ShortMemories:
    """~150-character notes of Zipf-distributed words from the benchmark's vocabulary."""

    def __init__(self, seed: int = 16):
        builder = CorpusBuilder(200, seed=seed)
        self.vocab = builder.corpus.vocab
        self.weights = [1.0 / (r**1.07) for r in range(1, len(self.vocab) + 1)]
        self.rng = random.Random(seed)

    def text(self) -> str:
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < 140:
            words.extend(self.rng.choices(self.vocab, weights=self.weights, k=4))
        return " ".join(words).capitalize() + "."

    def args(self, index: int) -> dict[str, Any]:
        return {
            "initiative": f"agent-{index % 3}",
            "kind": "observation",
            "text": self.text(),
            "request_id": uuid.uuid4().hex,
        }


def _env(vault: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}
    env["KAERU_VAULT"] = str(vault)
    return env


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return None


def _files(vault: Path) -> dict[str, int | None]:
    db = vault / "vault.sqlite3"
    return {
        "db": _size(db),
        "wal": _size(db.with_name(db.name + "-wal")),
        "shm": _size(db.with_name(db.name + "-shm")),
    }


def _server_usage(pid: int) -> dict[str, float]:
    """The server process's CPU seconds (every thread: the checkpointer's included) and the bytes it
    has caused to be written to storage so far (Linux `/proc`; empty elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        io = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    except (OSError, ValueError):
        return {}
    ticks = os.sysconf("SC_CLK_TCK")
    return {"cpu_s": (int(fields[11]) + int(fields[12])) / ticks, "write_bytes": float(io["write_bytes"])}


def _write(
    client: RawStdioClient, memories: ShortMemories, start: int, count: int, after: Callable[[], None] | None = None
) -> list[float]:
    """Write `count` notes; `after()` runs after each one (untimed)."""
    took: list[float] = []
    for i in range(start, start + count):
        t = time.perf_counter()
        result = client.call_tool("note", memories.args(i))
        took.append((time.perf_counter() - t) * 1000)
        state = (result.get("structuredContent") or {}).get("state")
        if state != "applied":
            raise RuntimeError(f"note {i} was not applied: {result}")
        if after is not None:
            after()
    return took


def _stored_text_bytes(db: Path) -> int:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        row = conn.execute(
            "SELECT coalesce(sum(length(CAST(name AS BLOB)) + length(CAST(body AS BLOB)) "
            "+ length(CAST(coalesce(description, '') AS BLOB)) + length(CAST(tags AS BLOB)) "
            "+ length(CAST(properties AS BLOB))), 0), count(*) FROM nodes"
        ).fetchone()
        assert row is not None
        return int(row[0])
    finally:
        conn.close()


def bytes_by_btree(db: Path) -> dict[str, dict[str, float]]:
    """Bytes on disk per node, by b-tree (`dbstat`: the pages each table, index and full-text shadow
    table holds), with the part of those pages no cell uses (`unused`: the slack of half-full leaves
    left by inserts at random places of a b-tree); the free pages of the file as `(freelist)`."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        nodes = max(_one(conn, "SELECT count(*) FROM nodes"), 1)
        rows = conn.execute(
            "SELECT name, sum(pgsize), sum(payload), sum(unused) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
        free = _one(conn, "PRAGMA freelist_count") * _one(conn, "PRAGMA page_size")
    finally:
        conn.close()
    out = {
        str(name): {
            "bytes": round(size / nodes, 1),
            "payload": round(payload / nodes, 1),
            "unused": round(unused / nodes, 1),
        }
        for name, size, payload, unused in rows
        if size / nodes >= 1
    }
    out["(freelist)"] = {"bytes": round(free / nodes, 1), "payload": 0.0, "unused": round(free / nodes, 1)}
    return out


def _one(conn: apsw.Connection, sql: str) -> int:
    row = conn.execute(sql).fetchone()
    assert row is not None
    return int(row[0])


def _count_nodes(db: Path) -> int:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        row = conn.execute("SELECT count(*) FROM nodes").fetchone()
        assert row is not None
        return int(row[0])
    finally:
        conn.close()


def over_stdio(vault: Path, notes: int, every: int, errlog: Any) -> dict[str, Any]:
    memories = ShortMemories()
    client = RawStdioClient(_env(vault), errlog)
    samples: list[dict[str, Any]] = []
    peak_wal = 0
    latencies: list[float] = []
    done = 0
    start = _server_usage(client.proc.pid)
    while done < notes:
        step = min(every, notes - done)
        latencies += _write(client, memories, done, step)
        done += step
        files = _files(vault)
        peak_wal = max(peak_wal, files["wal"] or 0)
        samples.append({"notes": done, **files})
    end = _server_usage(client.proc.pid)
    # The server still runs, and the client is quiet: the checkpointer truncates the WAL once the
    # vault has been idle for its pause (a round already under way can add one more pause).
    time.sleep(IDLE_WAIT)
    idle = _files(vault)
    client.close()
    code = client.proc.returncode
    after = _files(vault)
    db = vault / "vault.sqlite3"
    nodes = _count_nodes(db)
    text = _stored_text_bytes(db)
    by_btree = bytes_by_btree(db)
    latencies.sort()
    return {
        "notes": notes,
        "exit_code": code,
        "during": samples,
        "peak_wal_bytes": peak_wal,
        "peak_total_bytes": max((s["db"] or 0) + (s["wal"] or 0) for s in samples),
        "idle": idle,
        "after_exit": after,
        "nodes": nodes,
        "bytes_per_node": round((after["db"] or 0) / max(nodes, 1)),
        "stored_text_bytes_per_node": round(text / max(nodes, 1)),
        "bytes_per_node_by_btree": by_btree,
        "note_ms_p50": round(latencies[len(latencies) // 2], 2),
        "note_ms_p95": round(latencies[int(len(latencies) * 0.95)], 2),
        # The whole server's CPU (its checkpointer's included) and what it wrote to disk (database and
        # WAL), per note, while it wrote the notes: what a tighter WAL bound costs.
        "server_cpu_ms_per_note": round((end["cpu_s"] - start["cpu_s"]) * 1000 / notes, 3) if end else None,
        "written_kb_per_note": round((end["write_bytes"] - start["write_bytes"]) / 1024 / notes, 1) if end else None,
        "load_average": os.getloadavg()[0],
    }


def _wal_frames(wal: Path) -> list[int]:
    """The page number of every frame of the current log in a WAL file, in order (a frame whose salt
    differs from the header's is left over from before the log last restarted)."""
    data = wal.read_bytes()
    if len(data) < WAL_HEADER:
        return []
    page_size = struct.unpack(">I", data[8:12])[0]
    salt = data[16:24]
    frames: list[int] = []
    at = WAL_HEADER
    while at + FRAME_HEADER + page_size <= len(data) and data[at + 8 : at + 16] == salt:
        frames.append(struct.unpack(">I", data[at : at + 4])[0])
        at += FRAME_HEADER + page_size
    return frames


def pages_per_note(vault: Path, warmup: int, sample: int, errlog: Any) -> dict[str, Any]:
    memories = ShortMemories(seed=17)
    client = RawStdioClient(_env(vault), errlog)
    _write(client, memories, 0, warmup)
    client.close()
    db = vault / "vault.sqlite3"
    wal = db.with_name(db.name + "-wal")
    # Hold a read snapshot from before the sample: no checkpoint can copy a frame past it, nor restart
    # the log, so the WAL keeps every page the sample's transactions write.
    holder = apsw.Connection(str(db))
    list(holder.execute("PRAGMA journal_mode = WAL"))
    list(holder.execute("PRAGMA wal_checkpoint(TRUNCATE)"))
    list(holder.execute("BEGIN"))
    list(holder.execute("SELECT count(*) FROM nodes"))
    client = RawStdioClient(_env(vault), errlog)
    # Each note's frames are attributed to the b-trees that own their pages right after its commit:
    # a page freed by a full-text merge and reused by another b-tree later in the sample is counted
    # where it was written, not where it ended.
    by_tree: Counter[str] = Counter()
    seen = 0

    def attribute() -> None:
        nonlocal seen
        frames = _wal_frames(wal)
        look = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            owners = {int(p): str(n) for n, p in look.execute("SELECT name, pageno FROM dbstat")}
        finally:
            look.close()
        by_tree.update(owners.get(p, "(freelist or header)") for p in frames[seen:])
        seen = len(frames)

    _write(client, memories, warmup, sample, attribute)
    frames = _wal_frames(wal)
    list(holder.execute("COMMIT"))
    holder.close()
    client.close()
    return {
        "warmup": warmup,
        "sample": sample,
        "frames": len(frames),
        "pages_per_note": round(len(frames) / sample, 2),
        "by_btree": {name: round(n / sample, 2) for name, n in by_tree.most_common()},
    }


def _mb(value: int | None) -> str:
    return "—" if value is None else f"{value / MB:.2f} MB"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.disk", description=__doc__.split("\n\n")[0])
    p.add_argument("--notes", type=int, default=5000, help="short memories written over stdio (default 5000)")
    p.add_argument("--every", type=int, default=500, help="measure the files every this many notes")
    p.add_argument("--warmup", type=int, default=1000, help="notes before counting pages per note")
    p.add_argument("--sample", type=int, default=200, help="notes whose WAL frames are counted")
    p.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    p.add_argument("--keep", type=Path, default=None, help="work in this directory and keep the vaults")
    a = p.parse_args(argv)
    work = a.keep or Path(tempfile.mkdtemp(prefix="kaeru-disk-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        with (work / "server-stderr.log").open("ab") as errlog:
            print(f"writing {a.notes:,} short memories over stdio …", file=sys.stderr, flush=True)
            stdio = over_stdio(work / "stdio", a.notes, a.every, errlog)
            print(f"counting pages per note ({a.warmup:,} + {a.sample:,}) …", file=sys.stderr, flush=True)
            pages = pages_per_note(work / "pages", a.warmup, a.sample, errlog)
    finally:
        if a.keep is None:  # its two vaults (~9 MB) were left in the temporary folder after every run
            shutil.rmtree(work, ignore_errors=True)
    result = {"sqlite": apsw.sqlite_lib_version(), "stdio": stdio, "pages": pages}
    print()
    print(f"{'notes':>7}  {'database':>10}  {'WAL':>10}  {'total':>10}")
    for s in stdio["during"]:
        total = (s["db"] or 0) + (s["wal"] or 0)
        print(f"{s['notes']:>7,}  {_mb(s['db']):>10}  {_mb(s['wal']):>10}  {_mb(total):>10}")
    idle = stdio["idle"]
    print(
        f"idle ({IDLE_WAIT:.1f} s after the last note, server running): database {_mb(idle['db'])}, "
        f"-wal {_mb(idle['wal'])}, total {_mb((idle['db'] or 0) + (idle['wal'] or 0))}"
    )
    after = stdio["after_exit"]
    print(
        f"after exit (code {stdio['exit_code']}): database {_mb(after['db'])}, -wal {_mb(after['wal'])}, "
        f"-shm {_mb(after['shm'])}"
    )
    print(f"peak WAL {_mb(stdio['peak_wal_bytes'])}, peak database + WAL {_mb(stdio['peak_total_bytes'])}")
    print(
        f"bytes per node {stdio['bytes_per_node']:,} (stored text and metadata {stdio['stored_text_bytes_per_node']:,}); "
        f"note over stdio p50 {stdio['note_ms_p50']} ms, p95 {stdio['note_ms_p95']} ms"
    )
    print(
        f"server CPU {stdio['server_cpu_ms_per_note']} ms a note (every thread), written to disk "
        f"{stdio['written_kb_per_note']} KB a note; load average {stdio['load_average']:.2f}"
    )
    print("bytes on disk per node after exit, by b-tree (of which unused):")
    for name, b in stdio["bytes_per_node_by_btree"].items():
        print(f"    {b['bytes']:>7.1f}  ({b['unused']:>5.1f})  {name}")
    print(f"pages per note {pages['pages_per_note']} ({pages['frames']:,} frames over {pages['sample']} notes):")
    for name, n in pages["by_btree"].items():
        print(f"    {n:>6.2f}  {name}")
    last = stdio["during"][-1]
    at_end = (last["db"] or 0) + (last["wal"] or 0)
    for what, size in (("right after the last note", at_end), ("idle", (idle["db"] or 0) + (idle["wal"] or 0))):
        print(f"target ≤ 8 MB including WAL, {what}: {'met' if size <= 8 * MB else 'missed'} ({_mb(size)})")
    print(f"target no -wal after a clean exit: {'met' if after['wal'] is None else 'missed'}")
    print(
        f"bytes on disk per node after exit ÷ stored text and metadata: {stdio['bytes_per_node'] / max(stdio['stored_text_bytes_per_node'], 1):.1f}×"
    )
    if a.out:
        a.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
