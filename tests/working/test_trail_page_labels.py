"""A trail's history page says why it ends where it does, and how much of the history it shows.

A node revised 13 times with bodies of 30,000–60,000 characters came one entry a page whatever
`limit` asked (a page ends before the entry that takes its text past `HISTORY_PAGE_CHARS`), while
its text said "history, 13 entries" above the one it showed and `coverage.omitted` said the other
12 were left out for `limit` — read as "`limit` was 1", so a caller raised `limit` and got the same
page. What the agent relies on: a page ended by its text's bound counts the rest as left out for
`budget` (the reason SPEC §2 gives what did not fit a size), a page ended by `limit` says
`limit`, and the text's header says how many of the total it shows.
"""

from __future__ import annotations

from kaeru.mcp.render import compact
from tests.working.conftest import Call


def _document(call: Call, chars: int, revisions: int) -> str:
    body = ("Drain the queue, migrate, then smoke-test the release before the switch. " * (chars // 70 + 1))[:chars]
    made = call("note", initiative="t", text=body, name="spec")
    for i in range(revisions):
        call("revise", initiative="t", node=made["data"]["primary"]["id"], patch={"body": f"{body} Revision {i}."})
    return str(made["data"]["primary"]["id"])


def test_a_page_ended_by_its_text_says_budget_and_shows_one_of_the_total(call: Call) -> None:
    _document(call, 30_000, 12)
    page = call("trail", initiative="t", node="spec", limit=5)
    assert page["state"] == "ok", page["issues"]
    assert len(page["data"]["entries"]) == 1 and page["data"]["total"] == 13
    assert page["coverage"]["omitted"] == [{"section": "entries", "count": 12, "reason": "budget"}]
    assert page["continuation"] is not None
    assert "history, 1 of 13 entries" in compact(page).splitlines()[0]


def test_a_page_ended_by_limit_says_limit(call: Call) -> None:
    _document(call, 200, 12)
    page = call("trail", initiative="t", node="spec", limit=5)
    assert len(page["data"]["entries"]) == 5 and page["data"]["total"] == 13
    assert page["coverage"]["omitted"] == [{"section": "entries", "count": 8, "reason": "limit"}]
    assert "history, 5 of 13 entries" in compact(page).splitlines()[0]
    whole = call("trail", initiative="t", node="spec", limit=500)
    assert "history, 13 entries" in compact(whole).splitlines()[0]
