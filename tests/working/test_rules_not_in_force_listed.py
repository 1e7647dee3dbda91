"""`search` and `read` say of each rule they show that is not in force today why it is not.

A probe of time (session 51): on 5 March, `search "deploy freeze"` and `read rule-freeze` showed a
freeze rule `through` 10 January as any rule in force, with no `today` to compare against, and a
rule scoped to a finished task likewise; the server's instructions send agents to `search` first.
`context` and `recall` leave such rules out by `rules_in_force`; `search` and `read` list memory,
so they still show them, now with a `not_in_force` warning (which rule, why, what to do) and the
reason on the rule's own line of the text, by the same test `context` uses.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from jsonschema import Draft202012Validator

from kaeru.mcp.render import compact
from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.working.conftest import Clock, checked_calls

P = "billing"


def _line(text: str, name: str) -> str:
    [line] = [line for line in text.splitlines() if line.startswith(f"- {name} · ")]
    return line


def _why(envelope: dict[str, Any]) -> dict[str, str]:
    """rule id → the message of its `not_in_force` issue."""
    found = {}
    for issue in envelope["issues"]:
        if issue["code"] == "not_in_force":
            rule = issue["message"].split()[1]
            assert rule not in found, envelope["issues"]
            found[rule] = issue["message"]
    return found


def test_search_and_read_say_which_rules_are_not_in_force(store: Store, vault: VaultSpec) -> None:
    clock = Clock(datetime(2027, 1, 4, 10, 0, tzinfo=UTC))
    registry = build_server(Service(store, vault.settings(timezone="UTC"), clock=clock)).registry
    call, made = checked_calls(registry)
    cents = made("note", initiative=P, kind="rule", name="rule-cents", text="Store money as integer cents")
    freeze = made(
        "note",
        initiative=P,
        kind="rule",
        name="rule-freeze",
        text="Deploy freeze: no production deploys during the holiday freeze",
        applicability={"through": "2027-01-10"},
    )
    migrate = made("task", initiative=P, name="t-migrate", text="Migrate the invoices table")
    audit = made("task", initiative=P, name="t-audit", text="Prepare the audit pack")
    schema = made(
        "note",
        initiative=P,
        kind="rule",
        name="rule-schema",
        text="While migrating, keep the old invoices schema readable",
        applicability={"task": migrate},
    )
    evidence = made(
        "note",
        initiative=P,
        kind="rule",
        name="rule-evidence",
        text="Audit evidence comes from production logs only",
        applicability={"task": audit},
    )
    pager = made("note", initiative=P, kind="rule", name="rule-pager", text="Page the on-call for every deploy")
    call("revise", initiative=P, node=pager, patch={"constraint_state": "released"})
    call("task_update", initiative=P, task=migrate, status="done")
    # While the freeze lasts it is in force: nothing is said about it.
    assert _why(call("search", initiatives=[P], text="holiday freeze")) == {}

    clock.advance(days=60)  # 5 March
    rules = call("search", initiatives=[P], filters={"tags": ["kind:rule"]})
    assert not list(Draft202012Validator(registry.specs["search"].output_schema).iter_errors(rules))
    assert {h["id"] for h in rules["data"]["hits"]} == {cents, freeze, schema, evidence, pager}
    why = _why(rules)
    # The same test `context` uses: the rules it gives are exactly those search says nothing of.
    [given] = [s for s in call("context", initiative=P, task=audit)["data"]["sections"] if s["name"] == "rules"]
    assert {i["id"] for i in given["items"]} == {cents, evidence} == {cents, freeze, schema, evidence, pager} - set(why)
    assert why[freeze].startswith(f"rule {freeze} is not in force (ended 2027-01-10): 'rule-freeze' ")
    assert "today is 2027-03-05" in why[freeze] and "`revise` its applicability" in why[freeze]
    assert why[schema].startswith(f"rule {schema} is not in force (its task is done): ")
    assert f"task 't-migrate' ({migrate})" in why[schema]
    assert why[pager].startswith(f"rule {pager} is not in force (released): ")
    # The text says it on the rule's own line.
    text = compact(rules)
    assert " · not in force: ended 2027-01-10 · " in _line(text, "rule-freeze"), text
    assert " · not in force: its task is done · " in _line(text, "rule-schema"), text
    assert " · not in force: released · " in _line(text, "rule-pager"), text
    assert "not in force" not in _line(text, "rule-cents") + _line(text, "rule-evidence"), text

    found = call("search", initiatives=[P], text="holiday freeze")
    assert list(_why(found)) == [freeze]
    assert " · not in force: ended 2027-01-10 · " in _line(compact(found), "rule-freeze")
    read = call("read", initiative=P, node="rule-freeze")
    assert list(_why(read)) == [freeze]
    assert " · not in force: ended 2027-01-10 · " in _line(compact(read), "rule-freeze")
    # Read as of a day it was in force: a revision of then, about which today says nothing.
    past = call("read", initiative=P, node="rule-freeze", at="2027-01-05")
    assert _why(past) == {} and "not in force" not in compact(past)
    assert _why(call("read", initiative=P, node="rule-cents")) == {}
    # What happened in order lists them too, and says the same of each (session 51, decision 478).
    timeline = call("timeline", initiatives=[P])
    assert set(_why(timeline)) == {freeze, schema, pager}
    assert " · not in force: ended 2027-01-10 · " in _line(compact(timeline), "rule-freeze")


def test_a_rule_whose_task_was_forgotten_is_not_in_force(store: Store, vault: VaultSpec) -> None:
    clock = Clock(datetime(2027, 1, 4, 10, 0, tzinfo=UTC))
    registry = build_server(Service(store, vault.settings(timezone="UTC"), clock=clock)).registry
    task = registry.run("task", {"initiative": P, "name": "t-spike", "text": "Try the new PDF library"})
    task_id = task["data"]["primary"]["id"]
    registry.run(
        "note",
        {
            "initiative": P,
            "kind": "rule",
            "name": "rule-spike",
            "text": "Keep the spike's code out of main",
            "applicability": {"task": task_id},
        },
    )
    assert registry.run("forget", {"initiative": P, "node": task_id, "reason": "spike abandoned"})["state"] == "applied"
    found = registry.run("search", {"initiatives": [P], "text": "spike code"})
    assert " · not in force: its task was forgotten · " in _line(compact(found), "rule-spike"), compact(found)


def test_a_token_limited_to_the_rule_learns_nothing_of_a_task_in_another_initiative(
    store: Store, vault: VaultSpec
) -> None:
    # A rule of `billing` scoped to a task of `ops`: the admin is told which task ended and how; a
    # token limited to `billing` read that task's name, id and status (decision 15.K2).
    clock = Clock(datetime(2027, 1, 4, 10, 0, tzinfo=UTC))
    registry = build_server(Service(store, vault.settings(timezone="UTC"), clock=clock)).registry
    task = registry.run("task", {"initiative": "ops", "name": "t-zephyr-cutover", "text": "Cut over to zephyr"})
    task_id = task["data"]["primary"]["id"]
    rule = registry.run(
        "note",
        {
            "initiative": P,
            "kind": "rule",
            "name": "rule-cutover",
            "text": "Hold invoice runs during the cutover",
            "applicability": {"task": task_id},
        },
    )
    assert rule["state"] == "applied", rule
    rule_id = rule["data"]["primary"]["id"]
    assert registry.run("task_update", {"initiative": "ops", "task": task_id, "status": "done"})["state"] == "applied"

    admin = _why(registry.run("search", {"initiatives": [P], "text": "invoice runs cutover"}))
    assert admin[rule_id].startswith(f"rule {rule_id} is not in force (its task is done): ")
    assert f"task 't-zephyr-cutover' ({task_id})" in admin[rule_id]

    with grants.acting(grants.Principal("lim", frozenset({P}))):
        found = registry.run("search", {"initiatives": [P], "text": "invoice runs cutover"})
        read = registry.run("read", {"initiative": P, "node": "rule-cutover"})
    # `search` says it too: its views scrub the task, the test is of the rule as stored.
    assert list(_why(found)) == [rule_id] and _why(found)[rule_id] == _why(read)[rule_id]
    [said] = _why(read).values()
    assert said.startswith(f"rule {rule_id} is not in force (its task is closed): 'rule-cutover' "), said
    assert "zephyr" not in said and task_id not in said and "done" not in said, said
    assert " · not in force: its task is closed · " in _line(compact(read), "rule-cutover")
    for answer in (found, read):
        assert "zephyr" not in json.dumps(answer) and task_id not in json.dumps(answer), answer
