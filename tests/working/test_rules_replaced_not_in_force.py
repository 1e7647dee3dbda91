"""A rule replaced the way `note`'s description says (a new rule `link_to` the old one with
`supersedes`) is no longer in force anywhere the rules in force are read.

A probe of a year (session 56): on day 366 `context` → `rules` listed "must support 3.11" and
"must support 3.12" next to "must support 3.13", each marked "superseded by …": they took the
budget first and counted toward `rules_complete`, and `recall "what rules apply"` offered them as
rules to follow. A released or expired rule was left out; currentness was never tested.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from kaeru.mcp.render import compact
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.working.conftest import Call, Clock, checked_calls

P = "atlas"


def _tools(store: Store, vault: VaultSpec) -> tuple[Call, Callable[..., str]]:
    clock = Clock(datetime(2027, 1, 4, 10, 0, tzinfo=UTC))
    return checked_calls(build_server(Service(store, vault.settings(timezone="UTC"), clock=clock)).registry)


def _replacing(made: Callable[..., str], old: str, name: str, text: str, initiative: str = P) -> str:
    """A new rule of `initiative` that replaces `old` the way `note`'s description says."""
    return made("note", initiative=initiative, kind="rule", name=name, text=text, link_to=old, edge_type="supersedes")


def test_a_superseded_rule_is_not_in_force(store: Store, vault: VaultSpec) -> None:
    call, made = _tools(store, vault)
    py311 = made("note", initiative=P, kind="rule", name="min-python", text="Code must support Python 3.11")
    py312 = _replacing(made, py311, "min-python-312", "Code must support Python 3.12")
    py313 = _replacing(made, py312, "min-python-313", "Code must support Python 3.13")
    cents = made("note", initiative=P, kind="rule", name="money-cents", text="Store money as integer cents")
    # A rule replaced from another project: verdicts count across initiatives (SPEC 1.2).
    tabs = made("note", initiative=P, kind="rule", name="indent-tabs", text="Indent with tabs")
    _replacing(made, tabs, "indent-spaces", "Indent with four spaces everywhere", initiative="house-style")

    answer = call("context", initiative=P)
    [rules] = [s for s in answer["data"]["sections"] if s["name"] == "rules"]
    assert {i["id"] for i in rules["items"]} == {py313, cents}
    assert rules["total"] == 2
    assert answer["coverage"]["rules_complete"] is True
    # Not shown as ordinary notes either, as a released rule is not.
    shown = {i["id"] for s in answer["data"]["sections"] for i in s["items"]}
    assert not shown & {py311, py312, tabs}
    # None is counted among the listed rules that do not apply here: the listing leaves them out.
    assert "filters_not_applying" not in rules

    # The rules `recall` offers for "what rules apply" are the rules in force (none of these rules
    # says "rule" or "apply": only the rules channel finds them).
    hits = call("recall", initiatives=[P], query="what rules apply", limit=20)["data"]["hits"]
    found = {h["id"] for h in hits}
    assert {py313, cents} <= found
    assert not found & {py311, py312, tabs}

    # `read` still shows the old rule (memory), and says it is not in force and what replaced it.
    read = call("read", initiative=P, node={"id": py311})
    [issue] = [i for i in read["issues"] if i["code"] == "not_in_force"]
    assert issue["message"].startswith(f"rule {py311} is not in force (superseded): ")
    assert py312 in issue["message"]
    assert "not in force: superseded" in compact(read)
    current = call("read", initiative=P, node={"id": py313})
    assert not [i for i in current["issues"] if i["code"] == "not_in_force"]


def test_a_rule_whose_successor_is_forgotten_is_in_force_again(store: Store, vault: VaultSpec) -> None:
    call, made = _tools(store, vault)
    old = made("note", initiative=P, kind="rule", name="deploy-window", text="Deploy only on Tuesdays")
    new = _replacing(made, old, "deploy-window-2", "Deploy on Tuesdays and Thursdays")
    call("forget", initiative=P, node={"id": new}, reason="wrong: the window did not change")

    [rules] = [s for s in call("context", initiative=P)["data"]["sections"] if s["name"] == "rules"]
    assert [i["id"] for i in rules["items"]] == [old]
    read = call("read", initiative=P, node={"id": old})
    assert not [i for i in read["issues"] if i["code"] == "not_in_force"]
