"""A very long body keeps `trail kind=history` and `revise` within their bounds (decision 159's
page of ~32,000 characters; a revise's changes within what a `read` shows by default).

Found by the scale probe of session 40: one revision of a 1,000,000-character note made a history
page of 2 MB — the first entry was always kept whole, and it carried the body twice (its node and
its change's `after`) — and the `revise` that shortened it answered the old body whole (1 MB; 8 MB
for a 4 MB body revised in place). Now each long text is cut, the cut is marked as `read` marks one
(`body_range`, a change's `before_range`/`after_range`), and a `budget_truncated` warning gives the
exact `read … at` calls whose pages give back every character.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kaeru.mcp.render import compact
from kaeru.service import Service, trail_pages
from kaeru.service.requests.base import BUDGET_MAX
from tests.schema_checked import checked_calls

P = "long-values"
#: 100,000 characters of distinct numbered words: a read call at a wrong offset or revision cannot
#: give the same text back. The probe's body was a megabyte; three times the history page's bound
#: (`HISTORY_PAGE_CHARS`) and twelve times a read's default budget cross every bound these tests are
#: about just as well, at a tenth of the cost of a write, an index and the reads that follow it.
BODY = "".join(f"{i:07d} " for i in range(12_500))
Call = Any
#: A revise's changes show at most what a `read` shows by default (`budget_chars`).
READ_DEFAULT = 8000


@pytest.fixture
def call(service: Service) -> Call:
    return checked_calls(service)  # both output schemas (the contract's own for `revise`)


def _read_calls(message: str) -> list[dict[str, Any]]:
    """The arguments of each `read {…}` a warning names."""
    decoder = json.JSONDecoder()
    return [decoder.raw_decode(part)[0] for part in message.split("the rest: read ")[1:]]


def _rest(call: Call, args: dict[str, Any]) -> str:
    """The body from the call's offset to its end, following each page's continuation."""
    parts = []
    answer = call("read", **args, budget_chars=64000)
    while True:
        assert answer["state"] == "ok", answer["issues"]
        parts.append(answer["data"]["hits"][0]["body"])
        if not answer["continuation"]:
            return "".join(parts)
        answer = call("read", **answer["continuation"]["next_arguments"])


def _text(entry: dict[str, Any]) -> int:
    node = entry.get("node") or {}
    changed = [v for c in entry.get("changes") or [] for v in (c["before"], c["after"]) if isinstance(v, str)]
    return len(node.get("body") or "") + len(node.get("description") or "") + sum(map(len, changed))


def _body_change(entry: dict[str, Any]) -> dict[str, Any]:
    [change] = [c for c in entry["changes"] if c["field"] == "body"]
    return change


def test_a_history_page_of_a_megabyte_body_stays_within_its_bound_and_says_how_to_read_the_rest(call: Call) -> None:
    assert len(BODY) > 3 * trail_pages.HISTORY_PAGE_CHARS
    assert len(BODY) - READ_DEFAULT > BUDGET_MAX, "what is left after a page needs more than one read"
    node = call("note", initiative=P, text=BODY, name="big")["data"]["primary"]["id"]
    call("revise", initiative=P, node=node, patch={"body": "now short"})
    for limit in (100, 1):
        page = call("trail", initiative=P, node=node, limit=limit)
        # Was 2,002,611 bytes for a megabyte body: the page's text within its bound, the envelope around it small.
        assert len(json.dumps(page)) < trail_pages.HISTORY_PAGE_CHARS + 8000
        assert len(compact(page)) < 4000
        [created] = page["data"]["entries"]  # the next entry would pass the bound: it is on the next page
        assert _text(created) <= trail_pages.HISTORY_PAGE_CHARS
        shown = created["node"]["body"]
        assert created["node"]["body_range"] == {"start": 0, "end": len(shown), "total": len(BODY)}
        after = _body_change(created)
        assert after["before"] is None and after["after_range"] == {"start": 0, "end": len(shown), "total": len(BODY)}
        assert BODY.startswith(shown) and after["after"] == shown
        [issue] = page["issues"]
        assert issue["code"] == "budget_truncated" and created["at"] in issue["message"]
        [whole] = _read_calls(issue["message"])  # the node's body and the change's after: one text
        assert whole == {"initiative": P, "node": {"id": node}, "at": created["at"], "body_offset": len(shown)}
        assert shown + _rest(call, whole) == BODY
        assert f"of {len(BODY)} chars here" in compact(page)
        # Ended by its text's bound (`budget`) where `limit` would have let more on; by `limit` at 1.
        reason = "limit" if limit == 1 else "budget"
        assert page["coverage"]["omitted"] == [{"section": "entries", "count": 1, "reason": reason}]

    second = call("trail", **page["continuation"]["next_arguments"])
    [revised] = second["data"]["entries"]
    before = _body_change(revised)
    assert before["after"] == "now short" and "after_range" not in before
    assert before["before_range"]["total"] == len(BODY) and BODY.startswith(before["before"])
    assert _text(revised) <= trail_pages.HISTORY_PAGE_CHARS
    [issue] = second["issues"]
    [old] = _read_calls(issue["message"])
    assert old["at"] == created["at"], "the old body is read as of the revision before"
    assert before["before"] + _rest(call, old) == BODY
    assert second["data"]["subject"]["body"] == "now short" and not second["continuation"]


def test_a_trails_subject_shows_its_body_as_a_read_does(call: Call) -> None:
    node = call("note", initiative=P, text=BODY, name="big")["data"]["primary"]["id"]
    read = call("read", initiative=P, node=node)["data"]["hits"][0]
    for kind in ("history", "neighbours", "provenance"):
        subject = call("trail", initiative=P, node=node, kind=kind)["data"]["subject"]
        assert subject["body_range"] == read["body_range"] and subject["body"] == read["body"]


def test_a_revise_of_a_megabyte_body_answers_within_its_bound_and_names_the_old_body(call: Call) -> None:
    node = call("note", initiative=P, text=BODY, name="big")["data"]["primary"]["id"]
    first = call("read", initiative=P, node=node)["data"]["hits"][0]
    answer = call("revise", initiative=P, node=node, patch={"body": "now short"}, request_id="shorten")
    # Was 1,000,454 bytes for a megabyte body (the old body whole).
    assert len(json.dumps(answer)) < READ_DEFAULT + 4000
    [change] = answer["data"]["changes"]
    assert change["field"] == "body" and change["after"] == "now short" and "after_range" not in change
    assert change["before_range"] == {"start": 0, "end": len(change["before"]), "total": len(BODY)}
    assert BODY.startswith(change["before"]) and len(change["before"]) <= READ_DEFAULT
    [issue] = answer["issues"]
    assert issue["code"] == "budget_truncated"
    [old] = _read_calls(issue["message"])
    assert old["at"] == first["recorded_at"], "as of the revision the patch replaced"
    assert change["before"] + _rest(call, old) == BODY
    assert f"of {len(BODY)} chars here" in compact(answer)
    again = call("revise", initiative=P, node=node, patch={"body": "now short"}, request_id="shorten")
    assert again["replayed"] is True and again["data"] == answer["data"] and again["issues"] == answer["issues"]


def test_a_revise_of_a_long_body_to_another_long_body_cuts_both_alike(call: Call) -> None:
    node = call("note", initiative=P, text=BODY, name="big")["data"]["primary"]["id"]
    edited = BODY[:-5] + " edit"
    answer = call("revise", initiative=P, node=node, patch={"body": edited})
    [change] = answer["data"]["changes"]
    assert len(change["before"]) + len(change["after"]) <= READ_DEFAULT
    assert change["before"] == change["after"], "both sides show as much of their (equal) start"
    now = call("read", initiative=P, node=node)["data"]["hits"][0]
    [cut] = [i for i in answer["issues"] if i["code"] == "budget_truncated"]
    calls = {c["at"]: c for c in _read_calls(cut["message"])}
    assert change["after"] + _rest(call, calls[now["recorded_at"]]) == edited
    [old] = [c for at, c in calls.items() if at != now["recorded_at"]]
    assert change["before"] + _rest(call, old) == BODY


def test_a_short_revise_answers_its_values_whole_with_no_warning(call: Call) -> None:
    node = call("note", initiative=P, text="a short body", name="small")["data"]["primary"]["id"]
    answer = call("revise", initiative=P, node=node, patch={"body": "x" * 3000, "description": "why"})
    assert answer["issues"] == []
    assert [sorted(c) for c in answer["data"]["changes"]] == [["after", "before", "field"]] * 2
    history = call("trail", initiative=P, node=node)
    assert history["issues"] == [] and len(history["data"]["entries"]) == 2
