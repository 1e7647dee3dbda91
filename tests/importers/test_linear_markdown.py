"""A Markdown note's `[[wikilinks]]` and `# heading` are read in time linear in a line's length
(decision 414): an unclosed `[[` read on to the line's end from every `[[` after it, and a heading
with a long run of spaces took time cubic in it, so one long line stalled an import for hours. The
links and titles found are exactly the ones the patterns found.

The hostile lines are sized so that the old code could not finish within the suite's per-test
timeout; the `timeout` marks only cap how long a regression takes to fail.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaeru.export.importers import notes
from kaeru.export.importers.notes import WIKILINK, heading, wikilinks

#: What a link is made of, and what breaks one.
LINK_ALPHABET = list("[[[]]]|#!\nab -")


def found(line: str) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in wikilinks(line)]


def reference(line: str) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in WIKILINK.finditer(line)]


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from(LINK_ALPHABET), max_size=50) | st.text(max_size=30))
def test_the_links_of_a_line_are_the_ones_the_pattern_finds(line: str) -> None:
    assert found(line) == reference(line)


@pytest.mark.parametrize(
    "line",
    [
        "- mentors [[people/Ana|Ana]] and [[Welcome#Start]] ![[diagram.png]]",
        "[[a]] [[b#c|d]] [[#only-anchor]] [[|label]] [[]] [[x[y]] [[[[nested]]]]",
        "!![[a]] [[a] [[b]]] [[c\n]] [[d|e|f]] [[g#h#i]]",
    ],
)
def test_well_formed_and_broken_links_as_before(line: str) -> None:
    assert found(line) == reference(line)


@pytest.mark.timeout(20)
def test_an_unclosed_link_repeated_over_a_long_line_is_read_in_linear_time() -> None:
    assert found("[[a" * 100_000) == []
    assert [m.group(1) for m in wikilinks("[[a#" * 100_000 + "] [[Target]]")] == ["Target"]


@pytest.mark.timeout(20)
def test_a_note_with_a_long_broken_line_imports_its_links(tmp_path: Path) -> None:
    """A 300,000-character line of unclosed links, then a real one: the import finds the real one."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "Target.md").write_text("# Target\nthe page linked to\n")
    (folder / "Broken.md").write_text("# Broken\n" + "[[a" * 100_000 + "] see [[Target]]\n")
    batch = notes.read_markdown(folder)
    assert [(link.src, link.dst) for link in batch.links] == [("Broken", "Target")]


#: The heading pattern as it was.
OLD_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$")
#: What a heading is made of: `#`, spaces of several kinds, letters.
HEADING_ALPHABET = [*"# #\t a b\r", "\u00a0", "\u2003", "\x1c", "\x85", "\u3000", "é"]


def reference_heading(line: str) -> str | None:
    match = OLD_HEADING.match(line)
    return match.group(1) if match else None


@settings(max_examples=3000, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(HEADING_ALPHABET), max_size=30)
    | st.text(max_size=30).map(lambda t: "# " + t)
    | st.text(max_size=30)
)
def test_the_title_of_a_heading_is_the_one_the_pattern_finds(text: str) -> None:
    line = text.replace("\n", " ")  # one line: the reader splits the text at new lines first
    assert heading(line) == reference_heading(line)


@pytest.mark.parametrize(
    "line",
    [
        "# Title",
        "#  Title ##",
        "# Title # with hash #  ",
        "# #",
        "#   ",
        "#\tTabbed\t#",
        "## Two",
        "#NoSpace",
        "# a # #",
    ],
)
def test_headings_as_before(line: str) -> None:
    assert heading(line) == reference_heading(line)


@pytest.mark.timeout(20)
def test_a_note_whose_heading_holds_a_long_run_of_spaces_imports(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "Spaced.md").write_text("# a" + " " * 20_000 + "b\nthe body\n")
    (item,) = notes.read_markdown(folder).items
    assert item.name == "a" + " " * 20_000 + "b"
    assert item.body == "the body"
