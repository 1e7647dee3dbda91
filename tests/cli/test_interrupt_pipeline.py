"""Ctrl-C while PostgreSQL still owes a pipelined write its answers ends `kaeru import`, `kaeru copy`
and `kaeru import-from` as a Ctrl-C ends them anywhere else: exit 130 and the interrupt's line, not
"unavailable: … cannot exit pipeline mode while busy" and exit 1 (decision 392). The chunk in flight
is rolled back, the chunks before it stay, and the same command again completes the work.

The defect needs the signal in a window of microseconds: while psycopg, ending a pipeline, runs its
own Python code with answers still to come (a signal while it waits in `poll` is handled well). A
`kill` at a random moment of an import hit it once in 40 tries, so the command runs under
`_DRIVER`, which sends itself a real SIGINT (Python's own handler raises `KeyboardInterrupt`) then:

* when kaeru sends its first audit record (`INSERT INTO audit`, held back by `send` until the chunk's
  COMMIT, decision 16.P2: the archive's audit records come last, after whole chunks of nodes), a
  connection of the driver's own locks the statistics tables that the chunk's COMMIT pipeline
  writes after its audit records, so PostgreSQL runs the audit inserts, then waits: the COMMIT
  cannot run, the pipeline's answers are owed;
* in the `Pipeline.__exit__` that follows, once PostgreSQL is seen waiting for that lock, the signal
  comes on the first step of the generator psycopg drives to collect those answers (psycopg then
  cancels the waiting statement: the chunk is rolled back, every time).

kaeru's code runs unchanged; only psycopg's public `Connection.execute`, `Connection.wait` and
`Pipeline.__exit__` are wrapped, and only to choose that moment.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.backends import VaultSpec, postgres_admin_url
from tests.cli.support import TIMEOUT_S, kaeru, kaeru_env
from tests.cli.test_doctor import _scalar

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(300),
    pytest.mark.skipif(not postgres_admin_url(), reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset"),
]

#: `python -m kaeru` with one SIGINT sent to itself while PostgreSQL owes a pipeline its answers
#: (module docstring). The lock's connection stays open until the process ends.
_DRIVER = """
import os, runpy, signal, sys, threading
import psycopg

STATS = "term_stats, text_totals, section_counts"  # what a COMMIT pipeline writes after the audit records
WAITS = (  # whether a session of this database waits for a lock on one of them
    "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = ANY(ARRAY['term_stats', 'text_totals', "
    "'section_counts']::regclass[]) AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)
MAIN = threading.get_ident()  # where kaeru runs its command, and Python its signal handlers
lock, ending, sent = [], [], []
execute, wait, exit_pipeline = psycopg.Connection.execute, psycopg.Connection.wait, psycopg.Pipeline.__exit__

def noting_audit(self, query, *args, **kwargs):
    if not lock and isinstance(query, str) and query.startswith("INSERT INTO audit"):
        lock.append(psycopg.connect(os.environ["KAERU_DATABASE_URL"]))
        lock[0].execute(f"LOCK TABLE {STATS} IN SHARE MODE NOWAIT")
    return execute(self, query, *args, **kwargs)

def ending_pipeline(self, *exc):
    ending.append(threading.get_ident())
    try:
        return exit_pipeline(self, *exc)
    finally:
        ending.remove(threading.get_ident())

def interrupted(gen):
    yield gen.send(None)
    while not lock[0].execute(WAITS).fetchone()[0]:
        pass  # until PostgreSQL waits for the lock: the pipeline's COMMIT cannot run before the signal
    signal.raise_signal(signal.SIGINT)

def waiting(self, gen, *args, **kwargs):
    if lock and MAIN in ending and threading.get_ident() == MAIN and not sent:
        sent.append(gen)
        gen = interrupted(gen)
    return wait(self, gen, *args, **kwargs)

psycopg.Connection.execute = noting_audit
psycopg.Connection.wait = waiting
psycopg.Pipeline.__exit__ = ending_pipeline
sys.argv[0] = "kaeru"
runpy.run_module("kaeru", run_name="__main__", alter_sys=True)
"""

#: How many nodes the archive holds: two chunks of records (`vault_io.CHUNK`), the audit records
#: in the second, so the first is committed before the signal.
NODES = 600

INTERRUPTED_IMPORT = (
    "error: interrupted: stopped by Ctrl-C (SIGINT): part of the archive may have been written; run the same "
    "import again to complete it (what the vault already holds is skipped)"
)
INTERRUPTED = "error: interrupted: stopped by Ctrl-C (SIGINT) before it ended"
#: `import-from`'s, when no chunk of its items was committed before the signal.
INTERRUPTED_IMPORT_FROM = (
    "error: interrupted: stopped by Ctrl-C (SIGINT): what was committed before it stays in the vault (its items "
    "are written in chunks, each committed on its own); run the same command again to finish the import — what "
    "the vault already holds is found by its key and not written twice, the rest is written"
)


@pytest.fixture
def backend() -> str:
    """PostgreSQL only: SQLite has no pipeline (its Ctrl-C is tests/cli/test_interrupt.py's)."""
    return "postgres"


@pytest.fixture(scope="module")
def entities(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A memory.jsonl of `NODES` entities."""
    path = tmp_path_factory.mktemp("entities") / "memory.jsonl"
    with path.open("w") as out:
        for n in range(NODES):
            entity = {"type": "entity", "name": f"ent{n}", "entityType": "thing", "observations": [f"seen {n}"]}
            out.write(json.dumps(entity) + "\n")
    return path


@pytest.fixture(scope="module")
def source(entities: Path) -> Path:
    """A SQLite vault holding `entities` in the initiative `big`, with their audit records."""
    folder = entities.parent / "source"
    assert kaeru({"KAERU_VAULT": str(folder)}, "import-from", "memory-jsonl", str(entities), "-i", "big").code == 0
    return folder


@pytest.fixture(scope="module")
def archive(source: Path) -> Path:
    """An amg archive of `source`: its nodes, then its audit records."""
    path = source.parent / "big.amg"
    assert kaeru({"KAERU_VAULT": str(source)}, "export", str(path)).code == 0
    return path


def _interrupted(vault: VaultSpec, *args: str) -> tuple[int, str, str]:
    """`kaeru ARGS` under `_DRIVER`: its exit code, stderr and stdout."""
    assert _count(vault, "audit") == 0  # nothing audited yet: the command's audit records are the first
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, *args],
        capture_output=True,
        env=kaeru_env(vault),
        timeout=TIMEOUT_S,
        check=False,
        # SIGINT's default disposition, as a terminal's Ctrl-C finds it (test_interrupt.py `_start`).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    return proc.returncode, proc.stderr.decode(errors="replace").strip(), proc.stdout.decode(errors="replace")


def _count(vault: VaultSpec, table: str) -> int:
    count: int = _scalar(vault, f"SELECT count(*) FROM {table}")
    return count


def test_ctrl_c_while_an_import_pipeline_is_busy_is_the_interrupt(vault: VaultSpec, archive: Path) -> None:
    code, err, out = _interrupted(vault, "import", str(archive))
    assert (code, err, out) == (130, INTERRUPTED_IMPORT, ""), (code, err, out)
    # The chunks of nodes before the last stay; the last (some nodes, every audit record) does not.
    assert 0 < _count(vault, "nodes") < NODES and _count(vault, "audit") == 0
    again = kaeru(vault, "import", str(archive))
    assert again.code == 0, again.stderr
    assert _count(vault, "nodes") == NODES and _count(vault, "audit") > 0
    assert kaeru(vault, "import", str(archive)).code == 0
    assert _count(vault, "nodes") == NODES  # each once


def test_ctrl_c_while_a_copy_pipeline_is_busy_is_the_interrupt(vault: VaultSpec, source: Path) -> None:
    assert vault.database_url
    code, err, out = _interrupted(vault, "copy", "--from", str(source), "--to", vault.database_url)
    assert (code, err, out) == (130, INTERRUPTED, ""), (code, err, out)
    assert 0 < _count(vault, "nodes") < NODES and _count(vault, "audit") == 0
    again = kaeru(vault, "copy", "--from", str(source), "--to", vault.database_url, "--force")
    assert again.code == 0, again.stderr
    assert _count(vault, "nodes") == NODES


def test_ctrl_c_while_an_import_from_pipeline_is_busy_is_the_interrupt(vault: VaultSpec, entities: Path) -> None:
    code, err, out = _interrupted(vault, "import-from", "memory-jsonl", str(entities), "-i", "big")
    assert (code, err, out) == (130, INTERRUPTED_IMPORT_FROM, ""), (code, err, out)
    assert _count(vault, "nodes") == 0 and _count(vault, "audit") == 0  # its first chunk, rolled back
    again = kaeru(vault, "import-from", "memory-jsonl", str(entities), "-i", "big")
    assert again.code == 0, again.stderr
    assert _count(vault, "nodes") == NODES
