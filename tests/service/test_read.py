"""`read`: one node in full, now or as of a past moment, paged by budget, with helpful misses."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.domain.timefmt import fmt
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.service.outcomes import NodeView
from tests.service.support import Clock, primary

P = "reading"


def note(service: Service, initiative: str = P, **args: Any) -> str:
    outcome, _ = service.note(parse("note", {"initiative": initiative, **args}))
    return primary(outcome)


def read(service: Service, node: Any, **extra: Any) -> NodeView:
    result = service.read(parse("read", {"initiative": P, "node": node, **extra}))
    assert result.total == 1 and len(result.hits) == 1
    return result.hits[0]


def rejects(call: Callable[[], object]) -> KaeruError:
    with pytest.raises(KaeruError) as err:
        call()
    return err.value


def test_read_by_id_name_and_ref_objects(service: Service) -> None:
    """A node is reachable by its id string, `{id}`, its exact name, and `{initiative, name}`."""
    node = note(service, text="body", name="the-plan")
    for ref in (node, {"id": node}, "the-plan", {"initiative": P, "name": "the-plan"}):
        assert read(service, ref).node.id == node


def test_id_reaches_across_initiatives(service: Service) -> None:
    """An id (or `{initiative, name}`) reaches a node in another initiative."""
    other = note(service, initiative="elsewhere", text="body", name="far-plan")
    note(service, text="anchor")
    assert read(service, {"id": other}).node.id == other
    assert read(service, {"initiative": "elsewhere", "name": "far-plan"}).node.id == other


def test_whole_body_when_it_fits(service: Service) -> None:
    """A body within the budget comes back whole, with no range and no continuation."""
    node = note(service, text="short body")
    result = service.read(parse("read", {"initiative": P, "node": node}))
    assert result.hits[0].body == "short body"
    assert result.hits[0].body_range is None
    assert result.continuation is None


def test_body_paging_reconstructs_the_body_exactly(service: Service) -> None:
    """Following continuation.next_arguments pages through the body; the pages rebuild it byte for byte."""
    body = "\n".join(f"line {i}: " + "lorem ipsum dolor sit amet " * (i % 7 + 1) for i in range(300))
    node = note(service, text=body)
    args: dict[str, Any] = {"initiative": P, "node": node, "budget_chars": 512}
    pieces: list[str] = []
    for _ in range(500):
        result = service.read(parse("read", args))
        view = result.hits[0]
        assert view.body is not None
        assert len(view.body) <= 512
        assert view.body_range is not None
        assert (view.body_range.start, view.body_range.total) == (sum(map(len, pieces)), len(body))
        assert view.body_range.end - view.body_range.start == len(view.body)
        pieces.append(view.body)
        if result.continuation is None:
            break
        assert result.coverage.complete is False
        args = result.continuation.next_arguments
    assert "".join(pieces) == body
    assert len(pieces) > 2


def test_body_offset_reads_from_there(service: Service) -> None:
    """`body_offset` starts the body at that character."""
    node = note(service, text="0123456789 abcdefghij")
    view = read(service, node, body_offset=11)
    assert view.body == "abcdefghij"


def test_body_offset_past_the_end_is_invalid(service: Service) -> None:
    """An offset beyond the body is an invalid argument."""
    node = note(service, text="short")
    err = rejects(lambda: read(service, node, body_offset=999))
    assert err.code == "invalid_argument"
    assert err.field == "body_offset"


def test_read_at_shows_values_before_a_revise(timed: Service, clock: Clock) -> None:
    """`at` returns the node exactly as it was: name, body, description, tags, revision."""
    node = note(timed, text="kubernetes rollout plan", name="rollout", tags=["ops"])
    before = read(timed, node)
    t_before = clock.tick()
    clock.tick()
    timed.revise(
        parse(
            "revise",
            {
                "initiative": P,
                "node": node,
                "patch": {"name": "rollout-v2", "body": "terraform migration plan", "description": "moved"},
            },
        )
    )
    past = read(timed, node, at=fmt(t_before))
    assert past.node.name == "rollout"
    assert past.node.body == "kubernetes rollout plan"
    assert past.node.description is None
    assert past.node.tags == before.node.tags
    assert past.node.revision == before.node.revision
    assert past.body == "kubernetes rollout plan"
    now = read(timed, node)
    assert now.node.name == "rollout-v2"
    assert "topic:terraform" in now.node.tags


def test_read_at_a_recorded_time_includes_that_revision(timed: Service, clock: Clock) -> None:
    """Reading at exactly a revision's recorded_at shows that revision."""
    node = note(timed, text="v1")
    clock.tick()
    timed.revise(parse("revise", {"initiative": P, "node": node, "patch": {"body": "v2"}}))
    second = read(timed, node)
    clock.tick()
    timed.revise(parse("revise", {"initiative": P, "node": node, "patch": {"body": "v3"}}))
    assert read(timed, node, at=second.node.recorded_at).node.body == "v2"


def test_read_at_with_relative_and_date_moments(timed: Service, clock: Clock) -> None:
    """`at` accepts relative offsets like `2d` and plain dates."""
    node = note(timed, text="v1")
    clock.tick(3 * 86400)
    timed.revise(parse("revise", {"initiative": P, "node": node, "patch": {"body": "v2"}}))
    clock.tick(120)
    assert read(timed, node, at="2d").node.body == "v1"
    assert read(timed, node, at="1m").node.body == "v2"
    assert read(timed, node, at="2026-05-02").node.body == "v1"


def test_read_at_before_the_node_existed_is_not_found(timed: Service, clock: Clock) -> None:
    """A node did not exist before its creation."""
    clock.tick(3600)
    node = note(timed, text="later")
    err = rejects(lambda: read(timed, node, at=fmt(clock.now - timedelta(minutes=30))))
    assert err.code == "not_found"


def test_read_at_nonsense_is_invalid(service: Service) -> None:
    """An unparseable `at` is invalid_argument naming `at`."""
    node = note(service, text="x")
    err = rejects(lambda: read(service, node, at="last tuesday"))
    assert err.code == "invalid_argument"
    assert err.field == "at"


def test_read_at_shows_past_currentness(timed: Service, clock: Clock) -> None:
    """Before it was superseded, a node reads as current as of then."""
    first, _ = timed.claim(parse("claim", {"initiative": P, "text": "guess one", "options": {"slot": "handoff"}}))
    t_before = clock.tick()
    clock.tick()
    timed.claim(parse("claim", {"initiative": P, "text": "guess two", "options": {"slot": "handoff"}}))
    node = primary(first)
    assert read(timed, node).currentness.value == "superseded"
    past = read(timed, node, at=fmt(t_before))
    assert past.currentness.value == "current"
    assert past.successors == []
    assert past.node.layer.value == "warm"


def test_missing_name_is_not_found(service: Service) -> None:
    """An unknown name is not_found, naming the field."""
    note(service, text="x")
    err = rejects(lambda: read(service, "nothing-like-this"))
    assert err.code == "not_found"
    assert err.field == "node"


def test_missing_name_suggests_close_names(service: Service) -> None:
    """A near-miss name gets a did-you-mean."""
    note(service, text="x", name="deployment-checklist")
    err = rejects(lambda: read(service, "deployment-checklst"))
    assert err.code == "not_found"
    assert "deployment-checklist" in str(err)


def test_name_in_another_initiative_says_so(service: Service) -> None:
    """A miss whose name exists in another initiative names that initiative."""
    note(service, initiative="website", text="x", name="launch-plan")
    note(service, text="anchor")
    err = rejects(lambda: read(service, "launch-plan"))
    assert err.code == "not_found"
    assert "website" in str(err)


def test_duplicate_names_are_ambiguous_with_candidates(service: Service) -> None:
    """A name held by several live nodes is ambiguous_ref listing every candidate id — never "the newest"."""
    one = note(service, text="first", name="status")
    two = note(service, text="second", name="status")
    err = rejects(lambda: read(service, "status"))
    assert err.code == "ambiguous_ref"
    message = str(err)
    assert one in message and two in message
    assert "episode" in message  # candidates are listed with their type …
    for candidate in (one, two):  # … and when they were recorded
        assert read(service, {"id": candidate}).node.recorded_at in message
    assert read(service, {"id": one}).node.body == "first"


def test_unknown_id_is_not_found(service: Service) -> None:
    """An id that was never issued is not_found."""
    note(service, text="x")
    err = rejects(lambda: read(service, {"id": "01a22ac1-6ebb-7f3f-84d0-ee3708481fa2"}))
    assert err.code == "not_found"


def test_invalid_ref_is_invalid_argument(service: Service) -> None:
    """A malformed NodeRef is invalid_argument on `node`."""
    note(service, text="x")
    err = rejects(lambda: read(service, {"name": "missing-initiative"}))
    assert err.code == "invalid_argument"
    assert err.field == "node"


def test_neighbours_are_only_given_when_asked(service: Service) -> None:
    """Edges come back with `neighbours: true` only."""
    target = note(service, text="target")
    source = note(service, text="source", link_to=target)
    assert service.read(parse("read", {"initiative": P, "node": source})).edges is None
    edges = service.read(parse("read", {"initiative": P, "node": source, "neighbours": True})).edges
    assert edges is not None and [(e.src, e.dst) for e in edges] == [(source, target)]


def test_neighbours_as_of_before_the_link(timed: Service, clock: Clock) -> None:
    """Edges are versioned too: as of before the link, there is none."""
    target = note(timed, text="target")
    t_before = clock.tick()
    clock.tick()
    note(timed, text="source", link_to=target)
    past = timed.read(parse("read", {"initiative": P, "node": target, "neighbours": True, "at": fmt(t_before)}))
    assert past.edges == []
    now = timed.read(parse("read", {"initiative": P, "node": target, "neighbours": True}))
    assert now.edges is not None and len(now.edges) == 1


def test_budget_out_of_range_is_invalid(service: Service) -> None:
    """budget_chars must be 512..64000."""
    node = note(service, text="x")
    for budget in (0, 511, 64001):
        err = rejects(lambda budget=budget: read(service, node, budget_chars=budget))
        assert err.code == "invalid_argument"
        assert err.field == "budget_chars"
