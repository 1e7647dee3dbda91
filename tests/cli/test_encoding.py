"""The `kaeru` command line, run as a user runs it (a real subprocess on a real vault)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)


def _kaeru(vault: Path, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}
    env["KAERU_VAULT"] = str(vault)
    return subprocess.run(
        [sys.executable, "-m", "kaeru", "--json", *args], capture_output=True, env=env, timeout=90, check=False
    )


def test_a_command_line_byte_that_is_not_utf8_is_refused_not_a_crash(tmp_path: Path) -> None:
    """An argument with a byte that is not UTF-8 (Python keeps it as a lone surrogate) gets the
    `rejected` envelope naming the argument — no traceback, nothing stored — on writes and reads."""
    vault = tmp_path / "vault"
    bad_note = _kaeru(vault, "note", "-i", "cli", b"latin-1 caf\xe9 text")
    assert b"Traceback" not in bad_note.stderr, bad_note.stderr.decode(errors="replace")
    envelope = json.loads(bad_note.stdout)
    assert envelope["state"] == "rejected"
    assert [(i["code"], i["field"]) for i in envelope["issues"]] == [("invalid_argument", "text")]
    # Which byte, and where such bytes come from: the terminal's encoding.
    assert "byte 0xE9" in envelope["issues"][0]["message"] and "LANG" in envelope["issues"][0]["message"]

    bad_search = _kaeru(vault, "search", "-i", "cli", "--type", b"observ\xe9", "caf")
    assert b"Traceback" not in bad_search.stderr, bad_search.stderr.decode(errors="replace")
    assert json.loads(bad_search.stdout)["issues"][0]["field"] == "filters.types[0]"

    good = _kaeru(vault, "note", "-i", "cli", "utf-8 café text")
    assert json.loads(good.stdout)["state"] == "applied"
    found = json.loads(_kaeru(vault, "search", "-i", "cli", "text").stdout)
    assert found["data"]["total"] == 1  # the refused note left nothing behind
