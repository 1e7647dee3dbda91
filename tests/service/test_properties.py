"""Properties: history is immutable, replay applies exactly once, budgets are never exceeded."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaeru.api.requests import parse
from kaeru.domain.timefmt import fmt
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.service.outcomes import NodeView
from tests.service.support import Clock, primary

# The vault fixture is shared by the examples of one test; each example writes to its own initiative.
PROPERTY = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# No `-`/`_`: random text must never look like an API key to the secret guard.
ALPHABET = 'abcdefgh ijklmnop éжы.,:*"()'
TEXT = st.text(alphabet=ALPHABET, min_size=1, max_size=80).filter(lambda s: bool(s.strip()))
NAME = st.text(alphabet="abcdefgh ijkl", min_size=1, max_size=30).filter(lambda s: bool(s.strip()))
REMINDER = st.builds(
    lambda day, window: {"after": f"2026-07-{day:02d}", "window_days": window},
    st.integers(1, 28),
    st.integers(1, 30),
)
PATCH = st.fixed_dictionaries(
    {},
    optional={"name": NAME, "body": TEXT, "description": TEXT, "reminder": st.one_of(st.none(), REMINDER)},
).filter(bool)
NOTE_OP = st.tuples(st.just("note"), TEXT, st.one_of(st.none(), NAME), st.sampled_from(["observation", "idea", "rule"]))
REVISE_OP = st.tuples(st.just("revise"), st.integers(0, 50), PATCH)


def snapshot(view: NodeView) -> dict[str, Any]:
    node = view.node
    return {
        "name": node.name,
        "body": view.body,
        "description": node.description,
        "tags": node.tags,
        "properties": node.properties,
        "revision": node.revision,
        "node_type": node.node_type,
        "tier": node.tier,
        "layer": node.layer,
        "status": node.status,
        "currentness": view.currentness,
    }


@PROPERTY
@given(ops=st.lists(st.one_of(NOTE_OP, REVISE_OP), min_size=1, max_size=8))
def test_history_is_immutable(timed: Service, clock: Clock, ops: list[tuple[Any, ...]]) -> None:
    """Whatever was read at a moment is exactly what `read at=` that moment returns afterwards."""
    initiative = f"history-{uuid.uuid4().hex[:8]}"
    nodes: list[str] = []
    records: list[tuple[str, str, dict[str, Any]]] = []
    for op in ops:
        clock.tick(1)
        if op[0] == "note" or not nodes:
            text, name, kind = (op[1], op[2], op[3]) if op[0] == "note" else ("seed", None, "observation")
            args: dict[str, Any] = {"initiative": initiative, "text": text, "kind": kind}
            if name is not None:
                args["name"] = name
            outcome, _ = timed.note(parse("note", args))
            nodes.append(primary(outcome))
        else:
            node = nodes[op[1] % len(nodes)]
            before = timed.read(parse("read", {"initiative": initiative, "node": {"id": node}})).hits[0].node.revision
            outcome, _ = timed.revise(parse("revise", {"initiative": initiative, "node": {"id": node}, "patch": op[2]}))
            after = timed.read(parse("read", {"initiative": initiative, "node": {"id": node}})).hits[0].node.revision
            assert (after != before) == (outcome.state == "applied")
        clock.tick(0.5)
        moment = fmt(clock.now)
        for node in nodes:
            view = timed.read(parse("read", {"initiative": initiative, "node": {"id": node}}))
            records.append((moment, node, snapshot(view.hits[0])))
    clock.tick(60)
    for moment, node, seen in records:
        past = timed.read(parse("read", {"initiative": initiative, "node": {"id": node}, "at": moment}))
        assert snapshot(past.hits[0]) == seen


@PROPERTY
@given(
    calls=st.lists(
        st.tuples(st.sampled_from(["note", "claim"]), st.sampled_from(["r1", "r2", "r3"]), st.sampled_from(["a", "b"])),
        min_size=1,
        max_size=12,
    )
)
def test_replay_applies_exactly_once(service: Service, calls: list[tuple[str, str, str]]) -> None:
    """Per (operation, request_id): the first call applies, equal repeats replay it, different ones are refused."""
    initiative = f"replay-{uuid.uuid4().hex[:8]}"
    first: dict[tuple[str, str], tuple[str, str]] = {}
    for operation, request_id, text in calls:
        args = {"initiative": initiative, "text": f"lighthouse {text}", "request_id": request_id}
        call = service.note if operation == "note" else service.claim
        key = (operation, request_id)
        if key in first and first[key][0] != text:
            with pytest.raises(KaeruError) as err:
                call(parse(operation, args))
            assert err.value.code == "request_id_reused"
            continue
        outcome, replayed = call(parse(operation, args))
        if key in first:
            assert replayed
            assert primary(outcome) == first[key][1]
        else:
            assert not replayed
            first[key] = (text, primary(outcome))
    for operation, node_type in (("note", "episode"), ("claim", "hypothesis")):
        found = service.search(
            parse(
                "search",
                {"initiatives": [initiative], "filters": {"types": [node_type], "current": "all"}, "limit": 50},
            )
        )
        expected = {node for (op, _), (_, node) in first.items() if op == operation}
        assert {h.node.id for h in found.hits} == expected


WORDS = st.lists(st.text(alphabet="abcxyz", min_size=1, max_size=300), min_size=0, max_size=40)


@PROPERTY
@given(
    bodies=st.lists(WORDS, min_size=1, max_size=8),
    budget=st.integers(512, 4000),
    limit=st.integers(1, 10),
)
def test_search_budget_is_never_exceeded_and_pages_lose_nothing(
    service: Service, bodies: list[list[str]], budget: int, limit: int
) -> None:
    """Each page's bodies fit budget_chars, each shown body is an exact slice, and paging shows every hit once."""
    initiative = f"budget-{uuid.uuid4().hex[:8]}"
    full: dict[str, str] = {}
    for words in bodies:
        body = " ".join(["lighthouse", *words])
        outcome, _ = service.note(parse("note", {"initiative": initiative, "text": body}))
        full[primary(outcome)] = body
    args: dict[str, Any] = {"initiatives": [initiative], "text": "lighthouse", "budget_chars": budget, "limit": limit}
    seen: list[str] = []
    for _ in range(100):
        result = service.search(parse("search", args))
        assert sum(len(h.body or "") for h in result.hits) <= budget
        assert len(result.hits) <= limit
        for hit in result.hits:
            original = full[hit.node.id]
            if hit.body_range is None:
                assert hit.body == original
            else:
                assert hit.body == original[hit.body_range.start : hit.body_range.end]
                assert hit.body_range.total == len(original)
        seen.extend(h.node.id for h in result.hits)
        if result.continuation is None:
            break
        args = result.continuation.next_arguments
    assert sorted(seen) == sorted(full)


@PROPERTY
@given(
    words=st.lists(st.text(alphabet="abcé\n\t", min_size=1, max_size=700), min_size=1, max_size=30),
    budget=st.integers(512, 2000),
)
def test_read_pages_fit_the_budget_and_rebuild_the_body(service: Service, words: list[str], budget: int) -> None:
    """Every read page fits budget_chars and the pages concatenate to the exact body."""
    initiative = f"pages-{uuid.uuid4().hex[:8]}"
    body = " ".join(["start", *words])
    outcome, _ = service.note(parse("note", {"initiative": initiative, "text": body}))
    args: dict[str, Any] = {"initiative": initiative, "node": primary(outcome), "budget_chars": budget}
    pieces: list[str] = []
    for _ in range(1000):
        result = service.read(parse("read", args))
        piece = result.hits[0].body or ""
        assert len(piece) <= budget
        pieces.append(piece)
        if result.continuation is None:
            break
        args = result.continuation.next_arguments
    assert "".join(pieces) == body
