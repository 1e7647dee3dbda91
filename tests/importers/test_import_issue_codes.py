"""`kaeru import-from --json` reports its warnings as every envelope does: `{code, message, field,
retryable}`, each code one `docs/errors.md` explains. Its own codes (`line_skipped`,
`duplicate_key`, `link_skipped`, `links_unresolved`) were in no table, and its issues had no
`retryable`: a script that reads issues the same way everywhere met a missing key."""

from __future__ import annotations

import json
from pathlib import Path

from kaeru.errors import ISSUE_CODES
from tests.backends import VaultSpec
from tests.cli.support import kaeru


def test_import_from_warnings_are_issues_with_documented_codes(sqlite_vault: VaultSpec, tmp_path: Path) -> None:
    memory = tmp_path / "memory.jsonl"
    lines = [
        {"type": "entity", "name": "Heron", "entityType": "bird", "observations": ["wades at dawn"]},
        {"type": "entity", "name": "Heron", "entityType": "bird", "observations": ["nests in reeds"]},
        {"type": "relation", "from": "Heron", "to": "Nobody", "relationType": "eats"},
    ]
    memory.write_text("\n".join([*map(json.dumps, lines), "this line is not JSON"]) + "\n")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "pond.md").write_text("# Pond\n\nThe heron hunts at the [[Reed bed]].\n")

    issues = []
    for source, fmt in ((memory, "memory-jsonl"), (notes, "markdown")):
        run = kaeru(sqlite_vault, "import-from", fmt, str(source), "-i", "pond", as_json=True)
        assert run.code == 0, run.stderr
        issues += run.json()["issues"]

    codes = {i["code"] for i in issues}
    assert codes >= {"duplicate_key", "link_skipped", "line_skipped", "links_unresolved"}, codes
    for issue in issues:
        assert set(issue) == {"code", "message", "field", "retryable"} and issue["retryable"] is False, issue
        assert issue["code"] in ISSUE_CODES, issue
    documented = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text()
    assert all(f"| `{i['code']}` |" in documented for i in issues)
