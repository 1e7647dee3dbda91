"""`claim`: hypotheses with their verdict and evidence in one atomic call, and slots taken by claims."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.service.outcomes import MutationOutcome, NodeView

P = "perf-study"


def primary(outcome: MutationOutcome) -> str:
    assert outcome.state == "applied"
    assert outcome.primary is not None
    return outcome.primary.id


def claim(service: Service, **args: Any) -> MutationOutcome:
    outcome, _ = service.claim(parse("claim", {"initiative": P, **args}))
    return outcome


def read(service: Service, node: Any, **extra: Any) -> NodeView:
    return service.read(parse("read", {"initiative": P, "node": node, **extra})).hits[0]


def edges_of(service: Service, node: str) -> set[tuple[str, str, str]]:
    result = service.read(parse("read", {"initiative": P, "node": node, "neighbours": True}))
    return {(e.src, e.dst, e.edge_type.value) for e in result.edges or []}


def hypothesis_count(service: Service, initiative: str = P) -> int:
    found = service.search(
        parse("search", {"initiatives": [initiative], "filters": {"types": ["hypothesis"], "current": "all"}})
    )
    return found.total


def test_open_claim_is_an_open_current_hypothesis(service: Service) -> None:
    """A claim without a verdict is an operational hypothesis with status open."""
    view = read(service, primary(claim(service, text="the cache is the bottleneck")))
    assert view.node.node_type.value == "hypothesis"
    assert view.node.tier.value == "operational"
    assert view.node.status == "open"
    assert view.currentness.value == "current"
    assert view.node.body == "the cache is the bottleneck"


def test_claim_about_links_refers_to(service: Service) -> None:
    """`about` links the hypothesis to what it is about."""
    outcome, _ = service.note(parse("note", {"initiative": P, "text": "p99 latency doubled", "name": "latency-report"}))
    about = primary(outcome)
    hypothesis = primary(claim(service, text="GC pauses cause it", about="latency-report"))
    assert (hypothesis, about, "refers_to") in edges_of(service, hypothesis)


@pytest.mark.parametrize(
    ("status", "relation"),
    [("supported", "verifies"), ("refuted", "falsifies"), ("inconclusive", "targets"), ("open", "targets")],
)
def test_evidence_node_relation_follows_initial_status(service: Service, status: str, relation: str) -> None:
    """Existing evidence is linked evidence → hypothesis with the relation of the verdict."""
    outcome, _ = service.note(parse("note", {"initiative": P, "text": "flame graph shows GC", "name": "flame-graph"}))
    evidence = primary(outcome)
    result = claim(service, text="GC dominates", initial_status=status, evidence={"node": "flame-graph"})
    hypothesis = primary(result)
    assert read(service, hypothesis).node.status == status
    assert (evidence, hypothesis, relation) in edges_of(service, hypothesis)
    assert [(e.id, e.relation) for e in result.evidence] == [(evidence, relation)]


@pytest.mark.parametrize(
    ("status", "relation"),
    [("supported", "verifies"), ("refuted", "falsifies"), ("inconclusive", "targets"), ("open", "targets")],
)
def test_evidence_method_creates_an_experiment(service: Service, status: str, relation: str) -> None:
    """`{method}` creates an experiment node holding the method, linked by the verdict's relation."""
    result = claim(service, text="the index helps", initial_status=status, evidence={"method": "ran bench/search.py"})
    hypothesis = primary(result)
    assert len(result.created) == 2
    assert len(result.evidence) == 1
    experiment_id, got_relation = result.evidence[0].id, result.evidence[0].relation
    assert experiment_id != hypothesis
    assert got_relation == relation
    experiment = read(service, experiment_id)
    assert experiment.node.node_type.value == "experiment"
    assert "ran bench/search.py" in (experiment.node.body or "")
    assert (experiment_id, hypothesis, relation) in edges_of(service, hypothesis)


def test_refuted_claim_is_refuted(service: Service) -> None:
    """A hypothesis refuted by its evidence reads back with currentness `refuted`."""
    hypothesis = primary(claim(service, text="DNS is slow", initial_status="refuted", evidence={"method": "dig x100"}))
    view = read(service, hypothesis)
    assert view.node.status == "refuted"
    assert view.currentness.value == "refuted"


def test_supported_claim_stays_current(service: Service) -> None:
    """A supported hypothesis is current."""
    hypothesis = primary(claim(service, text="TLS is slow", initial_status="supported", evidence={"method": "perf"}))
    assert read(service, hypothesis).currentness.value == "current"


def test_claim_with_missing_evidence_node_writes_nothing(service: Service) -> None:
    """Atomic: evidence that does not exist rejects the claim and no hypothesis is created."""
    claim(service, text="baseline")
    with pytest.raises(KaeruError) as err:
        service.claim(
            parse(
                "claim",
                {
                    "initiative": P,
                    "text": "orphan",
                    "initial_status": "supported",
                    "evidence": {"node": "no-such-evidence"},
                },
            )
        )
    assert err.value.code == "not_found"
    assert err.value.field is not None and err.value.field.startswith("evidence")
    assert hypothesis_count(service) == 1


def test_rejected_claim_does_not_create_its_initiative(service: Service) -> None:
    """Atomic: a rejected first write to a new initiative leaves no initiative behind."""
    with pytest.raises(KaeruError):
        service.claim(
            parse(
                "claim",
                {"initiative": "brand-new", "text": "x", "about": {"id": "01a22ac1-6ebb-7f3f-84d0-ee3708481fa2"}},
            )
        )
    found = service.search(parse("search", {"initiatives": ["brand-new"], "filters": {"types": ["hypothesis"]}}))
    assert [i.code for i in found.issues] == ["unknown_initiative"]
    again, _ = service.claim(parse("claim", {"initiative": "brand-new", "text": "x"}))
    assert [i.code for i in again.issues] == ["new_initiative"]


def test_unknown_initial_status_is_refused(service: Service) -> None:
    """An initial_status outside the vocabulary is refused, naming the field."""
    with pytest.raises(KaeruError) as err:
        service.claim(parse("claim", {"initiative": P, "text": "x", "initial_status": "confirmed-ish"}))
    assert err.value.code == "invalid_argument"
    assert err.value.field == "initial_status"


# --- slots ------------------------------------------------------------------------------------


def test_claim_takes_a_slot(service: Service) -> None:
    """`options.slot` makes the hypothesis the slot's holder and reports the slot's revision."""
    result = claim(service, text="current best guess", options={"slot": "handoff"})
    hypothesis = primary(result)
    assert len(result.slots) == 1
    change = result.slots[0]
    assert (change.slot, change.before, change.after) == ("handoff", None, hypothesis)
    assert change.revision


def test_second_holder_supersedes_the_first(service: Service) -> None:
    """Taking a held slot supersedes the previous holder, which moves to cold and names its successor."""
    first = primary(claim(service, text="guess one", options={"slot": "handoff"}))
    revision_before = read(service, first).node.revision
    result = claim(service, text="guess two", options={"slot": "handoff"})
    second = primary(result)
    assert (result.slots[0].before, result.slots[0].after) == (first, second)
    old = read(service, first)
    assert old.node.revision != revision_before  # moving to cold is a change, so a new revision
    assert old.currentness.value == "superseded"
    assert old.successors == [second]
    assert old.node.layer.value == "cold"
    assert (second, first, "supersedes") in edges_of(service, second)
    new = read(service, second)
    assert new.currentness.value == "current"


def test_slot_revision_changes_on_every_take(service: Service) -> None:
    """Each take gives the slot a new revision."""
    one = claim(service, text="a", options={"slot": "handoff"}).slots[0].revision
    two = claim(service, text="b", options={"slot": "handoff"}).slots[0].revision
    assert one != two


def test_matching_expected_slot_revision_takes_the_slot(service: Service) -> None:
    """Compare-and-set with the current slot revision applies."""
    revision = claim(service, text="a", options={"slot": "handoff"}).slots[0].revision
    result = claim(service, text="b", options={"slot": "handoff", "expected_slot_revision": revision})
    assert result.slots[0].after == primary(result)


def test_stale_expected_slot_revision_conflicts_and_writes_nothing(service: Service) -> None:
    """A stale slot revision is a retryable slot_conflict; no hypothesis is written and the holder stays."""
    stale = claim(service, text="a", options={"slot": "handoff"}).slots[0].revision
    holder = primary(claim(service, text="b", options={"slot": "handoff"}))
    with pytest.raises(KaeruError) as err:
        service.claim(
            parse(
                "claim", {"initiative": P, "text": "c", "options": {"slot": "handoff", "expected_slot_revision": stale}}
            )
        )
    assert err.value.code == "slot_conflict"
    assert err.value.retryable
    assert hypothesis_count(service) == 2
    assert read(service, holder).currentness.value == "current"


def test_slots_are_per_initiative(service: Service) -> None:
    """The same slot name in two initiatives has two independent holders."""
    first = primary(claim(service, text="a", options={"slot": "handoff"}))
    other, _ = service.claim(
        parse("claim", {"initiative": "other-project", "text": "b", "options": {"slot": "handoff"}})
    )
    assert other.slots[0].before is None
    assert read(service, first).currentness.value == "current"


@pytest.mark.parametrize("slot", ["Handoff", "has space", "x" * 65, "1st"], ids=["upper", "space", "long", "digit"])
def test_slot_name_outside_the_pattern_is_refused(service: Service, slot: str) -> None:
    """Slot names follow `^[a-z][a-z0-9_-]*$`, ≤ 64 chars (SPEC §1.4), whoever calls the service."""
    with pytest.raises(KaeruError) as err:
        service.claim(parse("claim", {"initiative": P, "text": "x", "options": {"slot": slot}}))
    assert err.value.code == "invalid_argument"
    assert hypothesis_count(service) == 0


@pytest.mark.parametrize(
    ("args", "field"),
    [({"text": "   "}, "text"), ({"text": "h", "evidence": {"method": "  "}}, "evidence.method")],
    ids=["blank-text", "blank-method"],
)
def test_a_blank_claim_or_blank_evidence_method_is_refused_and_writes_nothing(
    service: Service, args: dict[str, Any], field: str
) -> None:
    claim(service, text="baseline")
    with pytest.raises(KaeruError) as err:
        service.claim(parse("claim", {"initiative": P, **args}))
    assert (err.value.code, err.value.field) == ("invalid_argument", field)
    assert hypothesis_count(service) == 1
