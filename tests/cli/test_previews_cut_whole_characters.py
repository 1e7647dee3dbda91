"""A preview the CLI cuts ends between two characters as a reader sees them, on both backends.

`kaeru search` cut a hit's body at its 2000th code point: "findme " and a thousand family emoji
(four people joined by U+200D) ended with a different emoji and `…`, a thousand `e` + U+0301 lost
the last accent. `kaeru call revise` cut a change's value alike (`mcp/render.py`)."""

from __future__ import annotations

import re

import pytest

from tests.backends import VaultSpec
from tests.cli.support import kaeru, write_notes

pytestmark = pytest.mark.timeout(300)

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
SHOWN = re.compile(r"\((\d+) of (\d+) characters shown")


def _preview(vault: VaultSpec, initiative: str, word: str) -> tuple[str, int]:
    """The last line of the only hit's body, and how many characters the command says it showed."""
    run = kaeru(vault, "search", "-i", initiative, word)
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    said = [i for i, line in enumerate(lines) if SHOWN.search(line)]
    assert len(said) == 1, run.stdout
    match = SHOWN.search(lines[said[0]])
    assert match is not None
    return lines[said[0] - 1], int(match.group(1))


def test_a_search_preview_keeps_whole_emoji_and_accents(vault: VaultSpec) -> None:
    write_notes(vault, "cut", "findme " + FAMILY * 1000, "accents " + "e\u0301" * 3000)
    family, shown = _preview(vault, "cut", "findme")
    assert family.endswith(FAMILY + "…"), ascii(family[-20:])
    assert shown <= 2000 and (shown - len("findme ")) % len(FAMILY) == 0
    accents, shown = _preview(vault, "cut", "accents")
    assert accents.endswith("e\u0301…"), ascii(accents[-6:])
    assert shown <= 2000 and (shown - len("accents ")) % 2 == 0


def test_a_change_shown_by_call_keeps_whole_emoji(vault: VaultSpec) -> None:
    [node] = write_notes(vault, "cut", "short")
    body = "x" * 150 + FAMILY * 5
    run = kaeru(vault, "call", "revise", "-a", "initiative=cut", "-a", f"node={node}", "-a", f"patch.body={body}")
    assert run.code == 0, run.stderr
    [change] = [line for line in run.stdout.splitlines() if line.startswith("body: ")]
    assert change.endswith("x" * 150 + FAMILY + f"… ({len(body)} chars)"), ascii(change[-40:])
