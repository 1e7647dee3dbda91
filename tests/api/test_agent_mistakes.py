"""What an agent is told when its call is wrong, before anything runs: the answer names the field
and says what would be right, not the schema's own words ("is not valid under any of the given
schemas"), and the tool's definition says what the tool does with what it is sent."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.api.schemas import input_for
from kaeru.errors import InvalidArgument


@pytest.mark.parametrize(
    ("args", "field", "said"),
    [
        ({}, "slot", "give exactly one of slot or node (neither was sent)"),
        ({"slot": "handoff", "node": "a"}, "node", "give exactly one of slot or node, not slot and node"),
        ({"slot": None, "node": "a"}, "slot", "null is not a value of slot: leave slot out"),
    ],
)
def test_current_state_without_or_with_both_of_slot_and_node_names_the_field(
    args: dict[str, Any], field: str, said: str
) -> None:
    """It answered `field=None`, "{'initiative': 'alpha'} is not valid under any of the given
    schemas — it must match exactly one accepted shape (see the input schema)"."""
    with pytest.raises(InvalidArgument) as refused:
        parse("current_state", {"initiative": "web", **args})
    assert refused.value.field == field
    assert said in refused.value.message and "given schemas" not in refused.value.message, refused.value.message


def test_recall_says_the_floor_of_its_token_budget() -> None:
    """ "Hard cap on the answer, in tokens", while a budget below 128 tokens was raised to them."""
    said = input_for("recall")["properties"]["token_budget"]["description"]
    assert "at least 128" in said and "raised" in said, said


@pytest.mark.parametrize(
    ("args", "field", "said"),
    [
        ({"body": "the new text"}, "body", "did you mean 'patch' (patch: {'body': …})?"),
        ({"text": "the new text"}, "text", "did you mean 'patch' (patch: {'body': …})?"),
        ({"patch": "the new text"}, "patch", "is not an object: name the fields, e.g. patch: {'body': …}"),
        ({"patch": {"text": "the new text"}}, "patch.text", "did you mean 'body'?"),
    ],
)
def test_revise_with_its_text_in_the_wrong_place_is_shown_where_it_goes(
    args: dict[str, Any], field: str, said: str
) -> None:
    """`revise {"body": …}` was told "did you mean 'patch'?"; the next try, `patch: "…"`, was told
    only "is not of type 'object'", and `revise {"text": …}` nothing at all."""
    with pytest.raises(InvalidArgument) as refused:
        parse("revise", {"initiative": "web", "node": "a", **args})
    assert refused.value.field == field and said in refused.value.message, refused.value.message


@pytest.mark.parametrize(
    ("evidence", "field", "said"),
    [
        (
            {"node": "a", "method": "bench test"},
            "evidence.method",
            "give exactly one of node or method, not node and method",
        ),
        ({}, "evidence.node", "give exactly one of node or method (neither was sent)"),
    ],
)
def test_evidence_with_both_or_neither_of_its_shapes_says_which_it_takes(
    evidence: dict[str, Any], field: str, said: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse("verdict", {"initiative": "web", "hypothesis": "h", "status": "supported", "evidence": evidence})
    assert refused.value.field == field and said in refused.value.message, refused.value.message


def test_null_arguments_are_named_together_with_what_to_do() -> None:
    """Clients in a strict function-calling mode send null for every argument they do not use; each
    was refused alone, as "tags: None is not of type 'array'" (decision 388)."""
    with pytest.raises(InvalidArgument) as refused:
        parse("note", {"initiative": "web", "text": "the pump hums", "name": None, "tags": None})
    assert refused.value.field == "name"
    assert refused.value.message == (
        "arguments: null is not a value of name, tags: leave name, tags out (an argument not given takes its default)"
    )
    with pytest.raises(InvalidArgument) as required:
        parse("note", {"initiative": "web", "text": None, "name": None})
    assert "give text: it is required" in required.value.message and "leave name out" in required.value.message
    assert parse("task_update", {"initiative": "web", "task": "t", "due": None}).given("due")  # null clears it


@pytest.mark.parametrize(
    ("tool", "args", "field", "said"),
    [
        (
            "search",
            {"initiatives": ["web"], "filters": {"types": ["decision"]}},
            "filters.types.0",
            "'decision' is a note kind (`note`'s `kind`), kept as the tag 'kind:decision': filter by tags",
        ),
        ("recall", {"initiatives": ["web"], "query": "x", "types": ["rule"]}, "types.0", "tags ['kind:rule']"),
        (
            "link",
            {"initiative": "web", "action": "supersede", "from": "a", "to": "b"},
            "action",
            "use `evolve` with mode supersede",
        ),
        (
            "link",
            {"initiative": "web", "from": "a", "to": "b", "edge_type": "refers-to", "weight": 1},
            "edge_type",
            "did you mean 'refers_to'?",
        ),
        ("read", {"initiative": "web", "node": {"name": "pump"}}, "node", 'or {"name": …, "initiative": …}'),
        ("read", {"initiative": "web", "node": ["a"]}, "node", "is not a node reference: give its id or exact name"),
    ],
)
def test_a_value_outside_its_shape_is_told_what_it_most_likely_meant(
    tool: str, args: dict[str, Any], field: str, said: str
) -> None:
    """A note kind used as a node type, `supersede` as a link action, `refers-to`, and a node
    reference of the wrong shape were answered with the enum or "not valid under any of the given
    schemas" alone (decision 389)."""
    with pytest.raises(InvalidArgument) as refused:
        parse(tool, args)
    assert refused.value.field == field and said in refused.value.message, refused.value.message


@pytest.mark.parametrize(
    ("columns", "said"),
    [
        (["todo", "doing", "done"], "(the same at columns.0, columns.1)"),
        ([{"key": "Todo"}, {"key": "ok"}, {"key": "Done"}], "(the same at columns.0.key)"),
        ([{"name": "todo"}, {"name": "done"}], "(the same at columns.0)"),
    ],
)
def test_a_mistake_made_in_several_columns_is_named_at_each(columns: list[Any], said: str) -> None:
    """A board sent as bare strings was refused at `columns.2` alone; the call fixed there was
    refused at `columns.1`, then at `columns.0`: three calls for one mistake (decision 402)."""
    with pytest.raises(InvalidArgument) as refused:
        parse("initiative", {"initiative": "web", "action": "set_board", "columns": columns})
    assert said in refused.value.message, refused.value.message


@pytest.mark.parametrize(
    "args",
    [
        {"initiative": "web", "text": "x", "tags": ["ok", 3, ""]},
        # One rule (no other property), two mistakes: `colour` here, `wip` there.
        {
            "initiative": "web",
            "action": "set_board",
            "columns": [{"key": "a", "label": "A", "colour": "red"}, {"key": "b", "label": "B", "wip": 3}],
        },
    ],
)
def test_only_the_same_mistake_is_named_elsewhere(args: dict[str, Any]) -> None:
    """A different mistake at another position is not said to be the same one."""
    with pytest.raises(InvalidArgument) as refused:
        parse("note" if "text" in args else "initiative", args)
    assert "the same at" not in refused.value.message, refused.value.message
