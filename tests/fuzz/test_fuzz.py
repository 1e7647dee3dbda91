"""Schema-driven fuzzing of every tool (issue 15): the CI-sized pass of `bench.fuzz`.

Every tool's `inputSchema` from `tools/list` feeds hypothesis-jsonschema; each drawn call goes out
valid-shaped (references resolved in a seeded vault) and mutated (wrong types, missing required,
extra properties, out-of-range numbers, hostile strings, deep JSON). The invariants: never
`internal`, never a hang, every envelope valid against the tool's output schema, and a rejected
call changes nothing. `python -m bench.fuzz` runs the same harness for 10,000 calls.
"""

from __future__ import annotations

import pytest
from bench.fuzz import Report, Target, fuzz
from mcp import Client

from kaeru.export.archive import content_digest
from kaeru.mcp.server import KaeruServer

#: Drawn calls per tool; each is sent twice (valid-shaped, mutated). 24 tools × 11 × 2 = 528 calls
#: on SQLite; PostgreSQL gets a shorter pass (each call is a network round trip plus a digest).
PER_TOOL = {"sqlite": 11, "postgres": 3}


def _summary(report: Report) -> str:
    lines = [f"{report.calls} calls; findings:"]
    lines += [f"  {f.tool} [{f.variant}] {f.problem}\n      {f.arguments}" for f in report.findings[:20]]
    return "\n".join(lines)


@pytest.mark.anyio
@pytest.mark.timeout(240)
async def test_fuzzed_calls_keep_every_invariant(client: Client, kaeru: KaeruServer, backend: str) -> None:
    listing = await client.list_tools()
    store = kaeru.service.store
    target = Target(
        call_tool=client.call_tool,
        input_schemas={t.name: t.input_schema for t in listing.tools},
        output_schemas={t.name: t.output_schema or {} for t in listing.tools},
        digest=lambda: content_digest(store),
    )

    report = await fuzz(target, per_tool=PER_TOOL[backend], seed=15, timeout=30.0)

    assert not report.findings, _summary(report)
    assert report.calls == 2 * PER_TOOL[backend] * len(listing.tools)
    if backend == "sqlite":
        assert report.calls >= 500
    assert set(report.states) == {t.name for t in listing.tools}, "every tool was called"
    assert report.rejected_checked == sum(c["rejected"] for c in report.states.values())
    # The harness reaches the service, not only the schema check: some valid-shaped calls succeed.
    succeeded = sum(n for state, n in report.valid_states.items() if state != "rejected")
    assert succeeded >= report.calls // 10, report.to_json()["valid_shaped_states"]
