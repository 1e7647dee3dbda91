"""What a refused call is told is what the next call is made from (session 56's probe of the
mistakes models make over stdio): every null field at once, the value a text stood for, where a
misplaced field belongs, the tool the arguments were meant for, and an enum value by its meaning.
The calls stay refused; only the words change."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.errors import InvalidArgument


def refusal(tool: str, args: dict[str, Any]) -> InvalidArgument:
    with pytest.raises(InvalidArgument) as refused:
        parse(tool, args)
    return refused.value


def _link(edge_type: str) -> dict[str, Any]:
    """A `link` call that is right but for its `edge_type`."""
    return {"initiative": "w", "from": "a", "to": "b", "weight": 1, "edge_type": edge_type}


@pytest.mark.parametrize(
    ("tool", "args", "field", "said"),
    [
        (
            "note",
            {"initiative": "w", "text": "x", "options": {"slot": None, "layer": "hot", "expected_slot_revision": None}},
            "options.expected_slot_revision",
            "null is not a value of options.expected_slot_revision, options.slot: leave options.expected_slot_revision,"
            " options.slot out",
        ),
        (
            "search",
            {"initiatives": ["w"], "filters": {"types": None, "tags": None}},
            "filters.tags",
            "null is not a value of filters.tags, filters.types: leave",
        ),
        (
            "revise",
            {"initiative": "w", "node": "a", "patch": {"name": None, "body": "x"}},
            "patch.name",
            "leave patch.name out",
        ),
        (
            "note",
            {"initiative": "w", "text": "x", "reminder": {"after": None, "window_days": 3}},
            "reminder.after",
            "null is not a value of reminder.after: give reminder.after: it is required",
        ),
        (
            "initiative",
            {"initiative": "w", "action": "set_board", "columns": [{"key": "a", "label": None}]},
            "columns.0.label",
            "null is not a value of columns.0.label",
        ),
    ],
)
def test_nulls_inside_an_object_are_named_together(tool: str, args: dict[str, Any], field: str, said: str) -> None:
    """Strict function-calling clients send null for every field they leave unused, inside
    `options` or `filters` as at the top; inside, each was refused alone in Python's words
    ("options.slot: None is not of type 'string'"), one call per null (decision 388)."""
    refused = refusal(tool, args)
    assert refused.field == field and said in refused.message, refused.message
    assert "None" not in refused.message


def test_a_null_a_field_takes_is_not_called_a_mistake() -> None:
    refused = refusal("revise", {"initiative": "w", "node": "a", "patch": {"reminder": None, "name": None}})
    assert refused.field == "patch.name" and "patch.reminder" not in refused.message, refused.message


@pytest.mark.parametrize(
    ("tool", "args", "field", "said"),
    [
        ("recall", {"initiatives": ["w"], "query": "q", "limit": "5"}, "limit", 'send 5 (a number), not "5"'),
        (
            "recall",
            {"initiatives": ["w"], "query": "q", "explain": "true"},
            "explain",
            'send true (a boolean), not "true"',
        ),
        (
            "recall",
            {"initiatives": '["a","b"]', "query": "q"},
            "initiatives",
            "send the list itself, not its JSON text",
        ),
        ("note", {"initiative": "w", "text": "x", "tags": "pump, hum"}, "tags", 'send a list, e.g. ["pump", "hum"]'),
        ("note", {"initiative": "w", "text": "x", "name": True}, "name", "name: true is not of type 'string'"),
        ("note", {"initiative": "w", "text": "x", "name": ["pump", "hum"]}, "name", 'name: ["pump", "hum"] is not of'),
    ],
)
def test_a_value_of_the_wrong_type_is_told_the_value_it_stood_for(
    tool: str, args: dict[str, Any], field: str, said: str
) -> None:
    """ "limit: '5' is not of type 'integer'" said what was wrong, not what to send; values are
    said as JSON (`true`, `["pump", "hum"]`), not as Python's `True` and `['pump', 'hum']`. The
    schema's words stay: the CLI reads "is not of type" for its own `:=` hint."""
    refused = refusal(tool, args)
    assert refused.field == field and said in refused.message and "is not of type" in refused.message, refused.message


@pytest.mark.parametrize(
    ("tool", "args", "field", "said"),
    [
        (
            "search",
            {"initiatives": ["w"], "text": "x", "tags": ["a"]},
            "tags",
            'it belongs inside filters: "filters": {"tags": ["a"]}',
        ),
        ("search", {"initiatives": ["w"], "text": "x", "types": ["task"]}, "types", "it belongs inside filters"),
        (
            "note",
            {"initiative": "w", "text": "x", "layer": "hot"},
            "layer",
            'inside options: "options": {"layer": "hot"}',
        ),
        ("note", {"initiative": "w", "text": "x", "slot": "handoff"}, "slot", "it belongs inside options"),
    ],
)
def test_a_field_sent_a_level_too_high_is_shown_where_it_belongs(
    tool: str, args: dict[str, Any], field: str, said: str
) -> None:
    refused = refusal(tool, args)
    assert refused.field == field and said in refused.message, refused.message


@pytest.mark.parametrize(
    ("tool", "args", "field", "said"),
    [
        ("task", {"initiative": "w", "task": "fix pump", "status": "done"}, "task", "call `task_update`"),
        ("claim", {"initiative": "w", "hypothesis": "h", "status": "supported"}, "hypothesis", "call `verdict`"),
        ("claim", {"initiative": "w", "text": "x", "status": "supported"}, "status", "`initial_status`"),
        ("verdict", {"initiative": "w", "text": "x", "initial_status": "open"}, "text", "call `claim`"),
        ("revise", {"initiative": "w", "node": "a", "patch": {"status": "done"}}, "patch.status", "`task_update`"),
        ("revise", {"initiative": "w", "node": "a", "patch": {"source": "x"}}, "patch.source", "`replace`"),
        ("task_update", {"initiative": "w", "task": "a", "text": "x", "status": "done"}, "text", "`revise`"),
        ("link", {"initiative": "w", "from": "a", "link_to": "b", "weight": 0.5}, "link_to", "takes `from` and `to`"),
    ],
)
def test_arguments_meant_for_another_tool_name_that_tool(
    tool: str, args: dict[str, Any], field: str, said: str
) -> None:
    """`task {task, status: done}` is task_update's call; it was answered "did you mean 'text'?",
    and following that made a second task, done, beside the open one."""
    refused = refusal(tool, args)
    assert refused.field == field and said in refused.message and "did you mean" not in refused.message, refused.message


@pytest.mark.parametrize(
    ("tool", "args", "said"),
    [
        ("note", {"initiative": "w", "text": "x", "kind": "preference"}, "did you mean 'rule'?"),
        ("note", {"initiative": "w", "text": "x", "kind": "fact"}, "did you mean 'observation'?"),
        ("note", {"initiative": "w", "text": "x", "kind": "hypothesis"}, "made by `claim`"),
        ("note", {"initiative": "w", "text": "x", "kind": "task"}, "made by `task`"),
        ("link", _link("related_to"), "did you mean 'refers_to'?"),
        ("link", _link("depends_on"), "did you mean 'blocks'?"),
        ("link", _link("caused_by"), "did you mean 'causal'?"),
        ("link", _link("supports"), "did you mean 'verifies'?"),
        ("link", _link("zzz"), "blocks (blocker → blocked)"),
        ("verdict", {"initiative": "w", "hypothesis": "h", "status": "confirmed"}, "did you mean 'supported'?"),
        ("claim", {"initiative": "w", "text": "x", "initial_status": "true"}, "did you mean 'supported'?"),
        (
            "link",
            {"initiative": "w", "from": "a", "to": "b", "action": "delete", "edge_type": "causal"},
            "did you mean 'remove'?",
        ),
        ("archive", {"action": "export", "path": "x", "format": "json"}, "did you mean 'amg'?"),
        ("archive", {"action": "export", "path": "x", "format": "md"}, "did you mean 'markdown'?"),
        ("recall", {"initiatives": ["w"], "query": "q", "task_intent": "debug"}, "did you mean 'debug_failure'?"),
    ],
)
def test_an_enum_value_is_answered_by_its_meaning_before_its_spelling(
    tool: str, args: dict[str, Any], said: str
) -> None:
    """`kind: "preference"` was offered 'reference' by spelling: an archival source, where the
    user's preference is a rule `context` delivers."""
    refused = refusal(tool, args)
    assert said in refused.message and "did you mean 'reference'" not in refused.message, refused.message


@pytest.mark.parametrize("tool", ["claim", "verdict"])
def test_evidence_sent_as_text_is_shown_its_two_shapes(tool: str) -> None:
    args = (
        {"initiative": "w", "text": "x"}
        if tool == "claim"
        else {"initiative": "w", "hypothesis": "h", "status": "supported"}
    )
    refused = refusal(tool, {**args, "evidence": "the logs"})
    assert refused.field == "evidence"
    assert 'send {"node": "the logs"} or {"method": "the logs"}' in refused.message, refused.message


@pytest.mark.parametrize(("slot", "meant"), [("Handoff", "handoff"), ("hand off", "hand-off"), ("2nd Pass", "nd-pass")])
def test_a_slot_name_off_its_pattern_is_said_in_words_with_the_name_normalised(slot: str, meant: str) -> None:
    refused = refusal("note", {"initiative": "w", "text": "x", "options": {"slot": slot}})
    assert refused.field == "options.slot" and "a lower-case letter first" in refused.message
    assert f"did you mean {meant!r}?" in refused.message, refused.message


def test_an_empty_due_is_told_that_null_clears_it() -> None:
    refused = refusal("task_update", {"initiative": "w", "task": "a", "due": ""})
    assert refused.field == "due" and "send null" in refused.message, refused.message


def test_follows_is_offered_temporal_with_the_edge_turned_round() -> None:
    """`temporal` runs earlier → later, so `a follows b` is `b temporal a`: offered without the
    swap, the hint wrote the edge backwards."""
    refused = refusal("link", _link("follows"))
    assert "did you mean 'temporal'?" in refused.message and "swap from and to" in refused.message, refused.message


@pytest.mark.parametrize("sent", ["unknown", "undecided", "unclear", "pending"])
def test_a_new_claim_not_known_yet_is_offered_open(sent: str) -> None:
    """A new claim whose verdict is not known is `open`; `inconclusive` is a verdict (the evidence
    decides nothing), and was offered for `initial_status: "unknown"`."""
    refused = refusal("claim", {"initiative": "w", "text": "x", "initial_status": sent})
    assert "did you mean 'open'?" in refused.message and "inconclusive'?" not in refused.message, refused.message


def test_a_verdict_of_unknown_is_still_inconclusive() -> None:
    refused = refusal("verdict", {"initiative": "w", "hypothesis": "h", "status": "unknown"})
    assert "did you mean 'inconclusive'?" in refused.message, refused.message


@pytest.mark.parametrize("sent", ["task", "hypothesis", "todo"])
def test_a_note_kind_meaning_is_not_said_for_another_field_called_kind(sent: str) -> None:
    """trail's `kind` (history, path, …) is not note's: `trail {kind: "task"}` was told to call `task`."""
    refused = refusal("trail", {"initiative": "w", "node": "n", "kind": sent})
    assert refused.field == "kind" and "`task`" not in refused.message and "`claim`" not in refused.message, (
        refused.message
    )


@pytest.mark.parametrize(("tool", "args"), [("link", {"weight": "NaN"}), ("link", {"weight": "1e400"})])
def test_a_text_for_a_number_json_cannot_write_is_not_told_to_send_it(tool: str, args: dict[str, Any]) -> None:
    refused = refusal(tool, {"initiative": "w", "from": "a", "to": "b", **args})
    assert "send a finite number" in refused.message, refused.message
    assert "send NaN" not in refused.message and "send Infinity" not in refused.message, refused.message


def test_a_null_item_of_a_list_is_told_to_be_removed() -> None:
    """A list's item has no default: "leave tags.0 out (a field not given takes its default)" was wrong."""
    refused = refusal("note", {"initiative": "w", "text": "x", "tags": ["a", None]})
    assert refused.field == "tags.1" and "remove the null item tags.1" in refused.message, refused.message
    assert "default" not in refused.message, refused.message


def test_a_preference_filtered_as_a_node_type_is_not_offered_reference() -> None:
    """The case `meanings.toml` was written for, in `search`'s list of types."""
    refused = refusal("search", {"initiatives": ["w"], "text": "q", "filters": {"types": ["preference"]}})
    assert "did you mean 'reference'" not in refused.message and "'kind:rule'" in refused.message, refused.message


def test_the_items_of_a_list_of_edge_types_are_answered_by_meaning() -> None:
    refused = refusal("trail", {"initiative": "w", "node": "n", "edge_types": ["refers_to", "supports"]})
    assert refused.field == "edge_types.1" and "did you mean 'verifies'?" in refused.message, refused.message


def test_a_preference_is_not_promised_in_every_context() -> None:
    """A rule scoped to a task is held back from `context` without that `task`."""
    refused = refusal("note", {"initiative": "w", "text": "x", "kind": "preference"})
    assert "every active rule" not in refused.message and "`task`" in refused.message, refused.message


def test_a_type_that_may_be_null_is_said_as_the_type_it_otherwise_is() -> None:
    """A schema `type` may be a list (`["integer", "null"]`); the typed hint raised TypeError on it."""
    from jsonschema import Draft202012Validator

    from kaeru.api.request_messages import refusal as words
    from kaeru.api.request_names import Meanings

    schema = {"type": "object", "properties": {"limit": {"type": ["integer", "null"]}}}
    errors = list(Draft202012Validator(schema).iter_errors({"limit": "5"}))
    said = words(errors, "recall", schema, Meanings.load())
    assert said.field == "limit" and 'send 5 (a number), not "5"' in said.message, said.message
