"""`trail kind=history newest=true`: a node's latest changes in one call, read from the history's
end. The viewer's "latest changes" walked the history's pages from the first, at most 200 of them:
a hub's 13,001-entry history stopped at entries 12001–12060 and offered "latest changes" again.
The newest page must be the very page the walk from the first ends on (the same entries, each with
the same action and actor), for the admin and for a token limited to some initiatives; a page the
text bound ends early goes on with its cursor. On both backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service, grants

Run = Callable[[str, dict[str, Any]], dict[str, Any]]
LIMITED = grants.Principal("lim", frozenset({"log"}))
LIMIT = 7


@pytest.fixture
def history(service: Service) -> tuple[Run, str]:
    """A note with revisions and link events (added, reweighted, removed, added again), some from a
    note outside `log`; (run, its id)."""
    run: Run = build_server(service).registry.run

    def ok(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        answer = run(tool, args)
        assert answer["state"] == "applied", answer["issues"]
        return answer

    node = ok("note", {"initiative": "log", "name": "Release log", "text": "Release 0."})["data"]["primary"]["id"]
    for n in range(1, 9):
        ok("revise", {"initiative": "log", "node": {"id": node}, "patch": {"body": f"Release {n}."}})
        other = "elsewhere" if n % 3 == 0 else "log"
        ok("note", {"initiative": other, "text": f"cites release {n}", "link_to": {"id": node}})
    link = {"initiative": "log", "from": {"id": node}, "edge_type": "refers_to"}
    target = ok("note", {"initiative": "log", "text": "the target"})["data"]["primary"]["id"]
    ok("link", {**link, "to": {"id": target}, "weight": 0.4})
    ok("link", {**link, "action": "reweight", "to": {"id": target}, "weight": 0.9})
    ok("link", {**link, "action": "remove", "to": {"id": target}})
    ok("link", {**link, "to": {"id": target}, "weight": 0.5})
    ok("revise", {"initiative": "log", "node": {"id": node}, "patch": {"body": "Release 9."}})
    return run, node


def _walked(run: Run, asked: dict[str, Any]) -> list[dict[str, Any]]:
    pages = [run("trail", asked)]
    while pages[-1].get("continuation"):
        pages.append(run("trail", pages[-1]["continuation"]["next_arguments"]))
    return pages


def _said(page: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (e["kind"], e["at"], e.get("action"), e.get("actor"), e.get("direction"), (e.get("edge") or {}).get("weight"))
        for e in page["data"]["entries"]
    ]


@pytest.mark.parametrize("principal", [None, LIMITED], ids=["admin", "limited"])
def test_the_newest_page_is_the_page_the_walk_ends_on(history: tuple[Run, str], principal: Any) -> None:
    run, node = history
    asked = {"initiative": "log", "node": {"id": node}, "kind": "history", "limit": LIMIT}
    with grants.acting(principal) if principal is not None else _nothing():
        pages = _walked(run, asked)
        newest = run("trail", {**asked, "newest": True})
    assert newest["state"] == "ok", newest["issues"]
    assert len(pages) > 2
    assert _said(newest) == _said(pages[-1]), "the same entries, actions and actors as the walk's last page"
    assert newest["data"]["total"] == pages[0]["data"]["total"]
    assert newest.get("continuation") is None
    last = newest["data"]["entries"][-1]
    assert last["kind"] == "revision" and last["action"] == "revised"
    assert [c["after"] for c in last["changes"] if c["field"] == "body"] == ["Release 9."]


def test_a_newest_page_the_text_bound_holds_ends_with_the_latest_change(service: Service) -> None:
    run: Run = build_server(service).registry.run
    long = "word " * 4000  # a revision's texts pass a page's bound on their own
    node = run("note", {"initiative": "log", "name": "Long", "text": long})["data"]["primary"]["id"]
    for n in range(5):
        run("revise", {"initiative": "log", "node": {"id": node}, "patch": {"body": f"{long} {n}"}})
    asked = {"initiative": "log", "node": {"id": node}, "kind": "history", "limit": 4}
    walked = _walked(run, asked)
    newest = run("trail", {**asked, "newest": True})
    assert newest["state"] == "ok", newest["issues"]
    assert _said(newest) == _said(walked[-1]) and len(walked) == 6, "one revision a page: the sixth"
    assert newest["data"]["total"] == 6 and newest.get("continuation") is None


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
