"""A trail is paged (decision 87): a node linked from many notes has one entry per link, and an
unpaged answer grew without bound (10,000 links: a 3.5 MB envelope). Every entry is served exactly
once across the pages, in the unpaged order; neighbours survive links made and removed between
pages; a cursor answers only the call it was made for."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kaeru.service import cursors, trail_pages
from kaeru.storage.base import Store
from tests.working.conftest import Call


def _pages(call: Call, **args: Any) -> list[dict[str, Any]]:
    pages = [call("trail", **args)]
    while pages[-1].get("continuation"):
        assert pages[-1]["state"] == "ok", pages[-1]["issues"]
        pages.append(call("trail", **pages[-1]["continuation"]["next_arguments"]))
    return pages


def _key(entry: dict[str, Any]) -> tuple[Any, ...]:
    edge = entry.get("edge") or {}
    node = entry.get("node") or {}
    return entry["kind"], entry.get("action"), edge.get("from"), edge.get("recorded_at"), node.get("revision")


def test_a_long_history_comes_in_pages_each_entry_once_in_order(call: Call) -> None:
    hub = call("note", initiative="t", text="the design decision everything refers to", name="hub")
    for i in range(45):
        call("note", initiative="t", text=f"detail {i}", link_to=hub["data"]["primary"]["id"])
    whole = call("trail", initiative="t", node="hub", limit=500)
    assert whole["data"]["total"] == 46 and not whole.get("continuation")
    pages = _pages(call, initiative="t", node="hub", limit=20)
    assert [len(p["data"]["entries"]) for p in pages] == [20, 20, 6]
    assert [p["data"]["total"] for p in pages] == [46, 46, 46]
    first = pages[0]
    assert first["coverage"]["complete"] is False
    assert first["coverage"]["omitted"] == [{"section": "entries", "count": 26, "reason": "limit"}]
    assert pages[-1]["coverage"]["omitted"] == [] and pages[-1]["coverage"]["complete"] is True
    served = [_key(e) for p in pages for e in p["data"]["entries"]]
    assert served == [_key(e) for e in whole["data"]["entries"]] and len(set(served)) == 46


def _text(entry: dict[str, Any]) -> int:
    node = entry.get("node") or {}
    changed = [v for c in entry.get("changes") or [] for v in (c["before"], c["after"]) if isinstance(v, str)]
    return len(node.get("body") or "") + len(node.get("description") or "") + sum(map(len, changed))


def test_the_history_of_a_long_document_comes_in_pages_of_bounded_text(call: Call) -> None:
    """A 4,000-character runbook revised 30 times: a page of 100 entries would hold ~360,000
    characters (each revision's body, and its change's before and after). Pages end before the entry that takes their text past `HISTORY_PAGE_CHARS` (the first
    always kept), and together they serve every revision once, in order (decision 159)."""
    body = ("Drain the queue, migrate, then smoke-test the release before the switch. " * 60)[:4000]
    made = call("note", initiative="t", text=body, name="runbook")
    for i in range(30):
        call("revise", initiative="t", node=made["data"]["primary"]["id"], patch={"body": f"{body} Revision {i}."})
    pages = _pages(call, initiative="t", node="runbook")
    assert len(pages) > 1 and all(p["data"]["total"] == 31 for p in pages)
    for page in pages:
        entries = page["data"]["entries"]
        assert entries and sum(map(_text, entries)) - _text(entries[-1]) <= trail_pages.HISTORY_PAGE_CHARS
        assert len(entries) == 1 or sum(map(_text, entries)) <= trail_pages.HISTORY_PAGE_CHARS
    assert pages[0]["coverage"]["omitted"] == [
        {"section": "entries", "count": 31 - len(pages[0]["data"]["entries"]), "reason": "budget"}
    ]
    served = [e["node"]["revision"] for p in pages for e in p["data"]["entries"]]
    assert len(served) == len(set(served)) == 31
    assert [int(r.split("-")[0]) for r in served] == list(range(1, 32))


def test_neighbours_page_in_key_order_and_survive_changes_between_pages(call: Call) -> None:
    hub = call("note", initiative="t", text="the hub", name="hub")["data"]["primary"]["id"]
    for i in range(12):
        call("note", initiative="t", text=f"spoke {i}", link_to=hub)

    def keys(answer: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [(e["edge"]["from"], e["edge"]["to"], e["edge"]["edge_type"]) for e in answer["data"]["entries"]]

    whole = keys(call("trail", initiative="t", node="hub", kind="neighbours", limit=500))
    assert whole == sorted(whole), "the links in their keys' order, as the unpaged list always was"
    first = call("trail", initiative="t", node="hub", kind="neighbours", limit=5)
    assert keys(first) == whole[:5]
    # Between pages: a link on the next page is removed, and a new one is made.
    gone = whole[6]
    call("link", initiative="t", action="remove", **{"from": gone[0], "to": gone[1]}, edge_type=gone[2])
    call("note", initiative="t", text="a late spoke", link_to=hub)
    now = keys(call("trail", initiative="t", node="hub", kind="neighbours", limit=500))
    rest = _pages(call, **first["continuation"]["next_arguments"])
    later = [k for page in rest for k in keys(page)]
    assert later == [k for k in now if k > whole[4]], "nothing skipped, nothing twice"
    assert gone not in later and set(whole[5:]) - {gone} <= set(later)


def test_a_cursor_answers_only_its_own_call(call: Call) -> None:
    hub = call("note", initiative="t", text="the hub", name="hub")["data"]["primary"]["id"]
    for i in range(4):
        call("note", initiative="t", text=f"spoke {i}", link_to=hub)
    page = call("trail", initiative="t", node="hub", limit=2)
    cursor = page["continuation"]["cursor"]
    other = call("trail", initiative="t", node="hub", kind="neighbours", limit=2, cursor=cursor)
    assert other["state"] == "rejected" and other["issues"][0]["code"] == "cursor_invalid"
    assert other["issues"][0]["field"] == "cursor"


def test_a_read_with_neighbours_shows_the_newest_links_and_counts_the_rest(call: Call) -> None:
    from kaeru.service.read import READ_EDGES

    hub = call("note", initiative="t", text="the hub", name="hub")["data"]["primary"]["id"]
    spokes = [
        call("note", initiative="t", text=f"spoke {i}", link_to=hub)["data"]["primary"]["id"]
        for i in range(READ_EDGES + 5)
    ]
    answer = call("read", initiative="t", node="hub", neighbours=True)
    assert [e["from"] for e in answer["data"]["edges"]] == spokes[::-1][:READ_EDGES]
    assert answer["coverage"]["omitted"] == [{"section": "edges", "count": 5, "reason": "limit"}]
    assert answer["coverage"]["complete"] is False


def test_current_state_of_a_hub_reads_its_verdicts_among_many_links(call: Call) -> None:
    """What replaced a node is decided by its `supersedes` and `falsifies` edges; a node linked from
    many notes is answered from those alone, the same answer."""
    old = call("note", initiative="t", text="we deploy on Fridays", name="old")["data"]["primary"]["id"]
    for i in range(30):
        call("note", initiative="t", text=f"a note about deploys {i}", link_to=old)
    new = call("note", initiative="t", text="we deploy on Tuesdays", link_to=old, edge_type="supersedes")
    state = call("current_state", initiative="t", node="old")["data"]
    assert state["status"] == "current" and state["current"]["id"] == new["data"]["primary"]["id"]
    assert [(e["from"], e["to"], e["edge_type"]) for e in state["edges"]] == [
        (new["data"]["primary"]["id"], old, "supersedes")
    ]


def test_a_history_cursor_made_before_places_were_kept_still_pages_by_its_count(call: Call, store: Store) -> None:
    """A cursor from a server before decision 105 carries only the entries served (no place): it
    still answers the next page, the same one the cursor of today does."""
    hub = call("note", initiative="t", text="the hub", name="hub")["data"]["primary"]["id"]
    for i in range(7):
        call("note", initiative="t", text=f"spoke {i}", link_to=hub)
    first = call("trail", initiative="t", node="hub", limit=3)
    args = first["continuation"]["next_arguments"]
    with store.read() as session:
        secret = session.vault_secret()
    state = cursors.decode(secret, args["cursor"], "trail", cursors.args_key(args))
    assert state.position is not None and state.offset == 3
    old = cursors.encode(secret, replace(state, position=None))
    now, then = call("trail", **args), call("trail", **{**args, "cursor": old})
    assert then["state"] == "ok" and then["data"] == now["data"] and len(now["data"]["entries"]) == 3
