"""LoCoMo through MCP (`python -m bench.locomo --mcp …`): `kaeru serve` spawned over stdio, every turn
written with `note`, two questions asked with `recall`, scored like the in-process rows.

Checked: completion, the report's shape, and that the same ingest ranks the same through MCP as in
process (the transport, the tool's defaults and the wall clock change no ranking) — never scores or
timings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.locomo import ingests
from bench.locomo import run as locomo_run
from bench.locomo.data import Conversation, Turn


def test_each_ingest_writes_what_it_says() -> None:
    turn = Turn(
        "D1:3",
        2,
        "Caroline: I went to a support group.",
        "2023-05-08T13:56:02Z",
        False,
        "Caroline",
        1,
        "2023-05-08T13:56:00Z",
        "1:56 pm on 8 May, 2023",
    )
    conv = Conversation(0, "conv-26", [turn], ends_at=None)  # type: ignore[arg-type]
    written = {style: ingests.note_arguments(conv, turn, style) for style in ingests.INGESTS}
    text = "Caroline: I went to a support group."
    base = {"initiative": "locomo-conv-26", "text": text}
    assert written["text"] == base
    assert written["named"] == {**base, "name": "Caroline D1:3"}
    assert written["dated"] == {**base, "name": "Caroline D1:3", "occurred_at": "2023-05-08T13:56:00Z"}
    assert written["dated-text"] == {**base, "name": "Caroline D1:3", "text": f"[1:56 pm on 8 May, 2023] {text}"}
    assert written["harness"] == {**base, "occurred_at": "2023-05-08T13:56:02Z"}
    with pytest.raises(ValueError):
        ingests.note_arguments(conv, turn, "other")


@pytest.mark.timeout(240)
def test_two_questions_through_mcp_rank_as_in_process(tmp_path: Path) -> None:
    out = tmp_path / "locomo.json"
    code = locomo_run.main(
        [
            "--limit-conversations",
            "1",
            "--limit-questions",
            "2",
            "--systems",
            "recall",
            "--no-ablation",
            "--ingest",
            "dated",
            "--mcp",
            "dated",
            "--per-question",
            "--quiet",
            "--workdir",
            str(tmp_path),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert report["config"]["ingest"] == "dated" and report["config"]["mcp_ingests"] == ["dated"]
    assert set(report["systems"]) == {"recall", "mcp dated"}
    mcp = report["systems"]["mcp dated"]
    assert mcp["kind"] == "mcp" and mcp["error"] is None and mcp["foreign_hits"] == 0
    assert mcp["overall"]["n"] == report["counts"]["questions_evaluated"] == 2
    assert {"p50", "p95"} <= set(mcp["latency_ms"]) and {"p50", "p95"} <= set(mcp["cpu_ms"])
    written = mcp["mcp"]
    assert written["notes"] == report["counts"]["turns"] > 0 and written["failed"] == []
    assert written["note_example"]["occurred_at"] and written["note_example"]["name"]
    assert written["text_block_mismatches"] == 0, "the text block lists the hits structuredContent holds"
    for question in report["per_question"].values():
        assert question["first_rank"]["mcp dated"] == question["first_rank"]["recall"]
        assert question["top"]["mcp dated"] == question["top"]["recall"] and question["evidence"]
    assert mcp["overall"] == report["systems"]["recall"]["overall"]
    # The temporary vaults (in-process and the server's) are removed afterwards.
    assert not list(tmp_path.glob("kaeru-locomo-*"))
