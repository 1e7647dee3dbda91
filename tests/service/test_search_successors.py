"""A search whose matches are superseded shows their successors in scope (issue 13, defect 7).

With `filters.current = preferred`, a match superseded in scope is left out. When every match was,
the page was empty and only `coverage.omitted` said why: an agent concluded the memory knew nothing.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator

from kaeru.api.requests import parse
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.service.outcomes import ReadOutcome
from tests.service.support import primary

P = "succession"


def note(service: Service, text: str, initiative: str = P, **extra: Any) -> str:
    outcome, _ = service.note(parse("note", {"initiative": initiative, "text": text, **extra}))
    return primary(outcome)


def supersede(service: Service, source: str, body: str, initiative: str = P, **extra: Any) -> str:
    outcome, _ = service.evolve(
        parse(
            "evolve",
            {"initiative": initiative, "mode": "supersede", "source": {"id": source}, "new_body": body, **extra},
        )
    )
    return primary(outcome)


def search(service: Service, text: str | None, initiatives: list[str] | None = None, **extra: Any) -> ReadOutcome:
    args: dict[str, Any] = {"initiatives": initiatives or [P], **extra}
    if text is not None:
        args["text"] = text
    return service.search(parse("search", args))


def ids(result: ReadOutcome) -> list[str]:
    return [h.node.id for h in result.hits]


def reached(result: ReadOutcome) -> dict[str, set[str]]:
    """Hit id → the matched ids named by its `reached_through_supersession` issue."""
    out: dict[str, set[str]] = {}
    for issue in result.issues:
        if issue.code == "reached_through_supersession":
            hit = issue.message.split()[1]
            matches = issue.message.split("superseded match(es) ", 1)[1]
            out[hit] = {m.strip() for m in matches.split(",")}
    return out


def omitted(result: ReadOutcome, reason: str) -> int:
    return sum(o.count for o in result.coverage.omitted if o.reason == reason)


def test_every_match_superseded_shows_the_successor(service: Service) -> None:
    """The only match is superseded: its successor comes back, marked, and the omission is still counted."""
    old = note(service, "the lighthouse keeper is Ada")
    new = supersede(service, old, "the keeper is now Grace")
    result = search(service, "lighthouse")
    assert ids(result) == [new]
    assert result.total == 1
    assert result.hits[0].currentness.value == "current"
    assert reached(result) == {new: {old}}
    assert omitted(result, "superseded") == 1
    assert result.continuation is None


def test_current_all_is_unchanged(service: Service) -> None:
    """`filters.current = all` shows the superseded match itself and reaches nothing."""
    old = note(service, "the lighthouse keeper is Ada")
    supersede(service, old, "the keeper is now Grace")
    result = search(service, "lighthouse", filters={"current": "all"})
    assert ids(result) == [old]
    assert reached(result) == {}


def test_a_chain_of_supersessions_ends_at_the_current_node(service: Service) -> None:
    """A → B → C, only A matches: C comes back (not B), reached from A."""
    a = note(service, "the lighthouse lamp is oil")
    b = supersede(service, a, "the lamp is gas")
    c = supersede(service, b, "the lamp is electric")
    result = search(service, "lighthouse")
    assert ids(result) == [c]
    assert reached(result) == {c: {a}}


def test_a_successor_that_matches_itself_is_not_repeated(service: Service) -> None:
    """A successor that matched is listed once, as an ordinary hit."""
    old = note(service, "the lighthouse keeper is Ada")
    new = supersede(service, old, "the lighthouse keeper is now Grace")
    result = search(service, "lighthouse")
    assert ids(result) == [new]
    assert result.total == 1
    assert reached(result) == {}


def test_one_successor_of_two_matches_is_listed_once(service: Service) -> None:
    """Two superseded matches sharing a successor: one hit, naming both matches."""
    first = note(service, "lighthouse fact one")
    second = note(service, "lighthouse fact two")
    merged = supersede(service, first, "both facts, merged")
    service.link(
        parse(
            "link",
            {"initiative": P, "action": "add", "from": merged, "to": second, "edge_type": "supersedes", "weight": 1.0},
        )
    )
    result = search(service, "lighthouse")
    assert ids(result) == [merged]
    assert result.total == 1
    assert reached(result) == {merged: {first, second}}
    assert omitted(result, "superseded") == 2


def test_successors_join_direct_hits_where_their_match_ranked(service: Service) -> None:
    """Direct hits and reached successors together; nothing lost, nothing twice."""
    direct = note(service, "lighthouse direct")
    old = note(service, "lighthouse old")
    new = supersede(service, old, "its replacement")
    result = search(service, "lighthouse")
    assert sorted(ids(result)) == sorted([direct, new])
    assert result.total == 2
    assert reached(result) == {new: {old}}


def test_paging_keeps_total_and_marks_on_every_page(service: Service) -> None:
    """Over pages: every direct hit and every successor once, `total` the count of them all, and each
    reached hit marked on the page where it appears (the mark travels in the cursor)."""
    directs = [note(service, f"orchid direct {i}") for i in range(3)]
    pairs = {}
    for i in range(4):
        old = note(service, f"orchid old {i}")
        pairs[supersede(service, old, f"replacement {i}")] = old
    args: dict[str, Any] = {"initiatives": [P], "text": "orchid", "limit": 2}
    seen: list[str] = []
    marks: dict[str, set[str]] = {}
    totals = []
    for _ in range(10):
        page = service.search(parse("search", args))
        totals.append(page.total)
        seen.extend(ids(page))
        page_marks = reached(page)
        assert set(page_marks) <= set(ids(page))
        marks.update(page_marks)
        if page.continuation is None:
            break
        args = page.continuation.next_arguments
    assert sorted(seen) == sorted([*directs, *pairs])
    assert len(seen) == len(set(seen))
    assert set(totals) == {7}
    assert marks == {new: {old} for new, old in pairs.items()}


def test_a_successor_outside_the_filters_is_not_shown(service: Service) -> None:
    """The filters apply to reached successors as to matches."""
    old = note(service, "lighthouse keeper", kind="observation")
    supersede(service, old, "a concept now", new_type="concept")
    result = search(service, "lighthouse", filters={"types": ["episode"]})
    assert ids(result) == []
    assert omitted(result, "superseded") == 1


def test_a_successor_outside_the_scope_is_not_listed_but_named_with_a_read_call(service: Service) -> None:
    """A → B (in scope) → C (elsewhere): B is shown, reached from A, and an issue gives the exact
    `read` call for C, which works; C's text does not leak into the search."""
    a = note(service, "the lighthouse runs on oil")
    b = supersede(service, a, "the lamp runs on gas")
    c = note(
        service,
        "secret elsewhere: electric",
        initiative="elsewhere",
        link_to={"id": b},
        edge_type="supersedes",
        weight=1.0,
    )
    result = search(service, "lighthouse")
    assert ids(result) == [b]
    assert result.hits[0].currentness.value == "superseded"
    assert reached(result) == {b: {a}}
    [issue] = [i for i in result.issues if i.code == "successor_out_of_scope"]
    assert c in issue.message
    call = json.loads(issue.message.split("read ", 1)[1])
    assert call == {"initiative": P, "node": {"id": c}}
    shown = service.read(parse("read", call))
    assert [h.node.id for h in shown.hits] == [c]
    assert all("electric" not in (h.body or "") for h in result.hits)


def test_a_directly_matched_hit_superseded_elsewhere_gets_the_read_call(service: Service) -> None:
    """A match superseded only outside the scope stays a hit (as before) and now says where to look."""
    old = note(service, "lighthouse original", name="original")
    new = note(
        service,
        "lighthouse replacement",
        initiative="other-scope",
        link_to={"initiative": P, "name": "original"},
        edge_type="supersedes",
        weight=1.0,
    )
    result = search(service, "lighthouse")
    assert ids(result) == [old]
    assert reached(result) == {}
    [issue] = [i for i in result.issues if i.code == "successor_out_of_scope"]
    assert new in issue.message and old in issue.message


def test_nothing_superseded_adds_no_issue(service: Service) -> None:
    """The common path: plain matches, no supersession issues."""
    note(service, "lighthouse plain")
    result = search(service, "lighthouse")
    assert [i.code for i in result.issues] == []


def test_the_envelope_validates_against_the_contract_schema(service: Service) -> None:
    """Through the tool registry: the reached hit and both issues fit `search.output.json`."""
    registry = build_server(service).registry
    a = note(service, "the lighthouse runs on oil")
    b = supersede(service, a, "the lamp runs on gas")
    note(service, "elsewhere", initiative="elsewhere", link_to={"id": b}, edge_type="supersedes", weight=1.0)
    envelope = registry.run("search", {"initiatives": [P], "text": "lighthouse"})
    assert envelope["state"] == "ok", envelope
    assert not list(Draft202012Validator(registry.specs["search"].output_schema).iter_errors(envelope))
    assert [h["id"] for h in envelope["data"]["hits"]] == [b]
    codes = sorted(i["code"] for i in envelope["issues"])
    assert codes == ["reached_through_supersession", "successor_out_of_scope"]
    assert {"section": "hits", "count": 1, "reason": "superseded"} in envelope["coverage"]["omitted"]


def test_the_store_names_the_superseded_matches_it_omitted_where_they_ranked(service: Service) -> None:
    """The successors come from what the search itself omitted (no second search): the store lists
    each superseded match with how many kept matches rank before it — the same places the full
    ranking (nothing omitted) gives them — and lists nothing when nothing was omitted."""
    from kaeru.storage.base import SearchQuery

    texts = ["kestrel kestrel kestrel nest", "kestrel sighting", "kestrel kestrel ledge", "a kestrel", "kestrel hover"]
    made = [note(service, t) for t in texts]
    for i in (0, 3):
        supersede(service, made[i], f"falcon record {i}")
    note(service, "unrelated owl")
    with service.store.read() as session:
        initiative = session.initiative_by_name(P)
        assert initiative is not None
        scope = [initiative.id]
        full, _, _ = session.search(SearchQuery(initiative_ids=scope, tokens=["kestrel"], omit_superseded=False))
        noted: list[tuple[int, str]] = []
        rows, total, gone = session.search(SearchQuery(initiative_ids=scope, tokens=["kestrel"], superseded_out=noted))
        quiet: list[tuple[int, str]] = []
        session.search(SearchQuery(initiative_ids=scope, tokens=["owl"], superseded_out=quiet))
    order = [r.id for r in full]
    kept = [r.id for r in rows]
    assert gone == 2 and total == 3 and set(kept) == {made[1], made[2], made[4]}
    expected = [(sum(1 for k in order[: order.index(m)] if k in kept), m) for m in order if m not in kept]
    assert noted == expected
    assert {m for _, m in noted} == {made[0], made[3]}
    assert quiet == []
