"""`bench.shared` drives several servers on one vault, the same servers on vaults of their own, and
one HTTP server with the same agents as its clients.

Its report's shape, and what must hold whatever the timings: every applied write's node is in the
file (once, for a new node), no server failed, and nothing is left beside the vault once they all
exit. Never a timed assertion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import shared


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_two_servers_on_one_vault_lose_and_double_nothing(tmp_path: Path) -> None:
    out = tmp_path / "shared.json"
    shared.main(
        [
            "--servers",
            "2",
            "--calls",
            "40",
            "--rounds",
            "1",
            "--size",
            "500",
            "--modes",
            *shared.MODES,
            "--out",
            str(out),
        ]
    )
    runs = json.loads(out.read_text())
    assert [r["mode"] for r in runs] == ["shared", "separate", "http"]
    for run in runs:
        # The HTTP server is stopped with SIGTERM: it too must close the vault and exit 0.
        assert run["failed"] == [] and run["exit_codes"] == ([0] if run["mode"] == "http" else [0, 0])
        assert run["writes_applied"] > 0
        assert (run["lost_writes"], run["duplicated_writes"]) == (0, 0)
        assert run["left_after_exit"] == []
        assert sum(run["states"].values()) == 80
        assert run["latency_ms"]["note"]["n"] > 0
