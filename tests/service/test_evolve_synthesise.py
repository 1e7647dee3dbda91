"""`evolve mode=synthesise`: a new node `derived_from` every source (issue 13, defect 1).

It failed with `internal` on every call (resolved nodes went through `dict.fromkeys`, and nodes are
not hashable); nothing called it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kaeru.api.requests import parse
from kaeru.domain.model import EdgeType, NodeType
from kaeru.errors import KaeruError
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.service.outcomes import MutationOutcome
from tests.service.support import primary

P = "synth-lab"


def note(service: Service, text: str, initiative: str = P, **extra: Any) -> str:
    outcome, _ = service.note(parse("note", {"initiative": initiative, "text": text, **extra}))
    return primary(outcome)


def synthesise(service: Service, sources: list[Any], **extra: Any) -> tuple[MutationOutcome, bool]:
    args = {"initiative": P, "mode": "synthesise", "sources": sources, "new_body": "the two notes agree", **extra}
    return service.evolve(parse("evolve", args))


def rejects(call: Callable[[], object]) -> KaeruError:
    with pytest.raises(KaeruError) as err:
        call()
    return err.value


def provenance(service: Service, node: str) -> list[str]:
    trail = service.trail(parse("trail", {"initiative": P, "node": node, "kind": "provenance"}))
    assert all(e.kind == "ancestor" and e.depth == 1 for e in trail.entries)
    assert all(e.edge is not None and e.edge.edge_type == EdgeType.DERIVED_FROM for e in trail.entries)
    return [e.node.node.id for e in trail.entries if e.node is not None]


def all_ids(service: Service, initiative: str = P) -> set[str]:
    found = service.search(parse("search", {"initiatives": [initiative], "filters": {"current": "all"}, "limit": 50}))
    return {h.node.id for h in found.hits}


@pytest.mark.parametrize("as_ref", [lambda i: i, lambda i: {"id": i}], ids=["string", "id-object"])
def test_synthesise_derives_from_every_source(service: Service, as_ref: Callable[[str], Any]) -> None:
    """String and `{id}` sources both work; the synthesis is a summary that trail provenance traces back."""
    a = note(service, "the cache is warm after deploy")
    b = note(service, "the deploy warms the cache in two minutes")
    outcome, replayed = synthesise(service, [as_ref(a), as_ref(b)])
    assert outcome.state == "applied" and not replayed
    node = primary(outcome)
    assert [c.id for c in outcome.created] == [node]
    view = service.read(parse("read", {"initiative": P, "node": node})).hits[0]
    assert view.node.node_type == NodeType.SUMMARY
    assert view.node.body == "the two notes agree"
    assert view.initiatives == [P]
    assert "role:synthesise" in view.node.tags
    assert sorted(provenance(service, node)) == sorted([a, b])
    # The sources are untouched and current: a synthesis adds, it does not replace.
    for source in (a, b):
        again = service.read(parse("read", {"initiative": P, "node": source})).hits[0]
        assert again.node.rev_no == 1 and again.currentness.value == "current"


def test_sources_are_deduplicated_by_id_in_order(service: Service) -> None:
    """The same node named three ways is one source: one edge, not three (and no failure)."""
    a = note(service, "alpha fact", name="alpha-fact")
    b = note(service, "beta fact")
    outcome, _ = synthesise(service, [a, b, {"id": a}, "alpha-fact", {"initiative": P, "name": "alpha-fact"}])
    node = primary(outcome)
    edges = [e for e in service.read(parse("read", {"initiative": P, "node": node, "neighbours": True})).edges or []]
    derived = [e for e in edges if e.src == node and e.edge_type == EdgeType.DERIVED_FROM]
    assert sorted(e.dst for e in derived) == sorted([a, b])
    assert sorted(provenance(service, node)) == sorted([a, b])


def test_new_type_and_new_name_are_used(service: Service) -> None:
    """`new_type` and `new_name` shape the synthesis."""
    a = note(service, "one")
    outcome, _ = synthesise(service, [a], new_type="concept", new_name="cache-warming")
    view = service.read(parse("read", {"initiative": P, "node": "cache-warming"})).hits[0]
    assert view.node.id == primary(outcome)
    assert view.node.node_type == NodeType.CONCEPT


@pytest.mark.parametrize("server_type", ["audit_event", "board"])
def test_server_only_types_are_refused(service: Service, server_type: str) -> None:
    """A synthesis may not pose as an audit record or a task board; nothing is written."""
    a = note(service, "one")
    before = all_ids(service)
    err = rejects(lambda: synthesise(service, [a], new_type=server_type))
    assert err.code == "invalid_argument" and err.field == "new_type"
    assert all_ids(service) == before


def test_a_blank_synthesis_is_refused_and_writes_nothing(service: Service) -> None:
    a = note(service, "one")
    before = all_ids(service)
    err = rejects(lambda: synthesise(service, [a], new_body="   "))
    assert (err.code, err.field) == ("invalid_argument", "new_body")
    assert all_ids(service) == before


def test_a_source_in_another_initiative_given_by_id(service: Service) -> None:
    """A source in another initiative is reachable by `{id}`; the synthesis lives in the call's initiative only."""
    here = note(service, "local fact")
    there = note(service, "remote fact", initiative="elsewhere")
    outcome, _ = synthesise(service, [here, {"id": there}])
    node = primary(outcome)
    view = service.read(parse("read", {"initiative": P, "node": node})).hits[0]
    assert view.initiatives == [P]
    assert sorted(provenance(service, node)) == sorted([here, there])
    assert node not in all_ids(service, "elsewhere")


def test_replay_with_request_id_writes_once(service: Service) -> None:
    """A retried synthesis with the same request_id answers the first result and writes nothing more."""
    a = note(service, "one")
    b = note(service, "two")
    first, replayed_first = synthesise(service, [a, b], request_id="synth-1")
    after_first = all_ids(service)
    second, replayed_second = synthesise(service, [a, b], request_id="synth-1")
    assert (replayed_first, replayed_second) == (False, True)
    assert primary(second) == primary(first)
    assert all_ids(service) == after_first


@pytest.mark.parametrize("bad", ["forgotten", "unknown-id", "unknown-name"])
def test_a_forgotten_or_unknown_source_refuses_the_whole_call(service: Service, bad: str) -> None:
    """One source that is forgotten or does not exist: `not_found` on its field, nothing written."""
    a = note(service, "one")
    gone = note(service, "two")
    service.forget(parse("forget", {"initiative": P, "node": gone, "reason": "test"}))
    ref: Any = {"forgotten": {"id": gone}, "unknown-id": {"id": "01ZZZZZZZZZZZZZZZZZZZZZZZZ"}, "unknown-name": "nope"}[
        bad
    ]
    before = all_ids(service)
    err = rejects(lambda: synthesise(service, [a, ref]))
    assert err.code == "not_found"
    assert err.field == "sources[1]"
    assert all_ids(service) == before


def test_an_unknown_source_in_a_new_initiative_creates_nothing(service: Service) -> None:
    """The refused call does not leave the initiative it would have created behind."""
    a = note(service, "one")
    err = rejects(
        lambda: service.evolve(
            parse(
                "evolve",
                {"initiative": "brand-new", "mode": "synthesise", "sources": [{"id": a}, "nope"], "new_body": "x"},
            )
        )
    )
    assert err.code == "not_found"
    assert "brand-new" not in [i.name for i in service.initiatives(parse("initiatives", {})).initiatives]


def test_synthesise_through_the_tool_registry(service: Service) -> None:
    """The MCP tool answers an `applied` envelope valid against its output schema, and trail shows the sources."""
    registry = build_server(service).registry
    a = note(service, "first observation")
    b = note(service, "second observation")
    envelope = registry.run(
        "evolve",
        {"initiative": P, "mode": "synthesise", "sources": [a, {"id": b}], "new_body": "both observations hold"},
    )
    assert envelope["state"] == "applied", envelope
    assert not list(Draft202012Validator(registry.specs["evolve"].output_schema).iter_errors(envelope))
    node = envelope["data"]["primary"]["id"]
    trail = registry.run("trail", {"initiative": P, "node": node, "kind": "provenance"})
    assert trail["state"] == "ok", trail
    assert not list(Draft202012Validator(registry.specs["trail"].output_schema).iter_errors(trail))
    assert sorted(e["node"]["id"] for e in trail["data"]["entries"]) == sorted([a, b])
