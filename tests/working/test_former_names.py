"""A former initiative name leads to where it went (SPEC 1.3: a project must not silently split).

Found by a probe of several agents on one vault: agent A renamed `webshop` to `storefront`; B's next
note to `webshop` created a new, empty `webshop` (one warning, no mention of the rename), C's task
went there without any, and C's `context webshop` came back without the project's rules.
"""

from __future__ import annotations

from typing import Any

from tests.working.conftest import Call


def _names(call: Call) -> list[str]:
    return sorted(i["name"] for i in call("initiatives")["data"]["initiatives"])


def _refused(answer: dict[str, Any], *words: str) -> None:
    assert answer["state"] == "rejected", answer
    message = answer["issues"][0]["message"]
    assert all(word in message for word in words), message


def test_a_renamed_initiative_is_never_split_and_every_call_says_where_it_went(call: Call) -> None:
    rule = call("note", initiative="webshop", kind="rule", text="Never deploy on Fridays.")["data"]["primary"]["id"]
    call("initiative", initiative="webshop", action="rename", to="storefront")
    _refused(call("note", initiative="webshop", text="checkout button moved"), "renamed to 'storefront'")
    _refused(call("task", initiative="webshop", text="fix the cart"), "'storefront'")
    assert _names(call) == ["storefront"], "no second, empty project under the old name"
    _refused(call("context", initiative="webshop"), "renamed to 'storefront'", "use 'storefront'")
    found = call("search", initiatives=["webshop", "storefront"], text="deploy")
    assert [h["id"] for h in found["data"]["hits"]] == [rule]
    assert "renamed to 'storefront'" in found["issues"][0]["message"]
    by_name = call("read", initiative="storefront", node={"initiative": "webshop", "name": "x"})
    _refused(by_name, "renamed to 'storefront'")
    rules = next(s for s in call("context", initiative="storefront")["data"]["sections"] if s["name"] == "rules")
    assert [i["id"] for i in rules["items"]] == [rule]


def test_a_merged_initiative_leads_to_its_target_even_after_the_target_is_renamed(call: Call) -> None:
    call("note", initiative="payments", text="Stripe webhooks retry for three days")
    call("note", initiative="billing", text="invoices are numbered per year")
    call("initiative", initiative="payments", action="merge", to="billing")
    _refused(call("note", initiative="payments", text="refunds too"), "merged into 'billing'")
    call("initiative", initiative="billing", action="rename", to="money")
    _refused(call("note", initiative="payments", text="refunds too"), "merged into 'money'")
    _refused(call("note", initiative="billing", text="refunds too"), "renamed to 'money'")
    assert _names(call) == ["money"]


def test_a_deleted_name_starts_anew_and_says_so_and_a_reused_name_is_its_new_owner(call: Call) -> None:
    call("note", initiative="spike", text="try the new queue")
    call("initiative", initiative="spike", action="delete")
    again = call("note", initiative="spike", text="a second spike")
    assert again["state"] == "applied"
    created = next(i for i in again["issues"] if i["code"] == "new_initiative")
    assert "was deleted on" in created["message"]
    # A name given up by a rename is taken by another initiative renamed to it: that one is the name's.
    call("note", initiative="alpha", text="first project")
    call("initiative", initiative="alpha", action="rename", to="alpha-2025")
    call("note", initiative="fresh", text="second project")
    call("initiative", initiative="fresh", action="rename", to="alpha")
    assert call("note", initiative="alpha", text="lands in the new alpha")["state"] == "applied"
    assert _names(call) == ["alpha", "alpha-2025", "spike"]
