"""Standard output that cannot be written (decision 170): a full disk ends a command with one line on
stderr and exit 1 (or the command's own non-zero code), a reader that went away (`| head -1`) is not
a failure; either way the command runs to its end, so a write is stored exactly once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from tests.backends import VaultSpec
from tests.cli.support import TIMEOUT_S, kaeru_env, write_notes

pytestmark = pytest.mark.timeout(300)

needs_dev_full = pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")


def _run(vault: VaultSpec, stdout: IO[Any] | int, *args: str) -> tuple[int, str]:
    """`python -m kaeru ARGS` with its stdout on `stdout`: its exit code and its stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "kaeru", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=kaeru_env(vault),
        timeout=TIMEOUT_S,
        check=False,
    )
    stderr = done.stderr.decode(errors="replace")
    assert "Traceback" not in stderr, stderr
    return done.returncode, stderr


def _to_dev_full(vault: VaultSpec, *args: str) -> tuple[int, str]:
    with open("/dev/full", "w") as full:
        return _run(vault, full, *args)


def _to_closed_pipe(vault: VaultSpec, *args: str) -> tuple[int, str]:
    """stdout a pipe whose reader is gone before the command writes: every write is EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return _run(vault, write_end, *args)
    finally:
        os.close(write_end)


def _stored(vault: VaultSpec, word: str, initiative: str = "out") -> list[str]:
    """The nodes a search for `word` finds, asked in process (what is stored is the subject here, not
    `kaeru search`, which the tests of tests/cli/test_commands.py run)."""
    from kaeru.api.requests import parse
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    store = open_store(vault.settings())
    try:
        found: Any = Service(store, vault.settings()).search(
            parse("search", {"initiatives": [initiative], "text": word})
        )
        return [hit.node.id for hit in found.hits]
    finally:
        store.close()


def _output_failed(stderr: str) -> None:
    """One line says it, last (an issue the call raised, such as `new_initiative`, may come first)."""
    lines = stderr.strip().splitlines()
    assert lines[-1].startswith("error: output: No space left on device"), stderr
    assert stderr.count("error:") == 1, stderr


def _quiet(run: tuple[int, str]) -> int:
    """The exit code of a run whose stderr says nothing went wrong."""
    code, stderr = run
    assert "error" not in stderr.lower(), stderr
    return code


@needs_dev_full
def test_a_full_disk_on_stdout_is_one_line_and_the_note_is_stored_once(vault: VaultSpec) -> None:
    code, stderr = _to_dev_full(vault, "note", "-i", "out", "the plover nests on gravel")
    assert code == 1
    _output_failed(stderr)
    code, stderr = _to_dev_full(vault, "--json", "note", "-i", "out", "the avocet sweeps the mud")
    assert code == 1
    _output_failed(stderr)
    assert len(_stored(vault, "plover")) == 1 and len(_stored(vault, "avocet")) == 1

    code, stderr = _to_dev_full(vault, "search", "plover", "-i", "out")
    assert code == 1
    _output_failed(stderr)
    # A rejection keeps its own exit code; the lost output is said beside it.
    code, stderr = _to_dev_full(vault, "--json", "note", "-i", "out", "x", "--kind", "nonsense")
    assert code == 2
    _output_failed(stderr)
    code, stderr = _to_dev_full(vault, "--version")
    assert code == 1
    _output_failed(stderr)


def test_a_reader_gone_is_not_a_failure_and_the_note_is_stored_once(vault: VaultSpec) -> None:
    assert _quiet(_to_closed_pipe(vault, "note", "-i", "out", "the dunlin feeds at dusk")) == 0
    assert _quiet(_to_closed_pipe(vault, "--json", "note", "-i", "out", "the knot flies north")) == 0
    assert len(_stored(vault, "dunlin")) == 1 and len(_stored(vault, "knot")) == 1
    assert _quiet(_to_closed_pipe(vault, "search", "dunlin", "-i", "out")) == 0
    assert _quiet(_to_closed_pipe(vault, "--help")) == 0
    code, _ = _to_closed_pipe(vault, "--json", "note", "-i", "out", "x", "--kind", "nonsense")
    assert code == 2


def test_head_on_a_long_read_under_pipefail_succeeds(vault: VaultSpec) -> None:
    """What a shell user types: a body longer than the pipe holds, cut by `head -1`, is no failure."""
    body = "".join(f"line {n} of the sandpiper survey, counted at the estuary\n" for n in range(4000))
    [node_id] = write_notes(vault, "out", body)  # in process: `kaeru read | head` is the subject
    script = f'set -o pipefail; "{sys.executable}" -m kaeru read {node_id} -i out | head -1'
    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, env=kaeru_env(vault), timeout=TIMEOUT_S, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b"" and len(done.stdout.splitlines()) == 1


def _both_to_closed_pipe(vault: VaultSpec, *args: str) -> int:
    """`kaeru ARGS 2>&1 | true`: stdout and stderr one pipe whose reader is gone; the exit code."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "kaeru", *args],
            stdout=write_end,
            stderr=write_end,
            env=kaeru_env(vault),
            timeout=TIMEOUT_S,
            check=False,
        )
    finally:
        os.close(write_end)
    return done.returncode


def test_a_reader_gone_from_stderr_is_not_a_failure_either(vault: VaultSpec) -> None:
    """`kaeru … 2>&1 | head -1`: what is said on stderr after the reader left (a new initiative's
    warning, search's "(more: …)") is dropped as stdout's is; the exit code is the command's own, so
    a caller that retries on failure does not store the note twice."""
    write_notes(vault, "out", "the curlew calls at dawn", "the curlew calls at dusk", "the curlew calls at noon")
    assert _both_to_closed_pipe(vault, "search", "curlew", "-i", "out", "--limit", "1") == 0
    assert _both_to_closed_pipe(vault, "note", "-i", "fresh", "the whimbrel passes in May") == 0
    assert _both_to_closed_pipe(vault, "note", "-i", "out", "x", "--kind", "nonsense") == 2
    assert len(_stored(vault, "whimbrel", "fresh")) == 1
