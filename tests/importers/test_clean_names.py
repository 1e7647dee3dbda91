"""A name cleaned on import is one a read by that name finds: a line break or a tab at either end
was kept ("Alice\\n"), and `read` of "Alice" said "did you mean 'Alice\\n'?" (review, session 38)."""

from __future__ import annotations

import pytest

from kaeru.export.importers.core import clean_name


@pytest.mark.parametrize(
    ("raw", "clean"),
    [("Alice\n", "Alice"), ("\tBob", "Bob"), ("Carol\nSmith", "Carol Smith"), ("Dan ", "Dan "), ("Eve", "Eve")],
)
def test_a_name_is_cleaned_of_line_breaks_and_tabs_wherever_they_stand(raw: str, clean: str) -> None:
    assert clean_name(raw) == clean


def test_a_name_with_another_control_character_is_left_to_be_refused() -> None:
    assert clean_name("Alice\x07") == "Alice\x07"
