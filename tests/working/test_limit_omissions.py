"""A page or section cut by a limit names what it left out: `{section, count, reason: "limit"}` in
`coverage.omitted`, with the exact count — in every read tool that can cut by a limit (`timeline`
has its own tests in test_timeline_paging)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kaeru.mcp.server import build_server
from kaeru.service import Service, history
from tests.working.conftest import Call, Clock


def _limit(envelope: dict[str, Any]) -> list[tuple[str, int]]:
    return [(o["section"], o["count"]) for o in envelope["coverage"]["omitted"] if o["reason"] == "limit"]


def _checked(service: Service, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    registry = build_server(service).registry
    envelope = registry.run(tool, args)
    assert envelope["state"] == "ok", envelope["issues"]
    problems = list(Draft202012Validator(registry.specs[tool].output_schema).iter_errors(envelope))
    assert not problems, problems[0].message
    return envelope


def test_search_counts_the_hits_past_the_page(call: Call, timed: Service) -> None:
    for i in range(12):
        call("note", initiative="s", text=f"the flaky integration test number {i}")
    first = _checked(timed, "search", {"initiatives": ["s"], "text": "flaky", "limit": 5})
    assert first["data"]["total"] == 12 and len(first["data"]["hits"]) == 5
    assert _limit(first) == [("hits", 7)]
    assert first["coverage"]["complete"] is False
    second = _checked(timed, "search", first["continuation"]["next_arguments"])
    assert _limit(second) == [("hits", 2)]
    last = _checked(timed, "search", second["continuation"]["next_arguments"])
    assert len(last["data"]["hits"]) == 2
    assert _limit(last) == [] and last["continuation"] is None


def test_recall_counts_the_hits_past_the_page(call: Call, timed: Service) -> None:
    for i in range(12):
        call("note", initiative="r", text=f"the webhook retry policy variant {i}")
    first = _checked(timed, "recall", {"initiatives": ["r"], "query": "webhook retry policy", "limit": 4})
    total = first["data"]["total"]
    assert total >= 12
    assert _limit(first) == [("hits", total - 4)]
    seen = [h["id"] for h in first["data"]["hits"]]
    page = first
    while page["continuation"] is not None:
        page = _checked(timed, "recall", page["continuation"]["next_arguments"])
        seen += [h["id"] for h in page["data"]["hits"]]
        assert _limit(page) == ([("hits", total - len(seen))] if len(seen) < total else [])
    assert len(seen) == total == len(set(seen))


def test_context_counts_what_its_section_caps_leave_out(call: Call) -> None:
    made = [call("note", initiative="c", text=f"work log entry {i}")["data"]["primary"]["id"] for i in range(32)]
    envelope = call("context", initiative="c", budget_chars=64000)
    shown = {item["id"] for s in envelope["data"]["sections"] for item in s["items"]}
    left_out = set(made) - shown
    assert left_out, "32 warm notes do not fit warm (15) and recent (10)"
    # Every note is operational and warm: the ones left out are left out of both sections.
    assert sorted(_limit(envelope)) == [("recent", len(left_out)), ("warm", len(left_out))]
    assert envelope["coverage"]["complete"] is False


def test_context_a_node_a_cap_leaves_out_but_a_later_section_shows_is_not_counted(call: Call) -> None:
    made = [call("note", initiative="d", text=f"entry {i}")["data"]["primary"]["id"] for i in range(20)]
    envelope = call("context", initiative="d", budget_chars=64000)
    shown = {item["id"] for s in envelope["data"]["sections"] for item in s["items"]}
    assert shown == set(made), "warm shows 15, recent the other 5"
    assert _limit(envelope) == []
    assert envelope["coverage"]["omitted"] == []


def test_reflect_counts_every_item_past_its_limit(call: Call, timed: Service) -> None:
    for i in range(31):
        call("note", initiative="f", text=f"an orphaned thought {i}")
    envelope = _checked(timed, "reflect", {"initiative": "f"})
    assert envelope["data"]["counts"]["orphan"] == 31
    assert len([i for i in envelope["data"]["items"] if i["kind"] == "orphan"]) == 25
    assert ("orphan", 6) in _limit(envelope)
    assert envelope["coverage"]["complete"] is False


def _chain(call: Call, initiative: str, length: int, edge_type: str) -> list[str]:
    """`length` notes, each linked to the next by `edge_type` (newest first for supersedes)."""
    made = [call("note", initiative=initiative, text=f"link {i}")["data"]["primary"]["id"] for i in range(length)]
    for src, dst in pairwise(made):
        linked = call(
            "link", initiative=initiative, **{"from": {"id": src}, "to": {"id": dst}}, edge_type=edge_type, weight=1.0
        )
        assert linked["state"] == "applied", linked["issues"]
    return made


def test_trail_provenance_counts_the_ancestors_past_its_depth(call: Call, timed: Service) -> None:
    made = _chain(call, "p", 36, "derived_from")
    envelope = _checked(timed, "trail", {"initiative": "p", "node": {"id": made[0]}, "kind": "provenance"})
    assert [e["node"]["id"] for e in envelope["data"]["entries"]] == made[1:33]
    assert _limit(envelope) == [("entries", 3)]
    assert envelope["coverage"]["complete"] is False


def test_current_state_counts_the_predecessors_past_its_cap(call: Call, timed: Service) -> None:
    made = _chain(call, "q", history.MAX_PREDECESSORS + 4, "supersedes")
    envelope = _checked(timed, "current_state", {"initiative": "q", "node": {"id": made[0]}})
    assert envelope["data"]["status"] == "current"
    assert [p["id"] for p in envelope["data"]["predecessors"]] == made[1 : history.MAX_PREDECESSORS + 1]
    assert _limit(envelope) == [("predecessors", 3)]
    assert envelope["coverage"]["complete"] is False


def test_current_state_from_the_oldest_of_a_long_chain_shows_the_links_of_what_it_shows(
    call: Call, timed: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked from the oldest node, the walk crosses every link to the head; the answer keeps the
    links that touch a node it shows and counts the others (decision 151)."""
    monkeypatch.setattr(history, "MAX_PREDECESSORS", 5)
    made = _chain(call, "o", 40, "supersedes")  # made[0] is the head, made[39] the oldest
    envelope = _checked(timed, "current_state", {"initiative": "o", "node": {"id": made[-1]}})
    data = envelope["data"]
    assert data["subject"]["id"] == made[-1] and data["current"]["id"] == made[0]
    assert [p["id"] for p in data["predecessors"]] == made[1:6]
    # Shown: the oldest, the head and made[1..5]; the links touching them: made[i] -> made[i + 1] for
    # i in 0..5, and made[38] -> made[39]. The other 32 of the 39 are counted.
    links = sorted((e["from"], e["to"]) for e in data["edges"])
    assert links == sorted([*((made[i], made[i + 1]) for i in range(6)), (made[38], made[39])])
    assert ("edges", 32) in _limit(envelope) and envelope["coverage"]["complete"] is False


def _window(envelope: dict[str, Any]) -> list[tuple[str, int]]:
    return [(o["section"], o["count"]) for o in envelope["coverage"]["omitted"] if o["reason"] == "window"]


# The walks' caps are lowered so a short chain reaches them (the caps are only sizes; the code
# that stops at them and reports it is the real one).


def test_trail_provenance_stopped_at_its_walk_cap_says_more_lie_beyond(
    call: Call, timed: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history, "PROVENANCE_COUNT", 40)
    made = _chain(call, "p", 50, "derived_from")
    envelope = _checked(timed, "trail", {"initiative": "p", "node": {"id": made[0]}, "kind": "provenance"})
    assert [e["node"]["id"] for e in envelope["data"]["entries"]] == made[1:33]
    assert _limit(envelope) == [("entries", 40 - 32)], "what the walk counted past the shown depth"
    assert _window(envelope) == [("entries", 1)], "and that at least one more lies past the walk's cap"
    assert envelope["coverage"]["complete"] is False
    exact = _checked(timed, "trail", {"initiative": "p", "node": {"id": made[9]}, "kind": "provenance"})
    assert _limit(exact) == [("entries", 40 - 32)] and _window(exact) == [], "exactly at the cap: nothing beyond"


def test_trail_provenance_walks_a_wide_graph_level_by_level(call: Call, timed: Service) -> None:
    """Every ancestor of a wide graph is listed once, by depth, nearest first."""
    leaves = [call("note", initiative="w", text=f"source {i}")["data"]["primary"]["id"] for i in range(6)]
    middle = [
        call("evolve", initiative="w", mode="synthesise", sources=[{"id": i} for i in pair], new_body=f"summary {n}")[
            "data"
        ]["primary"]["id"]
        for n, pair in enumerate([leaves[:3], leaves[2:]])
    ]
    top = call("evolve", initiative="w", mode="synthesise", sources=[{"id": i} for i in middle], new_body="overall")
    envelope = _checked(
        timed, "trail", {"initiative": "w", "node": {"id": top["data"]["primary"]["id"]}, "kind": "provenance"}
    )
    entries = [(e["depth"], e["node"]["id"]) for e in envelope["data"]["entries"]]
    assert sorted(entries[:2]) == sorted((1, m) for m in middle)
    assert sorted(i for d, i in entries[2:]) == sorted(leaves) and {d for d, _ in entries[2:]} == {2}
    assert envelope["coverage"]["omitted"] == [] and envelope["coverage"]["complete"] is True


def test_current_state_stopped_at_its_walk_cap_says_more_lie_beyond(
    call: Call, timed: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history, "MAX_PREDECESSORS", 10)
    monkeypatch.setattr(history, "PREDECESSOR_COUNT", 20)
    made = _chain(call, "q", 30, "supersedes")
    envelope = _checked(timed, "current_state", {"initiative": "q", "node": {"id": made[0]}})
    assert envelope["data"]["status"] == "current"
    assert [p["id"] for p in envelope["data"]["predecessors"]] == made[1:11]
    assert _limit(envelope) == [("predecessors", 10)]
    assert _window(envelope) == [("predecessors", 1)]
    assert envelope["coverage"]["complete"] is False
    at_cap = _chain(call, "q2", 21, "supersedes")  # exactly PREDECESSOR_COUNT predecessors
    exact = _checked(timed, "current_state", {"initiative": "q2", "node": {"id": at_cap[0]}})
    assert _limit(exact) == [("predecessors", 10)] and _window(exact) == []


def test_a_slot_retaken_every_session_shows_its_newest_past_holders_and_counts_the_rest(
    call: Call, timed: Service, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `handoff` slot is taken by a new note at every session's end: asked who holds it, the answer
    must not grow with the project's age (3,000 handoffs made a 2 MB answer before decision 150)."""
    monkeypatch.setattr(history, "MAX_PREDECESSORS", 3)
    made = []
    for i in range(7):  # one a minute, from 09:00
        note = call("note", initiative="h", text=f"handoff {i}: carry on with step {i}", options={"slot": "handoff"})
        made.append(note["data"]["primary"]["id"])
        clock.advance(minutes=1)
    envelope = _checked(timed, "current_state", {"initiative": "h", "slot": "handoff"})
    assert envelope["data"]["status"] == "current" and envelope["data"]["current"]["id"] == made[-1]
    assert [p["id"] for p in envelope["data"]["predecessors"]] == made[-2:-5:-1]
    assert _limit(envelope) == [("predecessors", 3)]
    assert envelope["coverage"]["complete"] is False
    earlier = _checked(timed, "current_state", {"initiative": "h", "slot": "handoff", "as_of": "2026-03-02T09:05:30Z"})
    assert earlier["data"]["current"]["id"] == made[-2]
    assert [p["id"] for p in earlier["data"]["predecessors"]] == made[-3:-6:-1]
    monkeypatch.setattr(history, "MAX_PREDECESSORS", 6)
    whole = _checked(timed, "current_state", {"initiative": "h", "slot": "handoff"})
    assert [p["id"] for p in whole["data"]["predecessors"]] == made[-2::-1]
    assert _limit(whole) == [] and whole["coverage"]["complete"] is True
