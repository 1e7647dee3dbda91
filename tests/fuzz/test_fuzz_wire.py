"""The schema fuzzer over a real transport (decision 241): `kaeru serve` in a subprocess, spoken to
as raw JSON-RPC with every non-ASCII character escaped, as a JavaScript client writes it — so a
lone surrogate reaches the server, which the SDK's in-memory client never lets happen. The same
invariants as `test_fuzz.py`, plus: every request is answered in JSON and the server lives on.
`python -m bench.fuzz_wire` runs it longer."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.fuzz_wire import fuzz_over_wire

from tests.backends import VaultSpec
from tests.wire.support import subprocess_env

#: About this many calls a pass (half valid-shaped, half mutated), by backend and transport. Over
#: stdio a lone surrogate reaches the tools: 400 calls, seed 1, found decision 239's crash on the
#: code before it, and 200 did not. Over HTTP the SDK's parser refuses such a body before any tool
#: runs, and its pass is shorter; so is PostgreSQL's, whose digest after every rejected call is a
#: round trip per table. A short pass, the suite's: `python -m bench.fuzz_wire` makes 2,000 calls
#: (`--transport`, `--backend`, `--seed`, `--calls`).
CALLS = {("sqlite", "stdio"): 400, ("sqlite", "http"): 200, ("postgres", "stdio"): 120, ("postgres", "http"): 120}


@pytest.mark.anyio
@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_fuzzed_calls_on_the_wire_keep_every_invariant(
    vault: VaultSpec, backend: str, transport: str, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    calls = CALLS[backend, transport]
    report = await fuzz_over_wire(
        transport, subprocess_env(vault.env()), vault.settings(), log, calls=calls, seed=1, timeout=60.0
    )

    findings = "\n".join(f"{f.tool} [{f.variant}] {f.problem}\n    {f.arguments}" for f in report.findings[:20])
    assert not report.findings, f"{findings}\n--- server log ---\n{log.read_text(errors='replace')[-3000:]}"
    assert report.calls >= calls
    # Hostile strings went out, as values and as keys, and every call was answered.
    assert report.variants["hostile_string"] > 0 and report.variants["extra_property"] > 0
    succeeded = sum(n for state, n in report.valid_states.items() if state != "rejected")
    assert succeeded >= report.calls // 10, report.to_json()["valid_shaped_states"]
