"""A saved chain read by a token limited to some initiatives names no node outside them (decision
15.K2): its `properties.chain` listed every member and edge end, so `read`, a `search` or `recall`
hit, the subject of a `trail` and the other views of the chain told the token the id of a node in an
initiative it may not see — and so that one exists — while `trail kind=chain` itself left the
member out. Each surface leaves out the members and edges outside the grants, and says nothing of
how many (a count would tell as much). The admin, calling the same way, is shown them all. Both
backends."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kaeru.service import grants
from tests.working.conftest import Call
from tests.working.limited import LIMITED, PUB, SECRET, applied_id, scoped_rule


def _chain(call: Call, summary: str | None = "why the lantern line holds") -> tuple[str, str, str, str]:
    """A chain first → middle → last saved in `pub` while its middle step was shared with `pub`,
    which has left `pub` since (it is in `secret-proj` alone): the chain, first, middle, last.
    Without a `summary` its body is its steps' names."""
    first = applied_id(call("note", initiative=PUB, text="the first lantern of the line"))
    last = applied_id(call("note", initiative=PUB, text="the last lantern of the line"))
    middle = applied_id(call("note", initiative=SECRET, text="the hidden lantern step"))
    assert call("initiative", initiative=PUB, action="attach", node={"id": middle})["state"] == "applied"
    for src, dst in ((first, middle), (middle, last)):
        linked = call(
            "link", initiative=PUB, **{"from": {"id": src}, "to": {"id": dst}}, edge_type="causal", weight=0.9
        )
        assert linked["state"] == "applied", linked
    said = {"summary": summary} if summary is not None else {}
    chain = applied_id(
        call("link", initiative=PUB, action="chain", **said, **{"from": {"id": first}, "to": {"id": last}})
    )
    assert call("initiative", initiative=PUB, action="detach", node={"id": middle})["state"] == "applied"
    return chain, first, middle, last


def _chain_properties(answer: dict[str, Any], chain: str) -> dict[str, Any]:
    """The `properties.chain` of the chain as `answer` shows it (every view of it alike)."""
    found = [view["properties"]["chain"] for view in _views(answer, chain)]
    assert found, f"the chain is not shown: {answer}"
    assert all(f == found[0] for f in found), found
    return found[0]


SURFACES: dict[str, Callable[[str], tuple[str, dict[str, Any]]]] = {
    "read": lambda chain: ("read", {"initiative": PUB, "node": {"id": chain}}),
    "search": lambda chain: ("search", {"initiatives": [PUB], "text": "why the lantern line holds"}),
    "recall": lambda chain: ("recall", {"initiatives": [PUB], "query": "why the lantern line holds"}),
    "trail chain": lambda chain: ("trail", {"initiative": PUB, "node": {"id": chain}, "kind": "chain"}),
    "trail history": lambda chain: ("trail", {"initiative": PUB, "node": {"id": chain}}),
    "current_state": lambda chain: ("current_state", {"initiative": PUB, "node": {"id": chain}}),
    "context": lambda chain: ("context", {"initiative": PUB}),
    "timeline": lambda chain: ("timeline", {"initiatives": [PUB], "anchor": {"id": chain}}),
}


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_a_chain_shown_to_a_limited_token_names_no_member_outside_its_grants(call: Call, surface: str) -> None:
    chain, first, middle, last = _chain(call)
    tool, args = SURFACES[surface](chain)

    admin = call(tool, **args)
    assert admin["state"] == "ok", admin
    shown = _chain_properties(admin, chain)
    assert shown["members"] == [first, middle, last]
    assert [e[:2] for e in shown["edges"]] == [[first, middle], [middle, last]]

    with grants.acting(LIMITED):
        limited = call(tool, **args)
    assert limited["state"] == "ok", limited
    seen = _chain_properties(limited, chain)
    assert seen["members"] == [first, last]
    assert seen["edges"] == []
    assert middle not in json.dumps(limited), "the hidden member is named nowhere in the answer"


def test_a_chain_revision_s_changes_name_no_member_outside_the_grants(call: Call) -> None:
    """A history entry's `changes` compare its revisions as the entry shows them: the `properties`
    change named the member, diffed from the stored revisions; the admin's still does."""
    chain, _, middle, _ = _chain(call)
    admin = call("trail", initiative=PUB, node={"id": chain})
    assert middle in json.dumps(admin["data"]["entries"][0]["changes"]), admin
    with grants.acting(LIMITED):
        history = call("trail", initiative=PUB, node={"id": chain})
    assert history["state"] == "ok", history
    assert middle not in json.dumps(history)


def test_a_chain_recalled_with_its_history_names_no_member_outside_the_grants(call: Call) -> None:
    """`recall task_intent=explore_history` shows each revision as `build_views` shows a node."""
    chain, _, middle, _ = _chain(call)
    args = {"initiatives": [PUB], "query": "why the lantern line holds", "task_intent": "explore_history"}
    with grants.acting(LIMITED):
        recalled = call("recall", **args)
    assert recalled["state"] == "ok", recalled
    assert chain in json.dumps(recalled), "the chain is among the hits"
    assert middle not in json.dumps(recalled)


def test_a_chain_whose_members_are_all_granted_is_shown_whole(call: Call) -> None:
    """Nothing is left out for a limited token when every member is in its grants."""
    first = applied_id(call("note", initiative=PUB, text="the near bank"))
    last = applied_id(call("note", initiative=PUB, text="the far bank"))
    assert (
        call("link", initiative=PUB, **{"from": {"id": first}, "to": {"id": last}}, edge_type="causal", weight=0.9)[
            "state"
        ]
        == "applied"
    )
    chain = applied_id(call("link", initiative=PUB, action="chain", **{"from": {"id": first}, "to": {"id": last}}))
    admin = _chain_properties(call("read", initiative=PUB, node={"id": chain}), chain)
    with grants.acting(LIMITED):
        limited = _chain_properties(call("read", initiative=PUB, node={"id": chain}), chain)
    assert limited == admin and limited["members"] == [first, last] and len(limited["edges"]) == 1


def test_a_limited_token_cannot_export_the_vault(call: Call) -> None:
    """Export does not narrow itself to the grants: it is refused to a limited token whole, so no
    chain reaches it there (decision 15.K4)."""
    _chain(call)
    with grants.acting(LIMITED):
        refused = call("archive", action="export", path="pub.amg", initiatives=[PUB])
    assert refused["state"] == "rejected" and refused["issues"][0]["code"] == "forbidden", refused


def _views(answer: dict[str, Any], node: str) -> list[dict[str, Any]]:
    """Every view of `node` in `answer` (a hit, a trail's subject or entry, a section's item)."""
    found: list[dict[str, Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("id") == node and isinstance(value.get("properties"), dict):
                found.append(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(answer["data"])
    return found


#: The surfaces again, searched and recalled by the words of a chain saved without a summary (its
#: body is its steps' names), and recalled with its history.
UNNAMED: dict[str, Callable[[str], tuple[str, dict[str, Any]]]] = {
    **{k: v for k, v in SURFACES.items() if k not in ("search", "recall")},
    "search": lambda chain: ("search", {"initiatives": [PUB], "text": "lantern"}),
    "recall": lambda chain: ("recall", {"initiatives": [PUB], "query": "lantern line"}),
    "recall history": lambda chain: (
        "recall",
        {"initiatives": [PUB], "query": "lantern line", "task_intent": "explore_history"},
    ),
}


@pytest.mark.parametrize("surface", sorted(UNNAMED))
def test_a_chain_saved_without_a_summary_names_no_step_outside_the_grants(call: Call, surface: str) -> None:
    """Saved without a summary, a chain's body names its steps (`first → middle → last`): a token
    limited to some initiatives reads `…` for a step outside them — not its name, which also ends
    in the end of its id — and no topic drawn from that name; the admin reads the stored body."""
    chain, first, middle, last = _chain(call, summary=None)
    names = {
        i: call("read", initiative=SECRET, node={"id": i})["data"]["hits"][0]["name"] for i in (first, middle, last)
    }
    tool, args = UNNAMED[surface](chain)

    admin = call(tool, **args)
    assert admin["state"] == "ok", admin
    shown = _views(admin, chain) if surface != "context" else []
    assert all(v["body"] == f"{names[first]} → {names[middle]} → {names[last]}" for v in shown), shown

    with grants.acting(LIMITED):
        limited = call(tool, **args)
    assert limited["state"] == "ok", limited
    text = json.dumps(limited, ensure_ascii=False)
    assert names[middle] not in text and "topic:hidden" not in text
    assert middle not in text and middle.replace("-", "")[-6:] not in text
    seen = _views(limited, chain)
    assert seen or surface == "context", f"the chain is not shown: {limited}"
    for view in seen:
        assert view["body"] == f"{names[first]} → … → {names[last]}", view
        assert "topic:lantern" in view["tags"], view["tags"]


def test_a_limited_token_searching_a_hidden_step_s_name_reads_none_of_it(call: Call) -> None:
    """A search by the words of the hidden step's name may find the chain — its stored text holds
    them, and was written in `pub` while the step was in `pub` — but the hit names nothing of it."""
    chain, _, middle, _ = _chain(call, summary=None)
    name = call("read", initiative=SECRET, node={"id": middle})["data"]["hits"][0]["name"]
    with grants.acting(LIMITED):
        for tool, args in (
            ("search", {"initiatives": [PUB], "text": "hidden lantern step"}),
            ("recall", {"initiatives": [PUB], "query": "the hidden lantern step"}),
        ):
            found = call(tool, **args)
            assert found["state"] == "ok", found
            text = json.dumps(found["data"]["hits"], ensure_ascii=False)
            assert name not in text and middle not in text and "topic:hidden" not in text, text
            assert all(" → … → " in hit["body"] for hit in found["data"]["hits"] if hit["id"] == chain)


def test_a_chain_with_a_summary_keeps_it_whole(call: Call) -> None:
    """A summary is the agent's own text: it is shown as written, to the limited token too."""
    chain, *_ = _chain(call)
    with grants.acting(LIMITED):
        read = call("read", initiative=PUB, node={"id": chain})
    assert read["data"]["hits"][0]["body"] == "why the lantern line holds"


def test_a_chain_saved_again_by_a_limited_token_names_no_step_outside_its_grants(call: Call) -> None:
    """Saving the chain again along a stronger path moves it: the answer's changes name the steps it
    had and its old body as the token may see them."""
    chain, first, middle, last = _chain(call, summary=None)
    linked = call(
        "link", initiative=PUB, **{"from": {"id": first}, "to": {"id": last}}, edge_type="causal", weight=0.95
    )
    assert linked["state"] == "applied", linked
    with grants.acting(LIMITED):
        moved = call("link", initiative=PUB, action="chain", **{"from": {"id": first}, "to": {"id": last}})
    assert moved["state"] == "applied" and applied_id(moved) == chain, moved
    changes = {c["field"]: c for c in moved["data"]["changes"]}
    assert changes["chain.members"]["before"] == [first, last]
    assert " → … → " in changes["body"]["before"]
    assert middle not in json.dumps(moved) and "hidden" not in json.dumps(moved), moved


RULE_SURFACES: dict[str, Callable[[str], tuple[str, dict[str, Any]]]] = {
    "read": lambda rule: ("read", {"initiative": PUB, "node": {"id": rule}}),
    "search": lambda rule: ("search", {"initiatives": [PUB], "text": "announce"}),
    "recall": lambda rule: ("recall", {"initiatives": [PUB], "query": "announce key rotation"}),
    "recall history": lambda rule: (
        "recall",
        {"initiatives": [PUB], "query": "announce key rotation", "task_intent": "explore_history"},
    ),
    "trail history": lambda rule: ("trail", {"initiative": PUB, "node": {"id": rule}}),
    "current_state": lambda rule: ("current_state", {"initiative": PUB, "node": {"id": rule}}),
    "timeline": lambda rule: ("timeline", {"initiatives": [PUB], "anchor": {"id": rule}}),
    "context": lambda rule: ("context", {"initiative": PUB}),
}


@pytest.mark.parametrize("surface", sorted(RULE_SURFACES))
def test_a_rule_scoped_to_a_task_outside_the_grants_does_not_name_it(call: Call, surface: str) -> None:
    """A rule in `pub` scoped to a task of `secret-proj`: a limited token reads that the rule is
    scoped to a task (`applicability.task` is there, null) — a fact about the rule, as a node
    superseded from outside its grants still reads superseded — but not the task's id."""
    rule, task = scoped_rule(call, "2026-12-31")
    tool, args = RULE_SURFACES[surface](rule)
    admin = call(tool, **args)
    assert admin["state"] == "ok", admin
    assert all(v["properties"]["applicability"] == {"task": task, "through": "2026-12-31"} for v in _views(admin, rule))
    with grants.acting(LIMITED):
        limited = call(tool, **args)
    assert limited["state"] == "ok", limited
    assert task not in json.dumps(limited), "the task is named nowhere in the answer"
    seen = _views(limited, rule)
    assert seen or surface == "context", f"the rule is not shown: {limited}"
    assert all(v["properties"]["applicability"] == {"task": None, "through": "2026-12-31"} for v in seen), seen


def test_a_long_chain_body_pages_without_a_hidden_step(call: Call) -> None:
    """A body of long steps' names is paged by `read` (`budget_chars`, `body_offset`): a limited
    token's pages, read one after another, make the body it reads — no page names the step."""
    long = {k: f"{k} " + "lantern " * 20 + k for k in ("alpha-end", "beta-hidden", "gamma-end")}
    first = applied_id(call("note", initiative=PUB, name=long["alpha-end"], text="the first of a long line"))
    last = applied_id(call("note", initiative=PUB, name=long["gamma-end"], text="the last of a long line"))
    middle = applied_id(
        call("note", initiative=SECRET, name=long["beta-hidden"], text="the hidden step of a long line")
    )
    assert call("initiative", initiative=PUB, action="attach", node={"id": middle})["state"] == "applied"
    for src, dst in ((first, middle), (middle, last)):
        link = {"from": {"id": src}, "to": {"id": dst}}
        assert call("link", initiative=PUB, **link, edge_type="causal", weight=0.9)["state"] == "applied"
    chain = applied_id(call("link", initiative=PUB, action="chain", **{"from": {"id": first}, "to": {"id": last}}))
    assert call("initiative", initiative=PUB, action="detach", node={"id": middle})["state"] == "applied"
    admin = call("read", initiative=PUB, node={"id": chain}, budget_chars=512)
    assert admin.get("continuation"), "the stored body takes more than one page"

    pages: list[str] = []
    args: dict[str, Any] = {"initiative": PUB, "node": {"id": chain}, "budget_chars": 512}
    with grants.acting(LIMITED):
        while True:
            page = call("read", **args)
            assert page["state"] == "ok", page
            pages.append(page["data"]["hits"][0]["body"])
            assert "beta-hidden" not in json.dumps(page), page
            if not page.get("continuation"):
                break
            args = page["continuation"]["next_arguments"]
    assert "".join(pages) == f"{long['alpha-end']} → … → {long['gamma-end']}"


def test_a_step_renamed_since_the_chain_was_saved_is_still_left_out(call: Call) -> None:
    """The body keeps the names the steps had when it was saved: a hidden step renamed since is
    still read as `…`, its old name nowhere."""
    chain, _, middle, _ = _chain(call, summary=None)
    old = call("read", initiative=SECRET, node={"id": middle})["data"]["hits"][0]["name"]
    renamed = call("revise", initiative=SECRET, node={"id": middle}, patch={"name": "a lantern renamed"})
    assert renamed["state"] == "applied", renamed
    with grants.acting(LIMITED):
        read = call("read", initiative=PUB, node={"id": chain})
    body = read["data"]["hits"][0]["body"]
    assert body.split(" → ")[1] == "…" and old not in json.dumps(read), read
    assert call("read", initiative=PUB, node={"id": chain})["data"]["hits"][0]["body"].split(" → ")[1] == old
