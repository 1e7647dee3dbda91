"""`initiatives` answers in pages (decision 100): `limit` a page, most active first, each page after
the key (last_activity, name) of the last one shown — every initiative once, in order, while the
vault is written between pages; `total` counts every match; a prefix and a token's grants page too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kaeru.domain.timefmt import fmt
from kaeru.service import grants
from kaeru.storage.base import Store
from tests.working.conftest import Call

#: Before the test clock (2026-03-02): initiatives made through the store are less active than any
#: made through a tool.
EARLIER = datetime(2026, 1, 1, tzinfo=UTC)


def _make(store: Store, names: list[str], *, ties: int = 1) -> None:
    """Initiatives without nodes, `ties` of them sharing each moment of activity (in list order)."""
    with store.write() as session:
        for i, name in enumerate(names):
            session.create_initiative(name, fmt(EARLIER + timedelta(seconds=i // ties)))


def _names(envelope: dict[str, Any]) -> list[str]:
    return [i["name"] for i in envelope["data"]["initiatives"]]


def _most_active_first(listed: list[dict[str, Any]]) -> list[str]:
    by_name = sorted(listed, key=lambda i: i["name"])
    return [i["name"] for i in sorted(by_name, key=lambda i: i["last_activity"], reverse=True)]


def _walk(call: Call, **args: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """Every page from the first: the names in the order shown, and the pages."""
    pages = [call("initiatives", **args)]
    while pages[-1]["continuation"] is not None:
        assert pages[-1]["state"] == "ok", pages[-1]["issues"]
        pages.append(call("initiatives", **pages[-1]["continuation"]["next_arguments"]))
        assert len(pages) < 100, "the walk must end"
    assert pages[-1]["state"] == "ok", pages[-1]["issues"]
    return [n for page in pages for n in _names(page)], pages


def test_many_initiatives_page_each_exactly_once_most_active_first(call: Call, store: Store) -> None:
    # 255 initiatives, three to each moment (ties go by name), and five more active ones with nodes.
    _make(store, [f"proj-{(i * 7) % 255:03d}" for i in range(255)], ties=3)
    for i in range(5):
        options = {"slot": "handoff"} if i % 2 == 0 else {}
        assert call("note", initiative=f"live-{i}", text=f"work on {i}", options=options)["state"] == "applied"

    whole = call("initiatives", limit=500)
    assert whole["data"]["total"] == 260 and whole["continuation"] is None
    assert whole["coverage"]["complete"] is True and whole["coverage"]["omitted"] == []
    order = _most_active_first(whole["data"]["initiatives"])
    assert _names(whole) == order
    assert order[:5] == ["live-4", "live-3", "live-2", "live-1", "live-0"]
    assert order[5:8] == sorted(order[5:8])  # a tie of activity goes by name

    first = call("initiatives", limit=25)
    assert _names(first) == order[:25]
    assert first["data"]["total"] == 260
    assert first["coverage"]["complete"] is False
    assert first["coverage"]["omitted"] == [{"section": "initiatives", "count": 235, "reason": "limit"}]
    assert first["continuation"]["next_arguments"] == {"limit": 25, "cursor": first["continuation"]["cursor"]}
    live = {i["name"]: i for i in first["data"]["initiatives"][:5]}
    assert live["live-4"]["slots"] == ["handoff"] and live["live-3"]["slots"] == []
    assert live["live-4"]["counts"] == {"operational": 1, "archival": 0, "total": 1}

    shown, pages = _walk(call, limit=25)
    assert shown == order, "every initiative exactly once, in order"
    assert [len(_names(p)) for p in pages] == [25] * 10 + [10]
    assert all(p["data"]["total"] == 260 for p in pages)
    assert [o["count"] for p in pages[:-1] for o in p["coverage"]["omitted"]] == [260 - 25 * k for k in range(1, 11)]
    assert pages[-1]["coverage"]["complete"] is True and pages[-1]["coverage"]["omitted"] == []
    assert pages[-1]["coverage"]["initiatives"] == order[250:]
    # The default page holds 100 of them.
    assert len(_names(call("initiatives"))) == 100


def test_activity_between_pages_neither_repeats_nor_skips_another_initiative(call: Call) -> None:
    made = [f"scope-{i:02d}" for i in range(40)]
    for name in made:
        call("note", initiative=name, text=f"the start of {name}")
    order = made[::-1]  # the last written is the most active
    first = call("initiatives", limit=10)
    assert _names(first) == order[:10]

    # Between pages: one already shown and one not yet shown become the most active, and a new one
    # is made. All three now sort before the cursor: this walk does not show them (again).
    shown_before, not_yet = order[3], order[20]
    for name in (shown_before, not_yet):
        assert call("note", initiative=name, text="more work")["state"] == "applied"
    call("note", initiative="newcomer", text="a new scope")

    seen = _names(first)
    page = first
    while page["continuation"] is not None:
        page = call("initiatives", **page["continuation"]["next_arguments"])
        assert page["state"] == "ok", page["issues"]
        assert page["data"]["total"] == 41
        seen += _names(page)
    assert len(seen) == len(set(seen)), "no initiative is shown twice"
    assert seen == [n for n in order if n != not_yet], "every other initiative once, in the first page's order"
    # A fresh first page shows them at the front.
    assert _names(call("initiatives", limit=3)) == ["newcomer", not_yet, shown_before]


def test_a_prefix_pages_and_counts_only_its_matches(call: Call, store: Store) -> None:
    alpha = [f"alpha-{i:02d}" for i in range(30)] + ["Alpha-Big", "ALPHABET"]
    street = ["Straße-1", "strasse-2", "STRASSE-3"]
    _make(store, [*alpha, *street, *[f"beta-{i}" for i in range(20)]])

    shown, pages = _walk(call, prefix="alpha", limit=7)
    assert sorted(shown) == sorted(alpha) and len(shown) == len(alpha)
    assert shown == _most_active_first([i for p in pages for i in p["data"]["initiatives"]])
    assert all(p["data"]["total"] == 32 for p in pages)
    assert pages[0]["continuation"]["next_arguments"]["prefix"] == "alpha"
    assert pages[0]["coverage"]["omitted"] == [{"section": "initiatives", "count": 25, "reason": "limit"}]
    # Case-insensitive by Unicode case folding (ß folds to ss), not only ASCII.
    shown, _ = _walk(call, prefix=" STRASSE ", limit=2)
    assert shown == ["STRASSE-3", "strasse-2", "Straße-1"]


def test_a_token_limited_to_some_initiatives_pages_through_those_only(call: Call, store: Store) -> None:
    every = [f"team-{i:02d}" for i in range(60)]
    _make(store, every)
    granted = set(every[5:51:2]) | {"not-made-yet"}
    with grants.acting(grants.Principal("dana", frozenset(granted))):
        shown, pages = _walk(call, limit=5)
        assert all(p["data"]["total"] == 23 for p in pages)
        assert shown == [n for n in every[::-1] if n in granted]
        assert pages[0]["coverage"]["omitted"] == [{"section": "initiatives", "count": 18, "reason": "limit"}]
        shown, pages = _walk(call, prefix="TEAM-1", limit=2)
        assert shown == ["team-19", "team-17", "team-15", "team-13", "team-11"]
        assert pages[0]["data"]["total"] == 5


def test_a_bad_cursor_is_refused_on_cursor(call: Call, store: Store) -> None:
    _make(store, [f"x-{i}" for i in range(12)])
    made_for_x = call("initiatives", prefix="x", limit=5)["continuation"]["cursor"]
    for args in (
        {"cursor": "not-a-cursor"},
        {"cursor": made_for_x[:-2] + ("AA" if not made_for_x.endswith("AA") else "BB"), "prefix": "x", "limit": 5},
        {"cursor": made_for_x, "prefix": "y", "limit": 5},  # made for other arguments
        {"cursor": made_for_x},
    ):
        refused = call("initiatives", **args)
        assert refused["state"] == "rejected", args
        assert refused["issues"][0]["code"] == "cursor_invalid" and refused["issues"][0]["field"] == "cursor"
        assert refused["data"] == {"initiatives": [], "total": 0}
    for limit in (0, 501):
        assert call("initiatives", limit=limit)["issues"][0]["code"] == "invalid_argument"
