"""`reflect` offers to merge only initiatives that name the same project: the same name folded for
case, width and separators, or a typo in its long words. Its fix is `initiative merge`, which moves
every node and ends the other initiative, so a did-you-mean closeness (one name inside another,
two short names a letter apart) is no reason to list it."""

from __future__ import annotations

from tests.working.conftest import Call


def _merge_offers(call: Call, scope: str) -> set[str]:
    answer = call("reflect", initiative=scope)
    assert answer["state"] == "ok", answer
    items = [i for i in answer["data"]["items"] if i["kind"] == "near_duplicate_initiative"]
    for item in items:
        assert item["fix"]["arguments"]["action"] == "merge" and item["fix"]["arguments"]["to"] == scope
    return {i["fix"]["arguments"]["initiative"] for i in items}


def _make(call: Call, *names: str) -> None:
    for name in names:
        assert call("note", initiative=name, text=f"the first note of {name}")["state"] == "applied"


def test_a_name_inside_another_is_a_different_project(call: Call) -> None:
    _make(call, "shop", "shopping-list-project", "東京", "東京都庁の移転計画", "api", "api-gateway", "app")
    assert _merge_offers(call, "shop") == set()
    assert _merge_offers(call, "shopping-list-project") == set()
    assert _merge_offers(call, "東京") == set()
    assert _merge_offers(call, "東京都庁の移転計画") == set()
    assert _merge_offers(call, "api") == set(), "neither `api-gateway` (containment) nor `app` (short)"
    assert _merge_offers(call, "api-gateway") == set()


def test_the_same_name_spelled_otherwise_or_mistyped_is_offered_for_merging(call: Call) -> None:
    same = ["Web Shop", "web_shop", "web-shop", "ＷＥＢ－ＳＨＯＰ", "webshp", "webshops"]
    different = ["web", "shop", "web-shop-admin", "web-shop-2", "websites"]
    _make(call, "webshop", *same, *different, "customer-onboarding", "custmer-onbaording")
    assert _merge_offers(call, "webshop") == set(same)
    assert _merge_offers(call, "web-shop-2") == set(), "a number that differs is another project"
    assert _merge_offers(call, "customer-onboarding") == {"custmer-onbaording"}


def test_a_letter_changed_in_a_short_word_is_a_different_project(call: Call) -> None:
    """`project-a` and `project-b` are long names a letter apart, but the letter is a word of its own;
    `planning` and `planting` are a letter apart, but both are words."""
    pairs = [
        ("project-a", "project-b"),
        ("service-a", "service-b"),
        ("phase-ii", "phase-iii"),
        ("mobile-app", "mobile-api"),
        ("frontend-ios", "frontend-os"),
        ("webshop-v", "webshop-w"),
        ("planning", "planting"),
    ]
    _make(call, *(name for pair in pairs for name in pair))
    for a, b in pairs:
        assert _merge_offers(call, a) == set(), a
        assert _merge_offers(call, b) == set(), b
