"""`context` delivers rules whole or leaves them out: when they cannot all fit, a rule cut to an equal
share of the budget said something else ("always sign commits before touching area"), and many
short rules came back with none of them whole (the one-initiative probe, session 52)."""

from __future__ import annotations

from typing import Any

from kaeru.mcp.render import compact
from kaeru.mcp.server import build_server
from kaeru.service import Service


def _caller(service: Service) -> Any:
    run = build_server(service).registry.run
    return lambda tool, **args: run(tool, args)


def _rules(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    section = envelope["data"]["sections"][0]
    assert section["name"] == "rules"
    return list(section["items"])


def test_rules_that_cannot_all_fit_come_whole_in_their_order_and_the_rest_are_counted(service: Service) -> None:
    call = _caller(service)
    texts = [f"Rule {i}: always sign commits before touching area {i}." for i in range(90)]
    for text in texts:
        call("note", initiative="core", kind="rule", text=text)
    task = call("task", initiative="core", text="ship the importer")["data"]["primary"]["id"]

    answer = call("context", initiative="core", budget_chars=2000)
    shown = _rules(answer)
    # Whole, no body_range, and the first ones as written: a prefix of the rules' order.
    assert [item["body"] for item in shown] == texts[: len(shown)]
    assert not any(item.get("body_range") for item in shown)
    # They fill the rules' share (3/4 of the budget: another section has something to show) ...
    used = sum(len(t) for t in texts[: len(shown)])
    assert used <= 1500 < used + len(texts[len(shown)])
    # ... and the rest are counted, with the search that lists them all; the open task still comes back.
    coverage = answer["coverage"]
    assert coverage["rules_complete"] is False and coverage["complete"] is False
    assert {"section": "rules", "count": 90 - len(shown), "reason": "budget"} in coverage["omitted"]
    assert "all rules: search" in compact(answer)
    assert task in {item["id"] for s in answer["data"]["sections"][1:] for item in s["items"]}
    assert not [i for i in answer["issues"] if i["code"] == "budget_truncated"], "no rule was cut"

    larger = call("context", initiative="core", budget_chars=4000)
    assert [item["body"] for item in _rules(larger)] == texts[: len(_rules(larger))]
    assert len(_rules(larger)) > 2 * len(shown) - 2


def test_only_a_first_rule_longer_than_the_whole_share_is_cut_and_then_not_complete(service: Service) -> None:
    """A cut rule is not delivered: `rules_complete` is false (SPEC §1.5), the warning names it."""
    call = _caller(service)
    long_rule = call("note", initiative="core", kind="rule", text="Never deploy on a Friday, because " * 40)
    call("note", initiative="core", kind="rule", text="Always sign commits.")
    call("note", initiative="core", kind="rule", text="Never push to main.")

    answer = call("context", initiative="core", budget_chars=512)
    rules = _rules(answer)
    assert len(rules) == 1, "the short rules after it are left out, not given the long one's place"
    shown = rules[0]
    assert shown["id"] == long_rule["data"]["primary"]["id"] and shown["body_range"]["total"] > 512
    coverage = answer["coverage"]
    assert coverage["rules_complete"] is False and coverage["complete"] is False
    assert {"section": "rules", "count": 2, "reason": "budget"} in coverage["omitted"]
    [said] = [i for i in answer["issues"] if i["code"] == "budget_truncated"]
    assert shown["id"] in said["message"]

    whole = call("context", initiative="core", budget_chars=4000)
    assert len(_rules(whole)) == 3 and whole["coverage"]["rules_complete"] is True
    assert not any(item.get("body_range") for item in _rules(whole))
