"""A revision's diff on a node's history page (`web/node.py`): the words removed and added, the
unchanged runs shortened to their ends, and a long note's revision diffed by its changed middle
only — it was diffed word by word over the whole body, which held the server (every viewer and
MCP request) for a minute on a 20,000-word note."""

from __future__ import annotations

import re

from kaeru.web.node import CONTEXT_WORDS, DIFF_WORDS, _diff


def _tagged(html: str, tag: str) -> list[str]:
    return re.findall(rf"<{tag}>(.*?)</{tag}>", html)


def test_a_short_revision_shows_every_word_and_what_changed() -> None:
    html = _diff("The viewer draws the graph on the server.", "The viewer draws the graph on the server as SVG.")
    assert _tagged(html, "del") == ["server."]
    assert _tagged(html, "ins") == ["server as SVG."]
    assert html.startswith("The viewer draws the graph on the")


def test_one_word_changed_in_a_long_note_shows_that_word_and_its_surroundings_only() -> None:
    words = [f"line{i} ok" for i in range(10_000)]  # 20,000 words, repetitive as a log is
    before = " ".join(words)
    after = " ".join([*words[:6_000], "line6000 FAILED", *words[6_001:]])
    html = _diff(before, after)
    assert _tagged(html, "del") == ["ok"] and _tagged(html, "ins") == ["FAILED"]
    assert "line5999 ok line6000" in html and "line6001 ok" in html  # the words around the change
    assert "11977 unchanged words" in html and "7974 unchanged words" in html  # the rest counted
    assert len(html) < 2_000


def test_a_long_text_replaced_whole_is_shown_removed_and_added_in_part() -> None:
    before = " ".join(f"old{i}" for i in range(5_000))
    after = " ".join(f"new{i}" for i in range(5_000))
    html = _diff(before, after)
    (removed,) = _tagged(html, "del")
    (added,) = _tagged(html, "ins")
    assert removed.startswith("old0 old1") and f"{5_000 - DIFF_WORDS} more words" in removed
    assert added.startswith("new0 new1") and f"old{DIFF_WORDS}" not in html
    assert CONTEXT_WORDS < DIFF_WORDS


def test_a_change_in_a_long_middle_is_still_diffed_word_by_word() -> None:
    common = " ".join(f"w{i}" for i in range(300))
    html = _diff(f"start {common} end", f"begin {common} finish")
    assert _tagged(html, "del") == ["start", "end"] and _tagged(html, "ins") == ["begin", "finish"]
