"""A standard stream closed before kaeru starts (`<&-`, `>&-`, `2>&-` in a shell; Python then has no
`sys.stdin`/`sys.stdout`/`sys.stderr`): a `-` that reads a closed stdin is a usage error naming it,
`kaeru serve` says it needs its stdin, and a closed stdout or stderr is one nobody reads — what is
written to it is dropped, the command's exit code is its own, so a stored note exits 0 (a traceback
and exit 1 made a retry store it twice)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.backends import VaultSpec
from tests.cli.support import TIMEOUT_S, kaeru_env

pytestmark = pytest.mark.timeout(300)


def _closed(fds: tuple[int, ...], env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """`python -m kaeru ARGS` started with the standard descriptors `fds` closed, as a shell's `<&-`
    leaves them; the others are pipes read here. Its exit code, stdout and stderr."""

    def close() -> None:
        for fd in fds:
            os.close(fd)

    done = subprocess.run(
        [sys.executable, "-m", "kaeru", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        preexec_fn=close,  # after the pipes are in place: what stays closed is what the shell closed
        timeout=TIMEOUT_S,
        check=False,
    )
    stdout, stderr = done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    assert "Traceback" not in stderr, stderr
    return done.returncode, stdout, stderr


def _stored(vault: VaultSpec, word: str, initiative: str) -> int:
    """How many nodes a search for `word` finds, asked in process (what is stored is the subject)."""
    from kaeru.api.requests import parse
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    store = open_store(vault.settings())
    try:
        found: Any = Service(store, vault.settings()).search(
            parse("search", {"initiatives": [initiative], "text": word})
        )
        return len(found.hits)
    finally:
        store.close()


def test_a_dash_on_a_closed_stdin_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    env = kaeru_env({"KAERU_VAULT": str(tmp_path / "vault")})
    for args, named in (
        (("note", "-", "-i", "web"), "TEXT '-'"),
        (("call", "note", "-"), "ARGUMENTS '-'"),
        (("import", "-"), "PATH '-'"),
    ):
        code, stdout, stderr = _closed((0,), env, *args)
        assert code == 2, stderr
        assert f"stdin is closed: nothing to read for {named}" in stderr
        assert stdout == ""
    assert not (tmp_path / "vault").exists()  # refused before a vault is made


def test_serve_says_it_needs_its_stdin(tmp_path: Path) -> None:
    code, stdout, stderr = _closed((0,), kaeru_env({"KAERU_VAULT": str(tmp_path / "vault")}), "serve")
    assert code == 2, stderr
    assert "stdin is closed: kaeru serve speaks MCP on its stdin" in stderr
    assert stdout == ""


def test_a_note_stored_with_stdout_closed_exits_0(vault: VaultSpec) -> None:
    env = kaeru_env(vault)
    code, _, stderr = _closed((1,), env, "note", "the curlew calls at dawn", "-i", "web")
    assert code == 0, stderr
    assert "new_initiative" in stderr  # stderr still says what it says
    code, _, stderr = _closed((1,), env, "--json", "note", "the whimbrel calls at dusk", "-i", "web")
    assert code == 0, stderr
    assert _stored(vault, "curlew", "web") == 1 and _stored(vault, "whimbrel", "web") == 1
    # A refusal keeps its own code.
    code, _, _ = _closed((1,), env, "note", "x", "-i", "web", "--kind", "nonsense")
    assert code == 2


def test_a_note_stored_with_stderr_closed_exits_0(vault: VaultSpec) -> None:
    # A new initiative: what is said on stderr (`new_initiative`) goes nowhere, and that is no failure.
    code, stdout, _ = _closed((2,), kaeru_env(vault), "note", "the godwit probes the mud", "-i", "newinit")
    assert code == 0
    assert stdout.startswith("applied: ")
    code, _, _ = _closed((1, 2), kaeru_env(vault), "note", "the stint runs", "-i", "newinit")
    assert code == 0
    assert _stored(vault, "godwit", "newinit") == 1 and _stored(vault, "stint", "newinit") == 1


def test_a_read_with_stdout_closed_ends_as_it_would(tmp_path: Path) -> None:
    env = kaeru_env({"KAERU_VAULT": str(tmp_path / "vault")})
    assert _closed((), env, "migrate")[0] == 0
    code, _, stderr = _closed((1,), env, "doctor")
    assert code == 0, stderr
    code, _, stderr = _closed((1,), env, "--json", "doctor")
    assert code == 0, stderr


def test_an_export_to_a_closed_stdout_is_refused(tmp_path: Path) -> None:
    """`kaeru export -` with stdout closed wrote the archive to nobody, exited 0 and said "wrote
    standard output": a backup script would believe it had one. It is a usage error naming why."""
    env = kaeru_env({"KAERU_VAULT": str(tmp_path / "vault")})
    assert _closed((), env, "note", "the knot feeds at low tide", "-i", "shore")[0] == 0
    for args in (("export", "-"), ("--json", "export", "-")):
        code, _, stderr = _closed((1,), env, *args)
        assert code == 2, stderr
        assert "standard output is closed" in stderr
        assert "wrote standard output" not in stderr
    code, stdout, _ = _closed((), env, "export", "-")
    assert code == 0 and stdout.startswith("{"), "an open stdout still gets the archive"
