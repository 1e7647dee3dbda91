"""`timeline` pages: a signed keyset cursor, `continuation.next_arguments`, and every item left out
named in `coverage.omitted` — stable while the vault is written between pages."""

from __future__ import annotations

from typing import Any

from tests.working.conftest import Call, Clock


def _ids(envelope: dict[str, Any]) -> list[str]:
    return [hit["id"] for hit in envelope["data"]["hits"]]


def _note(call: Call, text: str, **extra: Any) -> str:
    envelope = call("note", initiative="t", text=text, **extra)
    node_id: str = envelope["data"]["primary"]["id"]
    return node_id


def test_a_window_pages_through_every_item_once_with_writes_between_pages(call: Call, clock: Clock) -> None:
    made = [_note(call, f"step {i} of the migration") for i in range(23)]
    first = call("timeline", initiatives=["t"], limit=5)
    assert first["state"] == "ok"
    assert _ids(first) == made[:5]
    assert first["data"]["total"] == 23
    assert first["coverage"]["complete"] is False
    assert first["coverage"]["omitted"] == [{"section": "timeline", "count": 18, "reason": "limit"}]
    assert first["continuation"]["next_arguments"]["cursor"] == first["continuation"]["cursor"]

    seen = _ids(first)
    page = first
    forgotten = made[12]
    added: list[str] = []
    rounds = 0
    while page["continuation"] is not None:
        rounds += 1
        # Writes between pages: a new node (later in time), a revision and a forget of unseen ones,
        # and a node back-dated before the walk's position.
        clock.advance(seconds=1)
        added.append(_note(call, f"late note {rounds}"))
        revised = call("revise", initiative="t", node=made[-1], patch={"description": f"revised {rounds}"})
        assert revised["state"] == "applied", revised["issues"]
        if rounds == 1:
            assert call("forget", initiative="t", node={"id": forgotten}, reason="test")["state"] == "applied"
            _note(call, "back-dated memory", occurred_at="2020-01-01")
        page = call("timeline", **page["continuation"]["next_arguments"])
        assert page["state"] == "ok", page["issues"]
        seen += _ids(page)
        limit_cut = [o for o in page["coverage"]["omitted"] if o["reason"] == "limit"]
        if page["continuation"] is None:
            assert page["coverage"]["omitted"] == []
            assert page["coverage"]["complete"] is True
        else:
            assert len(_ids(page)) == 5
            assert limit_cut and limit_cut[0]["section"] == "timeline" and limit_cut[0]["count"] > 0
        assert rounds < 20, "the walk must end"
    assert len(seen) == len(set(seen)), "no item is shown twice"
    expected = [i for i in made if i != forgotten]
    assert [i for i in seen if i in made] == expected, "every item that existed at the first page, in order"
    assert set(seen) - set(made) <= set(added)


def test_the_last_page_counts_exactly_what_is_left(call: Call) -> None:
    made = [_note(call, f"entry {i}") for i in range(7)]
    first = call("timeline", initiatives=["t"], limit=3)
    second = call("timeline", **first["continuation"]["next_arguments"])
    assert _ids(second) == made[3:6]
    assert second["coverage"]["omitted"] == [{"section": "timeline", "count": 1, "reason": "limit"}]
    assert second["data"]["total"] == 7
    third = call("timeline", **second["continuation"]["next_arguments"])
    assert _ids(third) == made[6:]
    assert third["continuation"] is None and third["coverage"]["omitted"] == []


def test_an_anchored_timeline_names_what_it_left_out_and_pages_forward(call: Call) -> None:
    made = [_note(call, f"event {i}") for i in range(15)]
    page = call("timeline", initiatives=["t"], anchor={"id": made[6]}, before=2, after=3)
    assert page["data"]["anchor"] == made[6]
    assert _ids(page) == made[4:10]
    omitted = page["coverage"]["omitted"]
    assert {"section": "before", "count": 4, "reason": "limit"} in omitted
    assert {"section": "timeline", "count": 5, "reason": "limit"} in omitted
    assert page["coverage"]["complete"] is False
    rest = call("timeline", **page["continuation"]["next_arguments"])
    assert _ids(rest) == made[10:]
    assert rest["continuation"] is None


def test_a_budget_cut_defers_to_the_next_page_without_skipping(call: Call) -> None:
    made = [_note(call, f"long {i} " + "words " * 200) for i in range(20)]
    page = call("timeline", initiatives=["t"], limit=20, budget_chars=512)
    shown = _ids(page)
    assert 0 < len(shown) < 20
    assert {"section": "timeline", "count": 20 - len(shown), "reason": "budget"} in page["coverage"]["omitted"]
    seen = list(shown)
    while page["continuation"] is not None:
        page = call("timeline", **page["continuation"]["next_arguments"])
        seen += _ids(page)
    assert seen == made


def test_a_tampered_or_misapplied_cursor_is_refused(call: Call) -> None:
    for i in range(4):
        _note(call, f"item {i}")
    first = call("timeline", initiatives=["t"], limit=2)
    token = first["continuation"]["cursor"]
    body, mac = token.split(".", 1)
    forged = body[:-2] + ("AA" if body[-2:] != "AA" else "BB") + "." + mac
    for args in (
        {**first["continuation"]["next_arguments"], "cursor": forged},
        {**first["continuation"]["next_arguments"], "limit": 3},  # made for other arguments
        {"initiatives": ["t"], "text": "item", "cursor": token},  # another tool's call
    ):
        tool = "search" if "text" in args else "timeline"
        refused = call(tool, **args)
        assert refused["state"] == "rejected"
        assert refused["issues"][0]["code"] == "cursor_invalid"


def test_a_long_walk_counts_a_bounded_window_and_says_more_lie_beyond(call: Call) -> None:
    """Each page counts at most `COUNT_WINDOW` of the items it leaves out (it must stay cheap on a big
    vault); past them an omission with reason `window` says at least one more lies beyond, and
    `total` is a lower bound. Paging still reaches every item once, and the last pages count exactly."""
    from kaeru.service.timeline import COUNT_WINDOW

    assert COUNT_WINDOW <= 1000, "a page reads at most about a thousand ids past its items"
    made = [_note(call, f"log line {i}") for i in range(COUNT_WINDOW + 30)]
    first = call("timeline", initiatives=["t"], limit=10)
    assert _ids(first) == made[:10]
    assert first["coverage"]["omitted"] == [
        {"section": "timeline", "count": COUNT_WINDOW, "reason": "limit"},
        {"section": "timeline", "count": 1, "reason": "window"},
    ]
    assert first["data"]["total"] == 10 + COUNT_WINDOW + 1, "a lower bound: what was shown and counted, and one more"
    seen, page = _ids(first), first
    while page["continuation"] is not None:
        page = call("timeline", **page["continuation"]["next_arguments"])
        assert page["state"] == "ok", page["issues"]
        seen += _ids(page)
        assert all(o["count"] <= COUNT_WINDOW for o in page["coverage"]["omitted"])
    assert seen == made
    assert page["data"]["total"] == len(made), "the last page knows the walk's size"

    around = call("timeline", initiatives=["t"], anchor={"id": made[-1]}, before=2, after=0)
    assert _ids(around) == made[-3:]
    assert around["coverage"]["omitted"] == [
        {"section": "before", "count": COUNT_WINDOW, "reason": "limit"},
        {"section": "before", "count": 1, "reason": "window"},
    ]


def test_a_timeline_anchored_on_a_query_that_matches_nothing_says_so(call: Call) -> None:
    _note(call, "step one of the migration")
    missed = call("timeline", initiatives=["t"], query="zeppelin")
    assert missed["state"] == "rejected"
    assert (missed["issues"][0]["code"], missed["issues"][0]["field"]) == ("not_found", "query")


def test_a_date_as_since_starts_the_window_at_the_start_of_that_day(call: Call) -> None:
    """`since` of a date read as the day's end left out everything that happened on it, so asking
    for one day (`since` = `until` = that date) answered nothing (decision 285)."""
    monday = _note(call, "event of monday", occurred_at="2026-03-02T12:00:00Z")
    midnight = _note(call, "event of tuesday at midnight", occurred_at="2026-03-03T00:00:00Z")
    tuesday = _note(call, "event of tuesday", occurred_at="2026-03-03T10:00:00Z")
    wednesday = _note(call, "event of wednesday", occurred_at="2026-03-04T10:00:00Z")
    assert _ids(call("timeline", initiatives=["t"], since="2026-03-03")) == [midnight, tuesday, wednesday]
    assert _ids(call("timeline", initiatives=["t"], until="2026-03-03")) == [monday, midnight, tuesday]
    assert _ids(call("timeline", initiatives=["t"], since="2026-03-03", until="2026-03-03")) == [midnight, tuesday]


def test_a_note_that_happened_today_comes_before_one_written_after_it(call: Call, clock: Clock) -> None:
    """`occurred_at` of today's date was the day's end, so every note written later today came
    before it (decision 286)."""
    today = _note(call, "the deploy failed this morning", occurred_at="2026-03-02")
    clock.advance(minutes=30)
    later = _note(call, "the deploy was retried and passed")
    assert _ids(call("timeline", initiatives=["t"])) == [today, later]
    shown = call("read", initiative="t", node=today)["data"]["hits"][0]
    assert shown["created_at"].startswith("2026-03-02T09:00:00.") and shown["created_at"] <= shown["recorded_at"]


def test_a_window_that_ends_before_it_starts_is_refused(call: Call) -> None:
    """Decision 316: `since` after `until` answered `ok` with nothing, read as "nothing happened"."""
    call("note", initiative="p", text="something happened")
    refused = call("timeline", initiatives=["p"], since="2026-03-05", until="2026-03-01")
    assert refused["state"] == "rejected" and refused["issues"][0]["field"] == "since"
    assert "swap" in refused["issues"][0]["message"]
    one_day = call("timeline", initiatives=["p"], since="2026-03-02", until="2026-03-02")
    assert one_day["state"] == "ok"
