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


@pytest.mark.parametrize(
    ("tool", "args", "sent", "meant"),
    [
        ("evolve", {"initiative": "web", "action": "supersede", "source": "a", "new_body": "x"}, "action", "mode"),
        ("initiative", {"initiative": "web", "mode": "rename", "to": "app"}, "mode", "action"),
        ("review", {"initiative": "web", "mode": "flag", "target": "a", "reason": "r"}, "mode", "action"),
        ("note", {"initiative": "web", "body": "the pump hums"}, "body", "text"),
    ],
)
def test_a_required_argument_sent_under_another_name_is_named_as_such(
    tool: str, args: dict[str, str], sent: str, meant: str
) -> None:
    """evolve with `action` for its `mode` was told "'sources' is a required property" (a schema
    condition on `mode` held when `mode` was absent); initiative with `mode` for `action` was told
    that `node` was missing. Both names are said now (decision 367)."""
    with pytest.raises(InvalidArgument) as refused:
        parse(tool, args)
    assert refused.value.field == sent
    assert (
        f"did you mean {meant!r}?" in refused.value.message and f"{sent!r} is not an argument" in refused.value.message
    )


@pytest.mark.parametrize(
    ("tool", "args", "missing"),
    [
        ("evolve", {"initiative": "web", "source": "a", "new_body": "x"}, "mode"),
        ("initiative", {"initiative": "web", "to": "app"}, "action"),
        ("review", {"initiative": "web", "target": "a", "reason": "r"}, "action"),
    ],
)
def test_a_missing_verb_is_named_not_what_one_of_its_values_needs(
    tool: str, args: dict[str, str], missing: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse(tool, args)
    assert refused.value.field == missing and f"'{missing}' is a required property" in refused.value.message
