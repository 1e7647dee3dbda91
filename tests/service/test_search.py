"""`search`: literal tokens, match/prefix, filters, scopes, currentness, budgets and cursors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.service.outcomes import ReadOutcome
from kaeru.service.search import SUGGESTED_UNKNOWN
from kaeru.storage.sql.db import PROBED_SCOPES
from tests.service.support import primary

P = "search-lab"


def note(service: Service, text: str, initiative: str = P, **args: Any) -> str:
    outcome, _ = service.note(parse("note", {"initiative": initiative, "text": text, **args}))
    return primary(outcome)


def search(service: Service, text: str | None = None, initiatives: list[str] | None = None, **args: Any) -> ReadOutcome:
    call: dict[str, Any] = {"initiatives": initiatives or [P], **args}
    if text is not None:
        call["text"] = text
    return service.search(parse("search", call))


def ids(result: ReadOutcome) -> list[str]:
    return [h.node.id for h in result.hits]


def rejects(call: Callable[[], object]) -> KaeruError:
    with pytest.raises(KaeruError) as err:
        call()
    return err.value


def collect_pages(service: Service, args: dict[str, Any], max_pages: int = 200) -> list[str]:
    """Every id over all pages, following continuation.next_arguments."""
    seen: list[str] = []
    for _ in range(max_pages):
        result = service.search(parse("search", args))
        seen.extend(ids(result))
        if result.continuation is None:
            return seen
        args = result.continuation.next_arguments
    raise AssertionError("paging did not end")


# --- literal matching ------------------------------------------------------------------------

HOSTILE = [
    '"unbalanced quote',
    "a AND (b OR",
    "NEAR(x y, 2)",
    "col:value",
    "*",
    "^start",
    "-excluded +required",
    "'; DROP TABLE nodes; --",
    "nul \x00 byte \\ backslash",
    "🎉🔥",
    "{}[]()<>",
    "%_%",
    "name:* OR body:*",
    "x" * 5000,
    " ".join(f"w{i}" for i in range(600)),
    "\u202e\u200b zero width",
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_query_text_never_raises(service: Service, text: str) -> None:
    """Any query text is data: the search answers (possibly empty) instead of failing."""
    node = note(service, 'error: "disk full" (code=ENOSPC) AND retry* later')
    result = search(service, text)
    assert set(ids(result)) <= {node}
    assert result.total == len(result.hits)


@pytest.mark.parametrize(
    "query",
    ["error:", '"disk full"', "ENOSPC)", "retry*", "(code=ENOSPC)", "AND"],
)
def test_query_syntax_characters_are_literal(service: Service, query: str) -> None:
    """Quotes, colons, parentheses, `*` and `AND` in the query are just characters around words."""
    node = note(service, 'error: "disk full" (code=ENOSPC) AND retry* later')
    note(service, "an unrelated note about gardening")
    assert ids(search(service, query)) == [node]


def test_quoted_words_are_not_a_phrase(service: Service) -> None:
    """Quotes do not make a phrase: the words match in any order."""
    node = note(service, "full of disk images")
    assert ids(search(service, '"disk full"')) == [node]


def test_search_is_case_and_accent_insensitive(service: Service) -> None:
    """`CAFE` finds `café`."""
    node = note(service, "meeting at the café")
    assert ids(search(service, "CAFE")) == [node]


def test_hostile_text_is_stored_and_found(service: Service) -> None:
    """Text full of query syntax is stored verbatim and found by its words."""
    text = "'; DROP TABLE nodes; -- \" OR 1=1 NEAR(a b) *"
    node = note(service, text)
    result = search(service, "drop table")
    assert ids(result) == [node]
    assert result.hits[0].body == text


def test_name_description_and_tags_are_searched(service: Service) -> None:
    """Name, description and tags are searchable, not only the body."""
    named = note(service, "body one", name="zephyr-plan")
    tagged = note(service, "body two", tags=["blueberry"])
    described = note(service, "body three", kind="reference", source="verbatim quokka-free text")
    revised = note(service, "body four")
    service.revise(parse("revise", {"initiative": P, "node": revised, "patch": {"description": "marmalade summary"}}))
    assert ids(search(service, "zephyr")) == [named]
    assert ids(search(service, "blueberry")) == [tagged]
    assert ids(search(service, "marmalade")) == [revised]
    assert described in ids(search(service, "verbatim"))


def test_match_any_and_all(service: Service) -> None:
    """`any` needs one token, `all` needs every token."""
    both = note(service, "apple banana smoothie")
    one = note(service, "apple pie")
    assert set(ids(search(service, "apple banana"))) == {both, one}
    assert set(ids(search(service, "apple banana", match="any"))) == {both, one}
    assert ids(search(service, "apple banana", match="all")) == [both]
    assert ids(search(service, "banana apple", match="all")) == [both]


def test_match_all_does_not_require_stop_words(service: Service) -> None:
    """ "the deploy failed" with `all` found no note saying "deploy failed on staging": `the` was a
    word it needed (decision 290). Stop words alone are still every word asked; `prefix` keeps
    them (a word being typed may be a stop word's start)."""
    terse = note(service, "deploy failed on staging")
    long = note(service, "the deploy that failed was rolled back")
    other = note(service, "the deploy passed")
    assert set(ids(search(service, "the deploy failed", match="all"))) == {terse, long}
    assert set(ids(search(service, "a deploy that failed", match="all"))) == {terse, long}
    assert set(ids(search(service, "the deploy", match="all"))) == {terse, long, other}
    assert ids(search(service, "that was", match="all")) == [long]
    assert set(ids(search(service, "the dep", match="all", prefix=True))) == {long, other}


def test_prefix_matches_word_starts(service: Service) -> None:
    """`prefix` makes every token a prefix: `deploy` finds `deployment`."""
    node = note(service, "the deployment failed")
    assert ids(search(service, "deploy")) == []
    assert ids(search(service, "deploy", prefix=True)) == [node]
    assert ids(search(service, "ploy", prefix=True)) == []


def test_prefix_with_match_all(service: Service) -> None:
    """Prefix and all combine: every prefix must match."""
    both = note(service, "kubernetes upgrade")
    note(service, "kubernetes downgrade")
    assert ids(search(service, "kube upg", prefix=True, match="all")) == [both]


def test_no_match_is_empty_not_an_error(service: Service) -> None:
    """A word nobody wrote gives zero hits and a complete coverage."""
    note(service, "something")
    result = search(service, "xylophone")
    assert result.hits == [] and result.total == 0
    assert result.continuation is None


def test_more_mentions_rank_first(service: Service) -> None:
    """BM25: a note about the word ranks above one that mentions it in passing."""
    passing = note(service, "kiwi appears once among many other unrelated words here today", name="fruit-a")
    focused = note(service, "kiwi kiwi kiwi kiwi", name="fruit-b")
    assert ids(search(service, "kiwi")) == [focused, passing]


def test_equal_scores_rank_newest_first(service: Service) -> None:
    """Between equally good hits, the newer one comes first."""
    older = note(service, "mango report", name="mango-1")
    newer = note(service, "mango report", name="mango-2")
    assert ids(search(service, "mango")) == [newer, older]


# --- filters ----------------------------------------------------------------------------------


def test_filter_types(service: Service) -> None:
    """`types` keeps only those node types."""
    episode = note(service, "lighthouse observation")
    idea = note(service, "lighthouse idea", kind="idea")
    assert ids(search(service, "lighthouse", filters={"types": ["idea"]})) == [idea]
    assert set(ids(search(service, "lighthouse", filters={"types": ["episode", "idea"]}))) == {episode, idea}


def test_filter_tiers(service: Service) -> None:
    """`tiers` keeps operational or archival nodes."""
    note(service, "lighthouse observation")
    reference = note(service, "lighthouse reference", kind="reference")
    assert ids(search(service, "lighthouse", filters={"tiers": ["archival"]})) == [reference]


def test_filter_layers(service: Service) -> None:
    """`layers` keeps nodes in those layers."""
    note(service, "lighthouse warm")
    hot = note(service, "lighthouse hot", options={"layer": "hot"})
    assert ids(search(service, "lighthouse", filters={"layers": ["hot"]})) == [hot]


def test_filter_layers_without_words(service: Service) -> None:
    """Layers and tiers alone (a small layer is listed from the memberships, decision 277) keep the
    same nodes as with words."""
    note(service, "lighthouse warm")
    hot = note(service, "lighthouse hot", options={"layer": "hot"})
    archived = note(service, "lighthouse archived", kind="reference", options={"layer": "hot"})
    assert ids(search(service, filters={"layers": ["hot"]})) == [archived, hot]
    assert ids(search(service, filters={"layers": ["hot"], "tiers": ["archival"]})) == [archived]
    assert ids(search(service, filters={"layers": ["hot", "warm"], "tiers": ["archival"]})) == [archived]


def test_filter_tags_without_words(service: Service) -> None:
    """Tags alone keep exactly the nodes carrying every one: the index's tag words only narrow the
    rows to test (decision 278), so nodes holding the same words in other tags are not kept, and a
    tag without a word is still tested (it cannot narrow anything)."""
    both = note(service, "lighthouse a", tags=["infra-db", "urgent"])
    alone = note(service, "lighthouse b", tags=["infra-db"])
    note(service, "lighthouse c", tags=["infra", "db"])
    note(service, "lighthouse d", tags=["db-infra", "urgent"])
    odd = note(service, "lighthouse e", tags=["++"])
    assert ids(search(service, filters={"tags": ["infra-db"]})) == [alone, both]
    assert ids(search(service, filters={"tags": ["infra-db", "urgent"]})) == [both]
    assert ids(search(service, filters={"tags": ["++"]})) == [odd]


def test_filter_statuses(service: Service) -> None:
    """`statuses` keeps hypotheses (or tasks) with those statuses."""
    supported, _ = service.claim(
        parse("claim", {"initiative": P, "text": "lighthouse works", "initial_status": "supported"})
    )
    service.claim(parse("claim", {"initiative": P, "text": "lighthouse fails"}))
    assert ids(search(service, "lighthouse", filters={"statuses": ["supported"]})) == [primary(supported)]


def test_filter_tags_requires_every_tag(service: Service) -> None:
    """`tags` keeps nodes carrying every listed tag."""
    both = note(service, "lighthouse a", tags=["infra", "urgent"])
    note(service, "lighthouse b", tags=["infra"])
    assert ids(search(service, "lighthouse", filters={"tags": ["infra", "urgent"]})) == [both]
    assert len(ids(search(service, "lighthouse", filters={"tags": ["infra"]}))) == 2


def test_filter_derived_tags(service: Service) -> None:
    """Derived tags like `kind:rule` and `lang:ru` are filterable."""
    rule = note(service, "no deploys on friday", kind="rule")
    ru = note(service, "Развёртывание по пятницам запрещено")
    assert ids(search(service, filters={"tags": ["kind:rule"]})) == [rule]
    assert ids(search(service, filters={"tags": ["lang:ru"]})) == [ru]


def test_filters_without_text(service: Service) -> None:
    """Filters alone list matching nodes, newest first."""
    first = note(service, "one", kind="idea")
    second = note(service, "two", kind="idea")
    note(service, "three")
    assert ids(search(service, filters={"types": ["idea"]})) == [second, first]


def test_text_or_filters_required(service: Service) -> None:
    """A search with neither text nor filters is an invalid argument."""
    note(service, "x")
    assert rejects(lambda: search(service)).code == "invalid_argument"


@pytest.mark.parametrize(
    ("arg", "value"), [("limit", 0), ("limit", 51), ("budget_chars", 100), ("budget_chars", 64001)]
)
def test_out_of_range_paging_arguments(service: Service, arg: str, value: int) -> None:
    """limit 1..50 and budget_chars 512..64000 are enforced, naming the field."""
    note(service, "x")
    err = rejects(lambda: search(service, "x", **{arg: value}))
    assert err.code == "invalid_argument"
    assert err.field == arg


def test_current_preferred_omits_superseded_and_counts_it(service: Service) -> None:
    """Preferred currentness hides a superseded hit whose successor is in scope, and says so."""
    old, _ = service.claim(
        parse("claim", {"initiative": P, "text": "lighthouse guess one", "options": {"slot": "handoff"}})
    )
    new, _ = service.claim(
        parse("claim", {"initiative": P, "text": "lighthouse guess two", "options": {"slot": "handoff"}})
    )
    preferred = search(service, "lighthouse")
    assert ids(preferred) == [primary(new)]
    assert ("superseded", 1) in [(o.reason, o.count) for o in preferred.coverage.omitted]
    every = search(service, "lighthouse", filters={"current": "all"})
    assert set(ids(every)) == {primary(old), primary(new)}
    shown = {h.node.id: h for h in every.hits}
    assert shown[primary(old)].currentness.value == "superseded"
    assert shown[primary(old)].successors == [primary(new)]


def test_superseded_hit_stays_when_its_successor_is_out_of_scope(service: Service) -> None:
    """Only a successor the caller can see hides a superseded node."""
    old = note(service, "lighthouse original", name="original")
    new, _ = service.note(
        parse(
            "note",
            {
                "initiative": "other-scope",
                "text": "lighthouse replacement",
                "link_to": {"initiative": P, "name": "original"},
                "edge_type": "supersedes",
                "weight": 1.0,
            },
        )
    )
    alone = search(service, "lighthouse")
    assert ids(alone) == [old]
    assert alone.hits[0].currentness.value == "superseded"
    together = search(service, "lighthouse", initiatives=[P, "other-scope"])
    assert ids(together) == [primary(new)]


def test_audit_events_are_searchable_by_type(service: Service) -> None:
    """Every mutation appends an audit record readable with filters.types = [audit_event]."""
    note(service, "something worth auditing")
    found = search(service, filters={"types": ["audit_event"]})
    assert found.total >= 1
    assert all(h.node.node_type.value == "audit_event" for h in found.hits)


def test_audit_events_page_like_nodes(service: Service) -> None:
    """A short list of audit events (ids that are not node ids) still pages: every event once."""
    for i in range(5):
        note(service, f"audited change {i}")
    args: dict[str, Any] = {"initiatives": [P], "filters": {"types": ["audit_event"]}, "limit": 2}
    everything = search(service, filters={"types": ["audit_event"]}, limit=50)
    assert everything.total == 5
    assert collect_pages(service, args) == ids(everything)


def test_audit_events_are_narrowed_by_the_searched_words(service: Service) -> None:
    """`text` with `filters.types = [audit_event]` keeps the records whose text holds the words — "who
    revised what" — with `match` and `prefix` as for nodes, and the changed text is searchable."""
    kettle = note(service, "kettle descaled")
    note(service, "lighthouse repainted")
    service.revise(parse("revise", {"initiative": P, "node": kettle, "patch": {"body": "kettle descaled twice"}}))
    events = {"types": ["audit_event"]}

    def operations(result: ReadOutcome) -> list[str]:
        return [h.node.properties["operation"] for h in result.hits]

    assert operations(search(service, "revise", filters=events)) == ["revise"]
    assert operations(search(service, "rev", prefix=True, filters=events)) == ["revise"]
    assert operations(search(service, "twice", filters=events)) == ["revise"]
    assert sorted(operations(search(service, "revise note", filters=events))) == ["note", "note", "revise"]
    assert search(service, "revise note", match="all", filters=events).total == 0
    assert search(service, "rev", filters=events).total == 0, "without prefix a word matches whole"


def test_audit_events_are_not_in_ordinary_results(service: Service) -> None:
    """Ordinary searches never return audit records."""
    note(service, "lighthouse")
    service.revise(
        parse("revise", {"initiative": P, "node": note(service, "beacon"), "patch": {"body": "lighthouse beacon"}})
    )
    result = search(service, "lighthouse note revise", filters={"current": "all"})
    assert all(h.node.node_type.value != "audit_event" for h in result.hits)
    assert len(result.hits) == 2


# --- scopes -----------------------------------------------------------------------------------


def test_several_initiatives_and_no_leak(service: Service) -> None:
    """Searching several scopes returns hits from each, tagged with their scope; other scopes never leak."""
    a = note(service, "lighthouse in a", initiative="proj-a")
    b = note(service, "lighthouse in b", initiative="proj-b")
    note(service, "lighthouse in c", initiative="proj-c")
    both = search(service, "lighthouse", initiatives=["proj-a", "proj-b"])
    assert set(ids(both)) == {a, b}
    scopes = {h.node.id: h.initiatives for h in both.hits}
    assert scopes == {a: ["proj-a"], b: ["proj-b"]}
    assert both.coverage.initiatives == ["proj-a", "proj-b"]
    assert ids(search(service, "lighthouse", initiatives=["proj-a"])) == [a]


def test_a_search_across_many_initiatives_finds_each_and_leaks_none(service: Service) -> None:
    """Past `PROBED_SCOPES` initiatives, on SQLite, a node's memberships are tested against the list
    instead of the list probed one initiative at a time (decision 152): a search with words, `recall`
    and `timeline` (which go that way) and a filter-only search find each project's note and none
    outside."""
    many = [f"proj-{i:02d}" for i in range(PROBED_SCOPES * 2)]
    mine = {note(service, f"lighthouse keeper log {i}", initiative=name, kind="idea") for i, name in enumerate(many)}
    for i in range(4):
        note(service, f"lighthouse keeper log elsewhere {i}", initiative=f"other-{i}", kind="idea")
    asked = many[::-1]
    assert set(ids(search(service, "lighthouse", initiatives=asked, limit=50))) == mine
    assert set(ids(search(service, "keeper log", initiatives=asked, limit=50, match="all"))) == mine
    assert set(ids(search(service, filters={"types": ["idea"]}, initiatives=asked, limit=50))) == mine
    assert ids(search(service, filters={"types": ["task"]}, initiatives=asked, limit=50)) == []
    assert search(service, "lighthouse", initiatives=asked, limit=5).total == len(mine)
    recalled = service.recall(parse("recall", {"initiatives": asked, "query": "lighthouse keeper", "limit": 50}))
    assert {h.node.id for h in recalled.hits} == mine
    window, _ = service.timeline(parse("timeline", {"initiatives": asked, "since": "2000-01-01", "limit": 50}))
    assert set(ids(window)) == mine


def test_filters_only_search_does_not_leak(service: Service) -> None:
    """Filter-only searches respect scopes too."""
    mine = note(service, "idea a", initiative="proj-a", kind="idea")
    note(service, "idea b", initiative="proj-b", kind="idea")
    assert ids(search(service, filters={"types": ["idea"]}, initiatives=["proj-a"])) == [mine]


def test_unknown_initiative_is_a_warning_not_a_failure(service: Service) -> None:
    """An unknown scope is reported as unknown_initiative (with did-you-mean); known scopes still answer."""
    node = note(service, "lighthouse", initiative="kaeru-memory")
    result = search(service, "lighthouse", initiatives=["kaeru-memory", "kaeru-memroy"])
    assert ids(result) == [node]
    unknown = [i for i in result.issues if i.code == "unknown_initiative"]
    assert len(unknown) == 1
    assert "kaeru-memroy" in unknown[0].message and "kaeru-memory" in unknown[0].message


def test_a_long_list_of_unknown_initiatives_is_answered_with_hints_for_the_first_few(service: Service) -> None:
    """Each unknown name is reported, but only the first few are compared with every initiative for a
    "did you mean": a list of thousands held the server for minutes (decision 215)."""
    node = note(service, "lighthouse", initiative="kaeru-memory")
    typos = [f"kaeru-memor{i}" for i in range(12)]
    result = search(service, "lighthouse", initiatives=["kaeru-memory", *typos])
    assert ids(result) == [node]
    unknown = [i for i in result.issues if i.code == "unknown_initiative"]
    assert [i.field for i in unknown] == [f"initiatives[{n}]" for n in range(1, 13)]
    assert all("did you mean 'kaeru-memory'?" in i.message for i in unknown[:SUGGESTED_UNKNOWN])
    assert [i.message for i in unknown[SUGGESTED_UNKNOWN:]] == [
        f"no initiative named {t!r}" for t in typos[SUGGESTED_UNKNOWN:]
    ]


def test_only_unknown_initiatives_give_empty_result(service: Service) -> None:
    """With no known scope the answer is empty, with the warning."""
    result = search(service, "anything", initiatives=["never-created"])
    assert result.hits == [] and result.total == 0
    assert [i.code for i in result.issues] == ["unknown_initiative"]


# --- budgets ----------------------------------------------------------------------------------


def long_text(seed: int, words: int = 300) -> str:
    return " ".join(f"lighthouse{seed}x{i}" if i % 10 else "lighthouse" for i in range(words))


def test_bodies_never_exceed_the_budget(service: Service) -> None:
    """The sum of the bodies shown is within budget_chars; cut bodies carry their range and a warning."""
    full = {note(service, long_text(i)): long_text(i) for i in range(12)}
    result = search(service, "lighthouse", budget_chars=2000, limit=12)
    assert sum(len(h.body or "") for h in result.hits) <= 2000
    assert result.hits
    for hit in result.hits:
        original = full[hit.node.id]
        assert hit.body_range is not None
        assert hit.body_range.total == len(original)
        assert hit.body_range.start == 0
        assert hit.body == original[: hit.body_range.end]
    assert "budget_truncated" in [i.code for i in result.issues]


def test_budget_cut_ends_on_a_word_boundary(service: Service) -> None:
    """A cut body ends at a whole word."""
    text = " ".join(["lighthouse"] + [f"word{i}" for i in range(2000)])
    note(service, text)
    hit = search(service, "lighthouse", budget_chars=600).hits[0]
    assert hit.body is not None and hit.body_range is not None
    assert text[hit.body_range.end] == " "


def test_hits_deferred_by_budget_are_counted_and_come_next(service: Service) -> None:
    """Hits that do not fit are counted as omitted for budget and are the first of the next page."""
    made = {note(service, long_text(i, 400)) for i in range(30)}
    first = search(service, "lighthouse", budget_chars=512, limit=30)
    assert len(first.hits) < 30
    assert sum(len(h.body or "") for h in first.hits) <= 512
    assert ("budget", 30 - len(first.hits)) in [(o.reason, o.count) for o in first.coverage.omitted]
    assert first.coverage.complete is False
    everything = collect_pages(service, {"initiatives": [P], "text": "lighthouse", "budget_chars": 512, "limit": 30})
    assert sorted(everything) == sorted(made)


def test_short_bodies_are_untouched(service: Service) -> None:
    """Bodies that fit come back whole with no range and no warning."""
    note(service, "lighthouse short")
    result = search(service, "lighthouse")
    assert result.hits[0].body == "lighthouse short"
    assert result.hits[0].body_range is None
    assert result.issues == []


# --- cursors ----------------------------------------------------------------------------------


def test_paging_covers_every_hit_exactly_once(service: Service) -> None:
    """Following cursors returns every match once, in the order of one long list."""
    made = [note(service, f"lighthouse number {i}") for i in range(23)]
    first = search(service, "lighthouse", limit=5)
    assert first.total == 23
    assert first.continuation is not None
    assert first.continuation.next_arguments["cursor"] == first.continuation.cursor
    pages = collect_pages(service, {"initiatives": [P], "text": "lighthouse", "limit": 5})
    assert len(pages) == len(set(pages)) == 23
    assert set(pages) == set(made)
    big = ids(search(service, "lighthouse", limit=50))
    assert pages == big


@pytest.mark.parametrize("count", [9, 40])
def test_every_page_reports_the_first_pages_total(service: Service, count: int) -> None:
    """Short rests travel inside the token, long lists are stored: pages look the same either way."""
    made = [note(service, f"beacon number {i}") for i in range(count)]
    args: dict[str, Any] = {"initiatives": [P], "text": "beacon", "limit": 4}
    seen: list[str] = []
    while True:
        result = service.search(parse("search", args))
        assert result.total == count
        seen.extend(ids(result))
        if result.continuation is None:
            break
        args = result.continuation.next_arguments
    assert seen == ids(search(service, "beacon", limit=50)) and set(seen) == set(made)


def test_inline_cursor_round_trip_and_tamper() -> None:
    """An inline token carries its ids exactly; a flipped id byte is refused."""
    from kaeru.service import cursors

    secret = b"s" * 32
    rest = ("01a22b48-8f7a-7c03-a2d1-78868a7505c9", "01a22b48-8f7a-7c03-a2d1-78868a7505ca")
    token = cursors.encode(secret, cursors.CursorState("search", None, 10, "k", rest))
    state = cursors.decode(secret, token, "search", "k")
    assert (state.offset, state.items, state.list_id) == (10, rest, None)
    body, mac = token.split(".")
    forged = cursors.encode(b"x" * 32, cursors.CursorState("search", None, 10, "k", rest[:1])).split(".")[0]
    for bad in (f"{forged}.{mac}", f"{body[:-1]}A.{mac}"):
        with pytest.raises(KaeruError):
            cursors.decode(secret, bad, "search", "k")


def test_last_page_has_no_continuation(service: Service) -> None:
    """When everything fits, there is no cursor."""
    for i in range(3):
        note(service, f"lighthouse {i}")
    result = search(service, "lighthouse", limit=3)
    assert result.continuation is None
    assert result.coverage.complete


def test_cursor_is_stable_under_concurrent_writes(service: Service) -> None:
    """Writes between pages neither duplicate nor skip what existed at the first page."""
    made = [note(service, f"lighthouse {i}") for i in range(12)]
    first = search(service, "lighthouse", limit=4)
    assert first.continuation is not None
    for i in range(5):
        note(service, f"lighthouse late {i}")
    service.revise(parse("revise", {"initiative": P, "node": made[0], "patch": {"body": "lighthouse changed"}}))
    rest = collect_pages(service, first.continuation.next_arguments)
    seen = ids(first) + rest
    assert len(seen) == len(set(seen))
    assert set(made) <= set(seen)


def test_tampered_cursor_is_invalid(service: Service) -> None:
    """A cursor altered by the caller is refused with cursor_invalid."""
    for i in range(4):
        note(service, f"lighthouse {i}")
    first = search(service, "lighthouse", limit=2)
    assert first.continuation is not None
    args = dict(first.continuation.next_arguments)
    token = args["cursor"]
    flipped = ("A" if token[0] != "A" else "B") + token[1:]
    for bad in (flipped, token[:-2], "garbage", token + "x"):
        err = rejects(lambda bad=bad: service.search(parse("search", {**args, "cursor": bad})))
        assert err.code == "cursor_invalid"
        assert err.field == "cursor"


@pytest.mark.parametrize(
    "change",
    [{"text": "other words"}, {"limit": 3}, {"initiatives": ["elsewhere"]}, {"match": "all"}, {"prefix": True}],
)
def test_cursor_with_different_arguments_is_invalid(service: Service, change: dict[str, Any]) -> None:
    """A cursor only continues the exact query it came from."""
    for i in range(4):
        note(service, f"lighthouse {i}")
    note(service, "other words", initiative="elsewhere")
    first = search(service, "lighthouse", limit=2)
    assert first.continuation is not None
    args = {**first.continuation.next_arguments, **change}
    err = rejects(lambda: service.search(parse("search", args)))
    assert err.code == "cursor_invalid"


@pytest.mark.parametrize("verdict", ["supersedes", "falsifies"])
def test_current_hits_rank_above_non_current_at_equal_relevance(service: Service, verdict: str) -> None:
    """Ranked by BM25, then currentness, then recency: a newer stale hit ranks after an equal current one."""
    current = note(service, "beacon tower", name="lh-a")
    stale = note(service, "beacon tower", name="lh-b")
    # The verdict comes from another initiative, so the stale hit is not omitted from this scope.
    service.note(
        parse(
            "note",
            {"initiative": "judges", "text": "verdict", "link_to": {"id": stale}, "edge_type": verdict, "weight": 1.0},
        )
    )
    result = search(service, "beacon")
    assert [h.currentness.value for h in result.hits] == [
        "current",
        "superseded" if verdict == "supersedes" else "refuted",
    ]
    assert ids(result) == [current, stale]


def test_a_refuted_hypothesis_ranks_after_an_equal_open_one(service: Service) -> None:
    """A hypothesis closed as refuted (by its status alone, no verdict edge) is not current: at equal
    relevance it ranks after the open one, though it is newer."""
    older, _ = service.claim(parse("claim", {"initiative": P, "text": "beacon tower drift"}))
    newer, _ = service.claim(parse("claim", {"initiative": P, "text": "beacon tower drift"}))
    service.verdict(parse("verdict", {"initiative": P, "hypothesis": {"id": primary(newer)}, "status": "refuted"}))
    result = search(service, "beacon")
    assert ids(result) == [primary(older), primary(newer)]
    assert [h.currentness.value for h in result.hits] == ["current", "refuted"]


def test_budget_caps_descriptions_too(service: Service) -> None:
    """budget_chars caps all node text shown, so a huge description cannot blow the response up."""
    note(service, "lighthouse " + "keeper " * 4000, kind="reference", source="lighthouse source text")
    result = search(service, "lighthouse", budget_chars=512)
    assert result.hits
    shown = sum(len(h.body or "") + len(h.node.description or "") for h in result.hits)
    assert shown <= 512


def test_a_long_cursor_list_is_not_written_to_the_vault(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long result list stays in the process's memory (decision 15.P4): paging a search opens no
    write transaction at all (it once stored the list in the vault, a write of its own)."""
    from contextlib import contextmanager

    for i in range(40):
        note(service, f"harbour number {i}")
    store = service.rt.store
    reading, writes_while_reading = [0], []
    plain_read, plain_write = store.read, store.write

    @contextmanager
    def read() -> Any:
        reading[0] += 1
        try:
            with plain_read() as session:
                yield session
        finally:
            reading[0] -= 1

    def write() -> Any:
        writes_while_reading.append(reading[0] > 0)
        return plain_write()

    monkeypatch.setattr(store, "read", read)
    monkeypatch.setattr(store, "write", write)
    first = search(service, "harbour", limit=4)
    assert first.continuation is not None
    rest = collect_pages(service, first.continuation.next_arguments)
    assert len(ids(first) + rest) == 40  # the 36 left after the first page are too many for the token
    assert writes_while_reading == []


def test_only_canonical_node_ids_travel_inside_a_cursor() -> None:
    """A short rest of a result list is packed into the token as 16-byte UUIDs; a list whose items
    are not each a canonical UUID — even if their concatenation spells two — must be stored instead."""
    from kaeru.service import cursors

    spelled = ("01234567-0123-0123-0123-0123456789ab0", "1234567-0123-0123-0123-0123456789ab")
    state = cursors.CursorState("search", None, 0, "key", spelled)
    with pytest.raises(ValueError):
        cursors.encode(b"k" * 32, state)
    good = ("01234567-0123-0123-0123-0123456789ab", "11234567-0123-0123-0123-0123456789ab")
    token = cursors.encode(b"k" * 32, cursors.CursorState("search", None, 0, "key", good))
    assert cursors.decode(b"k" * 32, token, "search", "key").items == good
