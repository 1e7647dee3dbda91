"""Running `python -m kaeru` as a user runs it: a process of its own on a real vault of either backend
(forked from a worker's zygote that has already imported kaeru, `tests/cli/zygote.py`, or started
anew: KAERU_TEST_CLI_SPAWN=1 starts every run anew)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kaeru.config import Settings
from tests.backends import VaultSpec
from tests.cli.zygote_client import SPAWN, TIMEOUT_S, base_env, forkable, forked


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def kaeru_env(vault: VaultSpec | Mapping[str, str], **extra: str) -> dict[str, str]:
    """This environment without any `KAERU_*` variable, pointed at `vault`, plus `extra`."""
    env = base_env()
    env.update(vault.env() if isinstance(vault, VaultSpec) else vault)
    env.update(extra)
    return env


def kaeru(
    vault: VaultSpec | Mapping[str, str],
    *args: str | bytes,
    as_json: bool = False,
    stdin: bytes | None = None,
    prefix: Sequence[str] = (),
    **extra_env: str,
) -> Run:
    """`python -m kaeru [--json] ARGS` on `vault` (run by `prefix`, e.g. `file_modes_bind()`); fails
    the test on a traceback. A separate process either way: forked from this worker's zygote
    (`tests/cli/zygote.py`), or started anew when `prefix` runs it, when its environment changes how
    the interpreter starts, or with KAERU_TEST_CLI_SPAWN=1 (every run, as a user's)."""
    kaeru_args = [*(["--json"] if as_json else []), *args]
    env = kaeru_env(vault, **extra_env)
    if prefix or os.environ.get(SPAWN) == "1" or not forkable(env):
        argv: list[str | bytes] = [*prefix, sys.executable, "-m", "kaeru", *kaeru_args]
        done = subprocess.run(argv, capture_output=True, env=env, input=stdin, timeout=TIMEOUT_S, check=False)
        code, stdout, stderr = done.returncode, done.stdout, done.stderr
    else:
        code, stdout, stderr = forked([os.fsdecode(a) for a in kaeru_args], env, stdin)
    run = Run(code, stdout.decode(errors="replace"), stderr.decode(errors="replace"))
    assert "Traceback" not in run.stderr and "Traceback" not in run.stdout, run.stderr
    return run


def write_notes(vault: VaultSpec | Mapping[str, str], initiative: str, *notes: str | Mapping[str, Any]) -> list[str]:
    """Notes written into `vault` by the in-process service (what `kaeru note` calls), for a test
    whose subject is what a command does with a vault, not writing it: a subprocess a note cost
    ~0.7 s. A note is its text, or its `note` tool arguments (`initiative` added). The store is
    closed before this returns, as a `kaeru note` process closes it when it exits."""
    return _written(vault, "note", initiative, [{"text": n} if isinstance(n, str) else dict(n) for n in notes])


def write_tasks(vault: VaultSpec, initiative: str, *tasks: Mapping[str, Any]) -> list[str]:
    """Tasks written into `vault` by the in-process service, as `write_notes` writes notes: each
    its `task` tool arguments (`initiative` added), for a test whose subject is what a command shows
    of them (`kaeru call task` is run by tests/cli/test_call.py)."""
    return _written(vault, "task", initiative, [dict(t) for t in tasks])


def _written(
    vault: VaultSpec | Mapping[str, str], tool: str, initiative: str, calls: list[dict[str, Any]]
) -> list[str]:
    """The ids of the nodes `calls` of `tool` (`note` or `task`) wrote into `vault` in process."""
    from kaeru.api.requests import parse
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    settings = vault.settings() if isinstance(vault, VaultSpec) else Settings.from_env(dict(vault))
    store = open_store(settings)
    ids: list[str] = []
    try:
        service = Service(store, settings)
        write = service.note if tool == "note" else service.task
        for args in calls:
            outcome, _ = write(parse(tool, {"initiative": initiative, **args}))  # type: ignore[arg-type]
            assert outcome.primary is not None, outcome
            ids.append(outcome.primary.id)
    finally:
        store.close()
    return ids


def file_modes_bind() -> list[str]:
    """An argv prefix under which file modes bind a process as they bind any user: nothing when not
    root; as root, `setpriv` without the capabilities that override them (the test is skipped where
    that cannot be done)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    prefix = [setpriv or "setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]
    if setpriv is None or subprocess.run([*prefix, "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("running as root, and setpriv cannot drop the capabilities that override file modes")
    return prefix


def valid_envelope(run: Run, operation: str, kind: str, state: str | None = None) -> dict[str, Any]:
    """The `--json` output parsed, checked against the tool's declared output schema (and `state`)."""
    from kaeru.api.schemas import output_for

    envelope: dict[str, Any] = run.json()
    errors = [e.message for e in Draft202012Validator(output_for(operation, kind)).iter_errors(envelope)]
    assert not errors, errors
    assert envelope["operation"] == operation
    if state is not None:
        assert envelope["state"] == state, envelope
    return envelope


def error_object(run: Run, code: str, exit_code: int) -> str:
    """A failure outside an envelope: `{"ok": false, "error": {code, message}}` and its exit code."""
    assert run.code == exit_code, (run.code, run.stdout, run.stderr)
    document = run.json()
    assert document["ok"] is False and document["error"]["code"] == code, document
    message: str = document["error"]["message"]
    assert message
    return message
