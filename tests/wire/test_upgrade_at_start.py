"""`kaeru serve` on stdio answers `initialize` and `tools/list` while an older vault is upgraded
(decision 139), then answers calls on the upgraded vault.

The upgrade is held up by holding the migration lock (as another process upgrading the same vault
would): before, `kaeru serve` waited for it before answering anything, and an agent's client gave up
on it at its start-up timeout.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import pytest

from tests.backends import VaultSpec
from tests.lifecycle.older_vault import migration_lock, older_vault
from tests.wire.support import initialize_request

#: How long the test waits for one answer before failing (not a performance bound: generous).
ANSWER_S = 60.0


class _Lines:
    """The server's stdout, a JSON line at a time, read on a thread so a missing answer fails the
    test instead of hanging it."""

    def __init__(self, out: IO[bytes]):
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, args=(out,), daemon=True).start()

    def _read(self, out: IO[bytes]) -> None:
        for line in out:
            self._lines.put(line)
        self._lines.put(b"")

    def next(self, what: str) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=ANSWER_S)
        except queue.Empty:
            pytest.fail(f"no answer to {what} within {ANSWER_S:.0f} s")
        assert line, f"the server closed stdout before answering {what}"
        answer: dict[str, Any] = json.loads(line)
        return answer


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_serve_answers_at_once_on_a_vault_being_upgraded(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    older_vault(vault)
    with (tmp_path / "stderr.log").open("wb") as err:
        with migration_lock(vault):
            proc = subprocess.Popen(
                [sys.executable, "-m", "kaeru", "serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=server_env,
            )
            try:
                assert proc.stdout is not None
                answers = _Lines(proc.stdout)
                _send(proc, initialize_request(1))
                init = answers.next("initialize")
                assert init["result"]["serverInfo"]["name"] == "kaeru-memory", init
                _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
                _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
                listed = answers.next("tools/list")
                assert "search" in {tool["name"] for tool in listed["result"]["tools"]}
            except BaseException:
                proc.kill()
                raise
        # The lock released: the upgrade applies and the first call answers from the upgraded vault.
        try:
            _send(
                proc,
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": "search", "arguments": {"initiatives": ["upgrade"], "text": "kingfisher"}},
                },
            )
            found = answers.next("search")["result"]["structuredContent"]
            assert found["state"] == "ok", found
            assert [hit["name"][:27] for hit in found["data"]["hits"]] == ["the-kingfisher-nests-by-the"], found
            assert proc.stdin is not None
            proc.stdin.close()
            assert proc.wait(timeout=ANSWER_S) == 0, (tmp_path / "stderr.log").read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
