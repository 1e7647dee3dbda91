"""The vault opens on every backend and round-trips one note."""

from kaeru.api.requests import parse
from kaeru.service import Service


def test_note_then_search_finds_it(service: Service) -> None:
    outcome, replayed = service.note(parse("note", {"initiative": "smoke", "text": "the quick brown fox"}))
    assert outcome.state == "applied" and not replayed
    found = service.search(parse("search", {"initiatives": ["smoke"], "text": "brown"}))
    assert [h.node.id for h in found.hits] == [outcome.primary.id if outcome.primary else None]
