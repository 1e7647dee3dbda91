"""A switch in the environment is on, off, or named as a mistake: any word but the off words was
read as on (`KAERU_STRUCTURED=of` left structured output on) or any word but the on words as off
(`KAERU_SEMANTIC=enabled` left the channel off), and the server started as if it was meant."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaeru.config import Settings


@pytest.mark.parametrize("name", ["KAERU_STRUCTURED", "KAERU_SEMANTIC", "KAERU_HYGIENE"])
@pytest.mark.parametrize("word", ["of", "enabled", "none", "2"])
def test_a_switch_set_to_another_word_is_named(tmp_path: Path, name: str, word: str) -> None:
    with pytest.raises(ValueError, match=rf"{name} must be one of 1, true, yes, on \(on\) or 0, false, no, off"):
        Settings.from_env({"KAERU_VAULT": str(tmp_path), name: word})


def test_each_switch_reads_its_words_and_keeps_its_default_unset(tmp_path: Path) -> None:
    base = {"KAERU_VAULT": str(tmp_path)}
    unset = Settings.from_env(base)
    assert (unset.structured, unset.semantic, unset.hygiene) == (True, False, False)
    off = Settings.from_env({**base, "KAERU_STRUCTURED": "Off", "KAERU_SEMANTIC": "no", "KAERU_HYGIENE": "0"})
    assert (off.structured, off.semantic, off.hygiene) == (False, False, False)
    on = Settings.from_env({**base, "KAERU_STRUCTURED": "yes", "KAERU_SEMANTIC": " TRUE ", "KAERU_HYGIENE": "on"})
    assert (on.structured, on.semantic, on.hygiene) == (True, True, True)
