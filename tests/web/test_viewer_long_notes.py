"""A note longer than a node page holds (decision 468), in process (the viewer as `kaeru serve --http`
mounts it, asked over ASGI — no server started), both backends: the page says which characters it
shows of how many and links to the next part, following the links gives the whole body exactly once,
now and on the page "as of" an earlier moment; and the history's own warning that it cut a long
entry is shown. The page showed the first 64,000 characters as if they were the whole note."""

from __future__ import annotations

import re
from html import unescape

from starlette.testclient import TestClient

from tests.working.conftest import Call

#: Body characters a page shows: the most one `read` returns.
BODY_PART = 64000
#: A body of more than two parts, each line numbered so that a part lost or shown twice is seen.
FIRST = "".join(f"Line {n}: the quick brown fox jumps over the lazy dog\n" for n in range(3000)) + "FIRST-END"
REVISED = FIRST.replace("FIRST-END", "REVISED-END")


def _parts(client: TestClient, first_url: str) -> tuple[str, list[str]]:
    """The body as the person reads it, part after part by the "next part" links, and what each part
    said it holds."""
    shown, said, following = "", [], first_url
    for _ in range(10):
        page = client.get(following)
        assert page.status_code == 200, page.text
        body = re.search(r'<pre id="body">(.*?)</pre>', page.text, re.S)
        assert body is not None, page.text
        shown += unescape(body.group(1))
        part = re.search(r'<span id="body-shown">([^<]*)</span>', page.text)
        assert part is not None, "a long body says which part the page shows"
        said.append(unescape(part.group(1)))
        onward = re.search(r'<a id="body-next" href="([^"]+)">next part</a>', page.text)
        if onward is None:
            return shown, said
        following = unescape(onward.group(1))
    raise AssertionError("the parts never end")


def test_a_long_note_says_which_part_it_shows_and_its_parts_give_all_of_it(client: TestClient, call: Call) -> None:
    made = call("note", initiative="docs", name="Long log", text=FIRST)["data"]["primary"]
    call("revise", initiative="docs", node={"id": made["id"]}, patch={"body": REVISED})
    total = f"{len(REVISED):,}"
    assert len(REVISED) > 2 * BODY_PART

    shown, said = _parts(client, f"/ui/node?i=docs&id={made['id']}")
    assert shown == REVISED, "every character once, in order, to the end"
    assert said[0] == f"characters 1–{BODY_PART:,} of {total}"
    assert len(said) == 3 and said[-1].endswith(f"–{total} of {total}")

    later = client.get(f"/ui/node?i=docs&id={made['id']}&offset={BODY_PART}")
    assert '<a id="body-first"' in later.text, "a later part links back to the first"
    short = call("note", initiative="docs", name="Short", text="one line only")["data"]["primary"]
    whole = client.get(f"/ui/node?i=docs&id={short['id']}").text
    assert 'id="body-part"' not in whole and "one line only" in whole, "a body shown whole says nothing of parts"

    # The page "as of" before the revision: the first body, whole, by the same links (which keep `at`).
    history = call("trail", initiative="docs", node={"id": made["id"]}, kind="history")["data"]["entries"]
    created = min(e["at"] for e in history if e["kind"] == "revision")
    shown, said = _parts(client, f"/ui/node?i=docs&id={made['id']}&at={created}")
    assert shown == FIRST
    assert said[0] == f"characters 1–{BODY_PART:,} of {len(FIRST):,}"


def test_the_historys_warning_that_it_cut_a_long_entry_is_shown(client: TestClient, call: Call) -> None:
    made = call("note", initiative="docs", name="Long log", text=FIRST)["data"]["primary"]
    call("revise", initiative="docs", node={"id": made["id"]}, patch={"body": REVISED})
    trail = call("trail", initiative="docs", node={"id": made["id"]}, kind="history")
    [warned] = [i for i in trail["issues"] if i["code"] == "budget_truncated"]
    page = client.get(f"/ui/node?i=docs&id={made['id']}")
    history = page.text.split("<h2>History</h2>", 1)[1]
    shown = re.findall(r'<p class="warning" data-code="budget_truncated">([^<]*)</p>', history)
    assert [unescape(s) for s in shown] == [warned["message"]]
