"""What `kaeru call` and `kaeru tools` say before any vault is opened: an `-a` pair with an empty
name in its dotted key is a usage error; a call whose JSON holds text no vault can store (NUL) is
refused as the tool refuses it, naming the field, and creates no vault at a mistyped path; and
`kaeru tools` spells out an argument that takes one of two shapes (verdict's `evidence`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.support import kaeru


@pytest.mark.parametrize("pair", [".x=1", "a..b=1", "a.=1"])
def test_a_pair_with_an_empty_name_is_a_usage_error(tmp_path: Path, pair: str) -> None:
    run = kaeru({"KAERU_VAULT": str(tmp_path / "v")}, "call", "note", "-a", "initiative=p", "-a", pair)
    assert run.code == 2 and run.stdout == ""
    assert f"{pair!r}: an empty name in {pair.split('=')[0]!r}" in run.stderr
    assert not (tmp_path / "v").exists()


def test_text_no_vault_can_store_is_refused_on_its_field_and_creates_no_vault(tmp_path: Path) -> None:
    place = tmp_path / "typo"
    arguments = json.dumps({"initiative": "p", "text": "before\u0000after"})
    run = kaeru({"KAERU_VAULT": str(place)}, "call", "note", arguments, as_json=True)
    assert run.code == 2, run.stderr
    envelope = run.json()
    assert envelope["state"] == "rejected"
    assert [(i["code"], i["field"]) for i in envelope["issues"]] == [("invalid_argument", "text")]
    assert "NUL" in envelope["issues"][0]["message"]
    assert not place.exists()


def test_tools_spells_out_an_argument_of_two_shapes(tmp_path: Path) -> None:
    shown = kaeru({"KAERU_VAULT": str(tmp_path / "v")}, "tools", "verdict")
    assert shown.code == 0, shown.stderr
    assert "evidence (Evidence, optional)" in shown.stdout
    assert "Evidence: {node: NodeRef} or {method: string}" in shown.stdout
