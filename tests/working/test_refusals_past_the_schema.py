"""Arguments the published schemas accept and the use cases refuse: each refusal names the field the
caller sent, as the schema's own refusals do, and writes nothing. A date the schema's `date` format
takes but no calendar holds (year 0), a node reference that is blank once trimmed, a query of
separators only for `explain`, a `trail kind=chain` of a node that is no saved chain — and a
reference two auto-named nodes answer, which `current_state` says is ambiguous. Both backends."""

from __future__ import annotations

from typing import Any

import pytest

from tests.working.conftest import Call

P = "edges"


def _refused(answer: dict[str, Any], field: str, code: str = "invalid_argument") -> str:
    assert answer["state"] == "rejected", answer
    [issue] = answer["issues"]
    assert (issue["code"], issue["field"]) == (code, field), issue
    return str(issue["message"])


def _found(call: Call, text: str) -> int:
    return int(call("search", initiatives=[P], text=text)["data"]["total"])


def test_a_day_no_calendar_holds_is_refused_on_the_field_that_gave_it(call: Call) -> None:
    """`0000-01-01` is a `date` to JSON Schema (RFC 3339 allows year 0) but to no calendar: refused
    naming `reminder.after` or `applicability.through` in every tool that takes them, nested under
    `patch.` in `revise` — and nothing of any of those calls is stored."""
    year_zero = "0000-01-01"
    rule = call("note", initiative=P, kind="rule", text="tag releases after the changelog is merged")
    assert rule["state"] == "applied", rule
    rule_id = rule["data"]["primary"]["id"]
    before = call("read", initiative=P, node={"id": rule_id})["data"]["hits"][0]

    calls: list[tuple[str, dict[str, Any], str]] = [
        ("note", {"text": "look again", "reminder": {"after": year_zero, "window_days": 2}}, "reminder.after"),
        ("task", {"text": "look again", "reminder": {"after": year_zero, "window_days": 2}}, "reminder.after"),
        (
            "note",
            {"text": "ferries sail at dawn", "kind": "rule", "applicability": {"through": year_zero}},
            "applicability.through",
        ),
        (
            "revise",
            {"node": {"id": rule_id}, "patch": {"reminder": {"after": year_zero, "window_days": 1}}},
            "patch.reminder.after",
        ),
        (
            "revise",
            {"node": {"id": rule_id}, "patch": {"applicability": {"through": year_zero}}},
            "patch.applicability.through",
        ),
    ]
    for tool, args, field in calls:
        message = _refused(call(tool, initiative=P, **args), field)
        assert "year 0" in message, message
    assert _found(call, "look again") == 0 and _found(call, "ferries") == 0, "nothing refused was stored"
    after = call("read", initiative=P, node={"id": rule_id})["data"]["hits"][0]
    assert after["revision"] == before["revision"] and after["properties"] == before["properties"]


@pytest.mark.parametrize(("mode", "query"), [("explain", "\x1c"), ("multi_hop", "\x1d\x1e \x1f")])
def test_explain_or_multi_hop_with_a_query_of_separators_only_is_refused_on_query(
    call: Call, query: str, mode: str
) -> None:
    """The schema wants a `\\S` in the query, and the information separators \\x1c–\\x1f are not
    whitespace to it; recall reads the query trimmed, as blank: refused on `query`, not answered
    with scores of nothing."""
    call("note", initiative=P, text="the heron waits by the pond")
    message = _refused(call("recall", initiatives=[P], query=query, **{mode: True}), "query")
    assert "non-blank query" in message


def test_a_chain_trail_of_a_node_that_is_no_saved_chain_is_refused_on_node(call: Call) -> None:
    plain = call("note", initiative=P, text="a note, not a chain", name="plain")["data"]["primary"]["id"]
    message = _refused(call("trail", initiative=P, node={"id": plain}, kind="chain"), "node")
    assert message == "'plain' is not a saved chain"


@pytest.mark.parametrize(
    ("node", "said"),
    [
        ("   ", "a node reference must not be empty"),
        ({"initiative": " ", "name": "plain"}, "a node reference is a string, {id} or {initiative, name}"),
    ],
)
def test_current_state_refuses_a_reference_blank_once_trimmed_on_node(call: Call, node: Any, said: str) -> None:
    """`current_state` reads an id even of a node forgotten since (as `read … at` does), so it parses
    the reference itself: a blank one is refused there, on `node`, as `read` refuses it."""
    call("note", initiative=P, text="a note", name="plain")
    assert _refused(call("current_state", initiative=P, node=node), "node") == said


def test_current_state_of_a_name_two_auto_named_nodes_answer_is_ambiguous_with_both(call: Call) -> None:
    """ "write-docs" names both `write-docs-<id end>` nodes (an agent quotes an auto-name without its
    suffix, decision 292): `current_state` answers `ambiguous` with both as candidates, not one."""
    first = call("note", initiative=P, text="write docs")["data"]["primary"]["id"]
    second = call("note", initiative=P, text="write docs")["data"]["primary"]["id"]
    answer = call("current_state", initiative=P, node="write-docs")
    assert answer["state"] == "ok", answer
    assert answer["data"]["status"] == "ambiguous"
    assert sorted(answer["data"]["candidates"]) == sorted([first, second])
