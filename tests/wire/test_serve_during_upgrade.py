"""`kaeru serve` on stdio while an older vault is upgraded beside serving (decisions 139, 474): the
calls refused meanwhile say so in their answer and nowhere else, and the read path's warm-up
(decision 269) waits for the upgrade instead of failing beside it.

Before decision 474 the first answered call started the warm-up at once; its read waited for the
upgrade, was refused after `UPGRADE_WAIT_S` and wrote a traceback to the server's stderr — what a
client shows as the server's log, in a session where nothing had gone wrong. The upgrade is held up
by holding the migration lock (as another process upgrading the same vault would), so every step
below happens while it provably has not ended.
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


class _Answers:
    """The server's stdout a JSON line at a time, read on a thread: a missing answer fails the test."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        assert proc.stdin is not None and proc.stdout is not None
        self._in: IO[bytes] = proc.stdin
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, args=(proc.stdout,), daemon=True).start()

    def _read(self, out: IO[bytes]) -> None:
        for line in out:
            self._lines.put(line)
        self._lines.put(b"")

    def send(self, message: dict[str, Any]) -> None:
        self._in.write(json.dumps(message).encode() + b"\n")
        self._in.flush()

    def ask(self, ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        try:
            line = self._lines.get(timeout=ANSWER_S)
        except queue.Empty:
            pytest.fail(f"no answer to {method} within {ANSWER_S:.0f} s")
        assert line, f"the server closed stdout before answering {method}"
        answer: dict[str, Any] = json.loads(line)
        assert answer.get("id") == ident, answer
        return answer

    def call(self, ident: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.ask(ident, "tools/call", {"name": tool, "arguments": arguments})["result"]
        envelope: dict[str, Any] = result["structuredContent"]
        return envelope


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_refusal_during_the_upgrade_logs_nothing_and_the_warm_up_waits_for_it(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    older_vault(vault)
    log = tmp_path / "stderr.log"
    with log.open("wb") as err:
        with migration_lock(vault):
            proc = subprocess.Popen(
                [sys.executable, "-m", "kaeru", "serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=server_env,
            )
            try:
                answers = _Answers(proc)
                # Answered while the lock keeps the upgrade from running (decision 139).
                init = answers.ask(1, "initialize", initialize_request(1)["params"])
                assert init["result"]["serverInfo"]["name"] == "kaeru-memory", init
                answers.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                # A call refused before it reads the vault: answered at once, the first answer of the
                # session — the moment the warm-up started before decision 474.
                invalid = answers.call(2, "search", {"text": "kingfisher"})
                assert invalid["state"] == "rejected", invalid
                assert {issue["code"] for issue in invalid["issues"]} != {"unavailable"}, invalid
                # A call that reads waits for the upgrade, then is refused, saying why; twice, so the
                # warm-up started above (after imports of its own) has waited its whole wait as well.
                for ident in (3, 4):
                    refused = answers.call(ident, "search", {"initiatives": ["upgrade"], "text": "kingfisher"})
                    assert refused["state"] == "rejected", refused
                    [issue] = refused["issues"]
                    assert issue["code"] == "unavailable" and issue["retryable"] is True, issue
                    assert "being upgraded" in issue["message"], issue
            except BaseException:
                proc.kill()
                raise
        try:
            # The lock released: the upgrade applies, and the call answers from the upgraded vault.
            found = answers.call(5, "search", {"initiatives": ["upgrade"], "text": "kingfisher"})
            assert found["state"] == "ok", found
            assert [hit["name"][:27] for hit in found["data"]["hits"]] == ["the-kingfisher-nests-by-the"], found
            assert proc.stdin is not None
            proc.stdin.close()
            assert proc.wait(timeout=ANSWER_S) == 0, log.read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
    # The refusal is the answer's to give: the server's log holds no traceback and no failed warm-up.
    said = log.read_text()
    assert "Traceback" not in said, said
    assert "warming the read path failed" not in said, said
