#!/usr/bin/env python3
"""Write the upgrade fixture of one schema version, with the code of the commit that had it.

    python scripts/make_upgrade_fixture.py sqlite 11              # tests/data/upgrade/sqlite-v011/
    python scripts/make_upgrade_fixture.py postgres 5             # tests/data/upgrade/postgres-v005/
    python scripts/make_upgrade_fixture.py sqlite 10 --commit 330390c --out sqlite-v010-330390c
    python scripts/make_upgrade_fixture.py sqlite 3 --commit 56c189c --out /tmp/x

The commit defaults to the newest commit (first-parent history of HEAD) at which VERSION was the
backend's latest migration: the parent of the commit that added VERSION + 1, or, when VERSION is the
latest, the newest commit that changed src/kaeru (commit the migration first). `--commit` names
another (a fixture `<backend>-v<NNN>-<commit>` keeps an earlier text of a migration edited before
the never-edit rule). The commit is checked out into a temporary `git worktree` (removed
afterwards) and its code runs with this venv's packages (`PYTHONPATH=<worktree>/src`, nothing
installed). It drives a fixed workload through the old code's own tools (`registry.run`,
stable since the first commit), with a fixed clock and fixed entropy, so ids and revisions repeat:

- sqlite:   `vault.sqlite3.gz` (closed cleanly, WAL checkpointed), `vault.amg` (the old code's
            export, when it had one), `answers.json.gz` (the old code's answers to a fixed list of
            `read`/`search`/`trail` calls), `README.md` (which commit wrote it). Gzipped because
            they are mostly empty pages and repeated snapshots (~35 kB instead of ~300 kB).
- postgres: the same against a fresh database on the server named by KAERU_TEST_DATABASE_URL
            (run it inside `pg_virtualenv`, as scripts/test.sh does), with `postgres.sql`, a plain
            `pg_dump` of that database (schema, data and schema_migrations) instead of a vault file.

tests/upgrade/test_upgrade_fixtures.py opens copies of them with the current code.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "upgrade"
MIGRATIONS = {b: f"src/kaeru/storage/{b}/migrations" for b in ("sqlite", "postgres")}
#: When the workload starts (every later moment is a fixed number of ticks after it).
EPOCH = "2026-05-01T09:00:00+00:00"


# --------------------------------------------------------------------------------------------
# The workload: runs inside the OLD code (PYTHONPATH=<worktree>/src), so it may import only what
# every version has: kaeru.config.Settings, kaeru.storage.factory.open_store, kaeru.service.Service
# and kaeru.mcp.server.build_server(...).registry.run.
# --------------------------------------------------------------------------------------------


def drive(out: Path, database_url: str | None) -> None:
    import inspect
    import random
    from datetime import datetime, timedelta

    import kaeru
    from kaeru.config import Settings
    from kaeru.mcp.server import build_server
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    here = os.environ["KAERU_FIXTURE_CODE"]
    assert Path(kaeru.__file__).resolve().is_relative_to(Path(here).resolve()), (kaeru.__file__, here)

    now = [datetime.fromisoformat(EPOCH)]

    def clock() -> datetime:
        return now[0]

    def tick(seconds: int = 10) -> str:
        now[0] += timedelta(seconds=seconds)
        return now[0].strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    env = {"KAERU_VAULT": str(out / "vault"), "KAERU_EXPORT_ROOT": str(out)}
    if database_url:
        env["KAERU_DATABASE_URL"] = database_url
    settings = Settings.from_env(env)
    store = open_store(settings)
    options: dict[str, Any] = {"clock": clock}
    if "entropy" in inspect.signature(Service).parameters:
        options["entropy"] = random.Random(15).randbytes
    server = build_server(Service(store, settings, **options))
    tools = server.registry.run
    tool_names = {t.name for t in server.registry.list_tools()}
    moments: dict[str, str] = {}
    nodes: dict[str, str] = {}
    home: dict[str, str] = {}  # node key -> the initiative it was written in
    skipped: list[dict[str, Any]] = []

    def run(tool: str, args: dict[str, Any], expect: str | None = None) -> dict[str, Any]:
        answer = tools(tool, args)
        if expect is None:
            assert answer["state"] in ("applied", "ok", "unchanged", "partial"), (tool, args, answer)
        else:
            assert answer["state"] == expect, (tool, args, answer)
        tick()
        return answer

    def attempt(tool: str, args: dict[str, Any]) -> bool:
        """A step some old code failed at (an internal fault, nothing applied): recorded, skipped."""
        answer = tools(tool, args)
        tick()
        if answer["state"] == "rejected" and [i["code"] for i in answer["issues"]] == ["internal"]:
            skipped.append({"tool": tool, "args": args, "answer": answer})
            return False
        assert answer["state"] in ("applied", "ok"), (tool, args, answer)
        return True

    def add(key: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        answer = run(tool, args)
        nodes[key] = answer["data"]["primary"]["id"]
        home[key] = args["initiative"]
        return answer

    def rev(answer: dict[str, Any]) -> str:
        return str(answer["data"]["primary"]["revision"])

    h = "harbour"
    ferry = add(
        "ferry",
        "note",
        {
            "initiative": h,
            "kind": "decision",
            "name": "ferry-time",
            "text": "the ferry leaves at nine because the tide turns at eight",
            "tags": ["boat", "schedule"],
        },
    )
    tide = add("tide", "note", {"initiative": h, "name": "tide", "text": "the tide turns at eight in summer"})
    add(
        "pier",
        "note",
        {"initiative": h, "kind": "rule", "name": "north-pier", "text": "never moor at the north pier in a storm"},
    )
    add(
        "crane",
        "note",
        {
            "initiative": h,
            "kind": "reference",
            "name": "crane-manual",
            "text": "the harbour handbook says the crane lifts ten tonnes",
            "source": "Harbour handbook, page 12: the crane lifts ten tonnes.",
            "tags": ["equipment"],
        },
    )
    add(
        "noon",
        "note",
        {
            "initiative": h,
            "kind": "idea",
            "name": "noon-ferry",
            "text": "a second ferry could run at noon",
            "link_to": "ferry-time",
            "edge_type": "refers_to",
            "weight": 0.5,
        },
    )
    add(
        "rope",
        "note",
        {"initiative": h, "kind": "jot", "name": "rope", "text": "buy more rope for the winter moorings"},
    )
    moments["written"] = tick()
    # edges of several types, one reweighted and one removed
    run("link", {"initiative": h, "from": "ferry-time", "to": "tide", "edge_type": "causal", "weight": 0.9})
    run("link", {"initiative": h, "from": "north-pier", "to": "tide", "edge_type": "refers_to", "weight": 0.4})
    run("link", {"initiative": h, "from": "rope", "to": "north-pier", "edge_type": "part_of", "weight": 0.6})
    run(
        "link",
        {
            "initiative": h,
            "action": "reweight",
            "from": "north-pier",
            "to": "tide",
            "edge_type": "refers_to",
            "weight": 0.7,
        },
    )
    run("link", {"initiative": h, "from": "crane-manual", "to": "ferry-time", "edge_type": "temporal", "weight": 0.3})
    run(
        "link",
        {"initiative": h, "action": "remove", "from": "crane-manual", "to": "ferry-time", "edge_type": "temporal"},
    )
    # revisions with compare-and-set: one applied, one stale (refused, nothing written)
    first = run(
        "revise",
        {
            "initiative": h,
            "node": "tide",
            "expected_revision": rev(tide),
            "patch": {"body": "the tide turns at eight in summer and at seven in winter"},
        },
    )
    run(
        "revise",
        {"initiative": h, "node": "tide", "expected_revision": rev(tide), "patch": {"body": "stale"}},
        expect="rejected",
    )
    run(
        "revise",
        {"initiative": h, "node": "tide", "expected_revision": rev(first), "patch": {"description": "tide table"}},
    )
    run(
        "revise",
        {"initiative": h, "node": "ferry-time", "expected_revision": rev(ferry), "patch": {"name": "ferry-departure"}},
    )
    moments["revised"] = tick()
    # supersession, a claim and its verdict
    add(
        "one",
        "evolve",
        {
            "initiative": h,
            "mode": "supersede",
            "source": "noon-ferry",
            "new_body": "a second ferry runs at one",
            "new_name": "one-ferry",
        },
    )
    add(
        "claim",
        "claim",
        {
            "initiative": h,
            "text": "the crane lifts twelve tonnes",
            "about": "crane-manual",
            "evidence": {"method": "read the plate"},
        },
    )
    run(
        "verdict",
        {
            "initiative": h,
            "hypothesis": {"id": nodes["claim"]},
            "status": "refuted",
            "evidence": {"node": "crane-manual"},
        },
    )
    # slots with compare-and-set
    slot = run("slot", {"initiative": h, "slot": "handoff", "node": "ferry-departure", "expected_slot_revision": "0"})
    slot_rev = slot["data"]["slots"][0]["revision"] if slot["data"].get("slots") else None
    move = {"initiative": h, "slot": "handoff", "node": "tide"}
    if slot_rev:
        move["expected_slot_revision"] = slot_rev
    run("slot", move)
    # tasks
    task = add(
        "task",
        "task",
        {
            "initiative": h,
            "name": "paint-hull",
            "text": "paint the hull before spring",
            "link_to": "one-ferry",
            "tags": ["boat"],
        },
    )
    run("task_update", {"initiative": h, "task": "paint-hull", "status": "done", "expected_revision": rev(task)})
    moments["tasks"] = tick()
    # another initiative, renamed
    add("lights", "note", {"initiative": "draft", "name": "dock-lights", "text": "the dock lights are blue at night"})
    moments["before_rename"] = tick()
    ops = (
        "harbour-ops"
        if attempt("initiative", {"initiative": "draft", "action": "rename", "to": "harbour-ops"})
        else "draft"
    )
    home["lights"] = ops
    # another, merged into the harbour
    add("gulls", "note", {"initiative": "scratch", "name": "gulls", "text": "the gulls nest on the harbour roof"})
    add(
        "fog",
        "note",
        {
            "initiative": "scratch",
            "name": "fog",
            "text": "the fog rolls in at dawn",
            "link_to": "gulls",
            "edge_type": "derived_from",
            "weight": 0.8,
        },
    )
    moments["before_merge"] = tick()
    if attempt("initiative", {"initiative": "scratch", "action": "merge", "to": h}):
        home["gulls"] = home["fog"] = h
    # a forget
    run("forget", {"initiative": h, "node": "rope", "reason": "bought the rope"})
    moments["end"] = tick()

    # the old code's own export (none before the archive tool; PostgreSQL's failed until schema 3)
    archived = "archive" in tool_names and attempt("archive", {"action": "export", "path": "vault.amg"})

    # The answers the old code gives, for a fixed list of calls.
    calls: list[dict[str, Any]] = []

    def ask(tool: str, args: dict[str, Any]) -> None:
        calls.append({"tool": tool, "args": args, "answer": tools(tool, args)})

    for key, node in nodes.items():
        ask("read", {"initiative": home[key], "node": {"id": node}, "neighbours": True})
        ask("trail", {"initiative": home[key], "node": {"id": node}, "kind": "history"})
    for moment in ("written", "revised", "before_rename", "before_merge"):
        for key in ("ferry", "tide", "noon", "lights", "gulls"):
            ask(
                "read", {"initiative": home[key], "node": {"id": nodes[key]}, "at": moments[moment], "neighbours": True}
            )
    ask("trail", {"initiative": h, "node": {"id": nodes["ferry"]}, "kind": "neighbours"})
    ask("trail", {"initiative": h, "node": {"id": nodes["fog"]}, "kind": "provenance"})
    for text in ("ferry", "tide", "crane", "gulls", "rope", "lights", "harbour"):
        ask("search", {"initiatives": [h], "text": text})
        ask("search", {"initiatives": sorted({h, ops, home["gulls"]}), "text": text})
    ask("search", {"initiatives": [h], "text": "fer", "prefix": True})
    store.close()

    record = {
        "archive": archived,
        "calls": calls,
        "initiatives": sorted(set(home.values())),
        "skipped": skipped,
        "moments": moments,
        "nodes": nodes,
    }
    (out / "answers.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


# --------------------------------------------------------------------------------------------
# The generator: runs with the CURRENT checkout and venv.
# --------------------------------------------------------------------------------------------


#: Commits of 2026-11-30 (schemas 2 and 3) stemmed with `snowballstemmer`, since replaced by PyStemmer,
#: the C build of the same Snowball stemmers with the same `stemmer(lang).stemWords(words)` calls; the
#: shim keeps this venv as it is. (Their stem index is rebuilt from the nodes by migration 006.)
SNOWBALL_SHIM = """from Stemmer import Stemmer


def stemmer(language):
    return Stemmer(language)
"""


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def versions(backend: str) -> dict[int, str]:
    """The migrations at HEAD: version -> path."""
    found = {}
    for line in git("ls-tree", "--name-only", "HEAD", MIGRATIONS[backend] + "/").splitlines():
        name = Path(line).name
        if name[:3].isdigit() and name.endswith((".sql", ".py")):
            found[int(name[:3])] = line
    return found


def newest_commit(backend: str, version: int) -> str:
    """The newest first-parent commit at which `version` was `backend`'s latest migration."""
    known = versions(backend)
    if version not in known:
        raise SystemExit(f"{backend} has no migration {version:03d} at HEAD (commit it first)")
    if version + 1 not in known:  # the latest: the newest commit that changed the code
        return git("log", "-1", "--format=%H", "HEAD", "--", "src/kaeru")
    added = git(
        "log", "--first-parent", "--diff-filter=A", "--format=%H", "HEAD", "--", known[version + 1]
    ).splitlines()
    return git("rev-parse", f"{added[-1]}^1")


def checkpoint(path: Path) -> None:
    """Close the old code's vault cleanly: the WAL emptied into the file, no -wal/-shm left."""
    import apsw

    db = apsw.Connection(str(path))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    for suffix in ("-wal", "-shm"):
        leftover = Path(str(path) + suffix)
        if leftover.exists():
            raise SystemExit(f"{leftover} left behind")


def squeeze(data: bytes, target: Path) -> None:
    """`data` gzipped, the same bytes for the same data (no name, no time in the header)."""
    target.write_bytes(gzip.compress(data, mtime=0))


def pg_dump(url: str, target: Path) -> None:
    """A plain dump (schema, data, schema_migrations) that psycopg can run as one script: no
    psql meta-commands, no COPY, no owners or grants."""
    raw = subprocess.run(
        ["pg_dump", "--no-owner", "--no-privileges", "--column-inserts", "--dbname", url],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    # only the psql meta-commands go (`\restrict KEY`, `\unrestrict KEY`: pg_dump 15.14+): lines that
    # are exactly one; the rest is left byte for byte (a row's text may span lines)
    meta = re.compile(r"\\(un)?restrict [A-Za-z0-9]+\n?")
    text = "".join(line for line in raw.splitlines(keepends=True) if not meta.fullmatch(line))
    target.write_text(text)


def make(backend: str, version: int, commit: str, out: Path, newest: bool) -> None:
    full = git("rev-parse", commit)
    short = git("rev-parse", "--short=7", full)
    subject = git("log", "-1", "--format=%s", full)
    with tempfile.TemporaryDirectory(prefix="kaeru-fixture-") as tmp:
        code = Path(tmp) / "code"
        work = Path(tmp) / "work"
        work.mkdir()
        git("worktree", "add", "--detach", str(code), full)
        try:
            shipped = (code / MIGRATIONS[backend]).glob("[0-9][0-9][0-9]_*.*")
            old = sorted(int(p.name[:3]) for p in shipped if p.suffix in (".sql", ".py"))
            if old[-1] != version:
                raise SystemExit(f"{short}'s latest {backend} migration is {old[-1]:03d}, not {version:03d}")
            shim = Path(tmp) / "shim"
            shim.mkdir()
            (shim / "snowballstemmer.py").write_text(SNOWBALL_SHIM)
            path = os.pathsep.join([str(code / "src"), str(shim)])
            env = dict(os.environ, PYTHONPATH=path, KAERU_FIXTURE_CODE=str(code / "src"))
            for key in [k for k in env if k.startswith("KAERU_") and k != "KAERU_FIXTURE_CODE"]:
                del env[key]
            database_url = None
            admin = None
            if backend == "postgres":
                admin = os.environ.get("KAERU_TEST_DATABASE_URL")
                if not admin:
                    raise SystemExit("postgres: set KAERU_TEST_DATABASE_URL (run inside pg_virtualenv)")
                import psycopg

                with psycopg.connect(admin, autocommit=True) as pg:
                    pg.execute("DROP DATABASE IF EXISTS kaeru_fixture")
                    pg.execute("CREATE DATABASE kaeru_fixture")
                database_url = admin.rsplit("/", 1)[0] + "/kaeru_fixture"
            cmd = [sys.executable, str(Path(__file__).resolve()), "--drive", str(work)]
            if database_url:
                cmd.append(database_url)
            subprocess.run(cmd, cwd=tmp, env=env, check=True)
            if out.exists():
                shutil.rmtree(out)
            out.mkdir(parents=True)
            if backend == "sqlite":
                checkpoint(work / "vault" / "vault.sqlite3")
                squeeze((work / "vault" / "vault.sqlite3").read_bytes(), out / "vault.sqlite3.gz")
                written = "`vault.sqlite3.gz` (the vault file, WAL checkpointed, gzipped)"
            else:
                assert database_url is not None and admin is not None
                pg_dump(database_url, out / "postgres.sql")
                import psycopg

                with psycopg.connect(admin, autocommit=True) as pg:
                    pg.execute("DROP DATABASE kaeru_fixture")
                written = "`postgres.sql` (a plain pg_dump of the vault's database, psql meta-commands dropped)"
            answers = json.loads((work / "answers.json").read_text())
            answers = {"backend": backend, "commit": full, "schema": version, **answers}
            squeeze((json.dumps(answers, indent=1, sort_keys=True) + "\n").encode(), out / "answers.json.gz")
            if answers["archive"]:
                shutil.copy(work / "vault.amg", out / "vault.amg")
                archive = "`vault.amg` (that code's own export of the vault)"
            elif any(step["tool"] == "archive" for step in answers["skipped"]):
                archive = "no archive (that code's export failed with an internal fault)"
            else:
                archive = "no archive (that code had no export)"
            failed = sorted({f"`{step['tool']} {step['args']['action']}`" for step in answers["skipped"]})
            if failed:
                archive += f" (steps that code failed at, skipped and recorded in the answers: {', '.join(failed)})"
            if newest:
                which = f"the newest with {backend} migration {version:03d} as its latest"
                command = f"python scripts/make_upgrade_fixture.py {backend} {version}"
            else:
                which = f"one with {backend} migration {version:03d} as its latest"
                command = (
                    f"python scripts/make_upgrade_fixture.py {backend} {version} --commit {short} --out {out.name}"
                )
            (out / "README.md").write_text(
                f"# {backend} schema {version:03d}\n\n"
                f"Written by the code of commit `{short}` ({subject[:80]}), {which}, by `{command}`: "
                f"{written}, {archive}, and `answers.json.gz` (its answers to the fixed `read`/`search`/`trail` calls).\n"
            )
        finally:
            git("worktree", "remove", "--force", str(code))
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out} from {short}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--drive":
        drive(Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("backend", choices=["sqlite", "postgres"])
    parser.add_argument("version", type=int, help="the schema version (the migration's number)")
    parser.add_argument("--commit", help="the commit whose code writes it (default: the newest with VERSION latest)")
    parser.add_argument(
        "--out", type=Path, help="a path, or a bare name under tests/data/upgrade (default: <backend>-v<NNN>)"
    )
    ns = parser.parse_args()
    commit = ns.commit or newest_commit(ns.backend, ns.version)
    out = ns.out or FIXTURES / f"{ns.backend}-v{ns.version:03d}"
    if ns.out and len(ns.out.parts) == 1:  # a bare name: a directory of tests/data/upgrade
        out = FIXTURES / ns.out.name
    make(ns.backend, ns.version, commit, out, newest=ns.commit is None)


if __name__ == "__main__":
    main()
