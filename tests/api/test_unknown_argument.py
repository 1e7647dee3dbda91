"""An argument a tool does not take is refused naming the close one it does take: `initiative`
where a tool reads several scopes was refused with "Additional properties are not allowed" and no
word of `initiatives` — which the server's instructions themselves told agents to pass."""

from __future__ import annotations

import pytest

from kaeru.api.requests import parse
from kaeru.errors import InvalidArgument


@pytest.mark.parametrize("tool", ["search", "recall", "timeline"])
def test_initiative_where_initiatives_is_taken_names_it(tool: str) -> None:
    args = (
        {"initiative": "web", "text" if tool == "search" else "query": "x"}
        if tool != "timeline"
        else {"initiative": "web"}
    )
    with pytest.raises(InvalidArgument) as refused:
        parse(tool, args)
    assert refused.value.field == "initiative"
    assert "did you mean 'initiatives' (a list: initiatives: [...])?" in refused.value.message


def test_a_name_close_to_no_argument_gets_no_guess() -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse("note", {"initiative": "web", "text": "x", "colour": "red"})
    assert refused.value.field == "colour" and "did you mean" not in refused.value.message
