"""Tool calls run off the stdio event loop (decision 15.P1): a long call — here an archive import of
thousands of records — does not stop the connection answering, and tool calls still apply and
answer in the order they were sent. Real `kaeru serve` over real pipes (forked from the worker's
server zygote, decision 432), raw JSON-RPC lines."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from bench import archives

from tests.cli.zygote_client import count_served_cpu, server_argv
from tests.wire.support import KAERU_SERVE, initialize_request, tools_call_request

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

#: Enough records that the import is still running when the ping behind it is read (on either
#: backend it takes seconds; a ping takes well under a millisecond).
NODES = 6_000


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_ping_is_answered_while_a_long_import_runs(server_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "exports"
    root.mkdir()
    archives.write(root / "big.amg", NODES, initiative="bulk")
    env = {**server_env, "KAERU_EXPORT_ROOT": str(root)}
    with (tmp_path / "stderr.log").open("wb") as err:
        proc = subprocess.Popen(
            server_argv(KAERU_SERVE, env), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(_line(initialize_request(1)))
            proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["id"] == 1
            # The import, a ping and a note right behind it, then two more pings.
            proc.stdin.write(_line(tools_call_request(2, "archive", {"action": "import", "path": "big.amg"})))
            proc.stdin.write(_line({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
            proc.stdin.write(
                _line(tools_call_request(4, "note", {"initiative": "bulk", "text": "a quokka seen after the import"}))
            )
            proc.stdin.write(_line({"jsonrpc": "2.0", "id": 5, "method": "ping"}))
            proc.stdin.write(_line(tools_call_request(6, "search", {"initiatives": ["bulk"], "text": "quokka"})))
            proc.stdin.flush()
            answers = [json.loads(proc.stdout.readline()) for _ in range(5)]
        finally:
            proc.stdin.close()
            code = proc.wait(timeout=120)
            count_served_cpu()
    assert code == 0, (tmp_path / "stderr.log").read_text()
    order = [a["id"] for a in answers]
    # Both pings are answered before the import is: the import runs in a worker thread.
    assert order.index(3) < order.index(2) and order.index(5) < order.index(2), order
    # Tool calls are applied and answered in the order they were sent.
    assert [i for i in order if i in (2, 4, 6)] == [2, 4, 6]
    by_id = {a["id"]: a for a in answers}
    assert by_id[3]["result"] == {} and by_id[5]["result"] == {}
    imported = by_id[2]["result"]["structuredContent"]
    assert imported["state"] == "applied", imported
    assert by_id[4]["result"]["structuredContent"]["state"] == "applied"
    hits = by_id[6]["result"]["structuredContent"]["data"]["hits"]
    assert [h["id"] for h in hits] == [by_id[4]["result"]["structuredContent"]["data"]["primary"]["id"]]
