"""`read` names every initiative a node belongs to: the call's own initiative from the row it read
to resolve the node (decision 14.C6), any other by looking it up, and none it does not belong to."""

from __future__ import annotations

from kaeru.api.requests import parse
from kaeru.service import Service
from tests.service.support import primary


def _read(service: Service, initiative: str, node: str) -> list[str]:
    outcome = service.read(parse("read", {"initiative": initiative, "node": node}))
    assert outcome.coverage.initiatives == outcome.hits[0].initiatives
    return outcome.hits[0].initiatives


def test_a_node_in_two_initiatives_is_read_with_both_names_from_either(service: Service) -> None:
    source = primary(service.note(parse("note", {"initiative": "alpha-lab", "text": "the pump runs at 40 Hz"}))[0])
    superseding = {"initiative": "beta-lab", "mode": "supersede", "source": source, "new_body": "it runs at 50 Hz"}
    both = primary(service.evolve(parse("evolve", superseding))[0])
    assert _read(service, "beta-lab", both) == ["alpha-lab", "beta-lab"]
    assert _read(service, "alpha-lab", both) == ["alpha-lab", "beta-lab"]


def test_a_node_is_read_by_id_with_its_own_initiative_from_another_or_a_new_one(service: Service) -> None:
    only = primary(service.note(parse("note", {"initiative": "alpha-lab", "text": "the valve sticks"}))[0])
    service.note(parse("note", {"initiative": "beta-lab", "text": "an unrelated note"}))
    assert _read(service, "alpha-lab", only) == ["alpha-lab"]
    assert _read(service, "beta-lab", only) == ["alpha-lab"]
    assert _read(service, "no-such-lab", only) == ["alpha-lab"]
