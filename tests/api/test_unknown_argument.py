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


@pytest.mark.parametrize(
    ("args", "sent", "meant"),
    [
        ({"type": "causal"}, "type", "edge_type"),
        ({"relation": "causal"}, "relation", "edge_type"),
        ({"mode": "remove", "edge_type": "causal"}, "mode", "action"),
        ({"mode": "chain"}, "mode", "action"),
        ({"strength": 0.8}, "strength", "weight"),
        ({"edge_type": "refers_to", "note": "why"}, "note", None),
    ],
)
def test_link_without_a_weight_is_not_told_every_unknown_argument_is_the_weight(
    args: dict[str, object], sent: str, meant: str | None
) -> None:
    """`link`'s `weight` is required only by its default action, so it was "missing" from every call
    that left `action` out, and any one unknown argument was answered "did you mean 'weight'?":
    following it for `mode: remove` re-weighted the edge meant to be removed. A pair is offered
    only when the name sent could mean the missing one (here `strength`)."""
    with pytest.raises(InvalidArgument) as refused:
        parse("link", {"initiative": "web", "from": "a", "to": "b", **args})
    message = refused.value.message
    assert refused.value.field == sent, message
    if meant is None:
        assert "did you mean" not in message, message
    else:
        assert f"did you mean {meant!r}?" in message, message
    if meant != "weight":
        assert "'weight'" not in message, message


@pytest.mark.parametrize(
    ("tool", "args", "sent", "meant"),
    [
        ("trail", {"mode": "provenance"}, "mode", "kind"),
        ("read", {"mode": "full"}, "mode", None),
        ("forget", {"reason": "duplicate", "note": "see the other one"}, "note", None),
    ],
)
def test_the_name_offered_is_never_one_the_call_already_sends(
    tool: str, args: dict[str, str], sent: str, meant: str | None
) -> None:
    """`mode` and `note` are spelt like `node`, which these calls send: "did you mean 'node'?"
    steered the model away from `kind`."""
    with pytest.raises(InvalidArgument) as refused:
        parse(tool, {"initiative": "web", "node": "a", **args})
    message = refused.value.message
    assert refused.value.field == sent and "'node'" not in message, message
    assert (f"did you mean {meant!r}?" in message) if meant else ("did you mean" not in message), message


@pytest.mark.parametrize(
    ("tool", "args", "sent", "meant"),
    [
        ("task_update", {"task": "t", "column": "done"}, "column", "status"),
        ("link", {"from": "a", "to": "b", "relation": "causal", "weight": 0.5}, "relation", "edge_type"),
        ("evolve", {"mode": "supersede", "source": "a", "text": "the corrected fact"}, "text", "new_body"),
        ("current_state", {"node": "a", "role": "handoff"}, "role", "slot"),
    ],
)
def test_a_name_models_send_for_an_argument_is_offered_that_argument(
    tool: str, args: dict[str, object], sent: str, meant: str
) -> None:
    """Spelling alone offered nothing for these: each is the name models most often send instead."""
    with pytest.raises(InvalidArgument) as refused:
        parse(tool, {"initiative": "web", **args})
    assert refused.value.field == sent and f"did you mean {meant!r}?" in refused.value.message, refused.value.message


@pytest.mark.parametrize(
    ("tool", "args", "sent", "meant", "verb"),
    [
        ("review", {"initiative": "web", "target": "a", "why": "looks wrong"}, "why", "reason", "action"),
        ("initiative", {"initiative": "web", "new_name": "app"}, "new_name", "to", "action"),
        ("evolve", {"initiative": "web", "source": "a", "text": "x"}, "text", "new_body", "mode"),
    ],
)
def test_a_name_that_means_another_argument_is_not_offered_as_the_missing_verb(
    tool: str, args: dict[str, str], sent: str, meant: str, verb: str
) -> None:
    """`why` on review was answered "did you mean 'action'?", and the call that followed was refused
    again; its usual meaning here is `reason`, and the verb is said as missing besides (review,
    session 41)."""
    with pytest.raises(InvalidArgument) as refused:
        parse(tool, args)
    assert refused.value.field == sent
    assert (
        f"did you mean {meant!r}?" in refused.value.message and f"({verb!r} is required too)" in refused.value.message
    )
